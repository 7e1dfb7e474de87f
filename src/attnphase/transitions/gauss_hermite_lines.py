"""The transition lines with Gauss-Hermite integration (the exact L = 2 channel, docs/theory.md §5).

Each line starts from one scan (`first_point`: both branches on SCAN_NUM alphas at SCAN_ORDER,
roots by linear interpolation of their first sign change), refined on the defining systems of
`systems` at the working order; `continuation` and `folds` follow the lines from there. The
error of a reported root is |root(order) - root(check_order)|, the system re-solved at the
second order from the converged point only (not a second scan).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..params import ModelParams
from ..theory import GaussHermite, NonConvergenceWarning
from ..theory.baseline import linear_test_error
from ..theory.branch_maps import GaussHermiteBranchMap
from ..theory.branches import on_own_branch as _on
from .continuation import Check, solve_root
from .folds import FoldCheck
from .paths import SCAN_NUM
from .roots import first_interpolated_root
from .systems import BranchAtOrder, CrossingSystem, LinearSystem

SCAN_ORDER = (16, 8)  # the start scan (or the working order if coarser): brackets only


@dataclass(frozen=True)
class FirstPoint:
    """The scan at the first parameter value: approximate roots and branch states."""

    alpha_c: float
    alpha_l: float
    spinodal_semantic: float
    spinodal_positional: float
    states: dict  # (branch, alpha) -> overlaps (q, m, V, theta) on that branch
    # why the roots above may miss a transition (`scan_doubts`); empty where none is seen
    doubts: tuple[str, ...] = ()


def first_point(
    p: ModelParams, alpha_min: float, alpha_max: float, order=SCAN_ORDER, working=None
) -> FirstPoint:
    """Both branches on a SCAN_NUM-point alpha grid at `order`: each root is the linear
    interpolation of its first sign change on the grid (alpha_c: training losses; alpha_l:
    the semantic branch's eps_g - eps_lin), each spinodal the grid alpha where its branch is
    last seen before it ends inside the grid (NaN where it does not); Newton refines them at
    the working order. A grid alpha where a curve left its branch between two where it is on
    it is solved again at the `working` order (default `order`) from the branch's state at the
    grid alpha before (`_fill_holes`)."""
    from ..theory import learning_curve

    alphas = [float(a) for a in np.linspace(alpha_min, alpha_max, SCAN_NUM)]
    sem = learning_curve(alphas, p, branch="semantic", method=GaussHermite(order), errors=False)
    pos = learning_curve(alphas, p, branch="positional", method=GaussHermite(order), errors=False)
    on_s = _fill_holes(p, "semantic", sem, working or order)
    on_p = _fill_holes(p, "positional", pos, working or order)
    nan = math.nan
    gap, lin = [], []
    for s, q, s_ok, p_ok in zip(sem, pos, on_s, on_p, strict=True):
        gap.append(s.train_loss - q.train_loss if s_ok and p_ok else nan)
        lin.append(s.test_error - s.linear_test_error if s_ok else nan)
    first = on_s.index(True) if any(on_s) else 0
    last = len(on_p) - 1 - on_p[::-1].index(True) if any(on_p) else len(on_p) - 1
    states = {
        (b, r.alpha): np.array([r.q, r.m, r.V, r.theta])
        for b, curve, on in (("semantic", sem, on_s), ("positional", pos, on_p))
        for r, ok in zip(curve, on, strict=True)
        if ok
    }
    return FirstPoint(
        first_interpolated_root(alphas, gap),
        first_interpolated_root(alphas, lin),
        alphas[first] if first > 0 else nan,
        alphas[last] if last < len(alphas) - 1 else nan,
        states,
        scan_doubts(alphas, sem, pos, on_s, on_p),
    )


def _fill_holes(p: ModelParams, branch: str, curve: list, order) -> list[bool]:
    """Which points of `curve` (fixed points along the grid) lie on `branch`, after solving
    again (in place, at `order`) each point off it between two on it, warm from the point
    before: at a coarse order the solver can lose a branch at one alpha and find it at the next
    (omega 0.1, the positional branch at alpha 0.66: 447 iterations without converging at
    (16, 8), converged in 139 at (24, 8))."""
    from ..theory import solve

    on = [_on(r, branch) for r in curve]
    for i in _holes(on):
        if on[i - 1]:  # the point before is on the branch, or was just solved again onto it
            r = curve[i - 1]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", NonConvergenceWarning)
                again = solve(
                    curve[i].alpha,
                    p,
                    start=(r.q, r.m, r.V, r.theta),
                    method=GaussHermite(order),
                    branch=branch,
                    errors=False,
                )
            if _on(again, branch):
                curve[i], on[i] = again, True
    return on


def _holes(on: list[bool]) -> list[int]:
    """The indices off the branch between the first and the last on it, in increasing order."""
    found = [i for i, ok in enumerate(on) if ok]
    return [i for i in range(found[0] + 1, found[-1]) if not on[i]] if found else []


def scan_doubts(alphas: list[float], sem: list, pos: list, on_s: list, on_p: list) -> tuple:
    """Why the start scan's roots may miss a transition: a branch not found at a grid alpha
    between two where it is (a root of the losses' gap may hide in the hole), or the positional
    branch as the global minimum with eps_g below eps_lin (alpha_l may then lie on it, where
    the lines do not look)."""
    doubts = []
    for branch, on in (("semantic", on_s), ("positional", on_p)):
        if holes := _holes(on):
            doubts.append(
                f"the {branch} branch is not found at alpha {alphas[holes[0]]:.4g}, between grid "
                "alphas where it is"
            )
    if any(
        p_ok and (not s_ok or q.train_loss <= s.train_loss) and q.test_error < q.linear_test_error
        for s, q, s_ok, p_ok in zip(sem, pos, on_s, on_p, strict=True)
    ):
        doubts.append("the positional branch is the global minimum below eps_lin")
    return tuple(doubts)


def _state_near(p, branch, alpha, fp: FirstPoint, order) -> np.ndarray | None:
    """The branch's fixed point at alpha at the scan's `order`, warm from the nearest scanned
    state (None where it is not on the branch)."""
    from ..theory import solve

    keys = [k for k in fp.states if k[0] == branch]
    if not keys or not math.isfinite(alpha):
        return None
    x = fp.states[min(keys, key=lambda k: abs(k[1] - alpha))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonConvergenceWarning)
        res = solve(
            alpha, p, start=tuple(x), method=GaussHermite(order), branch=branch, errors=False
        )
    return np.array([res.q, res.m, res.V, res.theta]) if _on(res, branch) else None


class GaussHermiteLines:
    """The defining systems of the four lines at any s of a parameter path, at the working
    order and at the check order."""

    def __init__(
        self, path: Callable[[float], ModelParams], method: GaussHermite, replica: int = 0
    ):
        """`replica`: the method's only one, 0 (its second order is the `check`)."""
        self.path, self.order, self.check_order = path, method.order, method.check_order

    def crossing(self, s: float, order=None) -> CrossingSystem:
        p, o = self.path(s), order or self.order
        return CrossingSystem(
            GaussHermiteBranchMap("semantic", p, o), GaussHermiteBranchMap("positional", p, o)
        )

    def linear(self, s: float, order=None) -> LinearSystem:
        p = self.path(s)
        return LinearSystem(
            GaussHermiteBranchMap("semantic", p, order or self.order), linear_test_error(p)
        )

    def fold(self, branch: str, s: float, t: float, order=None) -> BranchAtOrder:
        return BranchAtOrder(GaussHermiteBranchMap(branch, self.path(s), order or self.order), t)

    def check(self, kind: str) -> Check:
        """check(s, z, J) of `follow`: the root re-solved at the check order."""
        make = self.crossing if kind == "alpha_c" else self.linear
        return lambda s, z, J: solve_root(make(s, self.check_order), z, J)

    def check_fold(self, branch: str) -> FoldCheck:
        """check(s, t, z, J) of `follow_fold`: the spinodal's system re-solved at the check
        order at the same t. alpha(t) is stationary at a fold, so moving t to the check
        order's own extremum would change alpha at second order only; at a bifurcation both
        orders evaluate the branch at the same end t."""
        return lambda s, t, z, J: solve_root(self.fold(branch, s, t, self.check_order), z, J)

    def starts(
        self, s0: float, alpha_min: float, alpha_max: float, num: int = SCAN_NUM
    ) -> dict[str, tuple | str]:
        """`gauss_hermite_line_starts` (its scan has SCAN_NUM alphas whatever `num`)."""
        return gauss_hermite_line_starts(self, s0, alpha_min, alpha_max)


def scan_order(order: tuple[int, int]) -> tuple[int, int]:
    """The order of the start scan: SCAN_ORDER, or the working `order` where it is coarser."""
    return (min(SCAN_ORDER[0], order[0]), min(SCAN_ORDER[1], order[1]))


def gauss_hermite_line_starts(
    lines: GaussHermiteLines,
    s0: float,
    alpha_min: float,
    alpha_max: float,
    fp: FirstPoint | None = None,
) -> dict[str, tuple | str]:
    """For each line, its start at s0 ((z0,) for alpha_c/alpha_l, (t0, z0) for a spinodal) or
    the reason it has none in [alpha_min, alpha_max]; `fp`: the start scan at s0, where it is
    already done (`first_point` at `scan_order`)."""
    p0 = lines.path(s0)
    order = scan_order(lines.order)  # the states too: Newton takes them to the working order
    if fp is None:
        fp = first_point(p0, alpha_min, alpha_max, order, lines.order)
    starts: dict[str, tuple | str] = {}
    xs = _state_near(p0, "semantic", fp.alpha_c, fp, order)
    xp = _state_near(p0, "positional", fp.alpha_c, fp, order)
    missing = [b for b in ("semantic", "positional") if not any(k[0] == b for k in fp.states)]
    if missing:  # no crossing can be looked for: say which branch, not "no alpha_c"
        starts["alpha_c"] = (
            f"no {' and no '.join(missing)} fixed point found in [{alpha_min}, {alpha_max}] "
            f"at {s0:g}"
        )
    elif xs is None or xp is None:
        starts["alpha_c"] = f"no alpha_c in [{alpha_min}, {alpha_max}] at {s0:g}"
    else:
        starts["alpha_c"] = (lines.crossing(s0).pack(xs, xp, fp.alpha_c),)
    xl = _state_near(p0, "semantic", fp.alpha_l, fp, order)
    if "semantic" in missing:
        starts["alpha_l"] = f"no semantic fixed point found in [{alpha_min}, {alpha_max}] at {s0:g}"
    elif xl is None:
        starts["alpha_l"] = f"no alpha_l on the semantic branch at {s0:g}"
    else:
        starts["alpha_l"] = (lines.linear(s0).pack(xl, fp.alpha_l),)
    for branch, alpha in (
        ("semantic", fp.spinodal_semantic),
        ("positional", fp.spinodal_positional),
    ):
        if not math.isfinite(alpha):
            starts[f"spinodal_{branch}"] = f"the {branch} branch does not end in the window"
        else:
            x = fp.states[(branch, alpha)]
            system = lines.fold(branch, s0, 1.0)
            t0 = float(x[system.map.free[system.slot]])
            starts[f"spinodal_{branch}"] = (t0, system.pack(x, alpha))
    return starts
