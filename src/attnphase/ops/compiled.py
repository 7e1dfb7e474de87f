"""The operations of `attnphase.ops` in numba (docs/theory.md §8): one sample at a time, into
buffers the caller owns, for the CPU prox kernel.

Every function takes the attention's `form` (`attnphase.ops.form.AttentionForm`): its key_start,
0 for tied fields, Z = h h^T; for untied fields h = (h_Q, h_K) of width 2 r_Q it is r_Q and
Z = h_Q h_K^T; whether the mask is causal (S_ik = 0 for k > i); and its heads (several:
`attnphase.ops.heads`).
"""

from __future__ import annotations

import math

import numpy as np

from .._core.jit import njit_cached
from .heads import heads_attention, heads_loss_derivatives_at
from .rotary import rotary_logit, rotated, rotation_entry


@njit_cached()
def attention(h, S, form):
    """S = softmax_row(Z) into S (L x L): Z_ik = sum_a h_ia h_k(a + key_start) over the
    R - key_start query columns a (R the width of h); with a causal form, over k <= i alone
    (S_ik = 0 for k > i); with several heads their mean (`attnphase.ops.heads`); with rotary
    frequencies Z_ik = h_i^T G_ik h_k (`attnphase.ops.rotary`)."""
    if form.heads > 1:
        heads_attention(h, S, form)
        return
    L, R = h.shape
    off = form.key_start
    r = R - off
    rotary = form.rotary.shape[0] > 0
    for i in range(L):
        last = i + 1 if form.causal else L
        zmax = -np.inf
        for k in range(last):
            z = 0.0
            if rotary:
                z = rotary_logit(h, i, k, form.rotary)
            else:
                for a in range(r):
                    z += h[i, a] * h[k, a + off]
            S[i, k] = z
            zmax = max(zmax, z)
        tot = 0.0
        for k in range(last):
            S[i, k] = math.exp(S[i, k] - zmax)
            tot += S[i, k]
        for k in range(last):
            S[i, k] /= tot
        for k in range(last, L):
            S[i, k] = 0.0


@njit_cached()
def add_row_loss(g, S, K, Cm, i):
    """g + phi_i(s_i), phi_i(s) = -Cm_i.s + s K s/2 the share of row i of S in g (§8), added
    term by term (a caller that adds its own terms row by row keeps one summation order)."""
    L = S.shape[0]
    for k in range(L):
        g -= S[i, k] * Cm[i, k]
        sk = 0.0
        for j in range(L):
            sk += S[i, j] * K[j, k]
        g += 0.5 * sk * S[i, k]
    return g


@njit_cached()
def loss(h, K, Cm, c, S, form):
    """g(h) = c - tr(S Cm^T) + 1/2 tr(S K S^T) (§8); S is scratch (L x L)."""
    attention(h, S, form)
    g = c
    for i in range(h.shape[0]):
        g = add_row_loss(g, S, K, Cm, i)
    return g


@njit_cached()
def loss_derivatives(h, K, Cm, S, P, grad, H, form):
    """Gradient (L*r) and Hessian (L*r x L*r) of g at h into grad and H, row-major flattening of
    h; S and P (L x L) receive S(h) and P = dg/dZ (`loss_derivatives_at`, with its scratch)."""
    L, r = h.shape
    attention(h, S, form)
    work = hessian_scratch(L, r)
    loss_derivatives_at(h, K, np.nonzero(K), Cm, S, P, grad, H, work, form)


@njit_cached()
def hessian_scratch(L, r):
    """The scratch of `loss_derivatives_at` for L x r fields: J, Hz (L x L) and G (L x L r)."""
    return np.empty((L, L)), np.empty((L, L)), np.empty((L, L * r))


@njit_cached(inline="always")
def _dz(h, i, k, a, cc, key_start, freqs):
    """dZ_ik/dh_ac (`loss_derivatives_at`); zero unless a = i or a = k. freqs: the rotary
    frequencies (none: empty)."""
    v = 0.0
    if freqs.shape[0] > 0:
        if a == i:
            v += rotated(h, i, k, cc, freqs)
        if a == k:
            v += rotated(h, k, i, cc, freqs)
    elif key_start == 0:
        if a == i:
            v += h[k, cc]
        if a == k:
            v += h[i, cc]
    elif cc < key_start:
        if a == i:
            v += h[k, cc + key_start]
    elif a == k:
        v += h[i, cc - key_start]
    return v


@njit_cached()
def loss_derivatives_at(h, K, Knz, Cm, S, P, grad, H, work, form):
    """Gradient (L*r) and Hessian (L*r x L*r) of g at h into grad and H, row-major flattening of
    h, with S holding S(h); P (L x L) receives P = dg/dZ; Knz = np.nonzero(K) (row-major
    order); work = `hessian_scratch`. Tied (key_start = 0): dZ_ik/dh_ac = delta_ia h_kc +
    delta_ka h_ic and the curvature of Z adds delta_cd (P + P^T)_ab; untied (columns c <
    key_start query, the others key, c' = c + key_start): dZ_ik/dh_ac = delta_ia h_kc' and
    dZ_ik/dh_ac' = delta_ka h_ic, curvature P_ab at (ac, bc') and P_ba at (ac', bc).

    Row i of Z adds E^T Hz E to H, Hz = J K J - s P_i^T - P_i s^T + diag(P_i) its curvature
    (J = diag(s) - s s^T, s = S_i) and E = dZ_i/dh (`_dz`). The products skip terms that are
    zero, which leaves every sum as it was, bit for bit: the zero entries of K, and in E every
    row but a of a column (a, c) with a != i. Several heads: `attnphase.ops.heads`; rotary
    positions: `attnphase.ops.rotary` (dZ_ik/dh_ac and the curvature (P + P^T)_ab (G_ab)_cd)."""
    if form.heads > 1:
        heads_loss_derivatives_at(h, K, Knz, Cm, S, P, grad, H, form)
        return
    L, r = h.shape
    n = L * r
    key_start = form.key_start
    freqs = form.rotary
    rotary = freqs.shape[0] > 0
    J, Hz, G = work
    for i in range(L):
        ubar = 0.0
        for k in range(L):
            u = -Cm[i, k]
            for j in range(L):
                u += S[i, j] * K[j, k]
            P[i, k] = u
            ubar += S[i, k] * u
        for k in range(L):
            P[i, k] = S[i, k] * (P[i, k] - ubar)
    for a in range(L):
        for cc in range(r):
            g = 0.0
            for k in range(L):
                if rotary:
                    g += (P[a, k] + P[k, a]) * rotated(h, a, k, cc, freqs)
                elif key_start == 0:
                    g += (P[a, k] + P[k, a]) * h[k, cc]
                elif cc < key_start:
                    g += P[a, k] * h[k, cc + key_start]
                else:
                    g += P[k, a] * h[k, cc - key_start]
            grad[a * r + cc] = g
    for x in range(n):
        for y in range(n):
            H[x, y] = 0.0
    for i in range(L):
        for k in range(L):
            for j in range(L):
                J[k, j] = (S[i, k] if k == j else 0.0) - S[i, k] * S[i, j]
        for k in range(L):
            # (J K J)_kj summed over the nonzeros of K, in order, for all j at once
            for j in range(L):
                Hz[k, j] = 0.0
            for e in range(Knz[0].shape[0]):
                p, s = Knz[0][e], Knz[1][e]
                jk = J[k, p] * K[p, s]
                for j in range(L):
                    Hz[k, j] += jk * J[s, j]
            for j in range(L):
                Hz[k, j] -= S[i, k] * P[i, j] + P[i, k] * S[i, j]
            Hz[k, k] += P[i, k]
        for k in range(L):
            for a in range(L):
                for cc in range(r):
                    if a == i:
                        v = 0.0
                        for j in range(L):
                            v += Hz[k, j] * _dz(h, i, j, a, cc, key_start, freqs)
                    else:
                        v = Hz[k, a] * _dz(h, i, a, a, cc, key_start, freqs)
                    G[k, a * r + cc] = v
        for a in range(L):
            for cc in range(r):
                for y in range(n):
                    if a == i:
                        v = 0.0
                        for k in range(L):
                            v += _dz(h, i, k, a, cc, key_start, freqs) * G[k, y]
                    else:
                        v = _dz(h, i, a, a, cc, key_start, freqs) * G[a, y]
                    H[a * r + cc, y] += v
    for a in range(L):
        for b in range(L):
            if key_start > 0:
                for cc in range(key_start):
                    H[a * r + cc, b * r + cc + key_start] += P[a, b]
                    H[a * r + cc + key_start, b * r + cc] += P[b, a]
            elif rotary:
                pab = P[a, b] + P[b, a]
                for cc in range(r):
                    for dd in range(r):
                        H[a * r + cc, b * r + dd] += pab * rotation_entry(a, b, cc, dd, freqs)
            else:
                pab = P[a, b] + P[b, a]
                for cc in range(r):
                    H[a * r + cc, b * r + cc] += pab
