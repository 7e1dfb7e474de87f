"""Transition lines by continuation (issue 12): alpha_c, alpha_l and the spinodals of the exact
L=2 engine followed in a second parameter (omega by default) instead of re-scanning alpha.

One point is found by a scan (`l2_transitions` at a coarse order on a coarse alpha grid) and
refined on the defining system of `systems` at the working order; from there each line is
followed along the parameter values with a secant predictor (on all unknowns: alpha and the
branch states) and a Newton-Broyden corrector whose Jacobian is carried along the line. Where
the corrector fails the step is halved (MAX_HALVINGS times) before the line is declared ended,
with the reason: a branch collapsed or became inadmissible, alpha left the window, or the
corrector failed. The error of each reported root is |root(order) - root(check_order)|, the
system re-solved at the second order from the converged point only (not a second scan).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..params import ModelParams
from ..theory import DEFAULT_ORDER, NonConvergenceWarning
from .l2 import CHECK_ORDER
from .newton import newton_broyden
from .systems import BranchAtOrder, CrossingSystem, LinearSystem

MAX_HALVINGS = 4
SCAN_ORDER = (24, 8)  # the first point's scan: brackets only, the roots are refined after
SCAN_NUM = 16


@dataclass(frozen=True)
class LinePoint:
    """One point of a line: the parameter value s, the root alpha with its error, the branch
    states (overlaps q, m, V, theta) there, the SE map evaluations it cost and its status
    ("converged", "converged (bifurcation, t -> 0)" for a spinodal where the branch meets the
    trivial fixed point, or why the line ended before this value: then alpha is NaN)."""

    s: float
    alpha: float
    alpha_err: float
    states: dict
    evaluations: int
    status: str


def _check(make_system: Callable, s: float, z: np.ndarray, J, check_order) -> tuple[float, int]:
    """The root re-solved at the second quadrature order from the converged point, and the
    SE map evaluations it took."""
    system = make_system(s, check_order)
    rep = newton_broyden(system, z, J)
    return (float(rep.z[-1]) if rep.converged else math.nan), system.evaluations


def follow(
    make_system: Callable[[float, tuple[int, int]], object],
    z0: np.ndarray,
    s_values: Sequence[float],
    *,
    alpha_window: tuple[float, float],
    order=DEFAULT_ORDER,
    check_order=CHECK_ORDER,
) -> list[LinePoint]:
    """Follow the root of make_system(s, order)(z) = 0 (alpha = z[-1]) through s_values,
    starting from z0, an approximate root at s_values[0]."""
    points: list[LinePoint] = []
    history: list[tuple[float, np.ndarray]] = []
    J = None
    ended = ""
    for s in s_values:
        if ended:
            points.append(LinePoint(s, math.nan, math.nan, {}, 0, ended))
            continue
        evals, target = 0, s
        s_try, halvings = s, 0
        while True:
            system = make_system(s_try, order)
            pred = _predict(history, s_try, z0)
            rep = newton_broyden(system, pred, J)
            evals += system.evaluations
            alpha = rep.z[-1]
            inside = alpha_window[0] <= alpha <= alpha_window[1]
            if rep.converged and inside:
                J = rep.jacobian
                history.append((s_try, rep.z))
                if s_try == target:
                    break
                s_try, halvings = target, 0
                continue
            why = rep.reason if not rep.converged else f"alpha {alpha:.4g} left the window"
            if halvings >= MAX_HALVINGS or not history:
                ended = f"line ended before {s_try:.6g}: {why}"
                break
            prev = history[-1][0]
            s_try, halvings = 0.5 * (prev + s_try), halvings + 1
            J = None if not rep.converged else J
        if ended:
            points.append(LinePoint(s, math.nan, math.nan, {}, evals, ended))
            continue
        z = history[-1][1]
        alpha_check, check_evals = _check(make_system, s, z, J, check_order)
        points.append(
            LinePoint(
                s,
                float(z[-1]),
                abs(float(z[-1]) - alpha_check),
                system.states(z),
                evals + check_evals,
                "converged",
            )
        )
    return points


def _predict(history, s, z0):
    """Secant extrapolation in s of the last two roots (the last root alone, or z0, before)."""
    if not history:
        return z0
    if len(history) == 1:
        return history[-1][1]
    (s1, z1), (s2, z2) = history[-2], history[-1]
    return z2 + (z2 - z1) * (s - s2) / (s2 - s1)


def omega_path(p: ModelParams) -> Callable[[float], ModelParams]:
    return lambda s: replace(p, omega=s)


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
    root finding), and the branch states nearest each root."""
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


def nearest_state(fp: FirstPoint, branch: str, alpha: float) -> np.ndarray | None:
    keys = [k for k in fp.states if k[0] == branch]
    if not keys:
        return None
    return fp.states[min(keys, key=lambda k: abs(k[1] - alpha))]


def _on_branch_state(
    p, branch, alpha, fp: FirstPoint, order, inward: float = 0.0
) -> tuple[np.ndarray, float] | None:
    """The branch's fixed point at alpha (or, when it does not exist there at the working
    order, up to 4 steps of `inward` towards the branch's interior) and the alpha it is at,
    warm from the scan."""
    from ..theory import solve
    from .l2 import _on

    x = nearest_state(fp, branch, alpha)
    if x is None or not math.isfinite(alpha):
        return None
    for k in range(5 if inward else 1):
        a = alpha + k * inward
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NonConvergenceWarning)
            res = solve(a, p, init=tuple(x), order=order, branch=branch)
        if _on(res, branch):
            return np.array([res.q, res.m, res.V, res.theta]), a
    return None


def transition_lines(
    p: ModelParams,
    omegas: Sequence[float],
    *,
    alpha_min: float = 0.2,
    alpha_max: float = 2.5,
    order=DEFAULT_ORDER,
    check_order=CHECK_ORDER,
) -> dict[str, list[LinePoint]]:
    """alpha_c, alpha_l and both spinodals along omegas (in the given order) by continuation
    from a scan at omegas[0]; keys alpha_c, alpha_l, spinodal_semantic, spinodal_positional."""
    order, check_order = tuple(order), tuple(check_order)
    path = omega_path(p)
    s0 = float(omegas[0])
    p0 = path(s0)
    fp = first_point(p0, alpha_min, alpha_max)
    window = (alpha_min, alpha_max)
    lines: dict[str, list[LinePoint]] = {}

    def run(name, make, z0, reason):
        if z0 is None:
            lines[name] = [LinePoint(float(s), math.nan, math.nan, {}, 0, reason) for s in omegas]
        else:
            lines[name] = follow(
                make, z0, omegas, alpha_window=window, order=order, check_order=check_order
            )

    xs = _on_branch_state(p0, "semantic", fp.alpha_c, fp, order)
    xp = _on_branch_state(p0, "positional", fp.alpha_c, fp, order)
    crossing = lambda s, o: CrossingSystem(path(s), o)  # noqa: E731
    z0 = None if xs is None or xp is None else crossing(s0, order).pack(xs[0], xp[0], fp.alpha_c)
    run("alpha_c", crossing, z0, f"no alpha_c in [{alpha_min}, {alpha_max}] at omega {s0}")

    linear = lambda s, o: LinearSystem(path(s), o, "semantic")  # noqa: E731
    xl = _on_branch_state(p0, "semantic", fp.alpha_l, fp, order)
    z0 = None if xl is None else linear(s0, order).pack(xl[0], fp.alpha_l)
    run("alpha_l", linear, z0, f"no alpha_l on the semantic branch at omega {s0}")

    step = (alpha_max - alpha_min) / (SCAN_NUM - 1) / 8
    for name, branch, alpha, inward in (
        ("spinodal_semantic", "semantic", fp.spinodal_semantic, step),
        ("spinodal_positional", "positional", fp.spinodal_positional, -step),
    ):
        x = _on_branch_state(p0, branch, alpha, fp, order, inward)
        if x is None:
            reason = f"the {branch} branch does not end in the window at omega {s0}"
            lines[name] = [LinePoint(float(s), math.nan, math.nan, {}, 0, reason) for s in omegas]
        else:
            lines[name] = follow_fold(
                path,
                branch,
                *x,
                omegas,
                alpha_window=window,
                order=order,
                check_order=check_order,
            )
    return lines


FOLD_XTOL = 1e-7  # on the order parameter t; alpha at the extremum is then exact to ~t_err^2


@dataclass
class _FoldSearch:
    """alpha(t) of `BranchAtOrder` at one parameter value, warm-started from the nearest t
    solved before, with the Jacobian carried from solve to solve."""

    make: Callable[[float], BranchAtOrder]
    solved: dict
    J: np.ndarray | None = None
    evaluations: int = 0

    def alpha(self, t: float) -> float:
        system = self.make(t)
        near = min(self.solved, key=lambda u: abs(u - t))
        rep = newton_broyden(system, self.solved[near], self.J)
        self.evaluations += system.evaluations
        if not rep.converged:
            return math.nan
        self.J = rep.jacobian
        self.solved[t] = rep.z
        return float(rep.z[-1])


def fold_on(make, z0: np.ndarray, t0: float, sign: float, J=None):
    """The extremum (sign +1: minimum, -1: maximum) of alpha(t) near t0: (t, z, J, evals,
    status). The search interval [t0/2, 3 t0/2] slides while the extremum sits on its edge."""
    from scipy.optimize import minimize_scalar

    search = _FoldSearch(make, {t0: z0}, J)

    def f(t):
        a = search.alpha(t)
        return sign * a if math.isfinite(a) else math.inf

    t0 = max(t0, FOLD_XTOL * 10)
    lo, hi = 0.5 * t0, 1.5 * t0
    for _ in range(4):
        res = minimize_scalar(f, bounds=(lo, hi), method="bounded", options={"xatol": FOLD_XTOL})
        t = float(res.x)
        if not math.isfinite(res.fun):
            return t, None, search.J, search.evaluations, "no fixed point near the fold"
        width = hi - lo
        z = search.solved[min(search.solved, key=lambda u: abs(u - t))]
        if t - lo > 0.01 * width and hi - t > 0.01 * width:
            return t, z, search.J, search.evaluations, "converged"
        if t - lo <= 0.01 * width and lo <= 10 * FOLD_XTOL:
            # alpha(t) is smallest as t -> 0: the branch ends where it bifurcates from the
            # trivial fixed point, not at a fold; its end is the alpha there
            return t, z, search.J, search.evaluations, "converged (bifurcation, t -> 0)"
        if t - lo <= 0.01 * width:
            lo, hi = max(t - 0.75 * width, 10 * FOLD_XTOL), t + 0.25 * width
        else:
            lo, hi = t - 0.25 * width, t + 0.75 * width
    return t, None, search.J, search.evaluations, "the extremum kept leaving the search interval"


def follow_fold(
    path: Callable[[float], ModelParams],
    branch: str,
    x0: np.ndarray,
    alpha0: float,
    s_values: Sequence[float],
    *,
    alpha_window: tuple[float, float],
    order=DEFAULT_ORDER,
    check_order=CHECK_ORDER,
) -> list[LinePoint]:
    """The branch's spinodal (semantic: lowest alpha, positional: highest) along s_values, from
    its fixed point x0 at alpha0 near the spinodal at s_values[0]."""
    sign = 1.0 if branch == "semantic" else -1.0
    index = 3 if branch == "semantic" else 1
    points: list[LinePoint] = []
    history: list[tuple[float, float, np.ndarray]] = []
    J, ended = None, ""
    t = float(x0[index])
    z = BranchAtOrder(path(s_values[0]), order, branch, t).pack(x0, alpha0)
    for s in s_values:
        if ended:
            points.append(LinePoint(s, math.nan, math.nan, {}, 0, ended))
            continue
        if history:
            t, z = _predict_fold(history, s)
        make = lambda u, s=s: BranchAtOrder(path(s), order, branch, u)  # noqa: E731
        t, zf, J, evals, status = fold_on(make, z, t, sign, J)
        if zf is None or not alpha_window[0] <= zf[-1] <= alpha_window[1]:
            why = status if zf is None else f"alpha {zf[-1]:.4g} left the window"
            ended = f"line ended at {s:.6g}: {why}"
            points.append(LinePoint(s, math.nan, math.nan, {}, evals, ended))
            continue
        history.append((s, t, zf))
        check = lambda u, s=s: BranchAtOrder(path(s), check_order, branch, u)  # noqa: E731
        _, zc, _, cev, _ = fold_on(check, zf, t, sign, J)
        err = abs(zf[-1] - zc[-1]) if zc is not None else math.nan
        states = make(t).states(zf)
        points.append(LinePoint(s, float(zf[-1]), float(err), states, evals + cev, status))
    return points


def _predict_fold(history, s):
    """Secant extrapolation of (t, z) in s."""
    if len(history) == 1:
        return history[0][1], history[0][2]
    (s1, t1, z1), (s2, t2, z2) = history[-2], history[-1]
    f = (s - s2) / (s2 - s1)
    return t2 + (t2 - t1) * f, z2 + (z2 - z1) * f
