"""The one entry point to the state evolution: a model (`ModelParams`), a branch and an
integration method in, `TheoryResult` records out, whichever channel integrates it.

The channel is chosen by the method: `GaussHermite` is the exact L = 2 channel
(`theory.gauss_hermite`: closed-form 2 x 2 prox on a Gauss-Hermite grid, docs/theory.md §2-§6),
`QMC` the general channel (`theory.qmc`: any L, ranks, encodings and variant, docs/theory.md §7).
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Iterable, Sequence

import numpy as np

from .._core.interrupt import PartialInterrupt
from ..params import ModelParams, check_alpha, check_values
from .branches import BRANCHES
from .gauss_hermite.engine import exact_curve, solve_exact
from .iterate import gather, run
from .method import QMC, GaussHermite, Method, resolve_method
from .overlaps import MatrixOverlaps
from .precision import PrecisionWarning, refine
from .qmc.channel import moments_many
from .qmc.engine import qmc_curve, solve_qmc, solve_qmc_steps
from .result import ConvergenceError, NonConvergenceWarning, TheoryResult


def _with_tol(method: GaussHermite | QMC, tol: float | None) -> GaussHermite | QMC:
    """The method with the solver's tolerance `tol` when one is given."""
    if tol is None:
        return method
    return dataclasses.replace(method, tol=tol)


def _check_branch(branch: str | None, start) -> str:
    """The result's label: the branch (a known name), or "custom" for a start on no branch."""
    if branch is None:
        return "semantic" if start is None else "custom"
    if branch not in BRANCHES:
        raise ValueError(f"branch must be one of {BRANCHES}, got {branch!r}")
    return branch


def _warn_unconverged(res: TheoryResult, strict: bool = False) -> None:
    """A QMC fixed point not reached: NonConvergenceWarning, or ConvergenceError if strict (the
    Gauss-Hermite solver does the same itself)."""
    if res.converged:
        return
    msg = f"alpha={res.alpha}, branch={res.branch}: {res.status}"
    if strict:
        raise ConvergenceError(msg)
    warnings.warn(msg, NonConvergenceWarning, stacklevel=3)


def solve(
    alpha: float,
    params: ModelParams | None = None,
    *,
    branch: str | None = None,
    start=None,
    method: Method | str = "auto",
    tol: float | None = None,
    strict: bool = False,
    errors: bool = True,
    precision: float | None = None,
) -> TheoryResult:
    """One fixed point of the state evolution at sample complexity alpha.

    branch: the branch's starting overlaps, solved cold ("semantic" by default). start:
    explicit overlaps (a `MatrixOverlaps`; for Gauss-Hermite also an `Overlaps`, a dict or
    (q, m, V, theta)), solved warm on `branch`'s invariant manifold when a branch is named
    (its pinned overlaps held at zero), on no manifold otherwise (labelled "custom").
    method: `GaussHermite(...)`, `QMC(...)` or "auto" (Gauss-Hermite where it applies).
    tol: the solver's relative tolerance, replacing the method's own (`GaussHermite.tol`
    1e-6, `QMC.tol` 1e-5 by default; the other solver options live on the method).
    errors: every number's integration error `<name>_err` (Gauss-Hermite: its change when
    re-solved at `check_order`, warm from the fixed point; QMC: the standard error over
    scramblings, always); errors=False skips the Gauss-Hermite re-solve (errors NaN).
    Non-convergence: converged=False and a NonConvergenceWarning, or ConvergenceError if strict.
    precision: solved again with finer integration until every checked error is at most this
    fraction of its number (`theory.precision`), the method given being the first rung.

    Examples
    --------
    The paper's model at alpha 1.5 on its semantic branch (the exact L = 2 channel, a few
    seconds), and the same model by QMC:

    >>> from attnphase import QMC, ModelParams, solve
    >>> r = solve(1.5, ModelParams(), branch="semantic")
    >>> r.kind, r.converged, round(r.test_error, 5)
    ('semantic', True, 0.00196)
    >>> q = solve(1.5, ModelParams(), branch="semantic", method=QMC(1024, 2))
    >>> abs(q.test_error - r.test_error) < 3 * q.test_error_err + 1e-5
    True

    See Also
    --------
    learning_curve : a branch followed along alpha.
    attnphase.find_transitions : alpha_c and alpha_l.
    """
    alpha = check_alpha(alpha)
    p = params if params is not None else ModelParams()
    m = _with_tol(resolve_method(method, p), tol)
    label = _check_branch(branch, start)
    if isinstance(m, GaussHermite):

        def one(method: Method) -> list[TheoryResult]:
            assert isinstance(method, GaussHermite)
            return [solve_exact(alpha, p, start, label, method, strict=strict, check=errors)]

    else:
        if start is not None and not isinstance(start, MatrixOverlaps):
            raise ValueError(f"start: QMC starts from MatrixOverlaps, got {type(start).__name__}")

        def one(method: Method) -> list[TheoryResult]:
            assert isinstance(method, QMC)
            res = solve_qmc(alpha, p, start, label, method)
            _warn_unconverged(res, strict)
            return [res]

    if precision is None:
        return one(m)[0]
    _check_precision_errors(m, errors)
    return refine(one, m, precision)[0]


def _check_precision_errors(m: Method, errors: bool) -> None:
    if isinstance(m, GaussHermite) and not errors:
        raise ValueError("precision: needs the errors (errors=True), which it is checked on")


def solve_cold(
    alpha: float, p: ModelParams, branch: str, method: Method, precision: float | None = None
) -> TheoryResult:
    """One fixed point started cold on `branch` with the method's solver options, without
    warnings (a sweep's point); precision: solved again with finer integration as `solve`
    does (`theory.precision.refine`: a result short of it at the ladder's end says so in its
    status)."""
    m = resolve_method(method, p)
    if precision is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrecisionWarning)
            return refine(lambda rung: [solve_cold(alpha, p, branch, rung)], m, precision)[0]
    if isinstance(m, GaussHermite):
        return solve_exact(alpha, p, None, branch, m)
    return solve_qmc(alpha, p, None, branch, m)


def solve_batch(
    points: Iterable[tuple[float, ModelParams | None, str]],
    *,
    method: Method | str = "auto",
    strict: bool = False,
) -> list[TheoryResult]:
    """Many fixed points, each (alpha, model, branch) started cold, in the order given.

    The batch axis: the QMC points are iterated together, every round's prox problems of all
    of them (and of all their scramblings) in one call, each point with its own convergence,
    damping, history and warm starts, a finished point dropping out; each result is the one
    `solve` gives alone, to the bit. Gauss-Hermite points are solved one after another.
    method: as in `solve` ("auto": Gauss-Hermite where it applies, per point).

    Examples
    --------
    >>> from attnphase import QMC, ModelParams, solve_batch
    >>> p = ModelParams()
    >>> rs = solve_batch([(1.0, p, "positional"), (2.0, p, "semantic")], method=QMC(256, 2))
    >>> [r.kind for r in rs]
    ['positional', 'semantic']
    """
    jobs = []
    for alpha, params, branch in points:
        p = params if params is not None else ModelParams()
        jobs.append((check_alpha(alpha), p, _check_branch(branch, None), resolve_method(method, p)))
    out = solve_cold_many(jobs, strict=strict)
    for res, (*_, m) in zip(out, jobs, strict=True):
        if isinstance(m, QMC):  # the Gauss-Hermite solver warns (or raises) itself
            _warn_unconverged(res, strict)
    return out


def solve_cold_many(
    jobs: Sequence[tuple[float, ModelParams, str, Method | str]], *, strict: bool = False
) -> list[TheoryResult]:
    """`solve_cold` at every (alpha, model, branch, method), in the order given (a sweep's batch
    of points): the QMC points iterated together (`solve_batch`), the Gauss-Hermite ones one
    after another (strict: their ConvergenceError)."""
    out: list[TheoryResult | None] = [None] * len(jobs)
    methods = [resolve_method(m, p) for _, p, _, m in jobs]
    batched = [i for i, m in enumerate(methods) if isinstance(m, QMC)]
    steps = []
    for i in batched:
        alpha, p, branch, _ = jobs[i]
        m = methods[i]
        assert isinstance(m, QMC)
        steps.append(solve_qmc_steps(alpha, p, None, branch, m))
    for i, res in zip(batched, run(gather(steps), moments_many), strict=True):
        out[i] = res
    for i, ((alpha, p, branch, _), m) in enumerate(zip(jobs, methods, strict=True)):
        if isinstance(m, GaussHermite):
            out[i] = solve_exact(alpha, p, None, branch, m, strict=strict)
    return [r for r in out if r is not None]


def learning_curve(
    alphas: Iterable[float],
    params: ModelParams | None = None,
    *,
    branch: str = "semantic",
    method: Method | str = "auto",
    tol: float | None = None,
    progress: bool = False,
    errors: bool = True,
    precision: float | None = None,
) -> list[TheoryResult]:
    """Follow one branch along alpha with warm starts; results in the order of `alphas`.

    The branch is continued from the end where its cold start is reliable (increasing alpha,
    decreasing for the semantic and mixed branches); until it is found every point starts
    cold, then each starts from the previous one, so past the end of the branch the curve
    follows the fixed point it ran into (`kind` says which). QMC curves keep the same points
    and prox warm starts throughout (common random numbers). errors, precision: as in `solve`
    (the whole curve solved again with finer integration until every point meets the
    precision).

    Examples
    --------
    >>> from attnphase import GaussHermite, ModelParams, learning_curve
    >>> curve = learning_curve([1.0, 2.0], ModelParams(), branch="positional",
    ...                        method=GaussHermite((32, 12)), errors=False)
    >>> [(r.alpha, r.kind) for r in curve]
    [(1.0, 'positional'), (2.0, 'positional')]
    """
    alist = check_values("alphas", alphas, check_alpha)
    p = params if params is not None else ModelParams()
    m = _with_tol(resolve_method(method, p), tol)
    _check_branch(branch, None)

    def curve(method: Method) -> list[TheoryResult]:
        if isinstance(method, GaussHermite):
            return exact_curve(alist, p, branch, method, progress=progress, check=errors)
        assert isinstance(method, QMC)
        points = qmc_curve(alist, p, branch, method, progress=progress)
        for res in points:
            _warn_unconverged(res)
        return points

    if precision is None:
        return curve(m)
    _check_precision_errors(m, errors)
    return refine(curve, m, precision)


def learning_curves(
    alphas: Sequence[float],
    params: ModelParams | None = None,
    branches: Sequence[str] = ("semantic", "positional"),
    *,
    method: Method | str = "auto",
    progress: bool = False,
    errors: bool = True,
    precision: float | None = None,
) -> list[TheoryResult]:
    """`learning_curve` of each branch in turn, concatenated (branch by branch); Ctrl-C raises
    `PartialInterrupt` with every point finished so far."""
    p = params if params is not None else ModelParams()
    out: list[TheoryResult] = []
    for b in branches:
        try:
            out += learning_curve(
                alphas,
                p,
                branch=b,
                method=method,
                progress=progress,
                errors=errors,
                precision=precision,
            )
        except PartialInterrupt as err:
            raise PartialInterrupt(out + err.finished) from None
    return out


def fill_unconverged(
    results: Sequence[TheoryResult], params: ModelParams, method: Method
) -> list[TheoryResult]:
    """A curve's (or a map's) unconverged points solved again before they are drawn: warm from
    the nearest converged point of the same branch along alpha (its overlaps, on the branch's
    manifold), then, where that fails too, cold with the next finer integration
    (`precision.finer`). A point no attempt converges stays as it was (converged False), for
    the figure to mark as missing."""
    from .precision import finer

    out = list(results)
    for i, res in enumerate(results):
        if res.converged:
            continue
        near = [r for r in results if r.converged and r.branch == res.branch]
        retry = res
        if near:
            nearest = min(near, key=lambda r: abs(r.alpha - res.alpha))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", NonConvergenceWarning)
                retry = solve(
                    res.alpha, params, branch=res.branch, start=_start_of(nearest), method=method
                )
        higher = finer(method)
        if not retry.converged and higher is not None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", NonConvergenceWarning)
                retry = solve(res.alpha, params, branch=res.branch, method=higher)
        if retry.converged:
            out[i] = retry
    return out


def _start_of(res: TheoryResult):
    """A converged result's overlaps as the start `solve` takes for its method."""
    if res.values["q"].size == 1 and isinstance(res.method, GaussHermite):
        return tuple(float(np.ravel(res.values[k])[0]) for k in ("q", "M", "V", "theta"))
    return MatrixOverlaps(*(np.asarray(res.values[k]) for k in ("q", "M", "theta", "V")))


__all__ = [
    "BRANCHES",
    "QMC",
    "GaussHermite",
    "fill_unconverged",
    "learning_curve",
    "learning_curves",
    "solve",
    "solve_batch",
]
