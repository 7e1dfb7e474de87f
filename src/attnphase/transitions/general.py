"""Transitions of THEORY.md §5 with the general engine (any L, r, t and encodings).

Both branches are followed along the alpha grid on the same scramblings (common random
numbers), so on each scrambling k the differences between branches are smooth in alpha. Every
root is found per scrambling: bracketed on the grid, then refined by Brent's method with fixed
points of that scrambling warm-started from its nearest grid point on the branch. The reported
root is the mean over scramblings and its error the standard error of that mean (the
integration error; for alpha_l combined with eps_lin's own integration error through the slope
of eps_g - eps_lin).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..baseline import linear_test_error_qmc
from ..params import ModelParams
from ..theory import QMC, TheoryResult
from ..theory.general.engine import Solution, make_channels, qmc_curve, solve_one
from .record import Transitions
from .roots import bracket_sign_changes, refine_or_interpolate

ON_BRANCH = 1e-4  # max |theta| (semantic) or |M| (positional) of a fixed point on its branch
SPINODAL_STEPS = 6  # bisection steps: the spinodal to 1/64 of the grid step


def on_branch(sol: Solution | None, branch: str) -> bool:
    """Converged, and the branch's own order parameter has not collapsed to zero."""
    if sol is None or sol.overlaps is None or not sol.converged:
        return False
    o = sol.overlaps
    return bool(np.abs(o.theta if branch == "semantic" else o.M).max() > ON_BRANCH)


class BranchOnScrambling:
    """One branch on one scrambling: the grid's fixed points, and fixed points at any alpha
    warm-started from the nearest grid point on the branch (None where it is left)."""

    def __init__(self, p, alphas, results: list[TheoryResult], k: int, branch: str, channel):
        self.p, self.alphas, self.branch, self.channel = p, alphas, branch, channel
        self.grid = [r.solutions[k] if k < len(r.solutions) else None for r in results]

    def grid_values(self, key: str) -> list[float]:
        return [s.observables[key] if on_branch(s, self.branch) else math.nan for s in self.grid]

    def at(self, alpha: float) -> Solution | None:
        on = [i for i, s in enumerate(self.grid) if on_branch(s, self.branch)]
        if not on:
            return None
        near = self.grid[min(on, key=lambda i: abs(self.alphas[i] - alpha))]
        sol = solve_one(alpha, self.p, near.overlaps, self.branch, self.channel)
        return sol if on_branch(sol, self.branch) else None

    def value(self, key: str, offset: float = 0.0) -> Callable[[float], float]:
        """alpha -> the observable `key` minus `offset` on the branch (NaN off it)."""

        def fn(alpha: float) -> float:
            sol = self.at(alpha)
            return sol.observables[key] - offset if sol is not None else math.nan

        return fn

    def spinodal(self, lower: bool) -> float:
        """Where the branch ends inside the grid: bisection between the last grid point on it
        and the next one off it; NaN when it reaches the end of the range (or never exists)."""
        on = [i for i, s in enumerate(self.grid) if on_branch(s, self.branch)]
        if not on:
            return math.nan
        i = on[0] if lower else on[-1]
        j = i - 1 if lower else i + 1
        if not 0 <= j < len(self.alphas):
            return math.nan
        a_on, a_off = self.alphas[i], self.alphas[j]
        for _ in range(SPINODAL_STEPS):
            mid = 0.5 * (a_on + a_off)
            if self.at(mid) is not None:
                a_on = mid
            else:
                a_off = mid
        return a_on


def _crossing(alphas, sem: BranchOnScrambling, pos: BranchOnScrambling):
    """(alpha_c, interpolation bound) on one scrambling: the first sign change of the training
    loss difference where both branches exist."""
    gaps = np.subtract(sem.grid_values("train_loss"), pos.grid_values("train_loss"))
    brackets = bracket_sign_changes(alphas, gaps)
    if not brackets:
        return math.nan, 0.0
    i, j = brackets[0]
    sem_loss, pos_loss = sem.value("train_loss"), pos.value("train_loss")
    return refine_or_interpolate(
        lambda a: sem_loss(a) - pos_loss(a), alphas[i], alphas[j], gaps[i], gaps[j]
    )


def _global_minimum(sem: BranchOnScrambling, pos: BranchOnScrambling) -> list[str | None]:
    """Per grid point, the branch with the lower training loss among those that exist."""
    out = []
    for s, q in zip(sem.grid_values("train_loss"), pos.grid_values("train_loss"), strict=True):
        cands = [(v, b) for v, b in ((s, "semantic"), (q, "positional")) if math.isfinite(v)]
        out.append(min(cands)[1] if cands else None)
    return out


def _linear_crossing(alphas, sem, pos, eps_lin: float, alpha_c: float):
    """(alpha_l, interpolation bound, slope) on one scrambling: the first alpha where the global
    minimum's eps_g crosses eps_lin. Where the global minimum changes branch inside the bracket
    (at alpha_c, or where a branch ends), each side is searched on its own branch; a jump across
    eps_lin at the switch makes the switch itself alpha_l (slope NaN)."""
    branches = {"semantic": sem, "positional": pos}
    best = _global_minimum(sem, pos)
    errs = {b: np.subtract(br.grid_values("test_error"), eps_lin) for b, br in branches.items()}
    lin = [errs[b][i] if b is not None else math.nan for i, b in enumerate(best)]
    for i, j in bracket_sign_changes(alphas, lin):
        lo, hi = alphas[i], alphas[j]
        slope = (lin[j] - lin[i]) / (hi - lo)
        if best[i] == best[j]:
            fn = branches[best[i]].value("test_error", eps_lin)
            root, bound = refine_or_interpolate(fn, lo, hi, lin[i], lin[j])
            return root, bound, slope
        switch = alpha_c if math.isfinite(alpha_c) and lo <= alpha_c <= hi else None
        for b, a, z in ((best[i], lo, switch or hi), (best[j], switch or lo, hi)):
            fn = branches[b].value("test_error", eps_lin)
            fa, fz = fn(a), fn(z)
            if math.isfinite(fa) and math.isfinite(fz) and fa * fz < 0:
                root, bound = refine_or_interpolate(fn, a, z, fa, fz)
                return root, bound, (fz - fa) / (z - a)
        if switch is not None:
            return switch, 0.0, math.nan
        return 0.5 * (lo + hi), 0.5 * (hi - lo), math.nan
    return math.nan, 0.0, math.nan


def _mean_and_error(roots: list[float]) -> tuple[float, float]:
    found = [x for x in roots if math.isfinite(x)]
    if not found:
        return math.nan, math.nan
    err = float(np.std(found, ddof=1) / math.sqrt(len(found))) if len(found) > 1 else math.nan
    return float(np.mean(found)), err


def general_transitions(
    p: ModelParams,
    alphas: list[float],
    method: QMC,
    *,
    progress: bool = False,
) -> Transitions:
    """alpha_c, alpha_l and the spinodals on the grid `alphas` with the general engine; errors
    from the spread of the per-scrambling roots (module docstring)."""
    channels = make_channels(p, method)
    curves = {
        b: qmc_curve(alphas, p, b, method, channels=channels, progress=progress)
        for b in ("semantic", "positional")
    }
    eps_lin, eps_lin_err = linear_test_error_qmc(p)
    c_roots, c_bounds, l_roots, l_bounds, slopes = [], [], [], [], []
    sem0 = pos0 = None
    for k, channel in enumerate(channels):
        sem = BranchOnScrambling(p, alphas, curves["semantic"], k, "semantic", channel)
        pos = BranchOnScrambling(p, alphas, curves["positional"], k, "positional", channel)
        if k == 0:
            sem0, pos0 = sem, pos
        root, bound = _crossing(alphas, sem, pos)
        c_roots.append(root)
        c_bounds.append(bound)
        root, bound, slope = _linear_crossing(alphas, sem, pos, eps_lin, root)
        l_roots.append(root)
        l_bounds.append(bound)
        slopes.append(slope)
    alpha_c, alpha_c_err = _mean_and_error(c_roots)
    alpha_l, alpha_l_err = _mean_and_error(l_roots)
    slope = float(np.nanmean(slopes)) if np.isfinite(slopes).any() else math.nan
    if math.isfinite(slope) and slope != 0:
        alpha_l_err = math.hypot(alpha_l_err, eps_lin_err / abs(slope))
    return Transitions(
        omega=p.omega,
        sigma=p.sigma,
        lam=p.lam,
        alpha_c=alpha_c,
        alpha_c_err=alpha_c_err + max(c_bounds),
        alpha_l=alpha_l,
        alpha_l_err=alpha_l_err + max(l_bounds),
        alpha_c_interpolated=max(c_bounds) > 0,
        alpha_l_interpolated=max(l_bounds) > 0,
        spinodal_semantic=sem0.spinodal(lower=True),
        spinodal_positional=pos0.spinodal(lower=False),
        alpha_min=alphas[0],
        alpha_max=alphas[-1],
        engine="general",
        points=method.points,
        randomisations=method.randomisations,
    )
