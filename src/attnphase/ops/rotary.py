"""Rotary positions in numba (docs/variants.md, rotary): the logits of fields h (L x r, r even)
whose query and key are rotated by position, pair j of columns (2j, 2j + 1) by l phi_j at token
l, Z_ik = h_i^T G_ik h_k with G_ik = blockdiag_j R((k - i) phi_j), R(t) = [[cos t, -sin t],
[sin t, cos t]]. G_ki = G_ik^T and G_ii = I, so Z is symmetric and

    dZ_ik/dh_ac = delta_ai (G_ik h_k)_c + delta_ak (G_ki h_i)_c,
    d2Z_ik/dh_ac dh_bd = delta_ai delta_bk (G_ik)_cd + delta_ak delta_bi (G_ki)_cd,

whence the loss's gradient sum_k (P_ak + P_ka)(G_ak h_k)_c and the curvature of Z in its
Hessian (P_ab + P_ba)(G_ab)_cd (`attnphase.ops.compiled`). freqs: the frequencies phi_j, one per
pair of columns.
"""

from __future__ import annotations

import math

from .._core.jit import njit_cached


@njit_cached(inline="always")
def rotary_logit(h, i, k, freqs):
    """Z_ik = h_i^T G_ik h_k."""
    z = 0.0
    for j in range(freqs.shape[0]):
        t = (k - i) * freqs[j]
        c, s = math.cos(t), math.sin(t)
        a1, a2 = h[i, 2 * j], h[i, 2 * j + 1]
        b1, b2 = h[k, 2 * j], h[k, 2 * j + 1]
        z += c * (a1 * b1 + a2 * b2) + s * (a2 * b1 - a1 * b2)
    return z


@njit_cached(inline="always")
def rotated(h, i, k, cc, freqs):
    """(G_ik h_k)_cc: token k's fields rotated by (k - i) phi."""
    j = cc // 2
    t = (k - i) * freqs[j]
    c, s = math.cos(t), math.sin(t)
    b1, b2 = h[k, 2 * j], h[k, 2 * j + 1]
    return c * b1 - s * b2 if cc % 2 == 0 else s * b1 + c * b2


@njit_cached(inline="always")
def rotation_entry(i, k, cc, dd, freqs):
    """(G_ik)_{cc, dd}: zero across pairs, R((k - i) phi_j) within pair j."""
    if cc // 2 != dd // 2:
        return 0.0
    t = (k - i) * freqs[cc // 2]
    if cc % 2 == dd % 2:
        return math.cos(t)
    return -math.sin(t) if cc % 2 == 0 else math.sin(t)
