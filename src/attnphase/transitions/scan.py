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
import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

import numpy as np

from ..params import ModelParams
from ..theory import QMC, GaussHermite, Method, NonConvergenceWarning, learning_curve, solve
from ..theory.baseline import linear_test_error_qmc
from ..theory.qmc.channel import QMCChannel
from ..theory.qmc.engine import Solution, make_channels, qmc_curve, solve_one
from .record import Transitions
from .roots import bracket_sign_changes, refine_or_interpolate

BRANCHES = ("semantic", "positional")
SPINODAL_STEPS = 6  # bisection steps: the spinodal to 1/64 of the grid step


def on_own_branch(result, branch: str) -> bool:
    """A converged `TheoryResult` of that `kind`."""
    return result is not None and result.converged and result.kind == branch


class Replica(ABC):
    """One deterministic integration of the state evolution: the grid's fixed points of a
    branch, a fixed point warm-started from one of them, whether a fixed point is on its branch
    and its observables (train_loss, test_error)."""

    @abstractmethod
    def curve(self, alphas: list[float], branch: str) -> list[Any]: ...

    @abstractmethod
    def solve_near(self, alpha: float, near: Any, branch: str) -> Any: ...

    @abstractmethod
    def on_branch(self, point: Any, branch: str) -> bool: ...

    @abstractmethod
    def observable(self, point: Any, key: str) -> float: ...


class GaussHermiteReplica(Replica):
    """The exact channel at one order: fixed points are `TheoryResult`s, on their branch when
    converged and of that `kind`."""

    def __init__(self, p: ModelParams, method: GaussHermite):
        self.p, self.method = p, method

    def curve(self, alphas, branch):
        return learning_curve(alphas, self.p, branch=branch, method=self.method, errors=False)

    def solve_near(self, alpha, near, branch):
        """Solve on near's branch from its overlaps; not converging there leaves the branch."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NonConvergenceWarning)
            start = (near.q, near.m, near.V, near.theta)
            return solve(
                alpha, self.p, start=start, method=self.method, branch=branch, errors=False
            )

    def on_branch(self, point, branch):
        return on_own_branch(point, branch)

    def observable(self, point, key):
        return getattr(point, key)


class ScramblingReplica(Replica):
    """Scrambling k of a QMC method: the grid's fixed points are that scrambling's `Solution`s
    of curves solved on all scramblings at once (`curves`); `positional` names the engine branch
    that solves the positional scan (the simplex branch for the simplex encodings)."""

    def __init__(
        self,
        p: ModelParams,
        channel: QMCChannel,
        k: int,
        curves: dict,
        positional: str = "positional",
    ):
        self.p, self.channel, self.k, self.curves = p, channel, k, curves
        self.positional = positional  # the engine branch the positional scan solves

    def curve(self, alphas, branch):
        return [
            r.solutions[self.k] if self.k < len(r.solutions) else None for r in self.curves[branch]
        ]

    def solve_near(self, alpha, near, branch):
        engine_branch = self.positional if branch == "positional" else branch
        return solve_one(alpha, self.p, near.overlaps, engine_branch, self.channel)

    def on_branch(self, point: Solution | None, branch):
        if point is None or point.overlaps is None or not point.converged:
            return False
        o = point.overlaps
        return bool(np.abs(o.theta if branch == "semantic" else o.M).max() > QMC.on_branch)

    def observable(self, point, key):
        return point.observables[key]


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


def replica_roots(
    alphas: list[float], replica: Replica, eps_lin: float | None = None
) -> dict[str, Any]:
    """alpha_c, alpha_l (with their bounds and alpha_l's slope) and the scans on one replica;
    eps_lin None: the one the semantic curve's first result carries (Gauss-Hermite)."""
    sem, pos = (BranchScan(replica, alphas, b) for b in BRANCHES)
    if eps_lin is None:
        eps_lin = float(sem.grid[0].linear_test_error)
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


def mean_and_error(roots: list[float]) -> tuple[float, float]:
    """The mean of the finite values (NaN without any) and its standard error (NaN with fewer
    than two)."""
    found = [x for x in roots if math.isfinite(x)]
    if not found:
        return math.nan, math.nan
    err = float(np.std(found, ddof=1) / math.sqrt(len(found))) if len(found) > 1 else math.nan
    return float(np.mean(found)), err


def _record(p: ModelParams, alphas: list[float], replicas: list[dict], **fields) -> Transitions:
    """The record with each branch's end averaged over the replicas where it lies in the
    window (Gauss-Hermite: the main order's alone, the first replica)."""
    ends = {
        branch: mean_and_error([r[branch].spinodal(lower=lower) for r in replicas])[0]
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


def _scan_orders(p: ModelParams, alphas: list[float], method: GaussHermite) -> Transitions:
    """The roots at `method.order`, with errors from the replica at `method.check_order`."""
    main = replica_roots(alphas, GaussHermiteReplica(p, method))
    check = replica_roots(alphas, GaussHermiteReplica(p, method.at_order(method.check_order)))
    return _record(
        p,
        alphas,
        [main],
        alpha_c=main["alpha_c"],
        alpha_c_err=abs(main["alpha_c"] - check["alpha_c"])
        + 2 * main["bound_c"]
        + check["bound_c"],
        alpha_l=main["alpha_l"],
        alpha_l_err=abs(main["alpha_l"] - check["alpha_l"])
        + 2 * main["bound_l"]
        + check["bound_l"],
        alpha_c_interpolated=bool(main["bound_c"] + check["bound_c"] > 0),
        alpha_l_interpolated=bool(main["bound_l"] + check["bound_l"] > 0),
        method=method,
    )


def _scan_scramblings(
    p: ModelParams, alphas: list[float], method: QMC, progress: bool = False
) -> Transitions:
    """The roots on every scrambling: their mean and its standard error."""
    channels = make_channels(p, method)
    curves = {
        b: qmc_curve(alphas, p, b, method, channels=channels, progress=progress) for b in BRANCHES
    }
    eps_lin, eps_lin_err = linear_test_error_qmc(p)
    per = [
        replica_roots(alphas, ScramblingReplica(p, channel, k, curves), eps_lin)
        for k, channel in enumerate(channels)
    ]
    alpha_c, alpha_c_err = mean_and_error([r["alpha_c"] for r in per])
    alpha_l, alpha_l_err = mean_and_error([r["alpha_l"] for r in per])
    slopes = [r["slope"] for r in per]
    slope = float(np.nanmean(slopes)) if np.isfinite(slopes).any() else math.nan
    if math.isfinite(slope) and slope != 0:
        alpha_l_err = math.hypot(alpha_l_err, eps_lin_err / abs(slope))
    bound_c, bound_l = max(r["bound_c"] for r in per), max(r["bound_l"] for r in per)
    return _record(
        p,
        alphas,
        per,
        alpha_c=alpha_c,
        alpha_c_err=alpha_c_err + bound_c,
        alpha_l=alpha_l,
        alpha_l_err=alpha_l_err + bound_l,
        alpha_c_interpolated=bound_c > 0,
        alpha_l_interpolated=bound_l > 0,
        method=method,
    )


def scan_alphas(
    p: ModelParams, alphas: list[float], method: Method, progress: bool = False
) -> Transitions:
    """alpha_c, alpha_l and the spinodals of one model on the grid `alphas`, on every replica
    of `method` (module docstring): Gauss-Hermite at its order with errors from its check
    order, QMC on every scrambling with errors from their spread."""
    if isinstance(method, GaussHermite):
        return _scan_orders(p, alphas, method)
    return _scan_scramblings(p, alphas, method, progress)
