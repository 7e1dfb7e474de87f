"""The defining systems of the transitions (docs/theory.md §5), as residuals of a vector z of
unknowns at fixed model parameters, for every integration method.

A branch's state is the free components of its overlaps (the pinned ones stay at zero); its
residual is G(x; alpha) = SE(x; alpha) - x on them (`theory.branch_maps`).
  alpha_c:   z = (x_semantic, x_positional, alpha),  [G_s, G_p, (R_s - R_p)/R_p] = 0
  alpha_l:   z = (x_branch, alpha),                 [G_b, (eps_g - eps_lin)/eps_lin] = 0
  spinodal:  the extremum over t of alpha(t), where z = (x_branch without t, alpha) solves
             G_b = 0 with the order parameter (theta or m) held at t  (a fold: dG/dx singular)
R = -Phi is the training loss (eq. 14), eps_g the test error (eq. 10).

The systems only use the interface of `theory.branch_maps.CachedBranchMap`, so any method's
branch map fits them.
"""

from __future__ import annotations

import numpy as np

from .newton import fd_jacobian

FOLD_STEP = 1e-5  # relative step of the inner finite differences of the fold's dG/dx


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
