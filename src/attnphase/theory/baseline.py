"""The linear positional baseline f_B(x) = B x in the high-dimensional limit (Result 5.1).

The trained B is the population minimiser E[T(h*)], and its test error is
eps_lin = sigma^2/2 (E||T(h*)||_F^2 - ||E T(h*)||_F^2)
        = sigma^2 (1 - omega)^2 (Var S*_11 + Var S*_22)
(docs/theory.md §4), with h*_1, h*_2 iid N(0, rho): omega A drops out of the variance.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy import integrate

from .._core.quadrature import gauss_hermite
from ..params import ModelParams


def _teacher_centred_softmax(rho: float, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(S*_11 - 1/2, weights) on an n x n Gauss-Hermite grid, written through tanh so that the
    deviation from 1/2 keeps its relative precision as rho -> 0 (S*_11 = 1/2 + tanh(x/2)/2)."""
    x, w = gauss_hermite(n)
    h1, h2 = np.meshgrid(np.sqrt(rho) * x, np.sqrt(rho) * x, indexing="ij")
    return 0.5 * np.tanh(0.5 * h1 * (h1 - h2)), np.outer(w, w)


def teacher_softmax_moments(rho: float, n: int) -> tuple[float, float]:
    """(E[S*_11], E[S*_11^2]) on an n x n Gauss-Hermite grid; S*_22 has the same law."""
    t, ww = _teacher_centred_softmax(rho, n)
    return float(np.sum(ww * (0.5 + t))), float(np.sum(ww * (0.5 + t) ** 2))


def teacher_softmax_variance(rho: float, n: int) -> float:
    """Var S*_11 on an n x n Gauss-Hermite grid, centred twice (about 1/2, then about the mean):
    no cancellation, so it is non-negative and keeps its relative precision where rho -> 0 (there
    Var S*_11 -> 3 rho^2 / 16)."""
    t, ww = _teacher_centred_softmax(rho, n)
    mean = float(np.sum(ww * t))
    return float(np.sum(ww * (t - mean) ** 2))


def _sigmoid(x):
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def _normal_pdf(z):
    return np.exp(-0.5 * z * z) / np.sqrt(2.0 * np.pi)


def adaptive_softmax_moment(rho: float, k: int, rtol: float = 1e-13) -> float:
    """E[S*_11^k] by adaptive quadrature, for any rho. In u = (h*_1 - h*_2)/sqrt(2) and
    v = (h*_1 + h*_2)/sqrt(2) (independent N(0, rho)), S*_11 = sigmoid(u^2 + u v): the inner
    integral over v is split at its step v = -u, and the outer one, even in u, runs over u >= 0
    (the product Gauss-Hermite grid converges only slowly where rho is large, the step steep)."""
    s = np.sqrt(rho)
    opts = dict(epsabs=1e-15, epsrel=rtol, limit=200)

    def inner(u: float) -> float:  # E_z[sigmoid(u^2 + u s z)^k], z ~ N(0, 1)
        if u == 0.0:
            return 0.5**k
        f = lambda z: _sigmoid(u * u + u * s * z) ** k * _normal_pdf(z)  # noqa: E731
        return (
            integrate.quad(f, -np.inf, -u / s, **opts)[0]
            + integrate.quad(f, -u / s, np.inf, **opts)[0]
        )

    outer = lambda x: inner(s * x) * _normal_pdf(x)  # noqa: E731
    return 2.0 * integrate.quad(outer, 0.0, np.inf, **opts)[0]


@lru_cache(maxsize=256)
def _variance(rho: float, rtol: float) -> float:
    """Var S*_11 on product Gauss-Hermite grids of 40, 80, 160, 320 nodes per axis until two
    agree to rtol; where they do not (rho near 1 and above: sigma >= ~0.9), by
    `adaptive_softmax_moment`."""
    n, prev = 40, None
    while n <= 320:  # at 640 the weights of `gauss_hermite` overflow
        var = teacher_softmax_variance(rho, n)
        if prev is not None and abs(var - prev) <= rtol * abs(var):
            return var
        prev, n = var, 2 * n
    e1, e2 = (adaptive_softmax_moment(rho, k) for k in (1, 2))
    return e2 - e1 * e1


def linear_baseline_matrix(p: ModelParams) -> np.ndarray:
    """B = E[T(h*)] = (1 - omega) E[softmax(h* h*^T)] + omega A (Result 5.1)."""
    e1, _ = teacher_softmax_moments(p.rho, 320)
    es = np.array([[e1, 1 - e1], [1 - e1, e1]])
    return (1 - p.omega) * es + p.omega * p.A_array


def linear_test_error(p: ModelParams, rtol: float = 1e-10) -> float:
    """eps_lin of Result 5.1, with the 2-D integral converged to relative accuracy rtol."""
    return p.sigma**2 * (1.0 - p.omega) ** 2 * 2.0 * _variance(p.rho, rtol)


def uniform_attention_error(p: ModelParams) -> float:
    """eps_g of the uniform attention matrix U = [[1/2, 1/2], [1/2, 1/2]]: the alpha -> 0 limit
    of the attention model's test error, sigma^2/2 E||T(h*) - U||_F^2, in closed form through the
    first two moments of S*_11 (S*_22 has the same law)."""
    e1, e2 = teacher_softmax_moments(p.rho, 320)
    u = 1.0 - p.omega
    total = 0.0
    for a_in, a_out in ((p.A[0][0], p.A[0][1]), (p.A[1][1], p.A[1][0])):
        # diagonal entry T = u S + omega a_in, off-diagonal T = u (1 - S) + omega a_out
        for sign, a in ((1.0, a_in), (-1.0, a_out)):
            shift = p.omega * a - 0.5 + (u if sign < 0 else 0.0)
            # E[(sign u S + shift)^2]
            total += u * u * e2 + 2.0 * sign * u * shift * e1 + shift * shift
    return 0.5 * p.sigma**2 * total


@lru_cache(maxsize=64)
def linear_test_error_qmc(
    p: ModelParams, points: int = 2**15, randomisations: int = 8, seed: int = 0
) -> tuple[float, float]:
    """eps_lin of Result 5.1 for any L and teacher rank t (docs/theory.md §7.4), by randomised QMC
    over h*_l iid N(0, rho I_t): sigma^2/2 (1 - omega)^2 (E|S*|^2 - |E S*|^2), S* the teacher's
    attention (masked for a causal target). Returns (mean, standard error) over independent
    scramblings; memoised, since every general solve along a curve needs the same value."""
    from ..ops.array import attention
    from ..ops.form import AttentionForm
    from .qmc.channel import gaussian_points

    L, t = p.L, p.teacher_rank
    values = []
    for k in range(randomisations):
        hstar = p.sigma * gaussian_points(points, L * t, seed + k).reshape(-1, L, t)
        S = attention(hstar, AttentionForm(0, p.causal_target))
        D = S - S[0]  # about one draw first: the mean of D keeps D's precision as sigma -> 0
        values.append(((D - D.mean(0)) ** 2).sum((-1, -2)).mean())  # centred: no cancellation
    scale = 0.5 * p.sigma**2 * (1.0 - p.omega) ** 2
    v = scale * np.asarray(values)
    return float(v.mean()), float(v.std(ddof=1) / np.sqrt(len(v)))
