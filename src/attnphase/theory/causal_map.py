"""The causal attention map (docs/variants.md): the tied map with token l attending to tokens
k <= l alone. The mask lives in the attention's form (`attnphase.prox.attention_form`), which
the prox, the channel and the simulations read; the theory needs nothing else of it, since
the mask keeps every symmetry, start and branch of the tied map."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..params import Causal, ModelParams
from .attention import TiedMap


@dataclass(frozen=True)
class CausalMap(TiedMap):
    """S = softmax_row(h h^T) with -inf above the diagonal; its target masked too where the
    variant says (`Causal.target`, checked by `ModelParams`)."""

    variant: Causal = Causal()
    name: ClassVar[str] = "causal"

    def check(self, p: ModelParams) -> None:
        """Every tied model takes the mask; a causal target's A is checked by ModelParams."""
