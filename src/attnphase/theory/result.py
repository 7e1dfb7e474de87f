"""The result record of a state-evolution fixed point and the solvers' errors."""

from __future__ import annotations

from dataclasses import asdict, dataclass


class ConvergenceError(RuntimeError):
    """Raised by `solve(..., strict=True)` when the fixed point is not reached."""


class NonConvergenceWarning(RuntimeWarning):
    """Emitted when a fixed point is not reached and strict=False."""


@dataclass(frozen=True)
class TheoryResult:
    """One state-evolution fixed point (THEORY.md conventions; eps_g = test_error = mse/2).

    train_loss is R(Q)/d = -Phi (eq. 14). When converged is False the numbers are NaN unless
    the iteration merely ran out of steps, and status says why. rs_stability, jump_mass and
    vhat_smooth (THEORY §9, `attnphase.theory.stability`) are NaN until measured by
    `with_stability`.
    """

    alpha: float
    omega: float
    sigma: float
    lam: float
    A: tuple[tuple[float, float], tuple[float, float]]
    branch: str
    q: float
    m: float
    V: float
    theta: float
    qhat: float
    mhat: float
    Vhat: float
    thetahat: float
    test_error: float
    train_loss: float
    linear_test_error: float
    converged: bool
    iterations: int
    residual: float
    residuals: tuple[float, ...]
    status: str
    order: tuple[int, int]
    rs_stability: float = float("nan")
    rs_stability_err: float = float("nan")
    jump_mass: float = float("nan")
    jump_mass_err: float = float("nan")
    vhat_smooth: float = float("nan")
    vhat_smooth_err: float = float("nan")

    @property
    def mse(self) -> float:
        """The `mse` column of the reference tables (= 2 eps_g)."""
        return 2.0 * self.test_error

    @property
    def phi(self) -> float:
        """The free entropy Phi of eq. 14 (= -train_loss)."""
        return -self.train_loss

    @property
    def kind(self) -> str:
        """Which fixed point this is, judged from (m, theta): semantic, positional or trivial."""
        if not self.converged:
            return "none"
        sem = abs(self.theta) > 1e-6 * self.sigma**2
        pos = abs(self.m) > 1e-6
        if sem and pos:
            return "mixed"
        return "semantic" if sem else "positional" if pos else "trivial"

    def as_dict(self) -> dict:
        """Flat record for tables and JSON (A as a11..a22, order as n_xi, n_y)."""
        d = asdict(self)
        d.pop("residuals")
        (d["a11"], d["a12"]), (d["a21"], d["a22"]) = d.pop("A")
        d["n_xi"], d["n_y"] = d.pop("order")
        d["kind"] = self.kind
        d["engine"] = "l2"
        return d
