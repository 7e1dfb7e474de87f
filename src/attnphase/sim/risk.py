"""The empirical risk of THEORY.md §1 in structured form: O(n L d r) per evaluation.

With x~ = x + p, the risk depends on Q only through the fields h = x~ Q/sqrt(d), and
||y - S x~||^2/d = |y|^2/d - 2 sum_ij S_ij C_ij + sum_i (S G S^T)_ii with the per-sample L x L
Gram matrices G = x~ x~^T/d and C = y x~^T/d, computed once. Autograd through `fields` then
costs one product with x~ forward and one backward.

Extensions (THEORY.md §10, packed weights of `Layout`): untied query/key only change
S = softmax(h_Q h_K^T); a value matrix V = I + U W^T/d changes the Gram matrices to
G_V = x~ V V^T x~^T/d = G + (a c^T + c a^T)/d + a (W^T W/d) a^T/d and
C_V = y V^T x~^T/d = C + b a^T/d, with a = x~ U/sqrt(d), c = x~ W/sqrt(d), b = y W/sqrt(d)
([n, L, r_v] each): still O(n L d r_v), and no d x d matrix per sample.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch

from .models import Layout, fields, penalty, student_map


@dataclass(frozen=True)
class StructuredRisk:
    """R(Q) = sum_mu ||y - f_Q(x)||^2/(2d) + lam/2 ||Q||^2 for a batch of problems; with a
    `layout` other than the tied Layout(r), R of the packed weights P (`attnphase.sim.models`,
    ridge of `penalty`). `y` is kept only when a value matrix needs it."""

    x_pos: torch.Tensor  # [B, n, L, d]
    gram: torch.Tensor  # G, [B, n, L, L]
    cross: torch.Tensor  # C, [B, n, L, L]
    yy: torch.Tensor  # sum_mu |y|^2/d, [B]
    lam: float
    layout: Layout | None = None  # None: tied, r from the weights
    y: torch.Tensor | None = None  # [B, n, L, d], value matrix only

    @classmethod
    def build(
        cls, x_pos: torch.Tensor, y: torch.Tensor, lam: float, layout: Layout | None = None
    ) -> StructuredRisk:
        d = x_pos.shape[-1]
        keep_y = layout is not None and layout.value_rank > 0
        return cls(
            x_pos=x_pos,
            gram=x_pos @ x_pos.transpose(-1, -2) / d,
            cross=y @ x_pos.transpose(-1, -2) / d,
            yy=y.pow(2).sum(dim=(1, 2, 3)) / d,
            lam=lam,
            layout=layout,
            y=y if keep_y else None,
        )

    def __call__(self, Q: torch.Tensor) -> torch.Tensor:
        """Risk per problem, [B] (Q: the packed weights P for an extension's layout)."""
        layout = self.layout or Layout(Q.shape[-1])
        S = student_map(self.x_pos, Q, layout)
        gram, cross = self.gram, self.cross
        _, _, U, W = layout.split(Q)
        if U is not None:
            d = self.x_pos.shape[-1]
            a, c, b = fields(self.x_pos, U), fields(self.x_pos, W), fields(self.y, W)
            ww = W.transpose(1, 2) @ W / d  # [B, r_v, r_v]
            ac = a @ c.transpose(-1, -2)
            aw = torch.einsum("bnlk,bkj->bnlj", a, ww)
            gram = gram + (ac + ac.transpose(-1, -2) + aw @ a.transpose(-1, -2)) / d
            cross = cross + b @ a.transpose(-1, -2) / d
        fit = (S @ gram * S).sum(dim=(1, 2, 3)) - 2.0 * (S * cross).sum(dim=(1, 2, 3))
        return 0.5 * (self.yy + fit) + penalty(Q, self.lam, layout)

    def select(self, b: int) -> StructuredRisk:
        """The b-th problem as a batch of one."""
        return replace(
            self,
            x_pos=self.x_pos[b : b + 1],
            gram=self.gram[b : b + 1],
            cross=self.cross[b : b + 1],
            yy=self.yy[b : b + 1],
            y=None if self.y is None else self.y[b : b + 1],
        )
