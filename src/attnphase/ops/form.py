"""How a sequence's fields (L x R) become its attention matrix (docs/theory.md §7.1, the
variants' pages): the form every backend of `attnphase.ops` and `attnphase.prox` takes."""

from __future__ import annotations

from typing import NamedTuple


class AttentionForm(NamedTuple):
    """key_start: the column where the key fields start (0: tied, Z = h h^T; r_Q for untied
    fields h = (h_Q, h_K), Z = h_Q h_K^T). causal: token i attends to tokens k <= i only (Z_ik =
    -inf above the diagonal, so S_ik = 0 there and every derivative of g through S_ik vanishes:
    the formulas of `attnphase.ops` hold unchanged on the mask)."""

    key_start: int = 0
    causal: bool = False


TIED_FORM = AttentionForm()
