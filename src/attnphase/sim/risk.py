"""The empirical risk of docs/theory.md §1 in the per-sample form of §8: O(n L d r) per evaluation.

With x~ = x + p, the risk depends on Q only through the fields h = x~ Q/sqrt(d), and
||y - S x~||^2/(2d) = g(h) = c - tr(S Cm^T) + 1/2 tr(S K S^T) (`attnphase.ops`) with the
per-sample L x L matrices K = x~ x~^T/d, Cm = y x~^T/d and c = |y|^2/(2d), computed once.
Autograd through `fields` then costs one product with x~ forward and one backward.

Extensions (docs/theory.md §10, packed weights of `Layout`): untied query/key only change
S = softmax(h_Q h_K^T); a value matrix V = I + U W^T/d changes the matrices to
K_V = x~ V V^T x~^T/d = K + (a c^T + c a^T)/d + a (W^T W/d) a^T/d and
Cm_V = y V^T x~^T/d = Cm + b a^T/d, with a = x~ U/sqrt(d), c = x~ W/sqrt(d), b = y W/sqrt(d)
([n, L, r_v] each): still O(n L d r_v), and no d x d matrix per sample.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch

from ..ops.tensor import back_project, fields, loss, loss_derivatives
from .models import Layout, penalty


@dataclass(frozen=True)
class StructuredRisk:
    """R(Q) = sum_mu g_mu(h_mu) + lam/2 ||Q||^2 for a batch of problems; with a `layout` other
    than the tied Layout(r), R of the packed weights P (`attnphase.sim.models`, ridge of
    `penalty`). `y` is kept only when a value matrix needs it."""

    x_pos: torch.Tensor  # [B, n, L, d]
    K: torch.Tensor  # x~ x~^T/d, [B, n, L, L]
    Cm: torch.Tensor  # y x~^T/d, [B, n, L, L]
    c: torch.Tensor  # |y|^2/(2d), [B, n]
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
            K=x_pos @ x_pos.transpose(-1, -2) / d,
            Cm=y @ x_pos.transpose(-1, -2) / d,
            c=y.pow(2).sum((-1, -2)) / (2 * d),
            lam=lam,
            layout=layout,
            y=y if keep_y else None,
        )

    def __call__(self, Q: torch.Tensor) -> torch.Tensor:
        """Risk per problem, [B] (Q: the packed weights P for an extension's layout)."""
        layout = self.layout or Layout(Q.shape[-1])
        h = fields(self.x_pos, layout.attention_weights(Q))
        K, Cm = self.K, self.Cm
        _, _, U, W = layout.split(Q)
        if U is not None:
            assert self.y is not None  # `build` keeps y whenever the layout has a value matrix
            d = self.x_pos.shape[-1]
            a, c, b = fields(self.x_pos, U), fields(self.x_pos, W), fields(self.y, W)
            ww = W.transpose(1, 2) @ W / d  # [B, r_v, r_v]
            ac = a @ c.transpose(-1, -2)
            aw = torch.einsum("bnlk,bkj->bnlj", a, ww)
            K = K + (ac + ac.transpose(-1, -2) + aw @ a.transpose(-1, -2)) / d
            Cm = Cm + b @ a.transpose(-1, -2) / d
        g = loss(h, K, Cm, self.c, layout.form)
        return g.sum(-1) + penalty(Q, self.lam, layout)

    def value_and_gradient(self, Q: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """R and grad R = sum_{mu,l} x~_mu,l^T (dg_mu/dh_mu,l)^T/sqrt(d) + lam Q in closed form
        (§8), for tied weights Q [B, d, r] (with the layout's mask): ([B], [B, d, r])."""
        form = (self.layout or Layout(Q.shape[-1])).form
        h = fields(self.x_pos, Q)
        g, dg, _ = loss_derivatives(h, self.K, self.Cm, self.c, hessian=False, form=form)
        R = g.sum(-1) + 0.5 * self.lam * Q.pow(2).sum((-1, -2))
        return R, back_project(self.x_pos, dg) + self.lam * Q

    def select(self, b: int) -> StructuredRisk:
        """The b-th problem as a batch of one."""
        return replace(
            self,
            x_pos=self.x_pos[b : b + 1],
            K=self.K[b : b + 1],
            Cm=self.Cm[b : b + 1],
            c=self.c[b : b + 1],
            y=None if self.y is None else self.y[b : b + 1],
        )
