"""Transitions of THEORY.md §5 with the exact L=2 engine.

Each branch is followed along a grid of alpha (`learning_curve`); sign changes on the grid
bracket the roots, which scipy's brentq refines with solves warm-started from the nearest grid
point on the branch. Where a re-solve inside a bracket leaves the branch, the root is the linear
interpolation of the bracketing grid values instead, flagged in the result. The error estimate
is the change of each root between two quadrature orders, plus the interpolation's error bound.
"""

from __future__ import annotations

import math
import warnings

from ..params import ModelParams
from ..theory import (
    GaussHermite,
    NonConvergenceWarning,
    TheoryResult,
    learning_curve,
    solve,
)
from .record import Transitions
from .roots import bracket_sign_changes, refine_or_interpolate


def _on(res: TheoryResult, branch: str) -> bool:
    return res.converged and res.kind == branch


def _solve_from(alpha, p, near: TheoryResult, order) -> TheoryResult:
    """Solve on near's branch from its overlaps; not converging there means leaving the branch."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonConvergenceWarning)
        return solve(
            alpha,
            p,
            start=(near.q, near.m, near.V, near.theta),
            method=GaussHermite(order),
            branch=near.branch,
        )


def _nearest_on(results, branch, alpha) -> TheoryResult | None:
    on = [r for r in results if _on(r, branch)]
    return min(on, key=lambda r: abs(r.alpha - alpha), default=None)


def _spinodal(alphas, results, branch, p, order, lower: bool, steps: int = 6) -> float:
    """Where the branch ends inside the grid range, by bisection between the last grid point on
    the branch and the next one off it; NaN when it exists at the end of the range."""
    on = [i for i, r in enumerate(results) if _on(r, branch)]
    if not on:
        return float("nan")
    i = on[0] if lower else on[-1]
    j = i - 1 if lower else i + 1
    if j < 0 or j >= len(alphas):
        return float("nan")
    a_on, a_off, near = alphas[i], alphas[j], results[i]
    for _ in range(steps):
        mid = 0.5 * (a_on + a_off)
        res = _solve_from(mid, p, near, order)
        if _on(res, branch):
            a_on, near = mid, res
        else:
            a_off = mid
    return a_on


def _value(alpha, p, branch, results, order, key) -> float:
    """`key` of the branch at alpha, solved from the nearest grid point on the branch."""
    near = _nearest_on(results, branch, alpha)
    if near is None:
        return float("nan")
    res = _solve_from(alpha, p, near, order)
    return getattr(res, key) if _on(res, branch) else float("nan")


def _global_minimum(sem: TheoryResult, pos: TheoryResult) -> TheoryResult | None:
    """The branch with the lower training loss (larger Phi) among those that exist."""
    cands = [r for r, b in ((sem, "semantic"), (pos, "positional")) if _on(r, b)]
    return min(cands, key=lambda r: r.train_loss, default=None)


def _roots(alphas, p, sem, pos, order) -> tuple[float, float, float, float]:
    """(alpha_c, alpha_l, interpolation bound of alpha_c, of alpha_l); bounds are 0 for refined
    roots (and NaN roots)."""
    eps_lin = sem[0].linear_test_error

    def loss_gap(a):
        return _value(a, p, "semantic", sem, order, "train_loss") - _value(
            a, p, "positional", pos, order, "train_loss"
        )

    def lin_gap(a):
        s = _solve_from(a, p, _nearest_on(sem, "semantic", a), order)
        q = _solve_from(a, p, _nearest_on(pos, "positional", a), order)
        best = _global_minimum(s, q)
        return best.test_error - eps_lin if best is not None else float("nan")

    gaps = [
        s.train_loss - q.train_loss if _on(s, "semantic") and _on(q, "positional") else math.nan
        for s, q in zip(sem, pos, strict=True)
    ]
    lin = []
    for s, q in zip(sem, pos, strict=True):
        best = _global_minimum(s, q)
        lin.append(best.test_error - eps_lin if best is not None else math.nan)
    alpha_c = alpha_l = float("nan")
    bound_c = bound_l = 0.0
    brackets = bracket_sign_changes(alphas, gaps)
    if brackets:
        i, j = brackets[0]
        alpha_c, bound_c = refine_or_interpolate(loss_gap, alphas[i], alphas[j], gaps[i], gaps[j])
    # alpha_l: the first crossing of eps_lin by the global minimum's eps_g, which can also jump
    # across eps_lin at alpha_c: a bracket that holds that jump is not a root
    for i, j in bracket_sign_changes(alphas, lin):
        if math.isfinite(alpha_c) and alphas[i] <= alpha_c <= alphas[j]:
            lo, hi = lin_gap(alphas[i]), lin_gap(alpha_c - 1e-6)
            if lo * hi < 0:
                alpha_l, bound_l = refine_or_interpolate(lin_gap, alphas[i], alpha_c - 1e-6, lo, hi)
            else:
                lo, hi = lin_gap(alpha_c + 1e-6), lin_gap(alphas[j])
                if lo * hi < 0:
                    alpha_l, bound_l = refine_or_interpolate(
                        lin_gap, alpha_c + 1e-6, alphas[j], lo, hi
                    )
                else:
                    # eps_g jumps across eps_lin at the first-order transition
                    alpha_l, bound_l = alpha_c, bound_c
        else:
            alpha_l, bound_l = refine_or_interpolate(lin_gap, alphas[i], alphas[j], lin[i], lin[j])
        break
    return alpha_c, alpha_l, bound_c, bound_l


def l2_transitions(p: ModelParams, alphas: list[float], method: GaussHermite) -> Transitions:
    """alpha_c, alpha_l and the spinodals on the grid `alphas` with the exact L=2 engine; the
    errors are |root(order) - root(check_order)| plus the interpolation bounds."""
    order, check_order = method.order, method.check_order
    scans = {
        o: (
            learning_curve(alphas, p, branch="semantic", method=method.at_order(o)),
            learning_curve(alphas, p, branch="positional", method=method.at_order(o)),
        )
        for o in (order, check_order)
    }
    ac, al, bc, bl = _roots(alphas, p, *scans[order], order)
    ac2, al2, bc2, bl2 = _roots(alphas, p, *scans[check_order], check_order)
    sem, pos = scans[order]
    ss = _spinodal(alphas, sem, "semantic", p, order, lower=True)
    sp = _spinodal(alphas, pos, "positional", p, order, lower=False)
    return Transitions(
        omega=p.omega,
        sigma=p.sigma,
        lam=p.lam,
        alpha_c=ac,
        alpha_c_err=abs(ac - ac2) + 2 * bc + bc2,
        alpha_l=al,
        alpha_l_err=abs(al - al2) + 2 * bl + bl2,
        alpha_c_interpolated=bool(bc + bc2 > 0),
        alpha_l_interpolated=bool(bl + bl2 > 0),
        spinodal_semantic=ss,
        spinodal_positional=sp,
        alpha_min=alphas[0],
        alpha_max=alphas[-1],
        order=order,
        check_order=check_order,
        engine="l2",
    )
