"""The linear positional baseline f_B(x) = B x in the high-dimensional limit (Result 5.1).

The trained B is the population minimiser E[T(h*)], and its test error is
eps_lin = sigma^2/2 (E||T(h*)||_F^2 - ||E T(h*)||_F^2)
        = sigma^2 (1 - omega)^2 (Var S*_11 + Var S*_22)
(THEORY.md §4), with h*_1, h*_2 iid N(0, rho): omega A drops out of the variance.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .params import ModelParams
from .quadrature import gauss_hermite


def teacher_softmax_moments(rho: float, n: int) -> tuple[float, float]:
    """(E[S*_11], E[S*_11^2]) on an n x n Gauss-Hermite grid; S*_22 has the same law."""
    x, w = gauss_hermite(n)
    h1, h2 = np.meshgrid(np.sqrt(rho) * x, np.sqrt(rho) * x, indexing="ij")
    s1 = 1.0 / (1.0 + np.exp(-h1 * (h1 - h2)))
    ww = np.outer(w, w)
    return float(np.sum(ww * s1)), float(np.sum(ww * s1 * s1))


@lru_cache(maxsize=256)
def _variance(rho: float, rtol: float) -> float:
    n, prev = 40, None
    while n <= 1280:
        e1, e2 = teacher_softmax_moments(rho, n)
        var = e2 - e1 * e1
        if prev is not None and abs(var - prev) <= rtol * abs(var):
            return var
        prev, n = var, 2 * n
    raise ArithmeticError(f"eps_lin quadrature did not converge for rho={rho}")


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
    """eps_lin of Result 5.1 for any L and teacher rank t (THEORY.md §7.4), by randomised QMC
    over h*_l iid N(0, rho I_t): sigma^2/2 (1 - omega)^2 (E|S*|^2 - |E S*|^2), S* the teacher's
    attention. Returns (mean, standard error) over independent scramblings; memoised, since
    every general solve along a curve needs the same value."""
    from .theory.general.channel import attention, gaussian_points

    L, t = p.L, p.teacher_rank
    values = []
    for k in range(randomisations):
        hstar = p.sigma * gaussian_points(points, L * t, seed + k).reshape(-1, L, t)
        S = attention(hstar)
        values.append((S * S).sum((-1, -2)).mean() - (S.mean(0) ** 2).sum())
    scale = 0.5 * p.sigma**2 * (1.0 - p.omega) ** 2
    v = scale * np.asarray(values)
    return float(v.mean()), float(v.std(ddof=1) / np.sqrt(len(v)))
