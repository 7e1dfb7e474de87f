"""The numba backend of `attnphase.prox`: the CPU kernel, parallel over problems.

The algorithm of `attnphase.prox.algorithm`, one problem per thread, on the loss and
derivatives of `attnphase.ops.compiled`; every function takes `key_start` (0: tied fields;
r_Q for untied fields h = (h_Q, h_K), `attnphase.params.key_start_of`).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from numba import prange

from .._core.jit import njit_cached
from ..ops.compiled import add_row_loss, attention, loss, loss_derivatives
from .algorithm import ARMIJO, BACKTRACKS, FLOOR, NEWTON_ZONE, XTOL, ProxResult, ball_points


@njit_cached()
def objective(h, w, Vinv, K, Cm, c, S, key_start):
    """F(h) = g(h) + 1/2 tr((h - w) V^{-1} (h - w)^T) (§7.1), row by row; S is scratch (L x L)."""
    L, r = h.shape
    attention(h, S, key_start)
    f = c
    for i in range(L):
        f = add_row_loss(f, S, K, Cm, i)
        for a in range(r):
            for b in range(r):
                f += 0.5 * (h[i, a] - w[i, a]) * Vinv[a, b] * (h[i, b] - w[i, b])
    return f


@njit_cached()
def derivatives(h, w, Vinv, K, Cm, S, P, grad, H, key_start):
    """Gradient (L*r) and Hessian (L*r x L*r) of F at h, row-major flattening of h: those of g
    (`attnphase.ops.compiled.loss_derivatives`) plus (h - w) V^{-1} and I_L (x) V^{-1}."""
    L, r = h.shape
    loss_derivatives(h, K, Cm, S, P, grad, H, key_start)
    for a in range(L):
        for cc in range(r):
            for b in range(r):
                grad[a * r + cc] += (h[a, b] - w[a, b]) * Vinv[cc, b]
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
        if size < XTOL * scale:
            return f, False
        pure = lam[0] > floor and size < NEWTON_ZONE * scale
        t = 1.0
        accepted = False
        for _ls in range(BACKTRACKS + 1):
            for x in range(n):
                trial[x // r, x % r] = h[x // r, x % r] + t * step[x]
            ft = objective(trial, w, Vinv, K, Cm, c, S, key_start)
            if pure or ft <= f + ARMIJO * t * slope:
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
    where the key fields start, 0 when tied (`attnphase.ops.compiled`)."""
    N, S_, L, r = starts.shape
    lam = np.linalg.eigvalsh(Vinv)
    floor = FLOOR * lam[0]
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
                    g0 = loss(wi, Ki, Cmi, ci, S, key_start)
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


def global_prox_numba(
    w: torch.Tensor,
    Vinv: torch.Tensor,
    K: torch.Tensor,
    Cm: torch.Tensor,
    c: torch.Tensor,
    starts: torch.Tensor,
    *,
    probe: int,
    n_best: int,
    gtol: float,
    max_iter: int,
    key_start: int,
) -> ProxResult:
    """`attnphase.prox.global_prox` on CPU tensors through `global_prox_kernel`."""
    N, S, L, r = starts.shape

    def arr(x, shape):
        return np.ascontiguousarray(torch.as_tensor(x, dtype=torch.float64).reshape(shape).numpy())

    out_h = np.empty((N, L, r))
    out_f = np.empty(N)
    out_s = np.empty(N, dtype=np.int64)
    out_ok = np.empty(N, dtype=np.bool_)
    global_prox_kernel(
        arr(w, (N, L, r)),
        arr(Vinv, (r, r)),
        arr(K, (-1, L, L)),
        arr(Cm, (-1, L, L)),
        arr(c, (-1,)),
        arr(starts, (N, S, L, r)),
        ball_points(probe, L, r),
        n_best,
        gtol,
        max_iter,
        key_start,
        out_h,
        out_f,
        out_s,
        out_ok,
    )
    t = torch.from_numpy
    return ProxResult(t(out_h), t(out_f), t(out_s), t(out_ok))
