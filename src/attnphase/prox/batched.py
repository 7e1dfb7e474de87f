"""The torch backend of `attnphase.prox`: batched over samples, on any device (CUDA's).

The algorithm of `attnphase.prox.algorithm` with the loss and derivatives of
`attnphase.ops.tensor`; all problems and starts advance together, each leaving the active set
when its run ends. Also the implicit derivative of the minimiser, for every backend.
"""

from __future__ import annotations

import torch

from ..ops.form import TIED_FORM, AttentionForm
from ..ops.tensor import loss, loss_derivatives
from .algorithm import ARMIJO, BACKTRACKS, FLOOR, NEWTON_ZONE, XTOL, ProxResult, ball_points

# cuSOLVER's batched eigensolver fails with an internal error on large batches (seen on an H200
# at 164k 4 x 4 matrices; 41k 3 x 3 ran): the Hessians are decomposed in chunks of this many
EIGH_CHUNK = 32768


def eigh(H: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """torch.linalg.eigh over a batch (N, n, n), in chunks of EIGH_CHUNK."""
    if H.shape[0] <= EIGH_CHUNK:
        return torch.linalg.eigh(H)
    parts = [torch.linalg.eigh(chunk) for chunk in H.split(EIGH_CHUNK)]
    return torch.cat([v for v, _ in parts]), torch.cat([u for _, u in parts])


def block_metric(Vinv: torch.Tensor, L: int) -> torch.Tensor:
    """I_L (x) V^{-1}: the Hessian of the quadratic term of F in the row-major flattening;
    Vinv (r, r), or (N, r, r) per problem giving (N, L r, L r)."""
    eye = torch.eye(L, dtype=Vinv.dtype, device=Vinv.device)
    if Vinv.dim() == 3:
        N, r, _ = Vinv.shape
        return torch.einsum("ij,nab->niajb", eye, Vinv).reshape(N, L * r, L * r)
    # contiguous: torch.kron fails on the transposed layout torch.linalg.inv returns for r >= 2
    return torch.kron(eye, Vinv.contiguous())


def smallest_eigenvalue(Vinv: torch.Tensor) -> torch.Tensor:
    """lambda_min(V^{-1}): a scalar for Vinv (r, r), (N,) for Vinv (N, r, r).

    Per problem, each distinct matrix is decomposed once (a batch holds a few fixed points'
    V^{-1}, each repeated over its points and starts; cuSOLVER's batched eigensolver asked for
    243 GiB of workspace for the repeats of an L = 4 solve)."""
    if Vinv.dim() == 2:
        return torch.linalg.eigvalsh(Vinv)[0]
    r = Vinv.shape[-1]
    distinct, index = torch.unique(Vinv.reshape(-1, r * r), dim=0, return_inverse=True)
    return torch.linalg.eigvalsh(distinct.reshape(-1, r, r))[:, 0][index]


def _rows(x: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """x's rows idx when x is per problem (a leading axis), x itself when shared."""
    return x[idx] if x.dim() == 3 else x


def moreau_objective(
    h: torch.Tensor,
    w: torch.Tensor,
    Vinv: torch.Tensor,
    K: torch.Tensor,
    Cm: torch.Tensor,
    c: torch.Tensor,
    form: AttentionForm = TIED_FORM,
) -> torch.Tensor:
    """F(h) = 1/2 tr((h - w) V^{-1} (h - w)^T) + g(h) (§7.1), shape (...)."""
    d = h - w
    return 0.5 * ((d @ Vinv) * d).sum((-1, -2)) + loss(h, K, Cm, c, form)


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
    form: AttentionForm = TIED_FORM,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Local minimisers of F from the starts h (N, L, r); returns (h, F, stationary).

    K, Cm (N, L, L) and c (N,) are per problem; Vinv (r, r) shared or (N, r, r) per problem.

    Problems leave the active set when their gradient is below gtol (max-abs), their step
    vanishes, or no backtracking step decreases F.
    """
    N, L, r = h.shape
    h = h.clone()
    metric = block_metric(Vinv, L)
    floor = FLOOR * smallest_eigenvalue(Vinv)
    fval = moreau_objective(h, w, Vinv, K, Cm, c, form)
    stationary = torch.zeros(N, dtype=torch.bool, device=h.device)
    active = torch.arange(N, device=h.device)
    for _ in range(max_iter):
        if active.numel() == 0:
            break
        ha, wa = h[active], w[active]
        Ka, Cma, ca = K[active], Cm[active], c[active]
        Va = _rows(Vinv, active)
        floor_a = floor[active, None] if floor.dim() else floor  # per problem: a column
        _, grad, Hg = loss_derivatives(ha, Ka, Cma, ca, form=form)
        grad = (grad + (ha - wa) @ Va).reshape(-1, L * r)
        small = grad.abs().amax(-1) < gtol
        stationary[active[small]] = True
        lam, U = eigh(Hg + _rows(metric, active))
        step = -(U / lam.abs().clamp_min(floor_a).unsqueeze(-2)) @ (
            U.transpose(-1, -2) @ grad.unsqueeze(-1)
        )
        step = step.squeeze(-1)
        size = step.norm(dim=-1)
        scale = 1.0 + ha.reshape(-1, L * r).norm(dim=-1)
        done = small | (size < XTOL * scale)
        slope = (grad * step).sum(-1)
        definite = lam[:, 0] > (floor_a.squeeze(-1) if floor.dim() else floor)
        pure = definite & (size < NEWTON_ZONE * scale)
        fa = fval[active]
        cand = ha + step.reshape(-1, L, r)
        fc = moreau_objective(cand, wa, Va, Ka, Cma, ca, form)
        ok = pure | (fc <= fa + ARMIJO * slope)
        t = torch.ones_like(fa)
        retry = torch.nonzero(~ok & ~done).squeeze(-1)
        for _ in range(BACKTRACKS):
            if retry.numel() == 0:
                break
            t[retry] *= 0.5
            trial = ha[retry] + t[retry, None, None] * step[retry].reshape(-1, L, r)
            Vr = _rows(Va, retry)
            ft = moreau_objective(trial, wa[retry], Vr, Ka[retry], Cma[retry], ca[retry], form)
            good = ft <= fa[retry] + ARMIJO * t[retry] * slope[retry]
            cand[retry[good]] = trial[good]
            fc[retry[good]] = ft[good]
            ok[retry[good]] = True
            retry = retry[~good]
        move = ok & ~done
        h[active[move]] = cand[move]
        fval[active[move]] = fc[move]
        active = active[move]
    return h, fval, stationary


def probe_starts(
    w, Vinv, K, Cm, c, n: int, n_best: int, form: AttentionForm = TIED_FORM
) -> torch.Tensor:
    """The n_best lowest of F at w + R ball_points(n), R^2 = 2 lambda_max(V) g(w); (N, k, L, r)."""
    N, L, r = w.shape
    ball = torch.as_tensor(ball_points(n, L, r), dtype=w.dtype, device=w.device)
    c = torch.as_tensor(c, dtype=w.dtype, device=w.device)
    g0 = loss(w, K, Cm, c, form).clamp_min(0.0)
    radius = (2.0 / smallest_eigenvalue(Vinv) * g0).sqrt()
    pts = w.unsqueeze(1) + radius[:, None, None, None] * ball
    cc = c.unsqueeze(-1) if c.dim() else c
    Vp = Vinv.unsqueeze(1) if Vinv.dim() == 3 else Vinv
    fp = moreau_objective(pts, w.unsqueeze(1), Vp, K.unsqueeze(-3), Cm.unsqueeze(-3), cc, form)
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
    probe: int,
    n_best: int,
    gtol: float,
    max_iter: int,
    form: AttentionForm,
) -> ProxResult:
    """`attnphase.prox.global_prox` in batched torch operations: Newton from `starts`
    (N, S, L, r) and the probe starts, all at once, lowest F kept."""
    if probe > 0:
        extra = probe_starts(w, Vinv, K, Cm, c, probe, n_best, form)
        starts = torch.cat([starts, extra], dim=1)
    N, S, L, r = starts.shape
    if Vinv.dim() == 3:
        Vinv = Vinv.repeat_interleave(S, dim=0)
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
        form=form,
    )
    fval = fval.reshape(N, S)
    best = fval.argmin(-1)
    pick = torch.arange(N, device=w.device) * S + best
    return ProxResult(h[pick], fval[torch.arange(N), best], best, stat[pick])


def prox_jacobian(
    h: torch.Tensor,
    Vinv: torch.Tensor,
    K: torch.Tensor,
    Cm: torch.Tensor,
    c: torch.Tensor,
    form: AttentionForm = TIED_FORM,
) -> torch.Tensor:
    """dh_hat/dw at minimisers h (N, L, r) by the implicit-function theorem: (B + H)^{-1} B,
    B = I_L (x) V^{-1}, H the Hessian of g; shape (N, L r, L r)."""
    L = h.shape[-2]
    _, _, Hg = loss_derivatives(h, K, Cm, c, form=form)
    assert Hg is not None  # the Hessian is computed by default
    metric = block_metric(Vinv, L)
    return torch.linalg.solve(Hg + metric, metric.expand_as(Hg))
