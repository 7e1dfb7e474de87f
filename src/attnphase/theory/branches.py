"""The branches of the state evolution (docs/theory.md §3, §6) and how a branch is followed along
alpha, for every channel.

A branch is named by the order parameters it has: semantic (theta != 0), positional (M != 0),
trivial (neither), mixed (rank >= 2: one column of each), clustered (correlated tokens: aligned
with the cluster means); simplex_positional is the positional branch with every column
positional. Each channel supplies its starting overlaps and the overlaps it pins to
zero on a branch (its invariant manifold); `follow_branch` is the one continuation loop.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from .._core.interrupt import PartialInterrupt
from .._core.progress import progress_bar

if TYPE_CHECKING:
    from .result import TheoryResult

# the branches each method solves (`Method.branches`): the exact L = 2 channel's three, and the
# general channel's, which adds one semantic and one positional column at rank >= 2 and, with
# correlated tokens, the clustered branch (aligned with the cluster means)
EXACT_BRANCHES = ("semantic", "positional", "trivial")
QMC_BRANCHES = (*EXACT_BRANCHES, "mixed")
MIXTURE_BRANCH = "clustered"
BRANCHES = (*QMC_BRANCHES, MIXTURE_BRANCH)
# every column positional, held symmetric under the token permutations (simplex encodings,
# rank L - 1; docs/scaling.md §1): its fixed points are of kind positional
SIMPLEX_BRANCH = "simplex_positional"
# the prox's curvature scale V of every cold start (the L = 2 authors' value, docs/theory.md §3)
START_V = 14.575
# The null point W = 0 (docs/theory.md §3): a solve whose q falls below Q_DECAYED (its largest
# eigenvalue) ends (`iterate.Decayed`) and is finished there with q held at Q_NULL, where the
# direct conjugates meet their q -> 0 limit to 1e-11 in V on the exact channel (the
# integration-by-parts ones lose three digits to cancellation below q ~ 1e-8)
Q_DECAYED = 1e-8
Q_NULL = 1e-10

# solve_point(alpha, done): the fixed point at alpha, cold when `done` is empty, else warm from
# the consecutive converged points of the branch found so far (the last one is the nearest)
PointSolver = Callable[[float, list["TheoryResult"]], "TheoryResult"]


def branch_kind(branch: str) -> str:
    """The `TheoryResult.kind` of a branch's fixed points: its name, positional for the simplex
    branch."""
    return "positional" if branch == SIMPLEX_BRANCH else branch


def null_start_v(sigma: float, ridge: float) -> float:
    """V from which the null point is solved: its value where Vhat = 0, sigma^2 / ridge (the
    cold starts' START_V without a ridge)."""
    return sigma**2 / ridge if ridge > 0 else START_V


def on_own_branch(result: TheoryResult | None, branch: str) -> bool:
    """A converged `TheoryResult` of the kind of `branch`'s fixed points."""
    return result is not None and result.converged and result.kind == branch_kind(branch)


def continuation_order(alphas: Sequence[float], branch: str) -> list[int]:
    """Indices of `alphas` in the order a branch is followed: from the end where its cold
    start is reliable, increasing alpha, except decreasing for the branches with a semantic
    column (semantic, mixed), which collapse at small alpha."""
    reverse = branch in ("semantic", "mixed")
    return sorted(range(len(alphas)), key=lambda i: alphas[i], reverse=reverse)


def follow_branch(
    alphas: Sequence[float], branch: str, solve_point: PointSolver, progress: bool = False
) -> list[TheoryResult]:
    """Follow one branch along alpha; results in the order of `alphas`.

    Until the branch is found every point starts cold; from then on each starts warm from the
    points before it, so past the end of the branch the curve follows the fixed point it ran
    into (`kind` says which). A point that does not converge is reported and the next one
    starts cold again. Ctrl-C raises `PartialInterrupt` with the points finished so far (in
    the order of `alphas`).
    """
    order: Iterable[int] = continuation_order(alphas, branch)
    if progress:
        order = progress_bar(list(order), desc=f"{branch} branch", unit="alpha", enabled=True)
    results: dict[int, TheoryResult] = {}
    done: list[TheoryResult] = []
    reached = False  # has this continuation been on the branch yet?
    try:
        for i in order:
            res = solve_point(alphas[i], done)
            results[i] = res
            reached = reached or res.kind == branch_kind(branch)
            done = done + [res] if res.converged and reached else []
    except KeyboardInterrupt:
        raise PartialInterrupt([results[i] for i in sorted(results)]) from None
    return [results[i] for i in range(len(alphas))]
