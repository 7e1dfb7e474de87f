"""The state-evolution equations of THEORY.md §3-§4 (L=2, r=1, Sigma = sigma^2 I), in one place.

Each function is a pure map between numbers. `hats` turns the channel expectations of
`theory.gauss_hermite.channel` into the conjugate variables (the exact channel's estimators);
`overlaps` (the prior side) and `free_entropy` (the training-loss potential Phi) are the matrix
equations of §7.3-§7.4 at r = t = K = 1; `kappa` is the teacher-only constant of ell.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .. import overlaps as ge
from .channel import ChannelMoments


@dataclass(frozen=True)
class Overlaps:
    """Order parameters (THEORY.md §1 conventions): q, m, V, theta."""

    q: float
    m: float
    V: float
    theta: float


@dataclass(frozen=True)
class Hats:
    """Conjugate variables (THEORY.md §3): qhat, mhat, Vhat, thetahat."""

    qhat: float
    mhat: float
    Vhat: float
    thetahat: float


def teacher_spread(q: float, theta: float, rho: float) -> float:
    """v = sqrt(rho - theta^2/q), the teacher's field noise (THEORY.md §2)."""
    return math.sqrt(rho - theta * theta / q)


def hats(
    e: ChannelMoments, o: Overlaps, *, alpha: float, rho: float, estimator: str = "ibp"
) -> Hats:
    """Conjugate variables from the channel expectations (THEORY.md §3 and §6).

    estimator="ibp" uses the integration-by-parts forms (§6), "direct" the forms of §3.
    """
    v = teacher_spread(o.q, o.theta, rho)
    qhat = alpha * e.f2  # qhat = alpha E[f1^2 + f2^2]
    if estimator == "ibp":
        mhat = -alpha * e.M_a  # mhat = -alpha E[M (a1 - a2)]
        thetahat = -alpha * e.M_ab  # thetahat = -alpha E[M (a1 b1 + a2 b2 - 2 C_wh)]
        Vhat = alpha * e.M_aa  # Vhat = alpha E[M (a1^2 + a2^2 - 2 C_ww)]
    elif estimator == "direct":
        mhat = alpha * e.sf  # mhat = alpha E[s1 f1 + s2 f2]
        thetahat = alpha * e.fy / v  # thetahat = alpha E[f1 y1 + f2 y2] / v
        # Vhat = -alpha E[f1 xi1 + f2 xi2]/sqrt(q) + theta thetahat/q
        Vhat = -alpha * e.fxi / math.sqrt(o.q) + o.theta * thetahat / o.q
    else:
        raise ValueError(f"estimator must be 'ibp' or 'direct', got {estimator!r}")
    return Hats(qhat=qhat, mhat=mhat, Vhat=Vhat, thetahat=thetahat)


def matrix_overlaps(o: Overlaps) -> ge.MatrixOverlaps:
    """The 1 x 1 matrices of §7 (r = t = K = 1)."""
    return ge.MatrixOverlaps(*(np.array([[x]]) for x in (o.q, o.m, o.theta, o.V)))


def matrix_hats(h: Hats) -> ge.MatrixHats:
    """The 1 x 1 matrices of §7.2 (r = t = K = 1)."""
    return ge.MatrixHats(*(np.array([[x]]) for x in (h.qhat, h.mhat, h.thetahat, h.Vhat)))


def overlaps(h: Hats, *, sigma: float, lam: float, rho: float) -> Overlaps:
    """The prior side of THEORY.md §3: §7.3 (`theory.overlaps.overlaps`) at r = t = K = 1.
    ArithmeticError where lambda + sigma^2 Vhat <= 0 (no overlaps, §6)."""
    o = ge.overlaps(matrix_hats(h), sigma=sigma, lam=lam, rho=np.array([[rho]]))
    return Overlaps(q=o.q.item(), m=o.M.item(), V=o.V.item(), theta=o.theta.item())


def kappa(*, sigma: float, omega: float, A) -> float:
    """Teacher-only constant of ell: sigma^2/4 sum_k (1 - T_k1 - T_k2)^2, rows of omega A."""
    r1 = omega * (1.0 - A[0][0] - A[0][1])
    r2 = omega * (1.0 - A[1][0] - A[1][1])
    return sigma**2 / 4.0 * (r1 * r1 + r2 * r2)


def free_entropy(
    o: Overlaps,
    h: Hats,
    e: ChannelMoments,
    *,
    alpha: float,
    sigma: float,
    lam: float,
    rho: float,
    kappa_: float,
) -> float:
    """Phi of eq. 14 (THEORY.md §4): §7.4 (`theory.overlaps.free_entropy`) at r = t = K = 1,
    with the envelope E[M] including the teacher-only constant kappa_."""
    return ge.free_entropy(
        matrix_overlaps(o),
        matrix_hats(h),
        e.M + kappa_,
        alpha=alpha,
        sigma=sigma,
        lam=lam,
        rho=np.array([[rho]]),
    )


def train_loss_identity(
    o: Overlaps, e: ChannelMoments, *, alpha: float, sigma: float, lam: float, kappa_: float
) -> float:
    """alpha E[ell(h_hat; h*)] + lambda q/(2 sigma^2), equal to -Phi at a fixed point (§4)."""
    return alpha * (e.ell_prox + kappa_) + lam * o.q / (2.0 * sigma**2)


def test_error(e: ChannelMoments, *, kappa_: float) -> float:
    """eps_g = mse/2 = E[ell(w; h*)] at the un-proxed fields (eq. 10, THEORY.md §4)."""
    return e.ell_free + kappa_
