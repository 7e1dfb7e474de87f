"""Transitions of docs/theory.md §5 by scanning alpha, for every integration method.

Both branches are followed along a grid of alpha on one *replica* of the integration: a
deterministic state-evolution map (a Gauss-Hermite order; one QMC scrambling, the branches on
the same points so that their differences are smooth in alpha). On each replica sign changes on
the grid bracket the roots, which Brent's method refines with fixed points warm-started from
the nearest grid point on the branch; where a re-solve inside a bracket leaves the branch, the
root is the linear interpolation of the bracketing grid values, with its bound (`roots`). The
spinodals are bisected between the last grid point on a branch and the next one off it, and
averaged over the scramblings where the branch ends in the window.

The errors come from comparing replicas: Gauss-Hermite, |root(order) - root(check_order)| plus
the interpolation bounds (2 b + b_check); QMC, the standard error of the mean over scramblings
(alpha_l combined with eps_lin's own integration error through the slope of eps_g - eps_lin)
plus the largest bound.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..params import ModelParams
from ..theory import Method
from ..theory.replicas import Replica, scan_replicas
from .record import Transitions
from .roots import bracket_sign_changes, refine_or_interpolate

BRANCHES = ("semantic", "positional")
SPINODAL_STEPS = 6  # bisection steps: the spinodal to 1/64 of the grid step


class BranchScan:
    """One branch on one replica: the grid's fixed points, and fixed points at any alpha
    warm-started from the nearest grid point on the branch (None where it is left)."""

    def __init__(self, replica: Replica, alphas: list[float], branch: str):
        self.replica, self.alphas, self.branch = replica, alphas, branch
        self.grid = replica.curve(alphas, branch)

    def on(self, point) -> bool:
        return self.replica.on_branch(point, self.branch)

    def grid_values(self, key: str) -> list[float]:
        return [self.replica.observable(s, key) if self.on(s) else math.nan for s in self.grid]

    def at(self, alpha: float):
        on = [i for i, s in enumerate(self.grid) if self.on(s)]
        if not on:
            return None
        near = self.grid[min(on, key=lambda i: abs(self.alphas[i] - alpha))]
        point = self.replica.solve_near(alpha, near, self.branch)
        return point if self.on(point) else None

    def value(self, key: str, offset: float = 0.0) -> Callable[[float], float]:
        """alpha -> the branch's `key` minus offset (NaN off the branch)."""

        def fn(alpha: float) -> float:
            point = self.at(alpha)
            return self.replica.observable(point, key) - offset if point is not None else math.nan

        return fn

    def spinodal(self, lower: bool) -> float:
        """Where the branch ends inside the grid: bisection between the last grid point on it
        and the next one off it; NaN when it reaches the end of the range (or never exists)."""
        on = [i for i, s in enumerate(self.grid) if self.on(s)]
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


def crossing(alphas: list[float], sem: BranchScan, pos: BranchScan) -> tuple[float, float]:
    """(alpha_c, interpolation bound): the first sign change of the training-loss difference
    where both branches exist."""
    gaps = np.subtract(sem.grid_values("train_loss"), pos.grid_values("train_loss"))
    brackets = bracket_sign_changes(alphas, list(gaps))
    if not brackets:
        return math.nan, 0.0
    i, j = brackets[0]
    sem_loss, pos_loss = sem.value("train_loss"), pos.value("train_loss")
    return refine_or_interpolate(
        lambda a: sem_loss(a) - pos_loss(a), alphas[i], alphas[j], gaps[i], gaps[j]
    )


def global_minimum(sem: BranchScan, pos: BranchScan) -> list[str | None]:
    """Per grid point, the branch with the lower training loss among those that exist."""
    out = []
    for s, q in zip(sem.grid_values("train_loss"), pos.grid_values("train_loss"), strict=True):
        cands = [(v, b) for v, b in ((s, "semantic"), (q, "positional")) if math.isfinite(v)]
        out.append(min(cands)[1] if cands else None)
    return out


def linear_crossing(
    alphas: list[float],
    sem: BranchScan,
    pos: BranchScan,
    eps_lin: float,
    alpha_c: float,
    bound_c: float = 0.0,
) -> tuple[float, float, float]:
    """(alpha_l, interpolation bound, slope): the first alpha where the global minimum's eps_g
    crosses eps_lin. Where the global minimum changes branch inside the bracket (at alpha_c, or
    where a branch ends), each side is searched on its own branch; a jump across eps_lin at the
    switch makes the switch itself alpha_l, with alpha_c's interpolation bound `bound_c` (slope
    NaN)."""
    branches = {"semantic": sem, "positional": pos}
    best = global_minimum(sem, pos)
    errs = {b: np.subtract(br.grid_values("test_error"), eps_lin) for b, br in branches.items()}
    lin = [errs[b][i] if b is not None else math.nan for i, b in enumerate(best)]
    for i, j in bracket_sign_changes(alphas, lin):
        lo, hi = alphas[i], alphas[j]
        slope = (lin[j] - lin[i]) / (hi - lo)
        first, last = best[i], best[j]
        assert first is not None and last is not None  # finite values on both sides
        if first == last:
            fn = branches[first].value("test_error", eps_lin)
            root, bound = refine_or_interpolate(fn, lo, hi, lin[i], lin[j])
            return root, bound, slope
        switch = alpha_c if math.isfinite(alpha_c) and lo <= alpha_c <= hi else None
        for b, a, z in ((first, lo, switch or hi), (last, switch or lo, hi)):
            fn = branches[b].value("test_error", eps_lin)
            fa, fz = fn(a), fn(z)
            if math.isfinite(fa) and math.isfinite(fz) and fa * fz < 0:
                root, bound = refine_or_interpolate(fn, a, z, fa, fz)
                return root, bound, (fz - fa) / (z - a)
        if switch is not None:
            return switch, bound_c, math.nan
        return 0.5 * (lo + hi), 0.5 * (hi - lo), math.nan
    return math.nan, 0.0, math.nan


def replica_roots(alphas: list[float], replica: Replica, eps_lin: float) -> dict[str, Any]:
    """alpha_c, alpha_l (with their bounds and alpha_l's slope) and the scans on one replica."""
    sem, pos = (BranchScan(replica, alphas, b) for b in BRANCHES)
    alpha_c, bound_c = crossing(alphas, sem, pos)
    alpha_l, bound_l, slope = linear_crossing(alphas, sem, pos, eps_lin, alpha_c, bound_c)
    return dict(
        alpha_c=alpha_c,
        bound_c=bound_c,
        alpha_l=alpha_l,
        bound_l=bound_l,
        slope=slope,
        semantic=sem,
        positional=pos,
    )


def scan_alphas(
    p: ModelParams, alphas: list[float], method: Method, progress: bool = False
) -> Transitions:
    """alpha_c, alpha_l and the spinodals of one model on the grid `alphas`, on every replica
    of `method` (`theory.replicas.scan_replicas`; module docstring). Each root is combined over
    the replicas by the method (`Method.combine`), with the interpolation bounds added: the
    main replica's twice and the check's once where the method checks (Gauss-Hermite), the
    largest where it averages (QMC); QMC's alpha_l error also carries eps_lin's own integration
    error through the slope of eps_g - eps_lin."""
    scan = scan_replicas(p, alphas, method, progress=progress)
    per = [replica_roots(alphas, r, scan.eps_lin) for r in scan.replicas]
    slopes = [r["slope"] for r in per]
    slope = float(np.nanmean(slopes)) if np.isfinite(slopes).any() else math.nan
    fields: dict[str, Any] = {}
    for name, key in (("alpha_c", "c"), ("alpha_l", "l")):
        value, err, _ = method.combine([r[name] for r in per])
        if name == "alpha_l" and math.isfinite(slope) and slope != 0:
            err = math.hypot(err, scan.eps_lin_err / abs(slope))  # zero for Gauss-Hermite
        bounds = [r[f"bound_{key}"] for r in per]
        bound = max(bounds) if method.averages_replicas else 2 * bounds[0] + bounds[1]
        fields[name], fields[f"{name}_err"] = value, err + bound
        fields[f"{name}_interpolated"] = bool(sum(bounds) > 0)
    ends = per if method.averages_replicas else per[:1]
    return _record(p, alphas, ends, method=method, **fields)


def _finite_mean(values: list[float]) -> float:
    """The mean of the finite values (NaN without any)."""
    found = [x for x in values if math.isfinite(x)]
    return float(np.mean(found)) if found else math.nan


def _record(p: ModelParams, alphas: list[float], replicas: list[dict], **fields) -> Transitions:
    """The record with each branch's end averaged over the replicas where it lies in the
    window (Gauss-Hermite: the main order's alone, the first replica)."""
    ends = {
        branch: _finite_mean([r[branch].spinodal(lower=lower) for r in replicas])
        for branch, lower in (("semantic", True), ("positional", False))
    }
    return Transitions(
        omega=p.omega,
        sigma=p.sigma,
        lam=p.lam,
        spinodal_semantic=ends["semantic"],
        spinodal_positional=ends["positional"],
        alpha_min=alphas[0],
        alpha_max=alphas[-1],
        **fields,
    )
