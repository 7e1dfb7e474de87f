"""The empirical risk of THEORY.md §1 in structured form: O(n L d r) per evaluation.

With x~ = x + p, the risk depends on Q only through the fields h = x~ Q/sqrt(d), and
||y - S x~||^2/d = |y|^2/d - 2 sum_ij S_ij C_ij + sum_i (S G S^T)_ii with the per-sample L x L
Gram matrices G = x~ x~^T/d and C = y x~^T/d, computed once. Autograd through `fields` then
costs one product with x~ forward and one backward.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .models import attention_map, fields


@dataclass(frozen=True)
class StructuredRisk:
    """R(Q) = sum_mu ||y - f_Q(x)||^2/(2d) + lam/2 ||Q||^2 for a batch of problems."""

    x_pos: torch.Tensor  # [B, n, L, d]
    gram: torch.Tensor  # G, [B, n, L, L]
    cross: torch.Tensor  # C, [B, n, L, L]
    yy: torch.Tensor  # sum_mu |y|^2/d, [B]
    lam: float

    @classmethod
    def build(cls, x_pos: torch.Tensor, y: torch.Tensor, lam: float) -> StructuredRisk:
        d = x_pos.shape[-1]
        return cls(
            x_pos=x_pos,
            gram=x_pos @ x_pos.transpose(-1, -2) / d,
            cross=y @ x_pos.transpose(-1, -2) / d,
            yy=y.pow(2).sum(dim=(1, 2, 3)) / d,
            lam=lam,
        )

    def __call__(self, Q: torch.Tensor) -> torch.Tensor:
        """Risk per problem, [B]."""
        S = attention_map(fields(self.x_pos, Q))
        fit = (S @ self.gram * S).sum(dim=(1, 2, 3)) - 2.0 * (S * self.cross).sum(dim=(1, 2, 3))
        return 0.5 * (self.yy + fit) + 0.5 * self.lam * Q.pow(2).sum(dim=(1, 2))

    def select(self, b: int) -> StructuredRisk:
        """The b-th problem as a batch of one."""
        return StructuredRisk(
            self.x_pos[b : b + 1],
            self.gram[b : b + 1],
            self.cross[b : b + 1],
            self.yy[b : b + 1],
            self.lam,
        )
