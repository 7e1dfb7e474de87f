"""Spinodals of docs/theory.md §5: where a branch stops existing along alpha, followed along a
second
parameter s.

At fixed s a branch is parametrised by its order parameter t (theta on the semantic branch, m on
the positional one; `systems.BranchAtOrder`), and its spinodal is the extremum of alpha(t)
(`fold_on`: a coarse ladder of samples of alpha(t), then samples bracketing the extremum,
refined by a parabola or the singular point of dG/dx), or its limit t -> 0 where the branch
meets the trivial fixed point (a bifurcation: the ladder falls all the way down). `FoldFollower`
carries the spinodal from one s to the next with a secant predictor in (t, z).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Protocol, runtime_checkable

import numpy as np

from .continuation import NEWTON_TOL, DefiningSystem, LinePoint, ended_point, in_window
from .newton import checked_solve

FOLD_JUMP = 8.0  # spacing of the coarse ladder of alpha(t) samples that finds a bifurcation
FOLD_RATIO = 2**0.5  # spacing of the samples of alpha(t) that bracket a fold
FOLD_SAMPLES = 16
FOLD_XTOL = 1e-6  # relative tolerance in t of the singular point of a fold
SAMPLE_T_MIN = 1e-3  # the smallest order parameter sampled in a fold search
BIFURCATION_T = 1e-6  # the order parameter at which a branch ending at t -> 0 is evaluated
# (or the system's t_min, above the collapse threshold of its map: 3e-6 for Gauss-Hermite)
FOLD_SIGN = {"semantic": 1.0, "positional": -1.0}  # semantic ends at its lowest alpha
FoldCheck = Callable[[float, float, np.ndarray, np.ndarray | None], tuple[float, int]]


@runtime_checkable
class HasStateJacobian(Protocol):
    """A spinodal's system that gives dG/dx at its fixed point (`BranchAtOrder`)."""

    def state_jacobian(self, z: np.ndarray) -> np.ndarray: ...


@dataclass(frozen=True)
class Fold:
    """A fold search's outcome: the order parameter t and the root z there (None: failed)."""

    t: float
    z: np.ndarray | None
    jacobian: np.ndarray | None
    evaluations: int
    status: str


class _AlphaOfT:
    """alpha(t) of a spinodal system at one parameter value, each solve started from the secant
    through the two nearest t solved before, with the Jacobian carried from solve to solve;
    the first from z0 with the given Jacobian, the second from the first solution with one
    built afresh (the carried one, from a t far away, cost twice the evaluations at omega
    0.3). A t solved before is not solved again."""

    def __init__(
        self,
        make: Callable[[float], DefiningSystem],
        t0: float,
        z0: np.ndarray,
        J: np.ndarray | None,
        tol: float,
    ):
        self.make, self.start, self.J, self.evaluations = make, z0, J, 0
        # where a branch that bifurcates from the trivial fixed point is evaluated: the system's
        # `t_min` (the smallest order parameter its map evaluates), at least BIFURCATION_T
        self.t_end = max(BIFURCATION_T, getattr(make(SAMPLE_T_MIN), "t_min", 0.0))
        self.solved: dict[float, np.ndarray] = {}
        self.tol = tol

    def __call__(self, t: float) -> float:
        if t in self.solved:
            return float(self.solved[t][-1])
        system = self.make(t)
        near = sorted(self.solved, key=lambda u: abs(u - t))[:2]
        z, J = (self.solved[near[0]], None) if near else (self.start, self.J)
        if len(near) == 2:  # secant in t through the two nearest solutions
            (t1, t2), (z1, z2) = near, (self.solved[near[0]], self.solved[near[1]])
            z, J = z1 + (z1 - z2) * (t - t1) / (t1 - t2), self.J
        rep = checked_solve(system, z, J, tol=self.tol)
        self.evaluations += system.evaluations
        if not rep.converged:
            return math.nan
        self.J = rep.jacobian
        self.solved[t] = rep.z
        return float(rep.z[-1])

    def fold(self, t: float, status: str) -> Fold:
        return Fold(t, self.solved.get(t), self.J, self.evaluations, status)


def fold_on(
    make: Callable[[float], DefiningSystem],
    z0: np.ndarray,
    t0: float,
    sign: float,
    J: np.ndarray | None = None,
    tol: float = NEWTON_TOL,
) -> Fold:
    """The extremum (sign +1: minimum, -1: maximum) of alpha(t) near t0.

    First a coarse ladder: alpha at t_top / FOLD_JUMP^k down to SAMPLE_T_MIN (t_top =
    max(t0, SAMPLE_T_MIN FOLD_JUMP), so at least two samples), solved nearest t0 first (with
    the branch's end when t0 lies below the ladder: a line of bifurcations). When alpha
    falls all the way down the ladder and on to the branch's end, the branch ends where it
    bifurcates from the trivial fixed point (`_bifurcation`): three or four solves.
    Otherwise the extremum lies between the ladder's samples or below its last one, and
    `_refine` brackets it from the best one. A dip of alpha below its end value closer to
    t = 0 than the ladder's last sample, yet above the end there, is not resolved: the end is
    reported.

    alpha(t) carries noise of ~1e-4 at the default quadrature order (the global prox
    minimiser jumps at some nodes as the overlaps move), so no derivatives of it are taken."""
    a = _AlphaOfT(make, t0, z0, J, tol)
    top = max(t0, SAMPLE_T_MIN * FOLD_JUMP)
    ladder = [top / FOLD_JUMP**k for k in range(64) if top / FOLD_JUMP**k >= SAMPLE_T_MIN]
    first = [a.t_end] if t0 < SAMPLE_T_MIN else []
    for t in sorted(first + ladder, key=lambda u: abs(math.log(u / t0))):
        a(t)
    values = [_finite_or_inf(sign * a(t)) for t in ladder]
    best = min(range(len(ladder)), key=lambda k: values[k])
    if math.isinf(values[best]):
        return a.fold(ladder[best], "no fixed point near the fold")
    if best == len(ladder) - 1 and sign * a(a.t_end) <= values[best]:
        return _bifurcation(a)
    return _refine(a, ladder[best], sign)


def _refine(a: _AlphaOfT, t0: float, sign: float) -> Fold:
    """The extremum of alpha(t) from its best ladder sample t0: samples t0 FOLD_RATIO^k, k = 0,
    -1, ... down to SAMPLE_T_MIN (and k = 1, 2, ... while the best value sits at the top),
    until the best sample has a worse one on each side; the vertex of the parabola through
    the three is then solved too, and the best of them is the fold, or, where dG/dx is
    available, the root of its critical eigenvalue between them (`_singular`). When the best
    sample is at SAMPLE_T_MIN the branch ends where it bifurcates from the trivial fixed
    point."""
    samples = {max(t0, SAMPLE_T_MIN): math.nan}
    for _ in range(FOLD_SAMPLES):
        for t in samples:
            if math.isnan(samples[t]):
                samples[t] = _finite_or_inf(sign * a(t))
        ts = sorted(samples)
        i = min(range(len(ts)), key=lambda k: samples[ts[k]])
        if math.isinf(samples[ts[i]]):
            return a.fold(ts[i], "no fixed point near the fold")
        if i == 0 and ts[0] <= SAMPLE_T_MIN and len(ts) > 1:
            return _bifurcation(a)
        if i == 0 and ts[0] <= SAMPLE_T_MIN:
            samples[ts[0] * FOLD_RATIO] = math.nan
        elif i == 0:
            samples[max(ts[0] / FOLD_RATIO, SAMPLE_T_MIN)] = math.nan
        elif i == len(ts) - 1:
            samples[ts[-1] * FOLD_RATIO] = math.nan
        else:
            fold = _vertex(a, sign, ts[i - 1 : i + 2], [samples[t] for t in ts[i - 1 : i + 2]])
            return _singular(a, fold, ts[i - 1], ts[i + 1])
    return a.fold(ts[i], f"no extremum of alpha(t) in {FOLD_SAMPLES} samples")


def _bifurcation(a: _AlphaOfT) -> Fold:
    """The end of a branch that bifurcates from the trivial fixed point: alpha at `a.t_end`,
    solved from the samples. The order parameter's residual is divided by t, so as t -> 0
    this is the trivial point's critical alpha; the symmetry t -> -t of the invariant
    manifold t = 0 makes alpha(t) - alpha(0) even in t, though not smooth at the quadrature
    order (omega 0.3: 8.4e-5 at t = 1e-3, growing about like t^1.6 up to 1e-2), which at
    t = 3e-6 leaves alpha(0) to ~1e-8."""
    t_end = a.t_end
    if not math.isfinite(a(t_end)):
        return Fold(t_end, None, a.J, a.evaluations, "no fixed point as t -> 0")
    return a.fold(t_end, "converged (bifurcation, t -> 0)")


def _critical_eigenvalue(a: _AlphaOfT, t: float) -> float:
    """The real part of the eigenvalue of dG/dx nearest zero at the solution for t (NaN where
    there is none): it changes sign at a fold."""
    if not math.isfinite(a(t)):
        return math.nan
    system = a.make(t)
    assert isinstance(system, HasStateJacobian)  # `_singular` asks only such systems
    eig = np.linalg.eigvals(system.state_jacobian(a.solved[t]))
    return float(eig[np.argmin(np.abs(eig))].real)


def _singular(a: _AlphaOfT, fold: Fold, lo: float, hi: float) -> Fold:
    """The fold where dG/dx is singular: Brent's root in [lo, hi] (the samples around the
    smallest alpha) of its critical eigenvalue, which changes sign there; the vertex `fold`
    stays where the system has no `state_jacobian` or the eigenvalue keeps its sign (noise
    of the prox's jumps), with that said in its status."""
    from scipy.optimize import brentq

    if not hasattr(a.make(lo), "state_jacobian"):
        return fold
    e_lo, e_hi = _critical_eigenvalue(a, lo), _critical_eigenvalue(a, hi)
    if not (math.isfinite(e_lo) and math.isfinite(e_hi)) or e_lo * e_hi > 0:
        return replace(fold, status="converged (vertex of alpha(t); dG/dx nonsingular nearby)")
    try:
        t = brentq(lambda u: _critical_eigenvalue(a, u), lo, hi, xtol=FOLD_XTOL * fold.t)
    except ValueError:  # a solve inside the bracket failed (NaN)
        return replace(fold, status="converged (vertex of alpha(t); a solve near it failed)")
    return a.fold(t, "converged") if t in a.solved else fold


def _vertex(a: _AlphaOfT, sign: float, ts: list[float], fs: list[float]) -> Fold:
    """The best of the three samples and of the vertex of the parabola through them."""
    (t1, t2, t3), (f1, f2, f3) = ts, fs
    num = (t2 - t1) ** 2 * (f2 - f3) - (t2 - t3) ** 2 * (f2 - f1)
    den = (t2 - t1) * (f2 - f3) - (t2 - t3) * (f2 - f1)
    best, value = t2, f2
    if den != 0:
        tv = t2 - 0.5 * num / den
        if t1 < tv < t3:
            fv = _finite_or_inf(sign * a(tv))
            if fv < value:
                best = tv
    return a.fold(best, "converged")


def _finite_or_inf(value: float) -> float:
    return value if math.isfinite(value) else math.inf


class FoldFollower:
    """A spinodal followed one s at a time: make_fold(s, t) is the branch's system at order
    parameter t (`BranchAtOrder`), sign +1 for a branch that ends at its lowest alpha
    (semantic), -1 at its highest (positional); (t0, z0) a point of the branch near the
    spinodal at the first s. check(s, t, z, J) -> (alpha at a second accuracy, evaluations)."""

    def __init__(
        self,
        make_fold: Callable[[float, float], DefiningSystem],
        sign: float,
        t0: float,
        z0: np.ndarray | None,
        *,
        alpha_window: tuple[float, float],
        check: FoldCheck | None = None,
        tol: float = NEWTON_TOL,
    ):
        self.make, self.sign, self.window, self.check = make_fold, sign, alpha_window, check
        self.tol = tol
        self.t0, self.z0 = t0, z0
        self.history: list[tuple[float, float, np.ndarray]] = []
        self.J: np.ndarray | None = None
        self.ended = ""

    def resume(self, point: LinePoint) -> None:
        if point.ok:
            self.history.append((point.s, point.t, np.asarray(point.z, dtype=float)))
        else:
            self.ended = point.status

    def step(self, s: float) -> LinePoint:
        if self.ended:
            return ended_point(s, self.ended)
        t, z = _predict_fold(self.history, s) if self.history else (self.t0, self.z0)
        assert z is not None  # a line without a start is ended, or resumed from a root
        fold = fold_on(lambda u: self.make(s, u), z, t, self.sign, self.J, self.tol)
        self.J = fold.jacobian
        zf = fold.z
        if zf is None or not in_window(zf[-1], self.window):
            why = fold.status if zf is None else f"alpha {zf[-1]:.4g} left the window"
            self.ended = f"line ended at {s:.6g}: {why}"
            return ended_point(s, self.ended, fold.evaluations)
        self.history.append((s, fold.t, zf))
        alpha_check, cev = self.check(s, fold.t, zf, self.J) if self.check else (math.nan, 0)
        states = self.make(s, fold.t).states(zf)
        err = abs(float(zf[-1]) - alpha_check)
        evals = fold.evaluations + cev
        return LinePoint(s, float(zf[-1]), err, states, evals, fold.status, zf, fold.t)


def _predict_fold(history, s):
    """Secant extrapolation of (t, z) in s."""
    if len(history) == 1:
        return history[0][1], history[0][2]
    (s1, t1, z1), (s2, t2, z2) = history[-2], history[-1]
    f = (s - s2) / (s2 - s1)
    return t2 + (t2 - t1) * f, z2 + (z2 - z1) * f
