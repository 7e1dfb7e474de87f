"""The transition lines of docs/theory.md §5 (alpha_c, alpha_l and both spinodals) followed along a
path of model parameters (omega, sigma, lambda, or a straight path between two targets A), for
every integration method.

A method's *replicas* are the deterministic state-evolution maps it averages or compares:
Gauss-Hermite has one (its roots checked at a second order, `GaussHermiteLines`), QMC one per
scrambling (`ScramblingLines`; the reported root is the mean over scramblings and its error the
standard error of that mean, `combine`). On each replica a line starts from one scan
(`line_starts`) and is followed by `continuation.LineFollower` (alpha_c, alpha_l) or
`folds.FoldFollower` (the spinodals). `line_table` runs the same followers resumably and in
parallel through a sweep store.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Protocol

from .._core.progress import progress_bar
from ..params import ModelParams, check_int
from ..theory import Method, resolve_method
from .continuation import NEWTON_TOL, Check, LineFollower, LinePoint
from .folds import FOLD_SIGN, FoldCheck, FoldFollower
from .gauss_hermite_lines import GaussHermiteLines
from .paths import LINES, SCAN_NUM, parameter_path
from .scrambling_lines import LINE_METHOD, ScramblingLines, combine
from .systems import BranchAtOrder, CrossingSystem, LinearSystem


class Lines(Protocol):
    """The defining systems of the four lines at any s of a parameter path (`path`), with the
    checks of their roots (None: no second accuracy); `GaussHermiteLines` and
    `ScramblingLines`."""

    path: Callable[[float], ModelParams]

    def crossing(self, s: float) -> CrossingSystem: ...

    def linear(self, s: float) -> LinearSystem: ...

    def fold(self, branch: str, s: float, t: float) -> BranchAtOrder: ...

    def check(self, kind: str) -> Check | None: ...

    def check_fold(self, branch: str) -> FoldCheck | None: ...

    def starts(
        self, s0: float, alpha_min: float, alpha_max: float, num: int
    ) -> dict[str, tuple | str]: ...


# each method's line systems, by the method's name (`Method.name`)
LINE_SYSTEMS: dict[str, Callable[..., Lines]] = {
    "gauss-hermite": GaussHermiteLines,
    "qmc": ScramblingLines,
}


def method_lines(path: Callable[[float], ModelParams], method: Method, replica: int = 0) -> Lines:
    """The line systems of `method` on one of its replicas (`Method.replicas`)."""
    return LINE_SYSTEMS[method.name](path, method, replica)


def line_starts(
    lines: Lines, s0: float, alpha_min: float, alpha_max: float, num: int = SCAN_NUM
) -> dict[str, tuple | str]:
    """For each line, its start at s0 ((z0,) for alpha_c/alpha_l, (t0, z0) for a spinodal) or
    the reason it has none in [alpha_min, alpha_max]: one scan of both branches on `num`
    alphas (Gauss-Hermite: at the scan order, SCAN_NUM alphas)."""
    return lines.starts(s0, alpha_min, alpha_max, num)


def line_follower(
    name: str,
    lines: Lines,
    start: tuple | str | None,
    alpha_window: tuple[float, float],
) -> LineFollower | FoldFollower:
    """The follower of one line from its start (`line_starts`: a tuple, or the reason there is
    none; None when the line resumes from stored points), with the corrector tolerance of the
    lines' method (`newton_tol`, default NEWTON_TOL)."""
    z0 = start[-1] if isinstance(start, tuple) else None
    tol = getattr(lines, "newton_tol", NEWTON_TOL)
    if name in ("alpha_c", "alpha_l"):
        make = lines.crossing if name == "alpha_c" else lines.linear
        follower: LineFollower | FoldFollower = LineFollower(
            make, z0, alpha_window=alpha_window, check=lines.check(name), tol=tol
        )
    else:
        branch = name.removeprefix("spinodal_")
        follower = FoldFollower(
            lambda s, t: lines.fold(branch, s, t),
            FOLD_SIGN[branch],
            start[0] if isinstance(start, tuple) else math.nan,
            z0,
            alpha_window=alpha_window,
            check=lines.check_fold(branch),
            tol=tol,
        )
    if isinstance(start, str):
        follower.ended = start
    return follower


def check_lines(names: Sequence[str], alpha_min: float, alpha_max: float) -> None:
    """ValueError for unknown line names or an empty or reversed alpha window."""
    unknown = [n for n in names if n not in LINES]
    if unknown or not names:
        raise ValueError(f"names: lines must be a non-empty subset of {LINES}, got {list(names)}")
    if not 0 < alpha_min < alpha_max or not math.isfinite(alpha_max):
        raise ValueError(f"need 0 < alpha_min < alpha_max, got {alpha_min}, {alpha_max}")


def check_line_model(p: ModelParams, method: Method) -> None:
    """ValueError for a model the line systems do not solve: lines follow the tied model with
    Gaussian tokens (`find_transitions` scans any variant)."""
    if not p.is_tied_gaussian:
        raise ValueError(
            f"variant: the lines are followed for the tied model with Gaussian tokens, got "
            f"{p.variant} (find_transitions scans any variant)"
        )


def transition_lines(
    p: ModelParams,
    values: Sequence[float],
    *,
    parameter: str = "omega",
    A_end=None,
    alpha_min: float = 0.2,
    alpha_max: float = 2.5,
    method: Method | str = "auto",
    names: Sequence[str] = LINES,
    scan_num: int = SCAN_NUM,
    progress: bool = False,
) -> dict[str, list[LinePoint]]:
    """alpha_c, alpha_l and both spinodals (`names`) along `values` of `parameter` (in the
    given order) by continuation from a scan at values[0] on every replica of `method`; per
    value the replica's point (Gauss-Hermite) or the mean over scramblings and its standard
    error (QMC, `combine`). method "auto": `GaussHermite()` where it applies, else
    `LINE_METHOD` (2048 points x 4 scramblings). In this process and without a store
    (`line_table` splits, parallelises and resumes)."""
    check_lines(names, alpha_min, alpha_max)
    values = [float(v) for v in values]
    if not values:
        raise ValueError(f"{parameter}: give at least one value")
    m = resolve_method(method, p, LINE_METHOD)
    check_line_model(p, m)
    scan_num = check_int("scan_num", scan_num, minimum=3)
    path = parameter_path(p, parameter, A_end)
    window = (alpha_min, alpha_max)
    per_replica: dict[str, list[list[LinePoint]]] = {name: [] for name in names}
    reps = m.replicas()
    for k in progress_bar(reps, desc="scramblings", enabled=progress and len(reps) > 1):
        lines = method_lines(path, m, k)
        starts = line_starts(lines, values[0], alpha_min, alpha_max, scan_num)
        for name in names:
            follower = line_follower(name, lines, starts[name], window)
            per_replica[name].append([follower.step(v) for v in values])
    if not m.averages_replicas:
        return {name: pts[0] for name, pts in per_replica.items()}
    return {
        name: [combine(v, [pts[i] for pts in per_replica[name]]) for i, v in enumerate(values)]
        for name in names
    }
