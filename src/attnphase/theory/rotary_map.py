"""Rotary positions (docs/variants.md): the tied map with the query and key fields rotated by
position, pair j of the student's columns (2j, 2j + 1) by l phi_j at token l, so that
Z_lk = h_l^T G_lk h_k, G_lk = blockdiag_j R((k - l) phi_j). The rotation lives in the
attention's form (`attnphase.prox.attention_form`), which the prox, the channel and the
simulations read; this map gives the theory its symmetries.

The symmetries: rotating a pair's two columns together (Q -> Q R with R in SO(2) on the pair)
commutes with G and leaves every logit unchanged, so fixed points come in circles, reported in
one frame (`RotaryMap.frame`); reflecting one column of a pair conjugates the rotations
(R(t) -> R(-t)) and is no symmetry, nor is flipping one column alone, so nothing is pinned on
the mixed branch (one column of the pair semantic, the other positional: docs/variants.md §11);
flipping every column (Q -> -Q) is one, which pins M on the semantic branch and theta on the
positional one as in the tied model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .attention import TiedMap
from .overlaps import MatrixOverlaps

# an order parameter below this does not fix a pair's frame (the branch's own `on_branch`)
FRAME_FLOOR = 1e-6


@dataclass(frozen=True)
class RotaryMap(TiedMap):
    """S = softmax_row(h_l^T G_lk h_k), the pairs of columns rotated by the frequencies."""

    frequencies: tuple[float, ...] = (1.0,)
    name: ClassVar[str] = "rotary"
    rotations: ClassVar[bool] = False
    signs_each: ClassVar[bool] = False

    def pin(self, branch: str, free: MatrixOverlaps) -> MatrixOverlaps:
        """Nothing beyond the branch's own pins: no single column is a symmetry."""
        return free

    def start(self, branch: str, tied: MatrixOverlaps) -> MatrixOverlaps:
        """The tied start, the mixed one with its semantic column small (q = 0.1, theta =
        0.1 sigma^2 / 0.25): from the tied mixed start (q = 0.9) the free iteration falls to the
        semantic point, from this one it reaches the mixed point wherever it was found (alpha
        1-5 at omega 0.3; docs/variants.md §11)."""
        if branch != "mixed":
            return tied
        q, theta = tied.q.copy(), tied.theta.copy()
        q[0, 0] = 0.1
        theta[0, 0] *= 0.1 / 0.35
        return MatrixOverlaps(q=q, M=tied.M, theta=theta, V=tied.V)

    def frame(self, o: MatrixOverlaps) -> MatrixOverlaps:
        """Each pair rotated (within SO(2)) so that its largest order parameter, the row of theta
        or else of M with the largest norm on the pair, points along the pair's first column
        (positive); a pair without one (the trivial branch) is left as it is."""
        R = np.eye(o.q.shape[0])
        for j in range(len(self.frequencies)):
            cols = [2 * j, 2 * j + 1]
            for block in (o.theta[:, cols], o.M[:, cols]):
                norms = np.linalg.norm(block, axis=1) if block.size else np.zeros(1)
                if norms.max() >= FRAME_FLOOR:
                    v = block[int(np.argmax(norms))]
                    c, s = v / np.linalg.norm(v)
                    R[np.ix_(cols, cols)] = [[c, -s], [s, c]]
                    break
        return o.rotated(R)
