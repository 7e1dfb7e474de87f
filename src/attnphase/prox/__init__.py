"""The global proximal step of docs/theory.md §7.1 and §8, batched over samples: one algorithm
(`algorithm`), three backends.

For fields w in R^{L x r}, a symmetric positive-definite r x r matrix V and the loss
g(h) = c - tr(S Cm^T) + 1/2 tr(S K S^T) of `attnphase.ops`,
    h_hat = argmin_h  F(h),   F(h) = 1/2 sum_l (h_l - w_l)^T V^{-1} (h_l - w_l) + g(h),
and the Moreau envelope is F(h_hat). F is not convex: safeguarded Newton runs from every start
the caller gives (and from the probe points, docs/theory.md §8.1), and the lowest F wins. The same
code serves the state evolution (K = sigma^2 I) and GAMP (per-sample K, Cm, c).

Backends (`global_prox(..., backend=)`; "auto": "torch" on a CUDA device, "numba" otherwise):
- "numba" (`kernel`): one problem per thread on the CPU, ~10x faster there than "torch";
- "torch" (`batched`): every problem and start at once, any device;
- "closed-form" (`closed_form`): L = 2, r = 1 and the channel's loss K = sigma^2 I, with the
  exact channel's analytic starts in place of the probe (docs/theory.md §2); what the Gauss-Hermite
  channel runs at every node.
Each serves tied fields (`Tied()`, `Mixture`: S = softmax_row(h h^T)); "numba" and "torch"
also untied ones (`Untied()`: h = (h_Q, h_K), S = softmax_row(h_Q h_K^T), docs/theory-untied.md),
causal masks (`Causal`), several heads (`Heads`, the mean of the heads' softmaxes) and rotary
positions (`Rotary`).

Implicit derivatives at the minimiser (no finite differences, `prox_jacobian`): with H the
Hessian of g and B = I_L (x) V^{-1}, dh_hat/dw = (B + H)^{-1} B.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..ops.form import AttentionForm
from ..params import TIED, Causal, Heads, Rotary, Untied, Variant, key_start_of
from .algorithm import PROBE, ProxResult

if TYPE_CHECKING:
    import torch

BACKENDS = ("numba", "torch", "closed-form")


def attention_form(variant: Variant, width: int) -> AttentionForm:
    """The form (`attnphase.ops.form`) of a variant's attention on fields of `width` columns:
    where its key fields start, whether its mask is causal (`Causal`), its heads (`Heads`:
    width / H columns each) and its rotary frequencies (`Rotary`)."""
    heads = variant.heads if isinstance(variant, Heads) else 1
    rotary = np.array(variant.frequencies if isinstance(variant, Rotary) else (), dtype=float)
    causal = isinstance(variant, Causal)
    return AttentionForm(key_start_of(variant, width), causal, heads, rotary)


def _check(backend: str, w, Vinv, K, starts, probe: int, variant: Variant) -> str:
    """The backend that runs (the resolved "auto"); ValueError in one line for what it cannot."""
    if backend not in ("auto", *BACKENDS):
        raise ValueError(f"backend must be 'auto' or one of {BACKENDS}, got {backend!r}")
    if backend == "auto":
        backend = "numba" if w.device.type == "cpu" else "torch"
    if starts.dim() != 4:
        raise ValueError(f"starts must have shape (N, S, L, r), got {tuple(starts.shape)}")
    N, _, L, r = starts.shape
    if tuple(w.shape) != (N, L, r):
        raise ValueError(f"w must have shape {(N, L, r)}, got {tuple(w.shape)}")
    untied = isinstance(variant, Untied)
    causal = isinstance(variant, Causal)
    if untied and r % 2:
        raise ValueError(f"untied: fields need an even width, got {r}")
    heads = variant.heads if isinstance(variant, Heads) else 1
    if r % heads:
        raise ValueError(f"heads: the fields' width {r} is not a multiple of the {heads} heads")
    rotary = isinstance(variant, Rotary)
    if isinstance(variant, Rotary) and r != 2 * variant.pairs:
        raise ValueError(
            f"rotary: {variant.pairs} frequencies rotate fields of width {2 * variant.pairs}, "
            f"got {r}"
        )
    if tuple(Vinv.shape) not in ((r, r), (N, r, r)):
        raise ValueError(f"Vinv must have shape {(r, r)} or {(N, r, r)}, got {tuple(Vinv.shape)}")
    if backend == "numba" and w.device.type != "cpu":
        raise ValueError(f"backend 'numba' runs on the CPU, the fields are on {w.device}")
    if backend == "closed-form":
        eye = K.new_tensor([[1.0, 0.0], [0.0, 1.0]])
        if untied or causal or heads > 1 or rotary or (L, r) != (2, 1):
            raise ValueError(
                f"backend 'closed-form' serves tied unmasked fields with L = 2, r = 1 only, got "
                f"L = {L}, r = {r}{' untied' if untied else ''}{' causal' if causal else ''}"
            )
        if probe > 0:
            raise ValueError("backend 'closed-form' has its analytic starts, no probe: probe=0")
        if Vinv.dim() == 3:
            raise ValueError(
                "backend 'closed-form' needs one shared Vinv (1, 1), not one per problem"
            )
        if K.shape[-2:] != (2, 2) or not bool((K == K.reshape(-1, 4)[0, 0] * eye).all()):
            raise ValueError("backend 'closed-form' needs the channel's loss, K = sigma^2 I shared")
    return backend


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
    backend: str = "auto",
) -> ProxResult:
    """Global minimiser of F over Newton runs from `starts` (N, S, L, r), lowest F kept.

    probe > 0 adds a coarse search (docs/theory.md §8.1): F at `probe` fixed points spread over the
    ball |h - w|^2 <= 2 lambda_max(V) g(w), which contains every minimiser since g >= 0, and
    Newton from the n_best lowest of them. gtol: on the gradient's largest entry (closed form:
    its Euclidean norm); max_iter: Newton steps per start.

    w (N, L, r); Vinv (r, r) shared or (N, r, r) per problem (several fixed points' fields in
    one call: the batch axis); K, Cm: (N, L, L) per sample or (L, L) shared; c: (N,) or scalar.
    variant `Untied()`: the fields are (h_Q, h_K), r = 2 r_Q columns; `Heads(H)`: H heads of
    r / H columns each. `backend`: see the module
    docstring; each refuses what it cannot serve with a ValueError.
    """
    backend = _check(backend, w, Vinv, K, starts, probe, variant)
    if backend == "closed-form":
        from .closed_form import global_prox_closed_form

        return global_prox_closed_form(w, Vinv, K, Cm, c, starts, gtol=gtol, max_iter=max_iter)
    if backend == "torch":
        from .batched import global_prox_torch as run
    else:
        from .kernel import global_prox_numba as run
    return run(
        w,
        Vinv,
        K,
        Cm,
        c,
        starts,
        probe=probe,
        n_best=n_best,
        gtol=gtol,
        max_iter=max_iter,
        form=attention_form(variant, starts.shape[-1]),
    )


def prox_jacobian(
    h: torch.Tensor,
    Vinv: torch.Tensor,
    K: torch.Tensor,
    Cm: torch.Tensor,
    c: torch.Tensor,
    *,
    variant: Variant = TIED,
) -> torch.Tensor:
    """dh_hat/dw at minimisers h (N, L, r) of any backend: (B + H)^{-1} B, shape (N, L r, L r)
    (`batched.prox_jacobian`)."""
    from .batched import prox_jacobian as jacobian

    return jacobian(h, Vinv, K, Cm, c, attention_form(variant, h.shape[-1]))


__all__ = ["BACKENDS", "PROBE", "ProxResult", "attention_form", "global_prox", "prox_jacobian"]
