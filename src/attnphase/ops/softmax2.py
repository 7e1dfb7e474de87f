"""The operations of `attnphase.ops` in closed form for L=2, r=1 (docs/theory.md §2 and §6).

Pure scalar functions, compiled with numba so that the quadrature kernels and the 2x2 prox
(`attnphase.prox.closed_form`) can call them per node; ordinary callables from Python as well.

For L=2 the row-softmax of h h^T has rows (s1, 1-s1) and (1-s2, s2) with
s1 = sigmoid(h1 (h1 - h2)), s2 = sigmoid(h2 (h2 - h1)). The loss
ell(h; h*) = sigma^2/2 ||S(h) - T(h*)||_F^2 then equals
sigma^2 [(s1 - c1)^2 + (s2 - c2)^2] + kappa, with c1 = (1 + T11 - T12)/2,
c2 = (1 + T22 - T21)/2 and the h-independent kappa = sigma^2/4 sum_k (1 - T_k1 - T_k2)^2.
"""

from __future__ import annotations

import math

from .._core.jit import njit_cached


@njit_cached(inline="always")
def sigmoid(z: float) -> float:
    """Logistic function, stable for large |z|."""
    if z >= 0.0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


@njit_cached(inline="always")
def softmax_diag(h1: float, h2: float) -> tuple[float, float]:
    """Diagonal (s1, s2) of the row-softmax of h h^T for two tokens (docs/theory.md §6)."""
    d = h1 - h2
    return sigmoid(h1 * d), sigmoid(-h2 * d)


@njit_cached(inline="always")
def target_entries(
    hs1: float, hs2: float, omega: float, a11: float, a12: float, a21: float, a22: float
) -> tuple[float, float, float, float]:
    """T(h*) = (1 - omega) softmax(h* h*^T) + omega A (eq. 1), as (T11, T12, T21, T22)."""
    t1, t2 = softmax_diag(hs1, hs2)
    u = 1.0 - omega
    return (
        u * t1 + omega * a11,
        u * (1.0 - t1) + omega * a12,
        u * (1.0 - t2) + omega * a21,
        u * t2 + omega * a22,
    )


@njit_cached(inline="always")
def target_centres(
    hs1: float, hs2: float, omega: float, a11: float, a12: float, a21: float, a22: float
) -> tuple[float, float]:
    """The values (c1, c2) the student's diagonal softmax entries are compared with (§6)."""
    t11, t12, t21, t22 = target_entries(hs1, hs2, omega, a11, a12, a21, a22)
    return 0.5 * (1.0 + t11 - t12), 0.5 * (1.0 + t22 - t21)


@njit_cached(inline="always")
def reduced_loss(h1: float, h2: float, c1: float, c2: float, sigma2: float) -> float:
    """ell(h; h*) - kappa = sigma^2 [(s1 - c1)^2 + (s2 - c2)^2] (§2, h-dependent part)."""
    s1, s2 = softmax_diag(h1, h2)
    return sigma2 * ((s1 - c1) ** 2 + (s2 - c2) ** 2)
