"""How a sequence's fields (L x R) become its attention matrix (docs/theory.md §7.1, the
variants' pages): the form every backend of `attnphase.ops` and `attnphase.prox` takes."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

NO_ROTATION = np.zeros(0)  # writable, as every form's array: numba compiles read-only apart


class AttentionForm(NamedTuple):
    """key_start: the column where the key fields start (0: tied, Z = h h^T; r_Q for untied
    fields h = (h_Q, h_K), Z = h_Q h_K^T). causal: token i attends to tokens k <= i only (Z_ik =
    -inf above the diagonal, so S_ik = 0 there and every derivative of g through S_ik vanishes:
    the formulas of `attnphase.ops` hold unchanged on the mask). heads: H tied heads on R / H
    columns each, S = (1/H) sum_a softmax_row(h_a h_a^T) (key_start 0). rotary: the rotary
    frequencies, one per pair of columns (an array; empty: no rotation), Z_ik = h_i^T G_ik h_k
    (`attnphase.ops.rotary`)."""

    key_start: int = 0
    causal: bool = False
    heads: int = 1
    rotary: np.ndarray = NO_ROTATION

    def describe(self) -> tuple:
        """The form as plain values (the rotary frequencies as a tuple), comparable with ==."""
        return (self.key_start, self.causal, self.heads, tuple(float(x) for x in self.rotary))


TIED_FORM = AttentionForm()
