"""The attention map of a model variant as a strategy (docs/theory.md §7, docs/theory-untied.md,
docs/theory-mixtures.md): what the general channel needs to know of the map from a sequence's
projected fields (L x width) to its attention matrix, written once per variant.

A map gives the width of the student's field for a rank, the ridge in the field's columns, the
rows of M beyond the positional ones, the symmetries of the student's column space (which frame
and which column signs a fixed point is reported in), the starts of its branches from the tied
model's, the branches it has, and what it cannot solve; the ops, the prox and the simulations
take the map's form (`prox.attention_form`: the key fields' first column, the causal mask, the
heads, the rotary frequencies). `TiedMap` is the paper's map; `UntiedMap` has separate query and
key columns; `MixtureMap` is the tied map on correlated tokens (its mean rows);
`causal_map.CausalMap` the tied map with a causal mask; `heads_map.HeadsMap` several tied heads;
`rotary_map.RotaryMap` rotary positions. `attention_map(variant)` is the one place that turns a
variant into its map.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..params import Causal, Heads, Mixture, ModelParams, Rotary, Untied, Variant
from .branches import MIXTURE_BRANCH, QMC_BRANCHES
from .overlaps import MatrixOverlaps


@dataclass(frozen=True)
class TiedMap:
    """S = softmax_row(h h^T): one matrix serves as query and key (the paper's)."""

    name: ClassVar[str] = "tied"
    # rotating the student's columns (Q -> Q R) leaves S(h R) = S(h) and the ridge unchanged:
    # fixed points come in orbits, reported in one frame (`qmc.engine.canonical`)
    rotations: ClassVar[bool] = True
    # flipping one column (Q_c -> -Q_c) alone is a symmetry: each column is signed alone
    # (`qmc.engine.oriented`), and a column off its branch can be pinned trivial
    signs_each: ClassVar[bool] = True

    def field_width(self, rank: int) -> int:
        """Columns of the student field at student rank `rank`."""
        return rank

    def tied_rank(self, rank: int) -> int:
        """The tied model's rank whose start `start` builds on."""
        return rank

    def frame(self, o: MatrixOverlaps) -> MatrixOverlaps:
        """The overlaps in the frame of a map without the full rotations of the columns
        (`rotations` False; the tied frame is `qmc.engine.canonical`'s): as they are."""
        return o

    def has_branch(self, branch: str, rank: int) -> bool:
        """Whether the general channel's `branch` exists for this map at student rank `rank`:
        mixed (one semantic, one positional column) needs two columns."""
        return branch != "mixed" or rank >= 2

    def pin(self, branch: str, free: MatrixOverlaps) -> MatrixOverlaps:
        """`free` (1: free, 0: held at zero) with the pins of the columns' symmetries added: on
        the positional and mixed branches q and V diagonal and one positional column
        (`positional_column`), the others trivial; mixed: column 1 semantic alone.
        Flipping one trivial column leaves the law and S unchanged, so its Mhat and the
        off-diagonal qhat, Vhat vanish (`qmc.engine.free_overlaps`)."""
        if branch not in ("positional", "mixed"):
            return free
        q, M, theta, V = (np.array(x, dtype=float) for x in (free.q, free.M, free.theta, free.V))
        r = q.shape[0]
        off = ~np.eye(r, dtype=bool)
        q[off] = V[off] = 0.0
        pos = self.positional_column(branch, r)
        M[:, [c for c in range(r) if c != pos]] = 0.0
        if branch == "mixed":
            theta[:, 1:] = 0.0
        return MatrixOverlaps(q=q, M=M, theta=theta, V=V)

    def positional_column(self, branch: str, width: int) -> int:
        """The positional column of the positional (the first) or mixed (the second) branch
        among the field's `width` columns."""
        return 0 if branch == "positional" else 1

    def ridge(self, lam: float) -> float:
        """The state evolution's ridge in the field's columns."""
        return lam

    @property
    def mean_rows(self) -> int:
        """Rows of M beyond the positional ones."""
        return 0

    def check(self, p: ModelParams) -> None:
        """ValueError naming the option for a model of this map the theory does not solve."""

    def start(self, branch: str, tied: MatrixOverlaps) -> MatrixOverlaps:
        """A branch's start from the tied model's start `tied` of the same branch."""
        return tied

    def tied_branch(self, branch: str) -> str:
        """The tied model's branch whose start `start` builds on."""
        return branch

    def scan_branch(self, branch: str) -> str:
        """The branch whose fixed points stand for the "semantic" or "positional" mechanism
        when a transition scan compares them (docs/theory.md §5): the branch itself."""
        return branch


@dataclass(frozen=True)
class UntiedMap(TiedMap):
    """S = softmax_row(h_Q h_K^T), h = (h_Q, h_K): separate query and key (theory at rank 1)."""

    name: ClassVar[str] = "untied"
    # only the joint flip (Q_Q, Q_K) -> -(Q_Q, Q_K) is a symmetry: rotating the query column
    # into the key column, or flipping one of them, changes the logits
    rotations: ClassVar[bool] = False
    signs_each: ClassVar[bool] = False

    def field_width(self, rank: int) -> int:
        return 2 * rank

    def has_branch(self, branch: str, rank: int) -> bool:
        return branch != "mixed"

    def pin(self, branch: str, free: MatrixOverlaps) -> MatrixOverlaps:
        """Nothing beyond the branch's own pins: no single column is a symmetry."""
        return free

    def ridge(self, lam: float) -> float:
        """lambda/2: the simulations' lambda/4 (|Q_Q|^2 + |Q_K|^2), the tied ridge at
        Q_Q = Q_K."""
        return lam / 2

    def check(self, p: ModelParams) -> None:
        if p.rank != 1:
            raise ValueError(f"untied: the untied theory has student rank 1, got rank={p.rank}")

    def start(self, branch: str, tied: MatrixOverlaps) -> MatrixOverlaps:
        """(Q_Q, Q_K) = (Q, Q) in overlaps, with q's off-diagonal blocks 0.9 q (q positive
        definite)."""
        return MatrixOverlaps(
            q=np.kron(np.array([[1.0, 0.9], [0.9, 1.0]]), tied.q),
            M=np.hstack([tied.M, tied.M]),
            theta=np.hstack([tied.theta, tied.theta]),
            V=np.kron(np.eye(2), tied.V),
        )


@dataclass(frozen=True)
class MixtureMap(TiedMap):
    """The tied map on correlated tokens: M has the K - 1 mean directions as further rows."""

    mixture: Mixture = dataclasses.field(default_factory=Mixture)
    name: ClassVar[str] = "mixture"

    @property
    def mean_rows(self) -> int:
        return self.mixture.directions

    def check(self, p: ModelParams) -> None:
        self.mixture.check_length(p.L)

    def tied_branch(self, branch: str) -> str:
        return "semantic" if branch == MIXTURE_BRANCH else branch

    def start(self, branch: str, tied: MatrixOverlaps) -> MatrixOverlaps:
        """The mean rows m_mu = 0 (the invariant manifold of docs/theory-mixtures.md §3), except
        on the clustered branch: the semantic start with m_mu = 0.2 along the first mean
        direction."""
        means = np.zeros((self.mean_rows, tied.M.shape[1]))
        if branch == MIXTURE_BRANCH:
            means[0, 0] = 0.2
        return dataclasses.replace(tied, M=np.vstack([tied.M, means]))


AttentionMap = TiedMap | UntiedMap | MixtureMap


def attention_map(variant: Variant) -> AttentionMap:
    """The attention map of a model variant (a variant in a file of its own is imported
    here, where it is asked for: it builds on `TiedMap`)."""
    if isinstance(variant, Causal):
        from .causal_map import CausalMap

        return CausalMap()
    if isinstance(variant, Heads):
        from .heads_map import HeadsMap

        return HeadsMap(variant.heads)
    if isinstance(variant, Rotary):
        from .rotary_map import RotaryMap

        return RotaryMap(variant.frequencies)
    if isinstance(variant, Untied):
        return UntiedMap()
    if isinstance(variant, Mixture):
        return MixtureMap(variant)
    return TiedMap()


def valid_branches(variant: Variant, rank: int) -> tuple[str, ...]:
    """The general channel's branches a variant's model of student rank `rank` has: mixed
    needs two columns with their own symmetries (rank >= 2, tied), clustered a mixture."""
    amap = attention_map(variant)
    names = [b for b in QMC_BRANCHES if amap.has_branch(b, rank)]
    return (*names, MIXTURE_BRANCH) if amap.mean_rows else tuple(names)
