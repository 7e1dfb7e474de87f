"""The causal attention map (docs/variants.md): the tied map with token l attending to tokens
k <= l alone. The mask lives in the attention's form (`attnphase.prox.attention_form`), which
the prox, the channel and the simulations read; the theory needs nothing else of it, since
the mask keeps every symmetry, start, branch and check of the tied map (a causal target's A
is checked by `ModelParams`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from .attention import TiedMap


@dataclass(frozen=True)
class CausalMap(TiedMap):
    """S = softmax_row(h h^T) with -inf above the diagonal."""

    name: ClassVar[str] = "causal"
