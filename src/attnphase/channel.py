"""The channel expectations of the state evolution (THEORY.md §3, §4, §6), in one compiled pass.

For fields w_l = sqrt(q) xi_l + s_l m and h*_l = (theta/sqrt(q)) xi_l + v y_l,
v = sqrt(rho - theta^2/q), the kernel solves the global prox at every node of the product
Gauss-Hermite grid over (xi_1, xi_2, y_1, y_2) and accumulates the integrands that the
equations of `attnphase.equations` need. The minimisers are written back so that the next
iteration can warm-start from them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from .prox import global_prox
from .quadrature import gauss_hermite
from .softmax2 import reduced_loss, softmax_diag, target_centres


@dataclass(frozen=True)
class ChannelMoments:
    """Gaussian expectations at one point (q, m, V, theta); names follow THEORY.md §3-§6.

    M is the Moreau envelope without the teacher-only constant kappa; ell likewise.
    """

    f2: float  # E[f1^2 + f2^2]
    sf: float  # E[s1 f1 + s2 f2]
    fy: float  # E[f1 y1 + f2 y2]
    fxi: float  # E[f1 xi1 + f2 xi2]
    M_a: float  # E[M (a1 - a2)]
    M_ab: float  # E[M (a1 b1 + a2 b2 - 2 C_wh)]
    M_aa: float  # E[M (a1^2 + a2^2 - 2 C_ww)]
    M: float  # E[M]
    ell_prox: float  # E[ell(h_hat; h*)] - kappa
    ell_free: float  # E[ell(w; h*)] - kappa   (test error integrand, eq. 10)


_N_MOMENTS = 10


@njit(cache=True, parallel=True)
def _moments_kernel(xi, wxi, y, wy, q, m, V, theta, rho, sigma2, omega, A, warm, use_warm):
    """Partial sums of the integrands, one row per (xi_1, xi_2) node (summed by the caller,
    in a fixed order, so results do not depend on the number of threads)."""
    nx = xi.shape[0]
    ny = y.shape[0]
    sq = math.sqrt(q)
    v = math.sqrt(rho - theta * theta / q)
    c_ww = rho / (q * v * v)
    c_wh = -theta / (q * v * v)
    a11, a12, a21, a22 = A[0], A[1], A[2], A[3]
    part = np.zeros((nx * nx, _N_MOMENTS))
    for k in prange(nx * nx):
        i1 = k // nx
        i2 = k - i1 * nx
        x1 = xi[i1]
        x2 = xi[i2]
        wx = wxi[i1] * wxi[i2]
        w1 = sq * x1 + m
        w2 = sq * x2 - m
        sw1, sw2 = softmax_diag(w1, w2)
        acc = part[k]
        for j1 in range(ny):
            for j2 in range(ny):
                wt = wx * wy[j1] * wy[j2]
                y1 = y[j1]
                y2 = y[j2]
                hs1 = theta / sq * x1 + v * y1
                hs2 = theta / sq * x2 + v * y2
                c1, c2 = target_centres(hs1, hs2, omega, a11, a12, a21, a22)
                h1, h2, env = global_prox(
                    w1, w2, V, c1, c2, sigma2, warm[k, j1, j2, 0], warm[k, j1, j2, 1], use_warm
                )
                warm[k, j1, j2, 0] = h1
                warm[k, j1, j2, 1] = h2
                g1 = (h1 - w1) / V
                g2 = (h2 - w2) / V
                al1 = x1 / sq - theta * y1 / (q * v)
                al2 = x2 / sq - theta * y2 / (q * v)
                b1 = y1 / v
                b2 = y2 / v
                acc[0] += wt * (g1 * g1 + g2 * g2)
                acc[1] += wt * (g1 - g2)
                acc[2] += wt * (g1 * y1 + g2 * y2)
                acc[3] += wt * (g1 * x1 + g2 * x2)
                acc[4] += wt * env * (al1 - al2)
                acc[5] += wt * env * (al1 * b1 + al2 * b2 - 2.0 * c_wh)
                acc[6] += wt * env * (al1 * al1 + al2 * al2 - 2.0 * c_ww)
                acc[7] += wt * env
                acc[8] += wt * reduced_loss(h1, h2, c1, c2, sigma2)
                acc[9] += wt * sigma2 * ((sw1 - c1) ** 2 + (sw2 - c2) ** 2)
    return part


class ChannelIntegrator:
    """Product-grid expectations with a per-node warm start for the prox.

    Parameters: n_xi, n_y are the Gauss-Hermite orders in the student (xi) and teacher (y)
    directions; the grid has n_xi^2 n_y^2 nodes.
    """

    def __init__(self, n_xi: int, n_y: int):
        self.n_xi = int(n_xi)
        self.n_y = int(n_y)
        self.xi, self.wxi = gauss_hermite(self.n_xi)
        self.y, self.wy = gauss_hermite(self.n_y)
        self._warm = np.zeros((self.n_xi**2, self.n_y, self.n_y, 2))
        self._has_warm = False

    def reset(self) -> None:
        """Forget the warm starts (e.g. after a jump to a far-away point)."""
        self._has_warm = False

    def moments(
        self,
        q: float,
        m: float,
        V: float,
        theta: float,
        *,
        rho: float,
        sigma2: float,
        omega: float,
        A: np.ndarray,
    ) -> ChannelMoments:
        """All channel expectations at the overlaps (q, m, V, theta)."""
        out = _moments_kernel(
            self.xi, self.wxi, self.y, self.wy,
            float(q), float(m), float(V), float(theta), float(rho), float(sigma2),
            float(omega), np.ascontiguousarray(A, dtype=np.float64).ravel(),
            self._warm, self._has_warm,
        )
        self._has_warm = True
        return ChannelMoments(*(float(x) for x in out.sum(axis=0)))
