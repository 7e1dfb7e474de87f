"""The transition lines of the exact L=2 engine by continuation (issue 12): alpha_c, alpha_l
and both spinodals followed along a path of model parameters (omega, sigma, lambda, or a
straight path between two targets A).

One point is found by a scan at the first parameter value (`l2_transitions`' root finding at
SCAN_ORDER on SCAN_NUM alphas: brackets only) and refined on the defining systems of `systems`
at the working order; `continuation` follows the lines from there. The error of a reported
root is |root(order) - root(check_order)|, the system re-solved at the second order from the
converged point only (not a second scan).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..baseline import linear_test_error
from ..params import ModelParams
from ..theory import DEFAULT_ORDER, NonConvergenceWarning
from .continuation import FoldFollower, LineFollower, LinePoint, fold_on, solve_root
from .l2 import CHECK_ORDER
from .systems import BranchAtOrder, BranchMap, CrossingSystem, LinearSystem

SCAN_ORDER = (24, 8)  # the first point's scan: brackets only, the roots are refined after
SCAN_NUM = 16
LINES = ("alpha_c", "alpha_l", "spinodal_semantic", "spinodal_positional")
PATHS = ("omega", "sigma", "lam", "A")
FOLD_SIGN = {"semantic": 1.0, "positional": -1.0}  # semantic ends at its lowest alpha


def parameter_path(
    p: ModelParams, parameter: str = "omega", A_end=None
) -> Callable[[float], ModelParams]:
    """s -> the model at parameter = s (omega, sigma, lam), or, for "A", at
    A = (1 - s) p.A + s A_end (s in [0, 1])."""
    if parameter not in PATHS:
        raise ValueError(f"parameter must be one of {PATHS}, got {parameter!r}")
    if parameter == "A":
        if A_end is None:
            raise ValueError("a path in A needs A_end")
        a0, a1 = np.asarray(p.A, dtype=float), np.asarray(A_end, dtype=float)
        return lambda s: replace(p, A=((1 - s) * a0 + s * a1).tolist())
    return lambda s: replace(p, **{parameter: float(s)})


@dataclass(frozen=True)
class FirstPoint:
    """The scan at the first parameter value: approximate roots and branch states."""

    alpha_c: float
    alpha_l: float
    spinodal_semantic: float
    spinodal_positional: float
    states: dict  # (branch, alpha) -> overlaps (q, m, V, theta) on that branch


def first_point(p: ModelParams, alpha_min: float, alpha_max: float) -> FirstPoint:
    """Brackets of every root on a SCAN_NUM-point alpha grid at SCAN_ORDER (`l2_transitions`'
    root finding), and the branch states at the grid points on each branch."""
    from ..theory import learning_curve
    from .l2 import _on, _roots, _spinodal

    alphas = [float(a) for a in np.linspace(alpha_min, alpha_max, SCAN_NUM)]
    sem = learning_curve(alphas, p, branch="semantic", order=SCAN_ORDER)
    pos = learning_curve(alphas, p, branch="positional", order=SCAN_ORDER)
    ac, al, _, _ = _roots(alphas, p, sem, pos, SCAN_ORDER)
    ss = _spinodal(alphas, sem, "semantic", p, SCAN_ORDER, lower=True)
    sp = _spinodal(alphas, pos, "positional", p, SCAN_ORDER, lower=False)
    states = {
        (b, r.alpha): np.array([r.q, r.m, r.V, r.theta])
        for b, curve in (("semantic", sem), ("positional", pos))
        for r in curve
        if _on(r, b)
    }
    return FirstPoint(ac, al, ss, sp, states)


def _state_near(
    p, branch, alpha, fp: FirstPoint, order, inward: float = 0.0
) -> tuple[np.ndarray, float] | None:
    """The branch's fixed point at alpha (or, when it does not exist there at the working
    order, up to 4 steps of `inward` towards the branch's interior) and the alpha it is at,
    warm from the nearest scanned state."""
    from ..theory import solve
    from .l2 import _on

    keys = [k for k in fp.states if k[0] == branch]
    if not keys or not math.isfinite(alpha):
        return None
    x = fp.states[min(keys, key=lambda k: abs(k[1] - alpha))]
    for k in range(5 if inward else 1):
        a = alpha + k * inward
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NonConvergenceWarning)
            res = solve(a, p, init=tuple(x), order=order, branch=branch)
        if _on(res, branch):
            return np.array([res.q, res.m, res.V, res.theta]), a
    return None


class L2Lines:
    """The defining systems of the four lines at any s of a parameter path, at the working
    order and at the check order."""

    def __init__(self, path, order=DEFAULT_ORDER, check_order=CHECK_ORDER):
        self.path, self.order, self.check_order = path, tuple(order), tuple(check_order)

    def crossing(self, s: float, order=None) -> CrossingSystem:
        p, o = self.path(s), order or self.order
        return CrossingSystem(BranchMap("semantic", p, o), BranchMap("positional", p, o))

    def linear(self, s: float, order=None) -> LinearSystem:
        p = self.path(s)
        return LinearSystem(BranchMap("semantic", p, order or self.order), linear_test_error(p))

    def fold(self, branch: str, s: float, t: float, order=None) -> BranchAtOrder:
        return BranchAtOrder(BranchMap(branch, self.path(s), order or self.order), t)

    def check(self, kind: str) -> Callable:
        """check(s, z, J) of `follow`: the root re-solved at the check order."""
        make = self.crossing if kind == "alpha_c" else self.linear
        return lambda s, z, J: solve_root(make(s, self.check_order), z, J)

    def check_fold(self, branch: str) -> Callable:
        """check(s, t, z, J) of `follow_fold`: the extremum re-found at the check order."""

        def check(s, t, z, J):
            fold = fold_on(
                lambda u: self.fold(branch, s, u, self.check_order), z, t, FOLD_SIGN[branch], J
            )
            return (float(fold.z[-1]) if fold.z is not None else math.nan), fold.evaluations

        return check


def line_starts(
    lines: L2Lines, s0: float, alpha_min: float, alpha_max: float
) -> dict[str, tuple | str]:
    """For each line, its start at s0 ((z0,) for alpha_c/alpha_l, (t0, z0) for a spinodal) or
    the reason it has none in [alpha_min, alpha_max]."""
    p0 = lines.path(s0)
    fp = first_point(p0, alpha_min, alpha_max)
    order = lines.order
    starts: dict[str, tuple | str] = {}
    xs = _state_near(p0, "semantic", fp.alpha_c, fp, order)
    xp = _state_near(p0, "positional", fp.alpha_c, fp, order)
    if xs is None or xp is None:
        starts["alpha_c"] = f"no alpha_c in [{alpha_min}, {alpha_max}] at {s0:g}"
    else:
        starts["alpha_c"] = (lines.crossing(s0).pack(xs[0], xp[0], fp.alpha_c),)
    xl = _state_near(p0, "semantic", fp.alpha_l, fp, order)
    if xl is None:
        starts["alpha_l"] = f"no alpha_l on the semantic branch at {s0:g}"
    else:
        starts["alpha_l"] = (lines.linear(s0).pack(xl[0], fp.alpha_l),)
    step = (alpha_max - alpha_min) / (SCAN_NUM - 1) / 8
    for branch, alpha, inward in (
        ("semantic", fp.spinodal_semantic, step),
        ("positional", fp.spinodal_positional, -step),
    ):
        x = _state_near(p0, branch, alpha, fp, order, inward)
        if x is None:
            starts[f"spinodal_{branch}"] = f"the {branch} branch does not end in the window"
        else:
            system = lines.fold(branch, s0, 1.0)
            t0 = float(x[0][system.map.free[system.slot]])
            starts[f"spinodal_{branch}"] = (t0, system.pack(x[0], x[1]))
    return starts


def line_follower(
    name: str, lines: L2Lines, start: tuple | str | None, alpha_window: tuple[float, float]
) -> LineFollower | FoldFollower:
    """The follower of one line from its start (`line_starts`: a tuple, or the reason there is
    none; None when the line resumes from stored points)."""
    z0 = start[-1] if isinstance(start, tuple) else None
    if name in ("alpha_c", "alpha_l"):
        make = lines.crossing if name == "alpha_c" else lines.linear
        follower: LineFollower | FoldFollower = LineFollower(
            make, z0, alpha_window=alpha_window, check=lines.check(name)
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
        )
    if isinstance(start, str):
        follower.ended = start
    return follower


def transition_lines(
    p: ModelParams,
    values: Sequence[float],
    *,
    parameter: str = "omega",
    A_end=None,
    alpha_min: float = 0.2,
    alpha_max: float = 2.5,
    order=DEFAULT_ORDER,
    check_order=CHECK_ORDER,
    names: Sequence[str] = LINES,
) -> dict[str, list[LinePoint]]:
    """alpha_c, alpha_l and both spinodals (`names`) along `values` of `parameter` (in the
    given order) by continuation from a scan at values[0], in this process and without a
    store (`transition_table` splits, parallelises and resumes)."""
    lines = L2Lines(parameter_path(p, parameter, A_end), order, check_order)
    starts = line_starts(lines, float(values[0]), alpha_min, alpha_max)
    window = (alpha_min, alpha_max)
    out = {}
    for name in names:
        follower = line_follower(name, lines, starts[name], window)
        out[name] = [follower.step(float(v)) for v in values]
    return out
