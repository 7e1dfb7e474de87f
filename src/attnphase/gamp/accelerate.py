"""Anderson mixing of GAMP's damped iteration in the tail of a run (docs/theory.md §8, §8.1).

Near its fixed point damped GAMP contracts geometrically, but slowly: with the default damping the
slowest mode shrinks by ~0.87-0.89 per iteration (175-200 iterations from the semantic start at
alpha 1.5). Anderson mixing (type II, memory m) treats the damped map x -> G(x) on the state
x = (Qh, F, Vhat) as a fixed-point problem, with the state evolution's mixing
(`theory.iterate.anderson_candidate`, undamped: x_{k+1} = G(x_k) - (dX + dF) gamma); on a linear
map it is GMRES on (I - G), and its fixed points are those of G: GAMP's.
"""

from __future__ import annotations

import numpy as np
import torch

from ..theory.iterate import anderson_candidate

MEMORY = 10  # differences kept (d = 1000, alpha 2: 111, 87, 76, 72 iterations at 2, 5, 10, 20)


class Anderson:
    """The mixing state: up to MEMORY past states and their residuals."""

    def __init__(self, memory: int = MEMORY):
        self.memory = memory
        self.reset()

    def reset(self) -> None:
        """Forget the history (after a basin switch: the map jumped)."""
        self.xs: list[np.ndarray] = []
        self.fs: list[np.ndarray] = []

    def mix(self, x: torch.Tensor, gx: torch.Tensor) -> torch.Tensor:
        """The next state from the state x and its image G(x) (flat vectors)."""
        xn, gn = x.cpu().numpy(), gx.cpu().numpy()
        f = gn - xn
        if self.xs:
            y = anderson_candidate(xn, f, self.xs, self.fs, 1.0, np.ones_like(xn))
        else:
            y = gn
        self.xs.append(xn)
        self.fs.append(f)
        del self.xs[: -self.memory], self.fs[: -self.memory]
        if not np.all(np.isfinite(y)):  # no change left (or none finite): the plain step
            return gx
        return torch.from_numpy(y).to(dtype=x.dtype, device=x.device)
