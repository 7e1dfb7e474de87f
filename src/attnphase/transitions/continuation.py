"""Following a transition line in a second parameter s, for any engine whose
defining systems (`systems`) can be built at each s.

`LineFollower`: the root z(s) of a square system F_s(z) = 0 (alpha = z[-1]) along s, with a secant
predictor on all unknowns (alpha and the branch states) and a Newton-Broyden corrector whose
Jacobian is carried along the line. Where the corrector fails the step is halved, and after
a successful half step the whole step is tried again; after MAX_HALVINGS failures in one step
(in all: a reset after each success let one step at omega 0.12 of the L=2 alpha_c line halve
towards its target for over 25 minutes) the line is declared ended, with the reason: a branch
collapsed or became inadmissible, or the corrector failed. A converged root beyond the alpha
window ends the line: at once where the predictor put alpha beyond it too, otherwise after one
half step has found the root beyond it again (a predictor that overshoots can reach a spurious
root; halving all the way only located where the line leaves, 5 to 6 more solves).

Spinodals (folds and bifurcations of a branch) are followed by `folds.FoldFollower` with the
same predictor.

Errors come from a caller-supplied `check`, run at the reported points only (for the exact L=2
engine the root re-solved at a second quadrature order from the converged point).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from .newton import checked_solve

MAX_HALVINGS = 4
NEWTON_TOL = 1e-10  # the corrector's step tolerance (an engine whose map repeats only to ~1e-9,
# the general engine's with its prox warm starts, sets its own: `newton_tol` of its lines)
Check = Callable[[float, np.ndarray, np.ndarray | None], tuple[float, int]]


class DefiningSystem(Protocol):
    """A square system F(z) = 0 of `systems` (alpha = z[-1]): the residual, the SE map
    evaluations it has cost so far and the branch states at a root."""

    @property
    def evaluations(self) -> int: ...

    def __call__(self, z: np.ndarray) -> np.ndarray: ...

    def states(self, z: np.ndarray) -> dict[str, np.ndarray]: ...


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


def in_window(alpha: float, window: tuple[float, float]) -> bool:
    """Whether a line's alpha lies in its window (ends included)."""
    return window[0] <= alpha <= window[1]


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
            z0 = _predict(self.history, s_try, self.z0)
            rep = checked_solve(system, z0, self.J, tol=self.tol)
            evals += system.evaluations
            alpha = rep.z[-1]
            if rep.converged and in_window(alpha, self.window):
                self.J = rep.jacobian
                self.history.append((s_try, rep.z))
                if s_try == s:
                    break
                s_try = s  # retry the whole step; the halvings still count (no reset)
                continue
            inside = in_window(z0[-1], self.window)
            if rep.converged and (halvings or not self.history or not inside):
                # beyond the window where predicted there, or found again from a closer start
                self.ended = f"line ended at {s_try:.6g}: alpha {alpha:.4g} left the window"
                return ended_point(s, self.ended, evals)
            if halvings >= MAX_HALVINGS or not self.history:
                self.ended = f"line ended before {s_try:.6g}: {rep.reason}"
                return ended_point(s, self.ended, evals)
            s_try, halvings = 0.5 * (self.history[-1][0] + s_try), halvings + 1
            if not rep.converged:
                self.J = None
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
    rep = checked_solve(system, z, J)
    return (float(rep.z[-1]) if rep.converged else math.nan), system.evaluations
