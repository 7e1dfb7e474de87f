"""The global proximal step of THEORY.md §7.1 and §8, batched over samples (torch, any device).

For fields w in R^{L x r}, a symmetric positive-definite r x r matrix V and the loss
g(h) = c - tr(S Cm^T) + 1/2 tr(S K S^T) of `attnphase.ops`,
    h_hat = argmin_h  F(h),   F(h) = 1/2 sum_l (h_l - w_l)^T V^{-1} (h_l - w_l) + g(h),
and the Moreau envelope is F(h_hat). F is not convex: a safeguarded Newton method (saddle-free:
the Hessian's eigenvalues replaced by max(|lambda|, floor); Armijo backtracking; the pure
Newton step near a non-degenerate minimum) runs from every start the caller gives, all at
once, and the lowest objective wins. The same code serves the state evolution (K = sigma^2 I)
and GAMP (per-sample K, Cm, c).

Implicit derivatives at the minimiser (no finite differences): with H the Hessian of g and
B = I_L (x) V^{-1}, dh_hat/dw = (B + H)^{-1} B.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..ops import loss, loss_derivatives
from ..params import TIED, Untied, Variant

_ARMIJO = 1e-4
_BACKTRACKS = 30
_NEWTON_ZONE = 1e-4


@dataclass(frozen=True)
class ProxResult:
    """h: (N, L, r) global minimisers among the starts; envelope: (N,) F(h); start: (N,) index
    of the winning start; stationary: (N,) whether the winner's gradient met the tolerance."""

    h: torch.Tensor
    envelope: torch.Tensor
    start: torch.Tensor
    stationary: torch.Tensor


def block_metric(Vinv: torch.Tensor, L: int) -> torch.Tensor:
    """I_L (x) V^{-1}: the Hessian of the quadratic term of F in the row-major flattening."""
    # contiguous: torch.kron fails on the transposed layout torch.linalg.inv returns for r >= 2
    return torch.kron(torch.eye(L, dtype=Vinv.dtype, device=Vinv.device), Vinv.contiguous())


def moreau_objective(h, w, Vinv, K, Cm, c) -> torch.Tensor:
    """F(h) = 1/2 tr((h - w) V^{-1} (h - w)^T) + g(h), shape (...)."""
    d = h - w
    return 0.5 * ((d @ Vinv) * d).sum((-1, -2)) + loss(h, K, Cm, c)


def newton(
    h: torch.Tensor,
    w: torch.Tensor,
    Vinv: torch.Tensor,
    K: torch.Tensor,
    Cm: torch.Tensor,
    c: torch.Tensor,
    *,
    gtol: float = 1e-10,
    max_iter: int = 100,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Local minimisers of F from the starts h (N, L, r); returns (h, F, stationary).

    K, Cm (N, L, L) and c (N,) are per problem; Vinv (r, r) is shared.

    Problems leave the active set when their gradient is below gtol (max-abs), their step
    vanishes, or no backtracking step decreases F.
    """
    N, L, r = h.shape
    h = h.clone()
    metric = block_metric(Vinv, L)
    floor = 1e-2 * torch.linalg.eigvalsh(Vinv)[0]
    fval = moreau_objective(h, w, Vinv, K, Cm, c)
    stationary = torch.zeros(N, dtype=torch.bool, device=h.device)
    active = torch.arange(N, device=h.device)
    for _ in range(max_iter):
        if active.numel() == 0:
            break
        ha, wa = h[active], w[active]
        Ka, Cma, ca = K[active], Cm[active], c[active]
        _, grad, Hg = loss_derivatives(ha, Ka, Cma, ca)
        grad = (grad + (ha - wa) @ Vinv).reshape(-1, L * r)
        small = grad.abs().amax(-1) < gtol
        stationary[active[small]] = True
        lam, U = torch.linalg.eigh(Hg + metric)
        step = -(U / lam.abs().clamp_min(floor).unsqueeze(-2)) @ (
            U.transpose(-1, -2) @ grad.unsqueeze(-1)
        )
        step = step.squeeze(-1)
        size = step.norm(dim=-1)
        scale = 1.0 + ha.reshape(-1, L * r).norm(dim=-1)
        done = small | (size < 1e-13 * scale)
        slope = (grad * step).sum(-1)
        pure = (lam[:, 0] > floor) & (size < _NEWTON_ZONE * scale)
        fa = fval[active]
        cand = ha + step.reshape(-1, L, r)
        fc = moreau_objective(cand, wa, Vinv, Ka, Cma, ca)
        ok = pure | (fc <= fa + _ARMIJO * slope)
        t = torch.ones_like(fa)
        retry = torch.nonzero(~ok & ~done).squeeze(-1)
        for _ in range(_BACKTRACKS):
            if retry.numel() == 0:
                break
            t[retry] *= 0.5
            trial = ha[retry] + t[retry, None, None] * step[retry].reshape(-1, L, r)
            ft = moreau_objective(trial, wa[retry], Vinv, Ka[retry], Cma[retry], ca[retry])
            good = ft <= fa[retry] + _ARMIJO * t[retry] * slope[retry]
            cand[retry[good]] = trial[good]
            fc[retry[good]] = ft[good]
            ok[retry[good]] = True
            retry = retry[~good]
        move = ok & ~done
        h[active[move]] = cand[move]
        fval[active[move]] = fc[move]
        active = active[move]
    return h, fval, stationary


def ball_points(n: int, L: int, r: int) -> np.ndarray:
    """n fixed points spread over the unit ball of R^{L x r} (scrambled Sobol, seed 0, mapped
    to the ball by radius u^(1/(L r)) along normalised Gaussian directions); shape (n, L, r)."""
    dim = L * r
    if n == 0:
        return np.zeros((0, L, r))
    from scipy.stats import norm, qmc

    u = qmc.Sobol(dim + 1, scramble=True, seed=0).random(n)
    u = np.clip(u, 1e-12, 1 - 1e-12)
    g = norm.ppf(u[:, :dim])
    g /= np.linalg.norm(g, axis=1, keepdims=True)
    return (g * u[:, dim:] ** (1.0 / dim)).reshape(n, L, r)


def probe_starts(w, Vinv, K, Cm, c, n: int, n_best: int) -> torch.Tensor:
    """The n_best lowest of F at w + R ball_points(n), R^2 = 2 lambda_max(V) g(w); (N, k, L, r)."""
    N, L, r = w.shape
    ball = torch.as_tensor(ball_points(n, L, r), dtype=w.dtype, device=w.device)
    c = torch.as_tensor(c, dtype=w.dtype, device=w.device)
    radius = (2.0 / torch.linalg.eigvalsh(Vinv)[0] * loss(w, K, Cm, c).clamp_min(0.0)).sqrt()
    pts = w.unsqueeze(1) + radius[:, None, None, None] * ball
    cc = c.unsqueeze(-1) if c.dim() else c
    fp = moreau_objective(pts, w.unsqueeze(1), Vinv, K.unsqueeze(-3), Cm.unsqueeze(-3), cc)
    idx = fp.topk(min(n_best, n), dim=1, largest=False).indices
    return pts[torch.arange(N, device=w.device)[:, None], idx]


def global_prox_torch(
    w: torch.Tensor,
    Vinv: torch.Tensor,
    K: torch.Tensor,
    Cm: torch.Tensor,
    c: torch.Tensor,
    starts: torch.Tensor,
    *,
    probe: int = 0,
    n_best: int = 2,
    gtol: float = 1e-10,
    max_iter: int = 100,
) -> ProxResult:
    """Global minimiser of F over Newton runs from `starts` (N, S, L, r), lowest F kept, in
    batched torch operations (the implementation for CUDA devices).

    w (N, L, r); Vinv (r, r); K, Cm: (N, L, L) per sample or (L, L) shared; c: (N,) or scalar.
    """
    if probe > 0:
        starts = torch.cat([starts, probe_starts(w, Vinv, K, Cm, c, probe, n_best)], dim=1)
    N, S, L, r = starts.shape
    if w.shape != (N, L, r):
        raise ValueError(f"w must have shape {(N, L, r)}, got {tuple(w.shape)}")
    K, Cm, c = (
        torch.broadcast_to(x, shape).repeat_interleave(S, dim=0)
        for x, shape in ((K, (N, L, L)), (Cm, (N, L, L)), (c, (N,)))
    )
    h, fval, stat = newton(
        starts.reshape(N * S, L, r),
        w.repeat_interleave(S, dim=0),
        Vinv,
        K,
        Cm,
        c,
        gtol=gtol,
        max_iter=max_iter,
    )
    fval = fval.reshape(N, S)
    best = fval.argmin(-1)
    pick = torch.arange(N, device=w.device) * S + best
    return ProxResult(h[pick], fval[torch.arange(N), best], best, stat[pick])


def prox_jacobian(
    h: torch.Tensor, Vinv: torch.Tensor, K: torch.Tensor, Cm: torch.Tensor, c: torch.Tensor
) -> torch.Tensor:
    """dh_hat/dw at minimisers h (N, L, r) by the implicit-function theorem: (B + H)^{-1} B,
    B = I_L (x) V^{-1}, H the Hessian of g; shape (N, L r, L r)."""
    L = h.shape[-2]
    _, _, Hg = loss_derivatives(h, K, Cm, c)
    metric = block_metric(Vinv, L)
    return torch.linalg.solve(Hg + metric, metric.expand_as(Hg))


def global_prox(
    w: torch.Tensor,
    Vinv: torch.Tensor,
    K: torch.Tensor,
    Cm: torch.Tensor,
    c: torch.Tensor,
    starts: torch.Tensor,
    *,
    probe: int = 0,
    n_best: int = 2,
    gtol: float = 1e-10,
    max_iter: int = 100,
    variant: Variant = TIED,
) -> ProxResult:
    """Global minimiser of F over Newton runs from `starts` (N, S, L, r), lowest F kept.

    probe > 0 adds a coarse search (THEORY.md §8.1): F at `probe` fixed points spread over the
    ball |h - w|^2 <= 2 lambda_max(V) g(w), which contains every minimiser since g >= 0, and
    Newton from the n_best lowest of them.

    w (N, L, r); Vinv (r, r); K, Cm: (N, L, L) per sample or (L, L) shared; c: (N,) or scalar.
    On a CUDA device the batched torch implementation runs; on the CPU the numba kernel of
    `attnphase.prox.kernel` (same algorithm, one problem per thread, ~10x faster there).
    variant `Untied()`: the fields are (h_Q, h_K), r = 2 r_Q columns, and
    S = softmax_row(h_Q h_K^T) (docs/theory-untied.md); the numba kernel only, so the tensors
    must be on the CPU. `Tied()` and `Mixture` (tied query and key): S = softmax_row(h h^T).
    """
    untied = isinstance(variant, Untied)
    if untied and w.device.type != "cpu":
        raise ValueError("untied: the prox of untied fields runs on the CPU only")
    if untied and starts.shape[-1] % 2:
        raise ValueError(f"untied: fields need an even width, got {starts.shape[-1]}")
    if w.device.type != "cpu":
        return global_prox_torch(
            w, Vinv, K, Cm, c, starts, probe=probe, n_best=n_best, gtol=gtol, max_iter=max_iter
        )
    from .kernel import global_prox_kernel, key_start_of

    N, S, L, r = starts.shape
    if w.shape != (N, L, r):
        raise ValueError(f"w must have shape {(N, L, r)}, got {tuple(w.shape)}")
    arr = lambda x, shape: np.ascontiguousarray(  # noqa: E731
        torch.as_tensor(x, dtype=torch.float64).reshape(shape).numpy()
    )
    Kn = arr(K, (-1, L, L))
    Cn = arr(Cm, (-1, L, L))
    cn = arr(c, (-1,))
    out_h = np.empty((N, L, r))
    out_f = np.empty(N)
    out_s = np.empty(N, dtype=np.int64)
    out_ok = np.empty(N, dtype=np.bool_)
    global_prox_kernel(
        arr(w, (N, L, r)),
        arr(Vinv, (r, r)),
        Kn,
        Cn,
        cn,
        arr(starts, (N, S, L, r)),
        ball_points(probe, L, r),
        n_best,
        gtol,
        max_iter,
        key_start_of(variant, r),
        out_h,
        out_f,
        out_s,
        out_ok,
    )
    return ProxResult(
        torch.from_numpy(out_h),
        torch.from_numpy(out_f),
        torch.from_numpy(out_s),
        torch.from_numpy(out_ok),
    )
