"""Several tied heads (docs/variants.md): the attention map S = (1/H) sum_a softmax_row(h_a h_a^T)
of H heads, head a on its own column of the student field (rank 1 per head in the theory). The
heads' softmaxes live in the attention's form (`attnphase.prox.attention_form`), which the prox,
the channel and the simulations read; this map gives the theory the rest: H columns, their
symmetries, the branches' starts and pins.

The symmetries: flipping one head's column (Q_a -> -Q_a) leaves its softmax unchanged, so each
column is signed alone and a head off its branch can be pinned trivial; rotating one head's
column into another's is no symmetry (the softmaxes are separate), so no frame is chosen;
permuting the heads is one (equal weights), which puts the semantic head first on the mixed
branch without loss. The branches: positional (head 1 along the first encoding direction, the
others trivial: started with every head positional and nothing pinned, the iteration leaves
the symmetric point, see docs/variants.md), mixed (head 1 semantic, head 2 positional, the
others trivial: the specialised fixed point), trivial. Every head aligned with the teacher is
no branch of its own: the simulations find the heads identical there (Q_1 = ... = Q_H), where q
is singular, and on that set the risk is the one-head model's with ridge H lam (the ridge counts
every copy), which the tied theory solves.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..params import ModelParams
from .attention import TiedMap
from .overlaps import MatrixOverlaps


@dataclass(frozen=True)
class HeadsMap(TiedMap):
    """S = (1/H) sum_a softmax_row(h_a h_a^T), one column per head, fixed equal weights."""

    heads: int = 2
    name: ClassVar[str] = "heads"
    rotations: ClassVar[bool] = False

    def field_width(self, rank: int) -> int:
        return self.heads * rank

    def tied_rank(self, rank: int) -> int:
        return self.heads * rank

    def has_branch(self, branch: str, rank: int) -> bool:
        return branch != "semantic"

    def check(self, p: ModelParams) -> None:
        if p.rank != 1:
            raise ValueError(f"heads: the theory has rank 1 per head, got rank={p.rank}")

    def pin(self, branch: str, free: MatrixOverlaps) -> MatrixOverlaps:
        """The tied model's pins (`TiedMap.pin`: positional, head 1 positional and the others
        trivial; mixed, head 1 semantic and head 2 positional), and q, V diagonal on the
        trivial branch: each pinned head is trivial by its own flip symmetry."""
        if branch != "trivial":
            return super().pin(branch, free)
        q, V = free.q * np.eye(self.heads), free.V * np.eye(self.heads)
        return dataclasses.replace(free, q=q, V=V)

    def scan_branch(self, branch: str) -> str:
        """The semantic mechanism of several heads is one head's: the specialised fixed point
        (the mixed branch) stands for it in a transition scan (docs/variants.md §6)."""
        return "mixed" if branch == "semantic" else branch

    def start(self, branch: str, tied: MatrixOverlaps) -> MatrixOverlaps:
        """The tied start of rank H; the semantic branch is refused (module docstring)."""
        if branch == "semantic":
            raise ValueError(
                f"branch: with {self.heads} heads the semantic branch is {self.heads} copies of "
                f"one head (q singular), the one-head model with ridge {self.heads} lam: solve "
                f"ModelParams(lam={self.heads} * lam) for it"
            )
        return tied
