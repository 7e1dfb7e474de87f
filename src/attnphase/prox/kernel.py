"""The numba backend of `attnphase.prox`: the CPU kernel, parallel over problems.

The algorithm of `attnphase.prox.algorithm`, problems in parallel (in batches that share one
scratch `workspace`), on the loss and derivatives of `attnphase.ops.compiled`; the functions of
F take the attention's `form` (`attnphase.ops.form.AttentionForm`: where the key fields start,
whether the mask is causal).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from numba import prange

from .._core.jit import njit_cached
from ..ops.compiled import (
    add_row_loss,
    attention,
    hessian_scratch,
    loss,
    loss_derivatives,
    loss_derivatives_at,
)
from ..ops.form import AttentionForm
from .algorithm import ARMIJO, BACKTRACKS, FLOOR, NEWTON_ZONE, XTOL, ProxResult, ball_points


@njit_cached()
def objective(h, w, Vinv, K, Cm, c, S, form):
    """F(h) = g(h) + 1/2 tr((h - w) V^{-1} (h - w)^T) (§7.1), row by row; S is scratch (L x L)."""
    L, r = h.shape
    attention(h, S, form)
    f = c
    for i in range(L):
        f = add_row_loss(f, S, K, Cm, i)
        for a in range(r):
            for b in range(r):
                f += 0.5 * (h[i, a] - w[i, a]) * Vinv[a, b] * (h[i, b] - w[i, b])
    return f


@njit_cached()
def derivatives(h, w, Vinv, K, Cm, S, P, grad, H, form):
    """Gradient (L*r) and Hessian (L*r x L*r) of F at h, row-major flattening of h: those of g
    (`attnphase.ops.compiled.loss_derivatives`) plus those of the prior (`add_prior`)."""
    loss_derivatives(h, K, Cm, S, P, grad, H, form)
    add_prior(h, w, Vinv, grad, H)


@njit_cached()
def add_prior(h, w, Vinv, grad, H):
    """Adds (h - w) V^{-1} to grad and I_L (x) V^{-1} to H: the derivatives of
    1/2 tr((h - w) V^{-1} (h - w)^T) (§7.1)."""
    L, r = h.shape
    for a in range(L):
        for cc in range(r):
            for b in range(r):
                grad[a * r + cc] += (h[a, b] - w[a, b]) * Vinv[cc, b]
            for dd in range(r):
                H[a * r + cc, a * r + dd] += Vinv[cc, dd]


@njit_cached()
def workspace(L, r):
    """The scratch of `newton` for one L x r problem, allocated once per batch of problems:
    S, P (L x L), trial (L x r), grad, step, proj (L r), H (L r x L r) and the scratch of
    `attnphase.ops.compiled.loss_derivatives_at`."""
    n = L * r
    return (
        np.empty((L, L)),
        np.empty((L, L)),
        np.empty((L, r)),
        np.empty(n),
        np.empty(n),
        np.empty(n),
        np.empty((n, n)),
        hessian_scratch(L, r),
    )


@njit_cached()
def newton(h, w, Vinv, K, Knz, Cm, c, gtol, max_iter, floor, form, work):
    """Local minimiser of F from h (modified in place); returns (F, stationary). Knz:
    np.nonzero(K); work: a `workspace`."""
    S, P, trial, grad, step, proj, H, hwork = work
    L, r = h.shape
    n = L * r
    f = objective(h, w, Vinv, K, Cm, c, S, form)
    for _ in range(max_iter):
        # S holds S(h): the objective was last evaluated at h
        loss_derivatives_at(h, K, Knz, Cm, S, P, grad, H, hwork, form)
        add_prior(h, w, Vinv, grad, H)
        gmax = 0.0
        hnorm = 0.0
        for x in range(n):
            gmax = max(gmax, abs(grad[x]))
            hnorm += h[x // r, x % r] ** 2
        if gmax < gtol:
            return f, True
        lam, U = np.linalg.eigh(H)
        for e in range(n):
            v = 0.0
            for y in range(n):
                v += U[y, e] * grad[y]
            proj[e] = v
        size = 0.0
        slope = 0.0
        for x in range(n):
            v = 0.0
            for e in range(n):
                v -= U[x, e] * proj[e] / max(abs(lam[e]), floor)
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
            ft = objective(trial, w, Vinv, K, Cm, c, S, form)
            if pure or ft <= f + ARMIJO * t * slope:
                accepted = True
                break
            t *= 0.5
        if not accepted:
            return f, False
        copy_into(h, trial)
        f = ft
    return f, False


@njit_cached()
def copy_into(dst, src):
    """dst = src for two L x r arrays, element by element (a slice assignment would compile
    numba's shape-mismatch error message, a fifth of the kernel's compile time)."""
    L, r = dst.shape
    for a in range(L):
        for b in range(r):
            dst[a, b] = src[a, b]


@njit_cached()
def probe_point(h, w, radius, point):
    """h = w + radius point (in place): a start of the coarse search."""
    L, r = h.shape
    for a in range(L):
        for b in range(r):
            h[a, b] = w[a, b] + radius * point[a, b]


_CHUNK = 32  # problems per task of the parallel loop; they share one workspace


# problems per kernel call: CALL_WORK / (L r)^2, at least CALL_MIN (16,384 at L r = 2, 455 at
# L r = 12: well under a second a call on 2 cores)
CALL_WORK = 2**16
CALL_MIN = 256


@njit_cached(parallel=True)
def global_prox_kernel(
    w,
    Vinv,
    group,
    K,
    Cm,
    c,
    starts,
    probe,
    n_best,
    gtol,
    max_iter,
    form,
    out_h,
    out_f,
    out_start,
    out_stat,
):
    """For every problem i: Newton from each start and from the n_best lowest of the probe
    points w_i + R_i probe_p (R_i^2 = 2 lambda_max(V) g(w_i), the ball that holds every
    minimiser when g >= 0); the lowest F is kept (outputs written in place; out_start = S + k
    for the k-th probe start).

    K, Cm, c have a leading axis of length N (per problem) or 1 (shared); Vinv (B, r, r) holds
    B matrices, problem i taking Vinv[group[i]] (group of length N, or 1: all take Vinv[0]);
    form: the attention's form, its key column and mask (`attnphase.ops.compiled`)."""
    N, S_, L, r = starts.shape
    B = Vinv.shape[0]
    floors = np.empty(B)
    vmaxs = np.empty(B)
    for b in range(B):
        lam = np.linalg.eigvalsh(Vinv[b])
        floors[b] = FLOOR * lam[0]
        vmaxs[b] = 1.0 / lam[0]
    n_probe = probe.shape[0]
    n_keep = min(n_best, n_probe)
    for chunk in prange((N + _CHUNK - 1) // _CHUNK):
        work = workspace(L, r)
        S = work[0]
        h = np.empty((L, r))
        fp = np.empty(n_probe)
        for i in range(chunk * _CHUNK, min(N, (chunk + 1) * _CHUNK)):
            Ki = K[i] if K.shape[0] > 1 else K[0]
            Cmi = Cm[i] if Cm.shape[0] > 1 else Cm[0]
            ci = c[i] if c.shape[0] > 1 else c[0]
            gi = group[i] if group.shape[0] > 1 else group[0]
            Vi = Vinv[gi]
            floor = floors[gi]
            vmax = vmaxs[gi]
            wi = w[i]
            Knz = np.nonzero(Ki)
            best = np.inf
            for s in range(S_ + n_keep):
                if s < S_:
                    copy_into(h, starts[i, s])
                else:
                    if s == S_:
                        g0 = loss(wi, Ki, Cmi, ci, S, form)
                        radius = math.sqrt(2.0 * vmax * max(g0, 0.0))
                        for p in range(n_probe):
                            probe_point(h, wi, radius, probe[p])
                            fp[p] = objective(h, wi, Vi, Ki, Cmi, ci, S, form)
                        order = np.argsort(fp)
                    probe_point(h, wi, radius, probe[order[s - S_]])
                f, stat = newton(h, wi, Vi, Ki, Knz, Cmi, ci, gtol, max_iter, floor, form, work)
                if f < best:
                    best = f
                    copy_into(out_h[i], h)
                    out_f[i] = f
                    out_start[i] = s
                    out_stat[i] = stat


def _distinct(Vinv: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct matrices of a stack (N, r, r) and each problem's index among them (one index
    when all are equal): the kernel decomposes each distinct V^{-1} once."""
    if Vinv.shape[0] == 1:
        return Vinv, np.zeros(1, dtype=np.int64)
    flat = Vinv.reshape(Vinv.shape[0], -1)
    change = np.flatnonzero(np.any(flat[1:] != flat[:-1], axis=1)) + 1
    if change.size == 0:
        return Vinv[:1].copy(), np.zeros(1, dtype=np.int64)
    edges = np.concatenate([[0], change])
    group = np.repeat(np.arange(edges.size), np.diff(np.append(edges, Vinv.shape[0])))
    return np.ascontiguousarray(Vinv[edges]), group.astype(np.int64)


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
    form: AttentionForm,
) -> ProxResult:
    """`attnphase.prox.global_prox` on CPU tensors through `global_prox_kernel`; Vinv (r, r)
    shared or (N, r, r) per problem."""
    N, S, L, r = starts.shape

    def arr(x, shape):
        return np.ascontiguousarray(torch.as_tensor(x, dtype=torch.float64).reshape(shape).numpy())

    out_h = np.empty((N, L, r))
    out_f = np.empty(N)
    out_s = np.empty(N, dtype=np.int64)
    out_ok = np.empty(N, dtype=np.bool_)
    w_, starts_ = arr(w, (N, L, r)), arr(starts, (N, S, L, r))
    K_, Cm_, c_ = arr(K, (-1, L, L)), arr(Cm, (-1, L, L)), arr(c, (-1,))
    Vinv_, group = _distinct(arr(Vinv, (-1, r, r)))
    points = ball_points(probe, L, r)
    # one call per slice of the problems, so that Ctrl-C is seen between calls (a call cannot
    # be interrupted: at L = 12 one over every point of a scrambling took 35 s)
    step = max(CALL_MIN, CALL_WORK // (L * r) ** 2)
    for a in range(0, N, step):
        part = slice(a, min(N, a + step))
        K_part, Cm_part, c_part, g_part = (
            x[part] if x.shape[0] > 1 else x for x in (K_, Cm_, c_, group)
        )
        global_prox_kernel(  # K, Cm, c, V per problem are sliced, shared ones passed whole
            w_[part],
            Vinv_,
            g_part,
            K_part,
            Cm_part,
            c_part,
            starts_[part],
            points,
            n_best,
            gtol,
            max_iter,
            form,
            out_h[part],
            out_f[part],
            out_s[part],
            out_ok[part],
        )
    t = torch.from_numpy
    return ProxResult(t(out_h), t(out_f), t(out_s), t(out_ok))
