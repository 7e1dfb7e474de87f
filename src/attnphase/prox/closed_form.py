"""The closed-form 2x2 backend of `attnphase.prox`: L = 2, r = 1, tied, the channel's loss
(docs/theory.md §2, §6), for one node or many at once.

The algorithm of `attnphase.prox.algorithm` on the closed forms of `attnphase.ops.softmax2`,
with the exact channel's tolerances (GTOL on the Euclidean norm of the gradient, MAX_NEWTON
steps) and its analytic starts in place of the probe search: h = w, h = 0 and the two zero-loss
points of the 2x2 target (or, when the target cannot be reached, the valley h1 = h2 nearest w),
then the warm start (the previous minimiser at this node) or the caller's starts.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from numba import prange

from .._core.jit import njit_cached
from ..ops.softmax2 import sigmoid
from .algorithm import ARMIJO, BACKTRACKS, FLOOR, NEWTON_ZONE, XTOL, ProxResult

if TYPE_CHECKING:
    import torch

GTOL = 1e-12
MAX_NEWTON = 60
_LOGIT_CLIP = 1e-12


@njit_cached(inline="always")
def prox_objective(
    h1: float, h2: float, w1: float, w2: float, V: float, c1: float, c2: float, sigma2: float
) -> tuple[float, float, float, float, float, float]:
    """Moreau objective |h - w|^2/(2V) + ell(h) - kappa with its gradient and Hessian (§2).

    Returns (F, g1, g2, H11, H12, H22).
    """
    d = h1 - h2
    z1 = h1 * d
    z2 = -h2 * d
    s1 = sigmoid(z1)
    s2 = sigmoid(z2)
    p1 = s1 * (1.0 - s1)
    p2 = s2 * (1.0 - s2)
    e1 = s1 - c1
    e2 = s2 - c2
    # derivatives of g_k(z) = sigma^2 (sigmoid(z) - c_k)^2
    g1p = 2.0 * sigma2 * e1 * p1
    g2p = 2.0 * sigma2 * e2 * p2
    g1pp = 2.0 * sigma2 * (p1 * p1 + e1 * p1 * (1.0 - 2.0 * s1))
    g2pp = 2.0 * sigma2 * (p2 * p2 + e2 * p2 * (1.0 - 2.0 * s2))
    # gradients of z1 = h1^2 - h1 h2 and z2 = h2^2 - h1 h2; their Hessians are constant
    a1, a2 = 2.0 * h1 - h2, -h1
    b1, b2 = -h2, 2.0 * h2 - h1
    inv_v = 1.0 / V
    f = 0.5 * inv_v * ((h1 - w1) ** 2 + (h2 - w2) ** 2) + sigma2 * (e1 * e1 + e2 * e2)
    g1 = inv_v * (h1 - w1) + g1p * a1 + g2p * b1
    g2 = inv_v * (h2 - w2) + g1p * a2 + g2p * b2
    h11 = inv_v + g1pp * a1 * a1 + g2pp * b1 * b1 + 2.0 * g1p
    h12 = g1pp * a1 * a2 + g2pp * b1 * b2 - g1p - g2p
    h22 = inv_v + g1pp * a2 * a2 + g2pp * b2 * b2 + 2.0 * g2p
    return f, g1, g2, h11, h12, h22


@njit_cached()
def newton_minimise(
    h1: float,
    h2: float,
    w1: float,
    w2: float,
    V: float,
    c1: float,
    c2: float,
    sigma2: float,
    gtol: float,
    max_iter: int,
) -> tuple[float, float, float]:
    """Local minimiser of the Moreau objective from (h1, h2); returns (h1, h2, F).

    The Newton iteration of `attnphase.prox.algorithm` in closed form (the 2x2 Hessian's
    eigenvectors explicit); stops when |grad F| < gtol (Euclidean norm), the step vanishes or
    after max_iter steps.
    """
    f, g1, g2, a, b, d = prox_objective(h1, h2, w1, w2, V, c1, c2, sigma2)
    floor = FLOOR / V
    for _ in range(max_iter):
        if g1 * g1 + g2 * g2 < gtol * gtol:
            break
        # eigen-decomposition of the symmetric 2x2 Hessian [[a, b], [b, d]]
        half_tr = 0.5 * (a + d)
        disc = math.sqrt(0.25 * (a - d) ** 2 + b * b)
        l1 = half_tr + disc
        l2 = half_tr - disc
        if disc > 0.0:
            # unit eigenvector of l1
            if abs(a - l2) >= abs(d - l2):
                e1, e2 = a - l2, b
            else:
                e1, e2 = b, d - l2
            nrm = math.sqrt(e1 * e1 + e2 * e2)
            e1 /= nrm
            e2 /= nrm
        else:
            e1, e2 = 1.0, 0.0
        m1 = max(abs(l1), floor)
        m2 = max(abs(l2), floor)
        # p = -(e e^T/m1 + o o^T/m2) g with o = (-e2, e1)
        ge = g1 * e1 + g2 * e2
        go = -g1 * e2 + g2 * e1
        p1 = -(ge / m1 * e1 - go / m2 * e2)
        p2 = -(ge / m1 * e2 + go / m2 * e1)
        slope = g1 * p1 + g2 * p2
        if p1 * p1 + p2 * p2 < (XTOL * (1.0 + abs(h1) + abs(h2))) ** 2:
            break
        t = 1.0
        accepted = l2 > floor and p1 * p1 + p2 * p2 < (NEWTON_ZONE * (1.0 + abs(h1) + abs(h2))) ** 2
        if accepted:
            n1 = h1 + p1
            n2 = h2 + p2
            fn, gn1, gn2, an, bn, dn = prox_objective(n1, n2, w1, w2, V, c1, c2, sigma2)
        for _ls in range(0 if accepted else BACKTRACKS):
            n1 = h1 + t * p1
            n2 = h2 + t * p2
            fn, gn1, gn2, an, bn, dn = prox_objective(n1, n2, w1, w2, V, c1, c2, sigma2)
            if fn <= f + ARMIJO * t * slope:
                accepted = True
                break
            t *= 0.5
        if not accepted:
            break
        h1, h2, f, g1, g2, a, b, d = n1, n2, fn, gn1, gn2, an, bn, dn
    return h1, h2, f


@njit_cached()
def _logit(c: float) -> float:
    c = min(max(c, _LOGIT_CLIP), 1.0 - _LOGIT_CLIP)
    return math.log(c / (1.0 - c))


@njit_cached()
def node_prox(
    w1: float,
    w2: float,
    V: float,
    c1: float,
    c2: float,
    sigma2: float,
    warm1: float,
    warm2: float,
    use_warm: bool,
    gtol: float,
    max_iter: int,
) -> tuple[float, float, float]:
    """Global minimiser of the Moreau objective over the analytic starts and the warm start
    (if use_warm); returns (h1, h2, F)."""
    best1, best2, bestf = newton_minimise(w1, w2, w1, w2, V, c1, c2, sigma2, gtol, max_iter)
    h1, h2, f = newton_minimise(0.0, 0.0, w1, w2, V, c1, c2, sigma2, gtol, max_iter)
    if f < bestf:
        best1, best2, bestf = h1, h2, f
    # zero-loss points: h1 (h1 - h2) = logit c1, h2 (h2 - h1) = logit c2, so (h1 - h2)^2 = sum
    la = _logit(c1)
    lb = _logit(c2)
    if la + lb > 0.0:
        dd = math.sqrt(la + lb)
        for sgn in (1.0, -1.0):
            h1, h2, f = newton_minimise(
                sgn * la / dd, -sgn * lb / dd, w1, w2, V, c1, c2, sigma2, gtol, max_iter
            )
            if f < bestf:
                best1, best2, bestf = h1, h2, f
    else:
        mid = 0.5 * (w1 + w2)
        h1, h2, f = newton_minimise(mid, mid, w1, w2, V, c1, c2, sigma2, gtol, max_iter)
        if f < bestf:
            best1, best2, bestf = h1, h2, f
    if use_warm:
        h1, h2, f = newton_minimise(warm1, warm2, w1, w2, V, c1, c2, sigma2, gtol, max_iter)
        if f < bestf:
            best1, best2, bestf = h1, h2, f
    return best1, best2, bestf


@njit_cached(parallel=True)
def _prox_many(w, c, V, sigma2, starts, gtol, max_iter, out_h, out_f, out_start, out_stat):
    """node_prox at every node, then Newton from each of its S starts (n, S, 2); the winner's
    start index is S for an analytic start."""
    S_ = starts.shape[1]
    for i in prange(w.shape[0]):
        w1, w2, c1, c2 = w[i, 0], w[i, 1], c[i, 0], c[i, 1]
        h1, h2, f = node_prox(w1, w2, V, c1, c2, sigma2, 0.0, 0.0, False, gtol, max_iter)
        best = S_
        for s in range(S_):
            s1, s2, fs = newton_minimise(
                starts[i, s, 0], starts[i, s, 1], w1, w2, V, c1, c2, sigma2, gtol, max_iter
            )
            if fs < f:
                h1, h2, f, best = s1, s2, fs, s
        g1, g2 = prox_objective(h1, h2, w1, w2, V, c1, c2, sigma2)[1:3]
        out_h[i, 0] = h1
        out_h[i, 1] = h2
        out_f[i] = f
        out_start[i] = best
        out_stat[i] = g1 * g1 + g2 * g2 < gtol * gtol


def _run(w, c, V, sigma2, starts, gtol, max_iter):
    n = w.shape[0]
    out = (np.empty((n, 2)), np.empty(n), np.empty(n, dtype=np.int64), np.empty(n, dtype=np.bool_))
    _prox_many(w, c, float(V), float(sigma2), starts, float(gtol), int(max_iter), *out)
    return out


def prox(
    w: np.ndarray,
    c: np.ndarray,
    V: float,
    sigma2: float,
    warm: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Global proximal points for many nodes, as the exact channel computes them.

    Parameters
    ----------
    w : (n, 2) student fields; c : (n, 2) target centres (c1, c2); V > 0; sigma2 = sigma^2.
    warm : optional (n, 2) warm starts (e.g. the previous iteration's minimisers).

    Returns
    -------
    h_hat : (n, 2) global minimisers and M : (n,) minimum values of
    |h - w|^2/(2V) + ell(h) - kappa (the Moreau envelope without the teacher-only constant).
    """
    w = np.ascontiguousarray(w, dtype=np.float64)
    c = np.ascontiguousarray(c, dtype=np.float64)
    if w.ndim != 2 or w.shape[1] != 2 or c.shape != w.shape:
        raise ValueError(f"w and c must both have shape (n, 2); got {w.shape} and {c.shape}")
    if not V > 0:
        raise ValueError(f"V must be positive, got {V}")
    starts = np.zeros((w.shape[0], 0, 2)) if warm is None else np.asarray(warm)[:, None]
    starts = np.ascontiguousarray(starts, dtype=np.float64)
    h, f, _, _ = _run(w, c, V, sigma2, starts, GTOL, MAX_NEWTON)
    return h, f


def global_prox_closed_form(
    w: torch.Tensor,
    Vinv: torch.Tensor,
    K: torch.Tensor,
    Cm: torch.Tensor,
    c: torch.Tensor,
    starts: torch.Tensor,
    *,
    gtol: float,
    max_iter: int,
) -> ProxResult:
    """`attnphase.prox.global_prox` for the channel's loss K = sigma^2 I (shared), Cm =
    sigma^2 T, at L = 2, r = 1 (the caller checks): g = sigma^2 [(s1 - c1)^2 + (s2 - c2)^2]
    + kappa + (c - sigma^2/2 |T|^2) with c1 = (1 + T11 - T12)/2, c2 = (1 + T22 - T21)/2 (§2)."""
    import torch

    sigma2 = float(K.reshape(-1, 4)[0, 0])
    T = (Cm / sigma2).reshape(-1, 2, 2).double().cpu().numpy()
    centres = 0.5 * np.stack([1.0 + T[:, 0, 0] - T[:, 0, 1], 1.0 + T[:, 1, 1] - T[:, 1, 0]], -1)
    kappa = 0.25 * sigma2 * ((1.0 - T.sum(-1)) ** 2).sum(-1)
    N = w.shape[0]
    shift = c.double().cpu().numpy() - 0.5 * sigma2 * (T * T).sum((-1, -2)) + kappa
    shift, centres = np.broadcast_to(shift, (N,)), np.broadcast_to(centres, (N, 2))
    h, f, best, stat = _run(
        np.ascontiguousarray(w.double().cpu().numpy().reshape(N, 2)),
        np.array(centres),  # a writable copy: one compiled signature (numba types read-only apart)
        1.0 / float(Vinv.reshape(())),
        sigma2,
        np.ascontiguousarray(starts.double().cpu().numpy().reshape(N, -1, 2)),
        gtol,
        max_iter,
    )
    t = torch.from_numpy
    return ProxResult(t(h).reshape(N, 2, 1), t(f + shift), t(best), t(stat))
