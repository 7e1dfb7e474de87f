"""Tied low-rank dot-product attention and the linear baseline at finite d (THEORY.md §1).

Pure tensor functions. Shapes: a batch of problems B, samples n, tokens L, dimension d,
student rank r, teacher rank t. Attention maps are returned as [batch, head, query, key]
(one head), the axis order of TransformerLens.
"""

from __future__ import annotations

import math

import torch


def attention_map(h: torch.Tensor) -> torch.Tensor:
    """Row-wise softmax(h h^T) for fields h [..., L, r] -> [..., L, L] (eq. 2)."""
    return torch.softmax(h @ h.transpose(-1, -2), dim=-1)


def fields(x: torch.Tensor, Q: torch.Tensor) -> torch.Tensor:
    """Local fields x Q / sqrt(d): x [B, n, L, d], Q [B, d, r] -> [B, n, L, r]."""
    d = x.shape[-1]
    return torch.einsum("bnld,bdr->bnlr", x, Q) / math.sqrt(d)


def target_matrix(hstar: torch.Tensor, omega: float, A: torch.Tensor) -> torch.Tensor:
    """T(h*) = (1 - omega) softmax(h* h*^T) + omega A (eq. 1/16)."""
    return (1.0 - omega) * attention_map(hstar) + omega * A


def attention_output(x_pos: torch.Tensor, Q: torch.Tensor) -> torch.Tensor:
    """f_Q(x) = S((x + p) Q / sqrt(d)) (x + p), given x_pos = x + p [B, n, L, d] (eq. 2/15)."""
    return attention_map(fields(x_pos, Q)) @ x_pos


def attention_maps(x_pos: torch.Tensor, Q: torch.Tensor) -> torch.Tensor:
    """Attention patterns [batch*n, head=1, query, key] of the student on inputs x + p."""
    S = attention_map(fields(x_pos, Q))
    return S.reshape(-1, 1, *S.shape[-2:])


def naive_risk(x_pos: torch.Tensor, y: torch.Tensor, Q: torch.Tensor, lam: float) -> torch.Tensor:
    """R(Q) = sum_mu ||y - f_Q(x)||_F^2/(2d) + lam/2 ||Q||_F^2 per problem [B] (eq. 3)."""
    d = x_pos.shape[-1]
    resid = y - attention_output(x_pos, Q)
    return resid.pow(2).sum(dim=(1, 2, 3)) / (2 * d) + 0.5 * lam * Q.pow(2).sum(dim=(1, 2))


def linear_output(x: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    """f_B(x) = B x for B [B, L, L] (eq. 17)."""
    return torch.einsum("blk,bnkd->bnld", B, x)
