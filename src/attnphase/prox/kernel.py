"""CPU kernel of the global proximal step (numba, parallel over problems).

The same algorithm and formulas as the torch implementation in `attnphase.prox` (which
serves CUDA devices), one problem at a time: safeguarded Newton from every start, the lowest
objective kept. Derivatives as in `attnphase.ops` (THEORY.md §8). Every function
takes `key_start`, the column of h where the key fields start (`key_start_of`): 0 for tied
fields (the key is the query, Z = h h^T); for untied fields h = (h_Q, h_K) of width 2 r_Q it is
r_Q and the logits are Z = h_Q h_K^T (docs/theory-untied.md); the CPU kernel is the only
implementation of that case.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from .._core.jit import njit_cached
from ..params import Untied, Variant

_ARMIJO = 1e-4
_BACKTRACKS = 30
_NEWTON_ZONE = 1e-4


def key_start_of(variant: Variant, width: int) -> int:
    """The kernels' `key_start` for fields of `width` columns: width/2 for `Untied()` (the
    query fields, then the key fields), 0 otherwise (tied: the key is the query)."""
    return width // 2 if isinstance(variant, Untied) else 0


@njit_cached()
def _attention(h, S, key_start):
    """S = softmax_row(Z) into S (L x L): Z_ik = sum_a h_ia h_k(a + key_start) over the
    R - key_start query columns a (tied, key_start = 0: Z = h h^T; untied, key_start = R/2:
    Z = h_Q h_K^T)."""
    L, R = h.shape
    r = R - key_start
    off = key_start
    for i in range(L):
        zmax = -np.inf
        for k in range(L):
            z = 0.0
            for a in range(r):
                z += h[i, a] * h[k, a + off]
            S[i, k] = z
            zmax = max(zmax, z)
        tot = 0.0
        for k in range(L):
            S[i, k] = math.exp(S[i, k] - zmax)
            tot += S[i, k]
        for k in range(L):
            S[i, k] /= tot


@njit_cached()
def objective(h, w, Vinv, K, Cm, c, S, key_start):
    """F(h) = 1/2 tr((h - w) V^{-1} (h - w)^T) + g(h); S is scratch (L x L)."""
    L, r = h.shape
    _attention(h, S, key_start)
    f = c
    for i in range(L):
        for k in range(L):
            f -= S[i, k] * Cm[i, k]
            sk = 0.0
            for j in range(L):
                sk += S[i, j] * K[j, k]
            f += 0.5 * sk * S[i, k]
        for a in range(r):
            for b in range(r):
                f += 0.5 * (h[i, a] - w[i, a]) * Vinv[a, b] * (h[i, b] - w[i, b])
    return f


@njit_cached()
def derivatives(h, w, Vinv, K, Cm, S, P, grad, H, key_start):
    """Gradient (L*r) and Hessian (L*r x L*r) of F at h, row-major flattening of h. With
    P = dg/dZ: tied (key_start = 0), dZ_ik/dh_ac = delta_ia h_kc + delta_ka h_ic and the
    curvature of Z adds delta_cd (P + P^T)_ab; untied (columns c < key_start = r/2 query, the
    others key, c' = c + key_start), dZ_ik/dh_ac = delta_ia h_kc' and
    dZ_ik/dh_ac' = delta_ka h_ic, curvature P_ab at (ac, bc') and P_ba at (ac', bc)."""
    L, r = h.shape
    n = L * r
    _attention(h, S, key_start)
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
                if key_start == 0:
                    g += (P[a, k] + P[k, a]) * h[k, cc]
                elif cc < key_start:
                    g += P[a, k] * h[k, cc + key_start]
                else:
                    g += P[k, a] * h[k, cc - key_start]
            for b in range(r):
                g += (h[a, b] - w[a, b]) * Vinv[cc, b]
            grad[a * r + cc] = g
    for x in range(n):
        for y in range(n):
            H[x, y] = 0.0
    J = np.empty((L, L))
    Hz = np.empty((L, L))
    E = np.empty((L, n))
    G = np.empty((L, n))
    for i in range(L):
        for k in range(L):
            for j in range(L):
                J[k, j] = (S[i, k] if k == j else 0.0) - S[i, k] * S[i, j]
        for k in range(L):
            for j in range(L):
                v = 0.0
                for p in range(L):
                    for s in range(L):
                        v += J[k, p] * K[p, s] * J[s, j]
                v -= S[i, k] * P[i, j] + P[i, k] * S[i, j]
                if k == j:
                    v += P[i, k]
                Hz[k, j] = v
        for k in range(L):
            for a in range(L):
                for cc in range(r):
                    v = 0.0
                    if key_start == 0:
                        if a == i:
                            v += h[k, cc]
                        if a == k:
                            v += h[i, cc]
                    elif cc < key_start:
                        if a == i:
                            v += h[k, cc + key_start]
                    elif a == k:
                        v += h[i, cc - key_start]
                    E[k, a * r + cc] = v
        for k in range(L):
            for y in range(n):
                v = 0.0
                for j in range(L):
                    v += Hz[k, j] * E[j, y]
                G[k, y] = v
        for x in range(n):
            for y in range(n):
                v = 0.0
                for k in range(L):
                    v += E[k, x] * G[k, y]
                H[x, y] += v
    for a in range(L):
        for b in range(L):
            if key_start > 0:
                for cc in range(key_start):
                    H[a * r + cc, b * r + cc + key_start] += P[a, b]
                    H[a * r + cc + key_start, b * r + cc] += P[b, a]
            else:
                pab = P[a, b] + P[b, a]
                for cc in range(r):
                    H[a * r + cc, b * r + cc] += pab
        for cc in range(r):
            for dd in range(r):
                H[a * r + cc, a * r + dd] += Vinv[cc, dd]


@njit_cached()
def newton(h, w, Vinv, K, Cm, c, gtol, max_iter, floor, key_start):
    """Local minimiser of F from h (modified in place); returns (F, stationary)."""
    L, r = h.shape
    n = L * r
    S = np.empty((L, L))
    P = np.empty((L, L))
    grad = np.empty(n)
    H = np.empty((n, n))
    step = np.empty(n)
    trial = np.empty((L, r))
    f = objective(h, w, Vinv, K, Cm, c, S, key_start)
    for _ in range(max_iter):
        derivatives(h, w, Vinv, K, Cm, S, P, grad, H, key_start)
        gmax = 0.0
        hnorm = 0.0
        for x in range(n):
            gmax = max(gmax, abs(grad[x]))
            hnorm += h[x // r, x % r] ** 2
        if gmax < gtol:
            return f, True
        lam, U = np.linalg.eigh(H)
        size = 0.0
        slope = 0.0
        for x in range(n):
            v = 0.0
            for e in range(n):
                proj = 0.0
                for y in range(n):
                    proj += U[y, e] * grad[y]
                v -= U[x, e] * proj / max(abs(lam[e]), floor)
            step[x] = v
            size += v * v
            slope += v * grad[x]
        size = math.sqrt(size)
        scale = 1.0 + math.sqrt(hnorm)
        if size < 1e-13 * scale:
            return f, False
        pure = lam[0] > floor and size < _NEWTON_ZONE * scale
        t = 1.0
        accepted = False
        for _ls in range(_BACKTRACKS + 1):
            for x in range(n):
                trial[x // r, x % r] = h[x // r, x % r] + t * step[x]
            ft = objective(trial, w, Vinv, K, Cm, c, S, key_start)
            if pure or ft <= f + _ARMIJO * t * slope:
                accepted = True
                break
            t *= 0.5
        if not accepted:
            return f, False
        h[:, :] = trial
        f = ft
    return f, False


@njit_cached(parallel=True)
def global_prox_kernel(
    w,
    Vinv,
    K,
    Cm,
    c,
    starts,
    probe,
    n_best,
    gtol,
    max_iter,
    key_start,
    out_h,
    out_f,
    out_start,
    out_stat,
):
    """For every problem i: Newton from each start and from the n_best lowest of the probe
    points w_i + R_i probe_p (R_i^2 = 2 lambda_max(V) g(w_i), the ball that holds every
    minimiser when g >= 0); the lowest F is kept (outputs written in place; out_start = S + k
    for the k-th probe start).

    K, Cm, c have a leading axis of length N (per problem) or 1 (shared); key_start: the column
    where the key fields start, 0 when tied (see `_attention`, `derivatives`)."""
    N, S_, L, r = starts.shape
    lam = np.linalg.eigvalsh(Vinv)
    floor = 1e-2 * lam[0]
    vmax = 1.0 / lam[0]
    n_probe = probe.shape[0]
    n_keep = min(n_best, n_probe)
    for i in prange(N):
        Ki = K[i] if K.shape[0] > 1 else K[0]
        Cmi = Cm[i] if Cm.shape[0] > 1 else Cm[0]
        ci = c[i] if c.shape[0] > 1 else c[0]
        wi = w[i]
        S = np.empty((L, L))
        h = np.empty((L, r))
        best = np.inf
        for s in range(S_ + n_keep):
            if s < S_:
                h[:, :] = starts[i, s]
            else:
                if s == S_:
                    g0 = objective(wi, wi, Vinv, Ki, Cmi, ci, S, key_start)
                    radius = math.sqrt(2.0 * vmax * max(g0, 0.0))
                    fp = np.empty(n_probe)
                    for p in range(n_probe):
                        h[:, :] = wi + radius * probe[p]
                        fp[p] = objective(h, wi, Vinv, Ki, Cmi, ci, S, key_start)
                    order = np.argsort(fp)
                h[:, :] = wi + radius * probe[order[s - S_]]
            f, stat = newton(h, wi, Vinv, Ki, Cmi, ci, gtol, max_iter, floor, key_start)
            if f < best:
                best = f
                out_h[i] = h
                out_f[i] = f
                out_start[i] = s
                out_stat[i] = stat
