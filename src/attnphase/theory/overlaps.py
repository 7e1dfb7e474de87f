"""The state-evolution equations of docs/theory.md §7.2-§7.4 for any L, r, t and encodings C.

Pure functions of matrices (numpy). Shapes: q, V, qhat, Vhat: r x r; M, Mhat: K x r;
theta, thetahat: t x r; rho = sigma^2 I_t. `MatrixMoments` holds the channel expectations
(computed by `attnphase.theory.qmc.channel`); the L=2, r=t=K=1 case is §3-§4 exactly, and
`Overlaps`, `Hats` are its scalars.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ops.array import sym_sqrt


@dataclass(frozen=True)
class MatrixOverlaps:
    """Order parameters of §7: q (r x r), M (K x r), theta (t x r), V (r x r)."""

    q: np.ndarray
    M: np.ndarray
    theta: np.ndarray
    V: np.ndarray

    def rotated(self, U: np.ndarray) -> MatrixOverlaps:
        """The overlaps of the student Q U (U orthogonal r x r): q -> U^T q U, M -> M U,
        theta -> theta U, V -> U^T V U."""
        return MatrixOverlaps(
            q=U.T @ self.q @ U, M=self.M @ U, theta=self.theta @ U, V=U.T @ self.V @ U
        )


@dataclass(frozen=True)
class MatrixHats:
    """Conjugates of §7.2: qhat (r x r), Mhat (K x r), thetahat (t x r), Vhat (r x r)."""

    qhat: np.ndarray
    Mhat: np.ndarray
    thetahat: np.ndarray
    Vhat: np.ndarray


@dataclass(frozen=True)
class MatrixMoments:
    """Channel expectations at one point, summed over tokens l (names of docs/theory.md §7):
    ff = sum E[f_l f_l^T] (r x r); Ma = E[Mc sum_l C_l a_l^T] (K x r, Stein form of E[C^T F]);
    yf = sum E[y_l f_l^T] (t x r); fxi = sum E[f_l xi_l^T]
    (r x r); M = E[M] (envelope incl. the teacher-only part); ell_prox = E[ell(h_hat; h*)];
    ell_free = E[ell(w; h*)] (test error integrand)."""

    ff: np.ndarray
    Ma: np.ndarray
    yf: np.ndarray
    fxi: np.ndarray
    M: float
    ell_prox: float
    ell_free: float


def teacher_covariance(o: MatrixOverlaps, rho: np.ndarray) -> np.ndarray:
    """Gamma = rho - theta q^{-1} theta^T (§7.1), the teacher field's conditional covariance."""
    return rho - o.theta @ np.linalg.solve(o.q, o.theta.T)


def admissible(o: MatrixOverlaps, rho: np.ndarray) -> bool:
    """q and V positive definite and Gamma = rho - theta q^-1 theta^T positive definite."""
    try:
        if np.linalg.eigvalsh(o.q)[0] <= 0 or np.linalg.eigvalsh(o.V)[0] <= 0:
            return False
        return bool(np.linalg.eigvalsh(teacher_covariance(o, rho))[0] > 0)
    except np.linalg.LinAlgError:
        return False


def hats(m: MatrixMoments, o: MatrixOverlaps, *, alpha: float, rho: np.ndarray) -> MatrixHats:
    """§7.2 with the forms of §7.6: direct qhat, thetahat, Vhat; Stein Mhat."""
    qhat = alpha * m.ff  # qhat = alpha sum_l E[f_l f_l^T]
    Mhat = -alpha * m.Ma  # Mhat = alpha C^T E[F] = -alpha E[Mc sum_l C_l a_l^T]
    thetahat = alpha * sym_sqrt(teacher_covariance(o, rho), -0.5) @ m.yf  # Gamma^-1/2 E[y f^T]
    # Vhat = -alpha sum_l E[f_l xi_l^T] q^{-1/2} + thetahat^T theta q^{-1}, symmetrised
    Vhat = -alpha * m.fxi @ sym_sqrt(o.q, -0.5) + thetahat.T @ o.theta @ np.linalg.inv(o.q)
    return MatrixHats(qhat=qhat, Mhat=Mhat, thetahat=thetahat, Vhat=0.5 * (Vhat + Vhat.T))


def prior_matrix(h: MatrixHats, *, sigma: float, lam: float) -> np.ndarray:
    """A_r = lambda I_r + sigma^2 Vhat (§7.3); the overlaps exist where it is positive definite."""
    return lam * np.eye(h.Vhat.shape[0]) + sigma**2 * h.Vhat


def overlaps(h: MatrixHats, *, sigma: float, lam: float, rho: np.ndarray) -> MatrixOverlaps:
    """§7.3; raises ArithmeticError when A_r is not positive definite."""
    s2 = sigma**2
    Ar = prior_matrix(h, sigma=sigma, lam=lam)
    if np.linalg.eigvalsh(Ar)[0] <= 0:
        raise ArithmeticError(
            f"lambda + sigma^2 Vhat is not positive definite ({Ar.tolist()}): no overlaps"
        )
    Ainv = np.linalg.inv(Ar)
    inner = s2 * h.qhat + h.Mhat.T @ h.Mhat + s2 * h.thetahat.T @ rho @ h.thetahat
    q = s2 * Ainv @ inner @ Ainv  # q = sigma^2 A_r^-1 [...] A_r^-1
    return MatrixOverlaps(
        q=0.5 * (q + q.T),
        M=h.Mhat @ Ainv,  # M = Mhat A_r^-1
        theta=s2 * rho @ h.thetahat @ Ainv,  # theta = sigma^2 rho thetahat A_r^-1
        V=s2 * Ainv,  # V = sigma^2 A_r^-1
    )


def free_entropy(
    o: MatrixOverlaps,
    h: MatrixHats,
    envelope: float,
    *,
    alpha: float,
    sigma: float,
    lam: float,
    rho: np.ndarray,
) -> float:
    """Phi of §7.4 (training loss R/d = -Phi at a fixed point); envelope = E[M], the channel's
    Moreau envelope including the teacher-only part (`MatrixMoments.M`)."""
    s2 = sigma**2
    inner = s2 * h.qhat + h.Mhat.T @ h.Mhat + s2 * h.thetahat.T @ rho @ h.thetahat
    Ainv = np.linalg.inv(prior_matrix(h, sigma=sigma, lam=lam))
    return float(
        0.5 * np.trace(h.Vhat @ o.q)
        - 0.5 * np.trace(h.qhat @ o.V)
        - np.trace(h.Mhat.T @ o.M)
        - np.trace(h.thetahat.T @ o.theta)
        + 0.5 * np.trace(inner @ Ainv)
        - alpha * envelope
    )


def train_loss_identity(
    o: MatrixOverlaps, m: MatrixMoments, *, alpha: float, sigma: float, lam: float
) -> float:
    """alpha E[ell(h_hat; h*)] + lambda tr(q)/(2 sigma^2), equal to -Phi at a fixed point."""
    return float(alpha * m.ell_prox + lam * np.trace(o.q) / (2.0 * sigma**2))


def test_error(m: MatrixMoments) -> float:
    """eps_g = sigma^2/2 E|S(w) - T(h*)|^2 at the un-proxed fields (§7.4)."""
    return float(m.ell_free)


@dataclass(frozen=True)
class Overlaps:
    """The order parameters at L = 2, r = t = K = 1 (docs/theory.md §1): q, m, V, theta."""

    q: float
    m: float
    V: float
    theta: float

    def matrices(self) -> MatrixOverlaps:
        """The 1 x 1 matrices of §7."""
        return MatrixOverlaps(*(np.array([[x]]) for x in (self.q, self.m, self.theta, self.V)))


@dataclass(frozen=True)
class Hats:
    """The conjugate variables at L = 2, r = t = K = 1 (docs/theory.md §3)."""

    qhat: float
    mhat: float
    Vhat: float
    thetahat: float

    def matrices(self) -> MatrixHats:
        """The 1 x 1 matrices of §7.2."""
        return MatrixHats(
            *(np.array([[x]]) for x in (self.qhat, self.mhat, self.thetahat, self.Vhat))
        )


def scalar_overlaps(h: Hats, *, sigma: float, lam: float, rho: float) -> Overlaps:
    """The prior side of docs/theory.md §3: `overlaps` (§7.3) at r = t = K = 1. ArithmeticError
    where lambda + sigma^2 Vhat <= 0 (no overlaps, §6)."""
    o = overlaps(h.matrices(), sigma=sigma, lam=lam, rho=np.array([[rho]]))
    return Overlaps(q=o.q.item(), m=o.M.item(), V=o.V.item(), theta=o.theta.item())


def scalar_free_entropy(
    o: Overlaps, h: Hats, envelope: float, *, alpha: float, sigma: float, lam: float, rho: float
) -> float:
    """Phi of eq. 14 (docs/theory.md §4): `free_entropy` (§7.4) at r = t = K = 1, with the
    envelope E[M] including the teacher-only constant."""
    return free_entropy(
        o.matrices(),
        h.matrices(),
        envelope,
        alpha=alpha,
        sigma=sigma,
        lam=lam,
        rho=np.array([[rho]]),
    )


def matched_eigenvectors(S: np.ndarray) -> np.ndarray:
    """The eigenvectors of the symmetric S as columns, each assigned to the current axis it is
    closest to (the permutation maximising sum |U_cc|) and signed to keep U_cc >= 0: a frame
    that moves continuously where two eigenvalues cross (`qmc.engine.canonical`,
    `qmc.engine.teacher_frame`, `heads_map.HeadsMap.frame`)."""
    from scipy.optimize import linear_sum_assignment  # scipy stays out of the CLI's refusals

    _, U = np.linalg.eigh(S)
    _, cols = linear_sum_assignment(-np.abs(U))
    U = U[:, cols]
    return U * np.where(np.diag(U) < 0, -1.0, 1.0)
