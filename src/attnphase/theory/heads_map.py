"""Several tied heads (docs/variants.md): the attention map S = (1/H) sum_a softmax_row(h_a h_a^T)
of H heads of rank r, head a on its own block of r columns of the student field. The heads'
softmaxes live in the attention's form (`attnphase.prox.attention_form`), which the prox, the
channel and the simulations read; this map gives the theory the rest: H r columns, their
symmetries, the branches' starts and pins.

The symmetries: rotating the columns of one head among themselves (Q_a -> Q_a R, R orthogonal
r x r) leaves h_a h_a^T and the ridge unchanged, so fixed points come in orbits, reported in
one frame per head (`HeadsMap.frame`); flipping one column alone is one such rotation, so each
column is signed alone and a column off its branch can be pinned trivial; rotating one head's
columns into another's is no symmetry (the softmaxes are separate); permuting the heads is one
(equal weights), which puts the semantic head first on the mixed branch without loss. The
branches: positional (the first column of head 1 along the first encoding direction, every
other column trivial: started with every head positional and nothing pinned, the iteration
leaves the symmetric point, see docs/variants.md), mixed (the first column of head 1 semantic,
the first of head 2 positional, the others trivial: the specialised fixed point), trivial.
Every head aligned with the teacher is no branch of its own: the simulations find the heads
identical there (Q_1 = ... = Q_H), where q is singular, and on that set the risk is the
one-head model's with ridge H lam (the ridge counts every copy), which the tied theory solves.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .attention import TiedMap
from .overlaps import MatrixOverlaps, matched_eigenvectors


@dataclass(frozen=True)
class HeadsMap(TiedMap):
    """S = (1/H) sum_a softmax_row(h_a h_a^T), a block of r columns per head, fixed equal
    weights."""

    heads: int = 2
    name: ClassVar[str] = "heads"
    rotations: ClassVar[bool] = False

    def field_width(self, rank: int) -> int:
        return self.heads * rank

    def tied_rank(self, rank: int) -> int:
        return self.heads * rank

    def has_branch(self, branch: str, rank: int) -> bool:
        return branch != "semantic"

    def frame(self, o: MatrixOverlaps) -> MatrixOverlaps:
        """Each head's block of q diagonal, its eigenvectors matched to the block's current
        axes (`overlaps.matched_eigenvectors`, as `qmc.engine.canonical` does for one head):
        the identity at rank 1 per head."""
        r = o.q.shape[0] // self.heads
        if r == 1:
            return o
        U = np.zeros_like(o.q)
        for a in range(self.heads):
            cols = slice(a * r, (a + 1) * r)
            U[cols, cols] = matched_eigenvectors(o.q[cols, cols])
        return o.rotated(U)

    def positional_column(self, branch: str, width: int) -> int:
        """The first column of head 1 (positional) or of head 2 (mixed: head 1 semantic)."""
        return 0 if branch == "positional" else width // self.heads

    def pin(self, branch: str, free: MatrixOverlaps) -> MatrixOverlaps:
        """The tied model's pins (`TiedMap.pin`: positional, head 1 positional and the others
        trivial; mixed, head 1 semantic and head 2 positional), and q, V diagonal on the
        trivial branch: each pinned column is trivial by its own flip symmetry."""
        if branch != "trivial":
            return super().pin(branch, free)
        eye = np.eye(free.q.shape[0])
        q, V = free.q * eye, free.V * eye
        return dataclasses.replace(free, q=q, V=V)

    def scan_branch(self, branch: str) -> str:
        """The semantic mechanism of several heads is one head's: the specialised fixed point
        (the mixed branch) stands for it in a transition scan (docs/variants.md §6)."""
        return "mixed" if branch == "semantic" else branch

    def start(self, branch: str, tied: MatrixOverlaps) -> MatrixOverlaps:
        """The tied start of rank H r, the mixed one with its positional column moved to head
        2's first (`positional_column`); the semantic branch is refused (module docstring)."""
        if branch == "semantic":
            raise ValueError(
                f"branch: with {self.heads} heads the semantic branch is {self.heads} copies of "
                f"one head (q singular), the one-head model with ridge {self.heads} lam: solve "
                f"ModelParams(lam={self.heads} * lam) for it"
            )
        if branch != "mixed":
            return tied
        width = tied.q.shape[0]
        order = np.arange(width)
        pos = self.positional_column(branch, width)
        order[[1, pos]] = order[[pos, 1]]
        return MatrixOverlaps(
            q=tied.q[np.ix_(order, order)],
            M=tied.M[:, order],
            theta=tied.theta[:, order],
            V=tied.V[np.ix_(order, order)],
        )
