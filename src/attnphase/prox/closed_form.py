"""Global proximal step h_hat(w, h*) of THEORY.md §2, for one node or many at once.

The Moreau objective F(h) = |h - w|^2/(2V) + ell(h; h*) is not convex in h. We run a safeguarded
Newton method (analytic gradient and Hessian, eigenvalue shift when the Hessian is not positive
definite, Armijo backtracking) from several starts and keep the lowest objective:
the warm start (previous minimiser at this node, if any), h = w, h = 0 and the two zero-loss
points of the 2x2 target (or, when the target cannot be reached, the valley h1 = h2 nearest w).
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from ..._core.jit import njit_cached
from .softmax2 import prox_objective

_MAX_NEWTON = 60
_GTOL = 1e-12
_XTOL = 1e-13
_NEWTON_ZONE = 1e-4
_LOGIT_CLIP = 1e-12


@njit_cached()
def newton_minimise(
    h1: float, h2: float, w1: float, w2: float, V: float, c1: float, c2: float, sigma2: float
) -> tuple[float, float, float]:
    """Local minimiser of the Moreau objective from (h1, h2); returns (h1, h2, F).

    Newton steps on the Hessian with its eigenvalues replaced by max(|lambda|, 0.01/V)
    (saddle-free Newton) and Armijo backtracking far from a minimum, pure Newton steps near
    one; stops when the gradient or the step vanishes.
    """
    f, g1, g2, a, b, d = prox_objective(h1, h2, w1, w2, V, c1, c2, sigma2)
    floor = 1e-2 / V
    for _ in range(_MAX_NEWTON):
        if g1 * g1 + g2 * g2 < _GTOL * _GTOL:
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
        if p1 * p1 + p2 * p2 < (_XTOL * (1.0 + abs(h1) + abs(h2))) ** 2:
            break
        t = 1.0
        # near a non-degenerate minimum take the pure Newton step: Armijo cannot resolve the
        # last digits of F, and quadratic convergence needs no safeguard there
        accepted = (
            l2 > floor and p1 * p1 + p2 * p2 < (_NEWTON_ZONE * (1.0 + abs(h1) + abs(h2))) ** 2
        )
        if accepted:
            n1 = h1 + p1
            n2 = h2 + p2
            fn, gn1, gn2, an, bn, dn = prox_objective(n1, n2, w1, w2, V, c1, c2, sigma2)
        for _ls in range(0 if accepted else 30):
            n1 = h1 + t * p1
            n2 = h2 + t * p2
            fn, gn1, gn2, an, bn, dn = prox_objective(n1, n2, w1, w2, V, c1, c2, sigma2)
            if fn <= f + 1e-4 * t * slope:
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
def global_prox(
    w1: float,
    w2: float,
    V: float,
    c1: float,
    c2: float,
    sigma2: float,
    warm1: float,
    warm2: float,
    use_warm: bool,
) -> tuple[float, float, float]:
    """Global minimiser of the Moreau objective over the multi-start set; returns (h1, h2, F)."""
    best1, best2, bestf = newton_minimise(w1, w2, w1, w2, V, c1, c2, sigma2)
    h1, h2, f = newton_minimise(0.0, 0.0, w1, w2, V, c1, c2, sigma2)
    if f < bestf:
        best1, best2, bestf = h1, h2, f
    # zero-loss points: h1 (h1 - h2) = logit c1, h2 (h2 - h1) = logit c2, so (h1 - h2)^2 = sum
    la = _logit(c1)
    lb = _logit(c2)
    if la + lb > 0.0:
        dd = math.sqrt(la + lb)
        for sgn in (1.0, -1.0):
            h1, h2, f = newton_minimise(sgn * la / dd, -sgn * lb / dd, w1, w2, V, c1, c2, sigma2)
            if f < bestf:
                best1, best2, bestf = h1, h2, f
    else:
        mid = 0.5 * (w1 + w2)
        h1, h2, f = newton_minimise(mid, mid, w1, w2, V, c1, c2, sigma2)
        if f < bestf:
            best1, best2, bestf = h1, h2, f
    if use_warm:
        h1, h2, f = newton_minimise(warm1, warm2, w1, w2, V, c1, c2, sigma2)
        if f < bestf:
            best1, best2, bestf = h1, h2, f
    return best1, best2, bestf


@njit_cached(parallel=True)
def _prox_many(w, c, V, sigma2, warm, use_warm, out):
    for i in prange(w.shape[0]):
        h1, h2, f = global_prox(
            w[i, 0], w[i, 1], V, c[i, 0], c[i, 1], sigma2, warm[i, 0], warm[i, 1], use_warm
        )
        out[i, 0] = h1
        out[i, 1] = h2
        out[i, 2] = f


def prox(
    w: np.ndarray,
    c: np.ndarray,
    V: float,
    sigma2: float,
    warm: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Global proximal points for many nodes.

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
    use_warm = warm is not None
    warm_arr = np.ascontiguousarray(warm if use_warm else np.zeros_like(w), dtype=np.float64)
    out = np.empty((w.shape[0], 3))
    _prox_many(w, c, float(V), float(sigma2), warm_arr, use_warm, out)
    return out[:, :2], out[:, 2]
