"""Stability of a replica-symmetric fixed point (docs/theory.md §9): the smooth replicon factor and
the probability mass of the nodes near a jump of the resolvent.

With J = dh_hat/dw = (B + H)^{-1} B at the global minimiser (B = I_L (x) V^{-1}, H the Hessian of
the loss) and, in the coordinates whitened by V (W = I_L (x) V^{1/2}), the symmetric
Jt = W^{-1} J W = (I + W H W)^{-1}, the factor is

    lambda_rep = (alpha / r) E[ ||Jt - I||_F^2 ]

(docs/theory.md §9's alpha sum_{l,k} E[(dh_hat_l/dw_k - delta_lk)^2] for r = 1; for r > 1 its mean
over the r directions). For H >= 0 the eigenvalues of I - Jt lie in [0, 1), so ||Jt - I||_F^2 <=
tr(I - Jt) = tr(V^{1/2} D V^{1/2}) with D = sum_l D_l of docs/theory.md §8 step 3, and at a fixed
point V = sigma^2 (lambda + sigma^2 Vhat)^{-1} <= Vhat^{-1} gives lambda_rep <= tr(V Vhat)/r <= 1: a
convex loss is RS-stable. The resolvent of the non-convex softmax loss jumps between prox minima;
the jumps add delta terms to dh_hat/dw which the smooth factor does not count, so they are reported
apart: a node is near a jump when another local minimum of its Moreau objective becomes the global
one within a distance JUMP_RADIUS of the node in the student field w at fixed teacher field h*,
measured in units of q^{1/2} (the derivative of the jump that enters Vhat = -alpha E[df/dw]); the
distance is the first-order estimate envelope gap / |gradient of the gap|, and the mass grows with
JUMP_RADIUS (about linearly for small radii). GAMP's Vhat, the smooth part alpha E[sum_l D_l] =
alpha V^{-1} E[sum_l (I - J_ll)], is reported as `vhat_smooth`: its distance from the state
evolution's (Stein) Vhat is the jumps' share of Vhat (docs/theory.md §8.1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .._core.progress import progress_bar
from ..ops.array import sym_sqrt
from ..params import ModelParams
from ..prox.replicon import replicon_terms
from ..theory.engine import learning_curves
from ..theory.method import QMC, Method
from ..theory.overlaps import MatrixOverlaps
from ..theory.result import TheoryResult, plain_value

if TYPE_CHECKING:
    from ..theory.replicas import QMCChannel

JUMP_RADIUS = 0.1  # in units of the standard Gaussian xi of the student field
DISTINCT = 1e-4  # relative distance above which two prox minimisers are different minima


@dataclass(frozen=True)
class Stability:
    """docs/theory.md §9 at one fixed point: mean over scramblings with standard errors (NaN for
    one)."""

    rs_stability: float
    rs_stability_err: float
    jump_mass: float
    jump_mass_err: float
    vhat_smooth: float | np.ndarray
    vhat_smooth_err: float | np.ndarray

    def as_dict(self) -> dict[str, float | np.ndarray]:
        return dict(self.__dict__)


def jump_distances(
    h_best: np.ndarray,
    f_best: np.ndarray,
    h_local: np.ndarray,
    f_local: np.ndarray,
    is_min: np.ndarray,
    Vinv: np.ndarray,
    q: np.ndarray,
) -> np.ndarray:
    """Distance in w (at fixed h*, in units of q^{1/2}) to the nearest jump of the resolvent,
    per node (inf where no other local minimum exists): for each other local minimum h'
    (is_min, farther than DISTINCT from h_best) the envelope gap F(h') - F(h_best) >= 0 over
    the norm of its gradient (h_best - h') V^{-1} q^{1/2} row by row (w_l = ... + xi_l q^{1/2}).
    Shapes: h_best (N, L, r), f_best (N,), h_local (N, S, L, r), f_local and is_min (N, S)."""
    diff = h_best[:, None] - h_local
    scale = 1.0 + np.abs(h_best).max((-1, -2))
    other = is_min & (np.abs(diff).max((-1, -2)) > DISTINCT * scale[:, None])
    grad = diff @ Vinv @ sym_sqrt(q)
    gnorm = np.sqrt((grad * grad).sum((-1, -2)))
    gap = np.clip(f_local - f_best[:, None], 0.0, None)
    with np.errstate(divide="ignore", invalid="ignore"):
        dist = np.where(other & (gnorm > 0), gap / gnorm, np.inf)
    return dist.min(-1)


def channel_stability(
    channel: QMCChannel, o: MatrixOverlaps, alpha: float, p: ModelParams
) -> tuple[float, float, np.ndarray]:
    """(lambda_rep, jump mass, Vhat_smooth (r x r)) on one scrambling's points, at the overlaps
    o of its fixed point."""
    import torch

    from ..gamp.equations import output_jacobian_blocks
    from ..ops.array import target
    from ..ops.tensor import loss_derivatives
    from ..prox import attention_form, global_prox, prox_jacobian
    from ..prox.batched import block_metric, moreau_objective

    C = np.asarray(p.encodings, dtype=float)
    A = np.asarray(p.A, dtype=float)
    s2 = p.sigma**2
    L, r = channel.L, channel.r
    w, hstar = channel.fields(o, C, p.sigma)
    h_best = channel.resolvent(o, C=C, sigma=p.sigma, omega=p.omega, A=A)
    T = target(hstar, p.omega, A, p.causal_target)
    variant = p.variant
    cst = 0.5 * s2 * (T * T).sum((-1, -2))
    Vinv = np.linalg.inv(o.V)
    t = torch.from_numpy
    K, Cm, c = t(s2 * np.eye(L)), t(s2 * T), t(cst)
    jac_t = prox_jacobian(t(h_best), t(Vinv), K, Cm, c, variant=variant)
    vhat_smooth = alpha * output_jacobian_blocks(jac_t, t(Vinv)).sum(1).mean(0).numpy()
    jac = jac_t.numpy()
    starts = channel.starts(w, hstar, o)
    N, S = starts.shape[:2]
    local = [
        global_prox(t(w), t(Vinv), K, Cm, c, t(starts[:, s : s + 1]), variant=variant)
        for s in range(S)
    ]
    h_loc = torch.stack([res.h for res in local], 1).reshape(N * S, L, r)
    f_loc = torch.stack([res.envelope for res in local], 1)
    stat = torch.stack([res.stationary for res in local], 1)

    def rep(x: np.ndarray) -> torch.Tensor:
        return torch.repeat_interleave(t(x), S, dim=0)

    form = attention_form(variant, r)
    _, _, Hg = loss_derivatives(h_loc, K, rep(s2 * T), rep(cst), form=form)
    metric = block_metric(t(Vinv), L)
    positive = torch.linalg.eigvalsh(Hg + metric)[:, 0].reshape(N, S) > 0
    is_min = (stat & positive).numpy()
    f_best = moreau_objective(t(h_best), t(w), t(Vinv), K, Cm, c, form).numpy()
    dist = jump_distances(
        h_best,
        f_best,
        h_loc.numpy().reshape(N, S, L, r),
        f_loc.numpy(),
        is_min,
        Vinv,
        o.q,
    )
    return (
        float(alpha * replicon_terms(jac, o.V, L).mean()),
        float(np.mean(dist < JUMP_RADIUS)),
        vhat_smooth,
    )


def stability(
    channels: list[QMCChannel], overlaps: list[MatrixOverlaps], alpha: float, p: ModelParams
) -> Stability:
    """docs/theory.md §9 at a fixed point: each scrambling's channel at its own fixed point's
    overlaps,
    averaged, with the standard error over scramblings."""
    rows = [channel_stability(ch, o, alpha, p) for ch, o in zip(channels, overlaps, strict=True)]
    out: dict[str, Any] = {}  # Stability's fields: float, or an r x r array for vhat_smooth
    for name, values in zip(
        ("rs_stability", "jump_mass", "vhat_smooth"), zip(*rows, strict=True), strict=True
    ):
        v = np.asarray(values, dtype=float)
        err = v.std(0, ddof=1) / np.sqrt(len(v)) if len(v) > 1 else np.full_like(v[0], np.nan)
        out[name], out[f"{name}_err"] = plain_value(v.mean(0)), plain_value(err)
    return Stability(**out)


STABILITY_KEYS = tuple(Stability.__dataclass_fields__)


def check_measurable(p: ModelParams) -> None:
    """ValueError naming `stability` for a model whose fixed points these measures do not
    serve: untied query and key (its columns are not one field's directions) and correlated
    tokens (their channel's points are per label sequence). The tied model and its attention
    maps (a causal mask, several heads, rotary positions) are measured through their form."""
    if p.untied or p.mixture is not None:
        raise ValueError(
            "stability: measured for tied query and key on Gaussian tokens (with any mask, heads "
            f"or rotary positions), not untied or correlated tokens; got {p.variant}"
        )


def with_stability(
    result: TheoryResult,
    *,
    points: int | None = None,
    randomisations: int | None = None,
) -> TheoryResult:
    """The fixed point `result` with docs/theory.md §9's rs_stability, jump_mass and vhat_smooth
    (and
    their standard errors over scramblings) filled in (tied query and key on Gaussian tokens,
    any attention map: `check_measurable`).

    A QMC result is measured on its own scramblings (seeds as `solve` draws them) at each one's
    fixed point; a Gauss-Hermite result on `randomisations` scramblings of `points` Sobol points
    of the QMC channel (defaults: `QMC()`'s). An unconverged result is returned unchanged (NaN).
    """
    from ..theory.replicas import scramblings

    p = result.params
    check_measurable(p)
    if not result.converged:
        return result
    if result.solutions:  # a QMC result: its own scramblings' fixed points
        own = result.method.settings()
        method = QMC(points or own["points"], randomisations or own["randomisations"], own["seed"])
        channels = scramblings(p, method)
        overlaps = [s.overlaps for s in result.solutions][: len(channels)]
    else:
        default = QMC()
        method = QMC(points or default.points, randomisations or default.randomisations)
        channels = scramblings(p, method)
        o = MatrixOverlaps(*(np.array([[x]]) for x in (result.q, result.m, result.theta, result.V)))
        overlaps = [o] * len(channels)
    st = stability(channels[: len(overlaps)], overlaps, result.alpha, p)
    return result.with_values(
        {k: getattr(st, k) for k in STABILITY_KEYS[::2]},
        {k[:-4]: getattr(st, k) for k in STABILITY_KEYS[1::2]},
    )


def learning_curves_with_stability(
    alphas: Sequence[float],
    params: ModelParams | None = None,
    branches: Sequence[str] = ("semantic", "positional"),
    *,
    method: Method | str = "auto",
    progress: bool = False,
) -> list[TheoryResult]:
    """`theory.learning_curves` with docs/theory.md §9's rs_stability and jump_mass at every fixed
    point (`with_stability`; `check_measurable`)."""
    p = params if params is not None else ModelParams()
    check_measurable(p)
    curves = learning_curves(alphas, p, branches, method=method, progress=progress)
    return [with_stability(r) for r in progress_bar(curves, desc="RS stability", enabled=progress)]
