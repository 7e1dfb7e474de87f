"""Tied low-rank dot-product attention and the linear baseline at finite d (docs/theory.md §1),
and the extensions of docs/theory.md §10 (untied query/key, a trainable low-rank value matrix).

Pure tensor functions on the operations of `attnphase.ops.tensor`. Shapes: a batch of problems
B, samples n, tokens L, dimension d, student rank r, teacher rank t. Attention maps are
returned as [batch, head, query, key] (one head), the axis order of TransformerLens.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..ops.form import AttentionForm
from ..ops.tensor import attention, fields
from ..params import TIED, Causal, Heads, Mixture, Rotary, Tied, Untied, Variant


def attention_output(x_pos: torch.Tensor, Q: torch.Tensor) -> torch.Tensor:
    """f_Q(x) = S((x + p) Q / sqrt(d)) (x + p), given x_pos = x + p [B, n, L, d] (eq. 2/15)."""
    return attention(fields(x_pos, Q)) @ x_pos


def attention_maps(x_pos: torch.Tensor, Q: torch.Tensor) -> torch.Tensor:
    """Attention patterns [batch*n, head=1, query, key] of the student on inputs x + p."""
    S = attention(fields(x_pos, Q))
    return S.reshape(-1, 1, *S.shape[-2:])


def naive_risk(x_pos: torch.Tensor, y: torch.Tensor, Q: torch.Tensor, lam: float) -> torch.Tensor:
    """R(Q) = sum_mu ||y - f_Q(x)||_F^2/(2d) + lam/2 ||Q||_F^2 per problem [B] (eq. 3)."""
    d = x_pos.shape[-1]
    resid = y - attention_output(x_pos, Q)
    return resid.pow(2).sum(dim=(1, 2, 3)) / (2 * d) + 0.5 * lam * Q.pow(2).sum(dim=(1, 2))


def linear_output(x: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    """f_B(x) = B x for B [B, L, L] (eq. 17)."""
    return torch.einsum("blk,bnkd->bnld", B, x)


@dataclass(frozen=True)
class Layout:
    """How the trained weights of one student are packed side by side in a single tensor
    P [B, d, width] (so every optimiser sees one parameter): Q_Q (d x r), then Q_K (d x r) if
    the model's `variant` is `Untied()`, then U and W (d x value_rank each) if value_rank > 0.
    The tied model (`Tied()`, and `Mixture`: tied query and key) is Layout(r): P = Q; with
    `Causal`, P = Q too, the mask in `form`; with `Heads(H)`, P = (Q_1, ..., Q_H), r = H times
    the rank, the heads in `form`; with `Rotary`, P = Q, the rotations in `form`.

    Student (docs/theory.md §10): f(x) = softmax(x~ Q_Q Q_K^T x~^T/d) x~ (I + U W^T/d), with
    Q_K = Q_Q when tied and no value term when value_rank = 0."""

    r: int
    variant: Variant = TIED
    value_rank: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.variant, Tied | Untied | Mixture | Causal | Heads | Rotary):
            raise ValueError(
                "variant must be Tied(), Untied(), a Mixture(...), Causal(...), Heads(...) or "
                f"Rotary(...), got {self.variant!r}"
            )

    @property
    def key_columns(self) -> int:
        """Columns of Q_K's own block: r for `Untied()`, 0 when Q_K is Q_Q (tied)."""
        return self.r if isinstance(self.variant, Untied) else 0

    @property
    def form(self) -> AttentionForm:
        """The attention's form on the fields of `attention_weights`: the column of the key
        fields (0: tied), the causal mask (`Causal`), the heads (`Heads`) and the rotary
        frequencies (`Rotary`)."""
        heads = self.variant.heads if isinstance(self.variant, Heads) else 1
        key = self.r if self.key_columns else 0
        freqs = self.variant.frequencies if isinstance(self.variant, Rotary) else ()
        return AttentionForm(key, isinstance(self.variant, Causal), heads, np.array(freqs))

    @property
    def width(self) -> int:
        return self.r + self.key_columns + 2 * self.value_rank

    def attention_weights(self, P: torch.Tensor) -> torch.Tensor:
        """(Q_Q, Q_K) side by side (untied), or Q_Q: the columns whose fields enter S."""
        return P[..., : self.r + self.key_columns]

    def split(self, P: torch.Tensor):
        """(Q_Q, Q_K, U, W) views of P; Q_K is Q_Q when tied, U and W are None without a
        value matrix."""
        r, rv = self.r, self.value_rank
        QQ = P[..., :r]
        k = r + self.key_columns
        QK = P[..., r:k] if self.key_columns else QQ
        if rv == 0:
            return QQ, QK, None, None
        return QQ, QK, P[..., k : k + rv], P[..., k + rv : k + 2 * rv]


def student_map(x_pos: torch.Tensor, P: torch.Tensor, layout: Layout) -> torch.Tensor:
    """softmax(x~ Q_Q Q_K^T x~^T/d), [B, n, L, L]."""
    return attention(fields(x_pos, layout.attention_weights(P)), layout.form)


def student_output(x_pos: torch.Tensor, P: torch.Tensor, layout: Layout) -> torch.Tensor:
    """f(x) = S x~ (I + U W^T/d) for packed weights P (see `Layout`), [B, n, L, d]."""
    out = student_map(x_pos, P, layout) @ x_pos
    _, _, U, W = layout.split(P)
    if U is not None:
        d = x_pos.shape[-1]
        out = out + torch.einsum("bnlk,bek->bnle", torch.einsum("bnld,bdk->bnlk", out, U), W) / d
    return out


def penalty(P: torch.Tensor, lam: float, layout: Layout) -> torch.Tensor:
    """lam/2 ||Q||^2 (tied); lam/4 (||Q_Q||^2 + ||Q_K||^2) (untied: the tied ridge when
    Q_Q = Q_K); plus lam/2 (||U||^2 + ||W||^2) for a value matrix. Per problem [B]."""
    QQ, QK, U, W = layout.split(P)
    out = QQ.pow(2).sum(dim=(1, 2))
    if isinstance(layout.variant, Untied):
        out = 0.5 * (out + QK.pow(2).sum(dim=(1, 2)))
    if U is not None:
        out = out + U.pow(2).sum(dim=(1, 2)) + W.pow(2).sum(dim=(1, 2))
    return 0.5 * lam * out
