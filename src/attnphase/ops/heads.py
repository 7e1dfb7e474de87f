"""Several tied heads in numba (docs/variants.md, multi-head): the attention and the loss's
derivatives for fields h (L x R) made of H heads of r = R / H columns each,
S = (1/H) sum_a S_a, S_a = softmax_row(h_a h_a^T), h_a = h[:, a r : (a + 1) r].

With U = S K - Cm (g's derivative in S), head a's logits carry
    dg/dZ_a = P_a / H,    P_a = S_a (U - rowsum(S_a U))                      (elementwise),
    grad_{h_a} g = (P_a + P_a^T) h_a / H,
and row i of the logits of heads a and b couples through
    d2g/dz_ai dz_bi = J_ai K J_bi / H^2 + delta_ab C_ai / H,
    J_ai = diag(s_ai) - s_ai s_ai^T,   C_ai = diag(p_ai) - s_ai p_ai^T - p_ai s_ai^T,
so that with D_ai = dz_ai/dh the Hessian is sum_i [Y_i^T K Y_i / H^2 + sum_a D_ai^T C_ai D_ai / H]
(Y_i = sum_a J_ai D_ai) plus the curvature of Z_a, (P_a + P_a^T)_xy / H at (x a c, y a c).
At H = 1 these are the one-head formulas of `attnphase.ops`.
"""

from __future__ import annotations

import math

import numpy as np

from .._core.jit import njit_cached


@njit_cached()
def head_softmax(h, a, r, causal, out):
    """out (L x L) = softmax_row(h_a h_a^T) of head a (columns a r .. a r + r - 1)."""
    L = h.shape[0]
    c0 = a * r
    for i in range(L):
        last = i + 1 if causal else L
        zmax = -np.inf
        for k in range(last):
            z = 0.0
            for c in range(r):
                z += h[i, c0 + c] * h[k, c0 + c]
            out[i, k] = z
            zmax = max(zmax, z)
        tot = 0.0
        for k in range(last):
            out[i, k] = math.exp(out[i, k] - zmax)
            tot += out[i, k]
        for k in range(last):
            out[i, k] /= tot
        for k in range(last, L):
            out[i, k] = 0.0


@njit_cached()
def heads_attention(h, S, form):
    """S = (1/H) sum_a softmax_row(h_a h_a^T) into S (L x L), the heads added in order."""
    L, R = h.shape
    H = form.heads
    r = R // H
    one = np.empty((L, L))
    for i in range(L):
        for k in range(L):
            S[i, k] = 0.0
    for a in range(H):
        head_softmax(h, a, r, form.causal, one)
        for i in range(L):
            for k in range(L):
                S[i, k] += one[i, k] / H


@njit_cached()
def heads_loss_derivatives_at(h, K, Knz, Cm, S, P, grad, Hm, form):
    """Gradient (L R) and Hessian (L R x L R) of g at h into grad and Hm, row-major flattening
    of h, with S holding the heads' mean attention; P (L x L) receives the heads' mean of
    dg/dZ_a (module docstring). Knz = np.nonzero(K)."""
    L, R = h.shape
    H = form.heads
    r = R // H
    n = L * R
    Sa = np.empty((H, L, L))
    Pa = np.empty((H, L, L))
    U = np.empty((L, L))
    J = np.empty((L, L))
    C = np.empty((L, L))
    Y = np.empty((L, n))
    Q = np.empty((L, n))
    for a in range(H):
        head_softmax(h, a, r, form.causal, Sa[a])
    for i in range(L):
        for k in range(L):
            u = -Cm[i, k]
            for j in range(L):
                u += S[i, j] * K[j, k]
            U[i, k] = u
    for i in range(L):
        for k in range(L):
            P[i, k] = 0.0
    for a in range(H):
        for i in range(L):
            ubar = 0.0
            for k in range(L):
                ubar += Sa[a, i, k] * U[i, k]
            for k in range(L):
                Pa[a, i, k] = Sa[a, i, k] * (U[i, k] - ubar)
                P[i, k] += Pa[a, i, k] / (H * H)
    for x in range(n):
        grad[x] = 0.0
        for y in range(n):
            Hm[x, y] = 0.0
    for a in range(H):
        for x in range(L):
            for c in range(r):
                col = a * r + c
                g = 0.0
                for k in range(L):
                    g += (Pa[a, x, k] + Pa[a, k, x]) * h[k, col]
                grad[x * R + col] = g / H
                for y in range(L):
                    Hm[x * R + col, y * R + col] += (Pa[a, x, y] + Pa[a, y, x]) / H
    for i in range(L):
        for k in range(L):
            for x in range(n):
                Y[k, x] = 0.0
        for a in range(H):
            for k in range(L):
                for j in range(L):
                    J[k, j] = (Sa[a, i, k] if k == j else 0.0) - Sa[a, i, k] * Sa[a, i, j]
                    C[k, j] = -Sa[a, i, k] * Pa[a, i, j] - Pa[a, i, k] * Sa[a, i, j]
                C[k, k] += Pa[a, i, k]
            # Y += J D_a and Q = C D_a, D_a[j, (x, c)] = delta_ix h_jc + delta_jx h_ic (head a)
            for k in range(L):
                for x in range(n):
                    Q[k, x] = 0.0
                for c in range(r):
                    col = a * r + c
                    jh = 0.0
                    ch = 0.0
                    for j in range(L):
                        jh += J[k, j] * h[j, col]
                        ch += C[k, j] * h[j, col]
                    Y[k, i * R + col] += jh
                    Q[k, i * R + col] += ch
                    for x in range(L):
                        Y[k, x * R + col] += J[k, x] * h[i, col]
                        Q[k, x * R + col] += C[k, x] * h[i, col]
            # Hm += D_a^T Q / H: row (x, c) of D_a^T is delta_ix h_kc + h_ic at k = x
            for x in range(L):
                for c in range(r):
                    col = a * r + c
                    for y in range(n):
                        v = h[i, col] * Q[x, y]
                        if x == i:
                            for k in range(L):
                                v += h[k, col] * Q[k, y]
                        Hm[x * R + col, y] += v / H
        for e in range(Knz[0].shape[0]):
            p, s = Knz[0][e], Knz[1][e]
            for x in range(n):
                yk = Y[p, x] * K[p, s] / (H * H)
                for y in range(n):
                    Hm[x, y] += yk * Y[s, y]
