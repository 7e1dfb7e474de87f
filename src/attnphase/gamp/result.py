"""Result records of a GAMP run (docs/theory.md §8): the end point and the per-iteration history."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._core.records import Tabular
from ..params import ModelParams
from ..theory.overlaps import MatrixOverlaps


def plain(x):
    """A float for a one-element array (r = t = K = 1), nested lists otherwise."""
    arr = np.asarray(x, dtype=float)
    return float(arr.reshape(())) if arr.size == 1 else arr.tolist()


def overlap_number(x) -> float:
    """An overlap as one number: itself, with its sign, for r = t = K = 1; the Frobenius norm
    of a matrix otherwise (None, a table's missing value, as NaN)."""
    if x is None:
        return float("nan")
    arr = np.asarray(x, dtype=float)
    return float(arr.reshape(())) if arr.size == 1 else float(np.linalg.norm(arr))


@dataclass(frozen=True)
class GampStep:
    """The state at the start of GAMP iteration `iteration` (0: the start): overlaps of the
    estimate Qh_t (q, M, theta as in `attnphase.sim`) with the V_t its prox uses, so that
    (q, M, theta, V) is the state-evolution iterate t; grad_norm = ‖grad R(Qh_t)‖_F/sqrt(d r);
    change = ‖Qh_t - Qh_{t-1}‖_F/‖Qh_{t-1}‖_F (NaN at the start); switched = samples whose prox
    minimiser jumped to another basin at the step that produced this state."""

    iteration: int
    overlaps: MatrixOverlaps
    grad_norm: float
    train_loss: float
    change: float
    switched: int

    def as_dict(self) -> dict:
        o = self.overlaps
        return {
            "iteration": self.iteration,
            "q": plain(o.q),
            "m": plain(o.M),
            "theta": plain(o.theta),
            "V": plain(o.V),
            "grad_norm": self.grad_norm,
            "train_loss": self.train_loss,
            "change": self.change,
            "switched": self.switched,
        }


@dataclass(frozen=True)
class GampResult(Tabular):
    """One GAMP run on the data set `attnphase.sim` draws for (params, d, alpha, seed).

    q, m (= M), theta, V: overlaps of the final estimate (numbers for r = t = K = 1, arrays
    otherwise; V is GAMP's, the smooth part of the susceptibility, docs/theory.md §8.1);
    test_error: eps_g on the simulation's test set of the seed; train_loss = R/d;
    grad_norm = ‖grad R‖_F/sqrt(d r) (the simulations' grad_rms); converged: the relative change
    of the estimate <= tol AND grad_norm <= gtol; status says why the run stopped ("converged",
    "cycling: k samples switch prox minima", "stalled", "maximum iterations reached",
    "diverged: ..."); history: one `GampStep` per iterate (0 = the start); polish: None, or the
    L-BFGS minimiser started from GAMP's end point (labelled as such, docs/theory.md §8.1);
    rho: the teacher's empirical overlap sigma^2 Q*^T Q*/d (t x t; the theory's is sigma^2 I);
    rs_stability: docs/theory.md §9's smooth replicon factor on the data at the last prox,
    (alpha/r) mean_mu ‖Jt_mu - I‖_F^2 (`attnphase.validity.stability`; NaN before any step);
    Q: the estimate (d x r)."""

    d: int
    n: int
    alpha: float
    params: ModelParams
    init: str
    seed: int
    damping: float
    q: object
    m: object
    theta: object
    V: object
    test_error: float
    train_loss: float
    grad_norm: float
    change: float
    converged: bool
    iterations: int
    status: str
    seconds: float
    rho: float | list
    rs_stability: float
    history: tuple[GampStep, ...] = field(repr=False)
    Q: np.ndarray = field(repr=False)
    polish: dict | None = None

    def as_dict(self) -> dict:
        """Flat JSON-ready record (no history, no estimate)."""
        p = self.params
        out = {
            "d": self.d,
            "n": self.n,
            "alpha": self.alpha,
            "omega": p.omega,
            "sigma": p.sigma,
            "lam": p.lam,
            "L": p.L,
            "rank": p.rank,
            "teacher_rank": p.teacher_rank,
            "init": self.init,
            "seed": self.seed,
            "damping": self.damping,
            "q": self.q,
            "m": self.m,
            "theta": self.theta,
            "V": self.V,
            "rho": self.rho,
            "rs_stability": self.rs_stability,
            "test_error": self.test_error,
            "train_loss": self.train_loss,
            "grad_norm": self.grad_norm,
            "change": self.change,
            "converged": self.converged,
            "iterations": self.iterations,
            "status": self.status,
            "seconds": self.seconds,
        }
        out.update(p.attention_columns())
        if self.polish is not None:
            out.update({f"polish_{k}": v for k, v in self.polish.items()})
        return out

    def trace_rows(self) -> list[dict]:
        """The per-iteration history as table rows."""
        return [s.as_dict() for s in self.history]
