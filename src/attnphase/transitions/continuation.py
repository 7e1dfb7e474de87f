"""Following a transition line in a second parameter s (issue 12), for any engine whose
defining systems (`systems`) can be built at each s.

`LineFollower`: the root z(s) of a square system F_s(z) = 0 (alpha = z[-1]) along s, with a secant
predictor on all unknowns (alpha and the branch states) and a Newton-Broyden corrector whose
Jacobian is carried along the line. Where the corrector fails the step is halved, and after
a successful half step the whole step is tried again; after MAX_HALVINGS failures in one step
(in all: a reset after each success let one step at omega 0.12 of the L=2 alpha_c line halve
towards its target for over 25 minutes) the line is declared ended, with the reason: a branch
collapsed or became inadmissible, alpha left the window, or the corrector failed.

`FoldFollower`: a spinodal, the extremum over the order parameter t of alpha(t) on the branch
(`fold_on`: samples of alpha(t), refined by a parabola), with the same predictor.

Errors come from a caller-supplied `check`, run at the reported points only (for the exact L=2
engine the root re-solved at a second quadrature order from the converged point).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol, runtime_checkable

import numpy as np

from .newton import newton_broyden

MAX_HALVINGS = 4
NEWTON_TOL = 1e-10  # the corrector's step tolerance (an engine whose map repeats only to ~1e-9,
# the general engine's with its prox warm starts, sets its own: `newton_tol` of its lines)
FOLD_RATIO = 2**0.5  # spacing of the samples of alpha(t) in the fold search
FOLD_SAMPLES = 16
FOLD_XTOL = 1e-6  # relative tolerance in t of the singular point of a fold
SAMPLE_T_MIN = 1e-3  # the smallest order parameter sampled in a fold search
BIFURCATION_T = 1e-6  # the order parameter at which a branch ending at t -> 0 is evaluated
# (or the system's t_min, above the collapse threshold of its map: 3e-5 for the exact engine)
Check = Callable[[float, np.ndarray, np.ndarray | None], tuple[float, int]]
FoldCheck = Callable[[float, float, np.ndarray, np.ndarray | None], tuple[float, int]]


class DefiningSystem(Protocol):
    """A square system F(z) = 0 of `systems` (alpha = z[-1]): the residual, the SE map
    evaluations it has cost so far and the branch states at a root."""

    @property
    def evaluations(self) -> int: ...

    def __call__(self, z: np.ndarray) -> np.ndarray: ...

    def states(self, z: np.ndarray) -> dict[str, np.ndarray]: ...


@runtime_checkable
class HasStateJacobian(Protocol):
    """A spinodal's system that gives dG/dx at its fixed point (`BranchAtOrder`)."""

    def state_jacobian(self, z: np.ndarray) -> np.ndarray: ...


@dataclass(frozen=True)
class LinePoint:
    """One point of a line: the parameter value s, the root alpha with its error, the branch
    states (overlaps q, m, V, theta) there, the SE map evaluations it cost and its status
    ("converged", "converged (bifurcation, t -> 0)" for a spinodal where the branch meets the
    trivial fixed point, or why the line ended before this value: then alpha is NaN); z is
    the root of the defining system (and t the order parameter of a spinodal), from which a
    resumed line goes on."""

    s: float
    alpha: float
    alpha_err: float
    states: dict
    evaluations: int
    status: str
    z: np.ndarray | None = None
    t: float = math.nan

    @property
    def ok(self) -> bool:
        return self.status.startswith("converged")


def ended_point(s: float, reason: str, evaluations: int = 0) -> LinePoint:
    return LinePoint(float(s), math.nan, math.nan, {}, evaluations, reason)


def point_columns(name: str, pt: LinePoint | None, missing: str) -> dict:
    """A line's columns of a table row: `name`, `_err`, `_status` and `_evaluations` of the
    point, or NaN with the reason `missing` where there is none."""
    return {
        name: pt.alpha if pt else math.nan,
        f"{name}_err": pt.alpha_err if pt else math.nan,
        f"{name}_status": pt.status if pt else missing,
        f"{name}_evaluations": pt.evaluations if pt else 0,
    }


class LineFollower:
    """The root of make_system(s)(z) = 0 (alpha = z[-1]) followed one s at a time (`step`),
    from z0, an approximate root at the first s, or from the points of the line found before
    (`resume`). check(s, z, J) -> (alpha at a second accuracy, its SE map evaluations) gives
    the error |alpha - alpha_check| (NaN without a check)."""

    def __init__(
        self,
        make_system: Callable[[float], DefiningSystem],
        z0: np.ndarray | None,
        *,
        alpha_window: tuple[float, float],
        check: Check | None = None,
        tol: float = NEWTON_TOL,
    ):
        self.make, self.z0, self.window, self.check = make_system, z0, alpha_window, check
        self.tol = tol
        self.history: list[tuple[float, np.ndarray]] = []
        self.J: np.ndarray | None = None
        self.ended = ""

    def resume(self, point: LinePoint) -> None:
        """Go on from a point found before (a stored one); an ended point ends the line."""
        if point.ok:
            self.history.append((point.s, np.asarray(point.z, dtype=float)))
        else:
            self.ended = point.status

    def step(self, s: float) -> LinePoint:
        if self.ended:
            return ended_point(s, self.ended)
        evals, s_try, halvings = 0, s, 0
        while True:
            system = self.make(s_try)
            rep = newton_broyden(
                system, _predict(self.history, s_try, self.z0), self.J, tol=self.tol
            )
            evals += system.evaluations
            alpha = rep.z[-1]
            if rep.converged and self.window[0] <= alpha <= self.window[1]:
                self.J = rep.jacobian
                self.history.append((s_try, rep.z))
                if s_try == s:
                    break
                s_try = s  # retry the whole step; the halvings still count (no reset)
                continue
            why = rep.reason if not rep.converged else f"alpha {alpha:.4g} left the window"
            if halvings >= MAX_HALVINGS or not self.history:
                self.ended = f"line ended before {s_try:.6g}: {why}"
                return ended_point(s, self.ended, evals)
            s_try, halvings = 0.5 * (self.history[-1][0] + s_try), halvings + 1
            self.J = None if not rep.converged else self.J
        z = self.history[-1][1]
        alpha_check, check_evals = self.check(s, z, self.J) if self.check else (math.nan, 0)
        err = abs(float(z[-1]) - alpha_check)
        states = system.states(z)
        return LinePoint(s, float(z[-1]), err, states, evals + check_evals, "converged", z)


def follow(
    make_system: Callable[[float], DefiningSystem],
    z0: np.ndarray,
    s_values: Sequence[float],
    *,
    alpha_window: tuple[float, float],
    check: Check | None = None,
) -> list[LinePoint]:
    """`LineFollower` through s_values from z0, an approximate root at s_values[0]."""
    line = LineFollower(make_system, z0, alpha_window=alpha_window, check=check)
    return [line.step(float(s)) for s in s_values]


def _predict(history, s, z0):
    """Secant extrapolation in s of the last two roots (the last root alone, or z0, before)."""
    if not history:
        return z0
    if len(history) == 1:
        return history[-1][1]
    (s1, z1), (s2, z2) = history[-2], history[-1]
    return z2 + (z2 - z1) * (s - s2) / (s2 - s1)


def solve_root(
    system: DefiningSystem, z: np.ndarray, J: np.ndarray | None = None
) -> tuple[float, int]:
    """(alpha of the root of `system` from z, or NaN, and the evaluations it took): the check
    of a root at another accuracy."""
    rep = newton_broyden(system, z, J)
    return (float(rep.z[-1]) if rep.converged else math.nan), system.evaluations


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
    through the two nearest t solved before (the first from z0), with the Jacobian carried
    from solve to solve; a t solved before is not solved again."""

    def __init__(
        self,
        make: Callable[[float], DefiningSystem],
        t0: float,
        z0: np.ndarray,
        J: np.ndarray | None,
        tol: float,
    ):
        self.make, self.start, self.J, self.evaluations = make, z0, J, 0
        self.solved: dict[float, np.ndarray] = {}
        self.tol = tol

    def __call__(self, t: float) -> float:
        if t in self.solved:
            return float(self.solved[t][-1])
        system = self.make(t)
        near = sorted(self.solved, key=lambda u: abs(u - t))[:2]
        z = self.solved[near[0]] if near else self.start
        if len(near) == 2:  # secant in t through the two nearest solutions
            (t1, t2), (z1, z2) = near, (self.solved[near[0]], self.solved[near[1]])
            z = z1 + (z1 - z2) * (t - t1) / (t1 - t2)
        rep = newton_broyden(system, z, self.J, tol=self.tol)
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

    alpha(t) carries noise of ~1e-4 at the default quadrature order (the global prox
    minimiser jumps at some nodes as the overlaps move), so no derivatives are taken: alpha is
    sampled at t0 * FOLD_RATIO^k, k = 0, -1, ... down to SAMPLE_T_MIN (and k = 1, 2, ... while
    the smallest value sits at the top), until the smallest sample has a larger one on each
    side; the vertex of the parabola through the three is then solved too, and the best
    sample is the fold. When the smallest sample is at SAMPLE_T_MIN the branch ends where it
    bifurcates from the trivial fixed point: its end is alpha(BIFURCATION_T) = alpha(0) +
    O(t^2), by the symmetry t -> -t of the invariant manifold t = 0 (the order parameter's
    residual is divided by t, so this is the trivial point's critical alpha)."""
    a = _AlphaOfT(make, t0, z0, J, tol)
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
    """The end of a branch that bifurcates from the trivial fixed point: alpha at
    t_end = max(BIFURCATION_T, the system's `t_min`, the smallest order parameter its map
    evaluates), solved from the samples (alpha(t) - alpha(0) = O(t^2))."""
    t_end = max(BIFURCATION_T, getattr(a.make(SAMPLE_T_MIN), "t_min", 0.0))
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
        if zf is None or not self.window[0] <= zf[-1] <= self.window[1]:
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
