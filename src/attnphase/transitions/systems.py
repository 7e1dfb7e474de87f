"""The defining systems of the transitions (docs/theory.md §5) for the exact L=2 engine, as
residuals
of a vector z of unknowns at fixed model parameters.

A branch's state is the free components of its overlaps (q, m, V, theta) (the pinned ones of
`pinned_overlaps` stay at zero); its residual is G(x; alpha) = SE(x; alpha) - x on them.
  alpha_c:   z = (x_semantic, x_positional, alpha),  [G_s, G_p, (R_s - R_p)/R_p] = 0
  alpha_l:   z = (x_branch, alpha),                 [G_b, (eps_g - eps_lin)/eps_lin] = 0
  spinodal:  the extremum over t of alpha(t), where z = (x_branch without t, alpha) solves
             G_b = 0 with the order parameter (theta or m) held at t  (a fold: dG/dx singular)
R = -Phi is the training loss (eq. 14), eps_g the test error (eq. 10).

The systems only use the interface of `CachedBranchMap`, so any engine's branch map fits them;
`BranchMap` is the exact L=2 one.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from ..params import ModelParams
from ..theory.gauss_hermite.channel import ChannelIntegrator, kappa, test_error
from ..theory.gauss_hermite.engine import GaussHermiteMap, admissible, pinned_overlaps
from ..theory.iterate import InadmissibleStep
from ..theory.method import GaussHermite
from ..theory.overlaps import Overlaps, scalar_free_entropy
from .newton import OffDomain, fd_jacobian

FOLD_STEP = 1e-5  # relative step of the inner finite differences of the fold's dG/dx
CACHE_SIZE = 64  # evaluations a branch map remembers


class CachedBranchMap(ABC):
    """The branch-map interface the systems use: `free` (indices of the free components in
    the full state), `order_slot` (the order parameter's position among them), `full`,
    `evaluations` (SE map evaluations; cache hits not counted) and `evaluate`, which caches
    the last CACHE_SIZE results (finite differences of a system perturb one branch at a
    time). Engines implement `_evaluate(xf, alpha)`, which raises OffDomain where the order
    parameter is below `on_branch`, its integration method's (the branch collapsed). With
    `local` True the engine's prox follows each integrand's previous minimiser (the local
    mode of `theory.iterate.iterate_checked`); the cache keeps the two modes apart."""

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
            self._cache[key] = self._evaluate(np.asarray(xf, dtype=float), float(alpha))
            if len(self._cache) > CACHE_SIZE:
                self._cache.pop(next(iter(self._cache)))
        return self._cache[key]

    @abstractmethod
    def _evaluate(self, xf: np.ndarray, alpha: float) -> tuple[np.ndarray, float, float]:
        """(G on the free components, training loss, test error), uncached."""


class BranchMap(CachedBranchMap):
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


class CrossingSystem:
    """alpha_c: both branches at their fixed points with equal training losses."""

    kind = "alpha_c"

    def __init__(self, semantic, positional):
        self.sem, self.pos = semantic, positional
        self.ns = self.sem.free.size
        self.branch_maps = (semantic, positional)

    @property
    def evaluations(self) -> int:
        return self.sem.evaluations + self.pos.evaluations

    def __call__(self, z: np.ndarray) -> np.ndarray:
        a = z[-1]
        gs, rs, _ = self.sem.evaluate(z[: self.ns], a)
        gp, rp, _ = self.pos.evaluate(z[self.ns : -1], a)
        return np.concatenate([gs, gp, [(rs - rp) / abs(rp)]])

    def pack(self, sem: np.ndarray, pos: np.ndarray, alpha: float) -> np.ndarray:
        return np.concatenate([sem[self.sem.free], pos[self.pos.free], [alpha]])

    def states(self, z: np.ndarray) -> dict[str, np.ndarray]:
        return {
            "semantic": self.sem.full(z[: self.ns]),
            "positional": self.pos.full(z[self.ns : -1]),
        }


class LinearSystem:
    """alpha_l: the branch's test error equals the linear baseline's."""

    kind = "alpha_l"

    def __init__(self, branch_map, eps_lin: float):
        self.map, self.eps_lin = branch_map, eps_lin
        self.branch_maps = (branch_map,)

    @property
    def evaluations(self) -> int:
        return self.map.evaluations

    def __call__(self, z: np.ndarray) -> np.ndarray:
        g, _, eps = self.map.evaluate(z[:-1], z[-1])
        return np.append(g, (eps - self.eps_lin) / self.eps_lin)

    def pack(self, x: np.ndarray, alpha: float) -> np.ndarray:
        return np.append(x[self.map.free], alpha)

    def states(self, z: np.ndarray) -> dict[str, np.ndarray]:
        return {self.map.branch: self.map.full(z[:-1])}


class BranchAtOrder:
    """The branch's fixed point with its order parameter held at a given value t (theta on the
    semantic branch, m on the positional one) and alpha solved for instead: near a fold the
    branch is a smooth function alpha(t), and the fold (spinodal) is the extremum of alpha(t),
    where dG/dx is singular. The order parameter's own residual is divided by t, so that the
    system stays well posed as t -> 0 (a branch that ends by bifurcating from the trivial
    fixed point)."""

    kind = "spinodal"

    def __init__(self, branch_map, t: float):
        self.map, self.t = branch_map, t
        self.branch_maps = (branch_map,)
        self.slot = branch_map.order_slot
        self.t_min = 3 * branch_map.on_branch  # the smallest t its map evaluates

    @property
    def evaluations(self) -> int:
        return self.map.evaluations

    def _x(self, z: np.ndarray) -> np.ndarray:
        return np.insert(z[:-1], self.slot, self.t)

    def __call__(self, z: np.ndarray) -> np.ndarray:
        g = self.map.evaluate(self._x(z), z[-1])[0].copy()
        g[self.slot] /= abs(self.t)
        return g

    def pack(self, x: np.ndarray, alpha: float) -> np.ndarray:
        return np.append(np.delete(x[self.map.free], self.slot), alpha)

    def states(self, z: np.ndarray) -> dict[str, np.ndarray]:
        return {self.map.branch: self.map.full(self._x(z))}

    def state_jacobian(self, z: np.ndarray) -> np.ndarray:
        """dG/dx (all free components) at the fixed point z, by forward differences."""
        G = lambda x: self.map.evaluate(x, z[-1])[0]  # noqa: E731
        x = self._x(z)
        return fd_jacobian(G, x, G(x), rel=FOLD_STEP)
