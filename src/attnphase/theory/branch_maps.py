"""The branch maps of the transitions' defining systems (docs/theory.md §5): G(x; alpha) =
SE(x; alpha) - x of one branch on its free overlaps, with the training loss -Phi and the test
error at x, for each integration method (`Method.branch_map` hands out the method's own).

`GaussHermiteBranchMap` is the exact L = 2 channel at one order, on (q, m, V, theta);
`ScramblingBranchMap` the QMC channel on one scrambling, on the packed overlaps of
`qmc.engine.Layout`. Both raise `OffDomain` where the branch has collapsed (its order parameter
below the method's `on_branch`) or the overlaps are inadmissible.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from ..params import ModelParams
from .gauss_hermite.channel import ChannelIntegrator, kappa, test_error
from .gauss_hermite.engine import GaussHermiteMap, admissible, pinned_overlaps
from .iterate import InadmissibleStep, OffDomain
from .method import QMC, GaussHermite
from .overlaps import Overlaps, scalar_free_entropy
from .qmc.channel import QMCChannel
from .qmc.engine import Layout, QMCMap, fixed_point_observables

CACHE_SIZE = 64  # evaluations a branch map remembers


class CachedBranchMap(ABC):
    """The branch-map interface the systems use: `free` (indices of the free components in
    the full state), `order_slot` (the order parameter's position among them), `full`,
    `evaluations` (SE map evaluations; cache hits not counted) and `evaluate`, which caches
    the last CACHE_SIZE results (finite differences of a system perturb one branch at a
    time). Engines implement `_evaluate(xf, alpha)`, which raises OffDomain where the order
    parameter is below `on_branch`, its integration method's (the branch collapsed). With
    `local` True the engine's prox follows each integrand's previous minimiser (the local
    mode of `theory.iterate.iterate_checked`); the cache keeps the two modes apart, and a
    global evaluation, which leaves the global minimisers as the warm starts, drops the local
    mode's values."""

    on_branch = GaussHermite.on_branch
    local = False

    def __init__(self, branch: str, keep: np.ndarray, order_index: int):
        self.branch = branch
        self.size = keep.size
        self.free = np.flatnonzero(keep)
        self.order_slot = int(np.flatnonzero(self.free == order_index)[0])
        self.evaluations = 0
        self._cache: dict[bytes, tuple[np.ndarray, float, float]] = {}

    def full(self, xf: np.ndarray) -> np.ndarray:
        x = np.zeros(self.size)
        x[self.free] = xf
        return x

    def evaluate(self, xf: np.ndarray, alpha: float) -> tuple[np.ndarray, float, float]:
        """(G on the free components, training loss -Phi, test error) at x, alpha."""
        key = np.append(xf, alpha).tobytes() + bytes([self.local])
        if key not in self._cache:
            self.evaluations += 1
            value = self._evaluate(np.asarray(xf, dtype=float), float(alpha))
            if not self.local:  # the global search moved the warm starts: local values are stale
                self._cache = {k: v for k, v in self._cache.items() if not k[-1]}
            self._cache[key] = value
            if len(self._cache) > CACHE_SIZE:
                self._cache.pop(next(iter(self._cache)))
        return self._cache[key]

    @abstractmethod
    def _evaluate(self, xf: np.ndarray, alpha: float) -> tuple[np.ndarray, float, float]:
        """(G on the free components, training loss, test error), uncached."""


class GaussHermiteBranchMap(CachedBranchMap):
    """G(x; alpha) of one branch of the exact L=2 engine on its free components of
    (q, m, V, theta), with the observables at x."""

    def __init__(self, branch: str, p: ModelParams, order: tuple[int, int]):
        pinned = pinned_overlaps(branch, p)
        keep = np.array([True, not pinned[0], True, not pinned[1]])
        super().__init__(branch, keep, 3 if branch == "semantic" else 1)  # theta or m
        self.p = p
        self.integ = ChannelIntegrator(*order)

    def _evaluate(self, xf, alpha):
        p = self.p
        x = self.full(xf)
        if not (alpha > 0 and admissible(x, p.rho)):
            raise OffDomain(f"{self.branch}: inadmissible overlaps {x} at alpha {alpha}")
        if self.branch == "semantic" and abs(x[3]) < self.on_branch:
            raise OffDomain("semantic branch collapsed (theta -> 0)")
        if self.branch == "positional" and abs(x[1]) < self.on_branch:
            raise OffDomain("positional branch collapsed (m -> 0)")
        engine = GaussHermiteMap(alpha, p, self.integ, "ibp", pinned_overlaps(self.branch, p))
        engine.local = self.local
        try:
            fx, (h, mom) = engine.step(x)
        except InadmissibleStep as err:
            raise OffDomain(str(err)) from None
        k = kappa(sigma=p.sigma, omega=p.omega, A=p.A)
        o = Overlaps(*x)
        phi = scalar_free_entropy(o, h, mom.M + k, alpha=alpha, sigma=p.sigma, lam=p.lam, rho=p.rho)
        return (fx - x)[self.free], -phi, test_error(mom, kappa_=k)


def order_index(layout: Layout, branch: str) -> int:
    """Index in the packed overlaps of the branch's order parameter (module docstring)."""
    _, bM, bT, _ = layout.blocks()
    if branch == "semantic":
        return bT.start
    if branch == "positional":
        return bM.start
    raise ValueError(f"branch must be semantic or positional, got {branch!r}")


class ScramblingBranchMap(CachedBranchMap):
    """G(x; alpha) = SE(x) - x of the QMC channel on one scrambling (`QMCMap`: the
    pinned components of `free_overlaps` stay at zero), on the branch's free components, with
    the training loss -Phi and the test error eps_g at x (`engine.fixed_point_observables`).

    The prox of every point starts from fixed guesses and from the map's own previous
    minimisers (`QMCChannel`); the channel's warm start is swapped in and out per map, so
    that maps of two branches on one scrambling do not start each other's proxes."""

    def __init__(self, branch: str, p: ModelParams, channel: QMCChannel):
        layout = Layout(p.rank, p.K, p.teacher_rank)
        self.keep = layout.mask(branch)
        super().__init__(branch, self.keep, order_index(layout, branch))
        self.p, self.channel, self.layout = p, channel, layout
        self._order = layout.blocks()[2 if branch == "semantic" else 1]
        self._warm: np.ndarray | None = None

    on_branch = QMC.on_branch

    def _evaluate(self, xf, alpha):
        x = self.full(xf)
        if not alpha > 0:
            raise OffDomain(f"{self.branch}: alpha {alpha} <= 0")
        if float(np.abs(x[self._order]).max()) < self.on_branch:
            what = "theta" if self.branch == "semantic" else "M"
            raise OffDomain(f"{self.branch} branch collapsed ({what} -> 0)")
        fmap = QMCMap(alpha, self.p, self.channel, self.keep)
        fmap.local = self.local
        self.channel._warm = self._warm
        try:
            fx, (h, m) = fmap.step(x)
        except InadmissibleStep as err:
            raise OffDomain(f"{self.branch}: {err} at alpha {alpha:.6g}") from None
        finally:
            self._warm = self.channel._warm
            fmap.local = False
        obs = fixed_point_observables(self.layout.unpack(x), h, m, alpha, self.p, fmap.lam)
        return (fx - x)[self.free], obs["train_loss"], obs["test_error"]


def scrambling_channel(p: ModelParams, method: QMC, k: int) -> QMCChannel:
    """Scrambling k of `method` (seed `method.seed` + k, as `qmc.engine.make_channels`) for the
    tied model `p`: its points, and the prox warm starts the maps on it share."""
    return QMCChannel(
        p.L, p.rank, p.teacher_rank, method.points, method.seed + k, device=method.device
    )


def packed_overlaps(p: ModelParams, o) -> np.ndarray:
    """The overlaps as the state vector of a `ScramblingBranchMap` of the tied model `p`."""
    return Layout(p.rank, p.K, p.teacher_rank).pack(o)
