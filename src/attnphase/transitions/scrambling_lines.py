"""The transition lines with QMC integration (any L, r, t and encodings; docs/theory.md §7) by
continuation, in the method-agnostic machinery of `systems`, `continuation` and `folds`.

Every line is followed on each independent scrambling of the quasi-Monte Carlo points on its
own: on one scrambling the state evolution is a deterministic map, so its transitions are roots
of the defining systems of `systems` as with Gauss-Hermite. The reported root is the mean over
scramblings and its error the standard error of that mean (docs/theory.md §7.6, `combine`), as in
`scan`; there is no second accuracy to check a root against, so the lines' `check` is None.

Order parameter of a branch (the component held fixed on a spinodal's system): theta[0, 0]
(first teacher direction, first student column) on the semantic branch and M[0, 0] (the first
encoding direction u_1, first student column: the positional column of `free_overlaps`) on the
positional one. For r = t = K = 1 they are theta and m themselves (m_l = C_l m). Branch states
are packed overlaps (`engine.Layout`: q, M, theta, V for r = t = K = 1).

A branch that ends continuously (its order parameter -> 0: the semantic branch at L = 2) does
not end on one scrambling: the points are symmetric under (xi, y) -> -(xi, y), not under
y -> -y alone, so below the bifurcation theta stays at the integration-noise level (measured
1e-3 to 6e-3 at alpha 0.3-0.6, L = 2, omega 0.3, 1024 points, against a bifurcation at 0.72)
instead of 0; the scan sees no end there, and the spinodal's reason says so with the order
parameter at the window's edge.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..params import ModelParams, check_int
from ..theory import QMC
from ..theory.baseline import linear_test_error_qmc
from ..theory.branch_maps import ScramblingBranchMap, packed_overlaps, scrambling_channel
from ..theory.replicas import QMCChannel, scrambling_scan
from .continuation import LinePoint
from .paths import SCAN_NUM
from .roots import bracket_sign_changes, interpolated_root
from .scan import BRANCHES, BranchScan
from .systems import BranchAtOrder, CrossingSystem, LinearSystem

LINE_METHOD = QMC(points=2048, randomisations=4)


class ScramblingLines:
    """The defining systems of the four lines at any s of a parameter path on scrambling k of
    `randomisations` independent scramblings of `points` Sobol points (seeds seed + k, as
    `make_channels`). The factories match `lines.GaussHermiteLines`; `check` and `check_fold` are
    None: the error of a root is the spread over scramblings (`qmc_transition_lines`).

    newton_tol: the step tolerance the corrector needs on this engine (`newton_broyden`'s
    tol, read by `lines.line_follower`; continuation's default 1e-10 is not reached at
    L = 3: 'maximum iterations' after 320 evaluations at omega 0.3, 2048 points, where tol
    1e-7 converges in 146 cold and 16 warm, residual 3e-9). The map repeats itself only to
    ~6e-10 (the prox's warm start from the previous evaluation decides a few nodes)."""

    newton_tol = 1e-7

    def __init__(self, path: Callable[[float], ModelParams], method: QMC, k: int):
        self.path, self.method = path, method
        if not 0 <= k < method.randomisations:
            raise ValueError(f"k must be a scrambling in [0, {method.randomisations}), got {k!r}")
        self.k = int(k)
        self._channel: QMCChannel | None = None

    def channel(self, p: ModelParams) -> QMCChannel:
        """The scrambling's points (made at the first call; L, r, t are the same along a
        path)."""
        if self._channel is None:
            self._channel = scrambling_channel(p, self.method, self.k)
        return self._channel

    def branch_map(self, branch: str, s: float) -> ScramblingBranchMap:
        p = self.path(s)
        return ScramblingBranchMap(branch, p, self.channel(p))

    def crossing(self, s: float) -> CrossingSystem:
        return CrossingSystem(self.branch_map("semantic", s), self.branch_map("positional", s))

    def linear(self, s: float) -> LinearSystem:
        return LinearSystem(self.branch_map("semantic", s), eps_lin(self.path(s)))

    def fold(self, branch: str, s: float, t: float) -> BranchAtOrder:
        return BranchAtOrder(self.branch_map(branch, s), t)

    def check(self, kind: str) -> None:
        return None

    def check_fold(self, branch: str) -> None:
        return None

    def starts(
        self, s0: float, alpha_min: float, alpha_max: float, num: int = SCAN_NUM
    ) -> dict[str, tuple | str]:
        """`scrambling_line_starts` on this scrambling."""
        return scrambling_line_starts(self, s0, alpha_min, alpha_max, num)


def eps_lin(p: ModelParams) -> float:
    """The linear baseline's test error (docs/theory.md §7.4, QMC; memoised)."""
    return linear_test_error_qmc(p)[0]


def _packed(p: ModelParams, sol) -> np.ndarray:
    return packed_overlaps(p, sol.overlaps)


def scrambling_line_starts(
    lines: ScramblingLines, s0: float, alpha_min: float, alpha_max: float, num: int = SCAN_NUM
) -> dict[str, tuple | str]:
    """For each line, its start at s0 on the lines' scrambling ((z0,) for alpha_c/alpha_l,
    (t0, z0) for a spinodal) or the reason it has none in [alpha_min, alpha_max]: the format
    of `lines.line_starts`. One scan of both branches on `num` alphas
    (`qmc_curve` on this scrambling); the roots are bracketed on the grid and
    interpolated linearly, the branch states there solved warm from the nearest grid point
    (`BranchScan.at`); a spinodal starts from the branch's last grid point."""
    p0 = lines.path(s0)
    alphas = [float(a) for a in np.linspace(alpha_min, alpha_max, check_int("num", num, 3))]
    replica = scrambling_scan(p0, alphas, lines.method, lines.channel(p0))
    branches = {b: BranchScan(replica, alphas, b) for b in BRANCHES}
    sem, pos = branches["semantic"], branches["positional"]
    starts: dict[str, tuple | str] = {}
    gaps = np.subtract(sem.grid_values("train_loss"), pos.grid_values("train_loss"))
    brackets = bracket_sign_changes(alphas, gaps)
    starts["alpha_c"] = f"no alpha_c in [{alpha_min}, {alpha_max}] at {s0:g}"
    if brackets:
        a0 = interpolated_root(alphas, list(gaps), *brackets[0])
        xs, xp = sem.at(a0), pos.at(a0)
        if xs is not None and xp is not None:
            system = lines.crossing(s0)
            starts["alpha_c"] = (system.pack(_packed(p0, xs), _packed(p0, xp), a0),)
    lin = np.subtract(sem.grid_values("test_error"), eps_lin(p0))
    brackets = bracket_sign_changes(alphas, lin)
    starts["alpha_l"] = f"no alpha_l on the semantic branch at {s0:g}"
    if brackets:
        a0 = interpolated_root(alphas, list(lin), *brackets[0])
        xl = sem.at(a0)
        if xl is not None:
            starts["alpha_l"] = (lines.linear(s0).pack(_packed(p0, xl), a0),)
    for branch, lower in (("semantic", True), ("positional", False)):
        on = [
            i for i, a in enumerate(branches[branch].grid_values("train_loss")) if math.isfinite(a)
        ]
        end = (on[0] if lower else on[-1]) if on else None
        name = f"spinodal_{branch}"
        fold = lines.fold(branch, s0, 1.0)
        if end is None:
            starts[name] = f"no {branch} fixed point in the window at {s0:g}"
            continue
        if end == (0 if lower else len(alphas) - 1):
            x = _packed(p0, branches[branch].grid[end])
            t_end = abs(x[fold.map.free[fold.slot]])
            starts[name] = (
                f"the {branch} branch does not end in the window at {s0:g} (order parameter "
                f"{t_end:.2g} at alpha {alphas[end]:.3g})"
            )
            continue
        x = _packed(p0, branches[branch].grid[end])
        starts[name] = (float(x[fold.map.free[fold.slot]]), fold.pack(x, alphas[end]))
    return starts


@dataclass(frozen=True)
class CombinedLinePoint(LinePoint):
    """A line point over scramblings: alpha the mean of the per-scrambling roots, alpha_err the
    standard error of that mean (NaN, with the reason in status, below two roots), states the
    mean branch states (packed overlaps, `engine.Layout`), evaluations their sum; roots and
    statuses per scrambling."""

    roots: tuple[float, ...] = ()
    statuses: tuple[str, ...] = ()


def combine(s: float, points: Sequence[LinePoint]) -> CombinedLinePoint:
    """The per-scrambling points of one line at s as one `CombinedLinePoint`."""
    ok = [pt for pt in points if pt.ok]
    roots = tuple(pt.alpha for pt in points)
    statuses = tuple(pt.status for pt in points)
    evals = sum(pt.evaluations for pt in points)
    n = len(points)
    if not ok:
        reasons = "; ".join(sorted(set(statuses)))
        return CombinedLinePoint(
            float(s), math.nan, math.nan, {}, evals, reasons, None, math.nan, roots, statuses
        )
    alpha = float(np.mean([pt.alpha for pt in ok]))
    states = {b: np.mean([pt.states[b] for pt in ok], axis=0) for b in ok[0].states}
    t = float(np.mean([pt.t for pt in ok]))
    status = ok[0].status
    if len(ok) < 2:
        err = math.nan
        status = f"{status} on 1 of {n} scramblings: no error bar"
    else:
        err = float(np.std([pt.alpha for pt in ok], ddof=1) / math.sqrt(len(ok)))
        if len(ok) < n:
            status = f"{status} on {len(ok)} of {n} scramblings"
    return CombinedLinePoint(float(s), alpha, err, states, evals, status, None, t, roots, statuses)
