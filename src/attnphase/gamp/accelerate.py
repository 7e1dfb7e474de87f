"""Anderson mixing of GAMP's damped iteration in the tail of a run (docs/theory.md §8, §8.1).

Near its fixed point damped GAMP contracts geometrically, but slowly: with the default damping the
slowest mode shrinks by ~0.87-0.89 per iteration (175-200 iterations from the semantic start at
alpha 1.5). Anderson mixing (type II, memory m) treats the damped map x -> G(x) on the state
x = (Qh, F, Vhat) as a fixed-point problem: with the residuals f_k = G(x_k) - x_k and the
differences of the last m states and residuals, it takes
    x_{k+1} = G(x_k) - (dX + dF) gamma,  gamma = argmin |f_k - dF gamma|,
which on a linear map is GMRES on (I - G). Its fixed points are those of G: GAMP's.
"""

from __future__ import annotations

import torch

MEMORY = 10  # differences kept (d = 1000, alpha 2: 111, 87, 76, 72 iterations at 2, 5, 10, 20)
RIDGE = 1e-10  # relative Tikhonov term of the least-squares problem for gamma


class Anderson:
    """The mixing state: the last state and residual, and up to MEMORY differences."""

    def __init__(self, memory: int = MEMORY):
        self.memory = memory
        self.reset()

    def reset(self) -> None:
        """Forget the history (after a basin switch: the map jumped)."""
        self.x: torch.Tensor | None = None
        self.f: torch.Tensor | None = None
        self.dX: list[torch.Tensor] = []
        self.dF: list[torch.Tensor] = []

    def mix(self, x: torch.Tensor, gx: torch.Tensor) -> torch.Tensor:
        """The next state from the state x and its image G(x) (flat vectors)."""
        f = gx - x
        if self.x is not None and self.f is not None:
            self.dX.append(x - self.x)
            self.dF.append(f - self.f)
            del self.dX[: -self.memory], self.dF[: -self.memory]
        self.x, self.f = x, f
        if not self.dF:
            return gx
        dF = torch.stack(self.dF, 1)  # (N, k)
        dX = torch.stack(self.dX, 1)
        A = dF.T @ dF
        scale = float(A.diagonal().max())
        if not 0.0 < scale < float("inf"):  # no change left (or none finite): the plain step
            return gx
        A = A + RIDGE * scale * torch.eye(A.shape[0], dtype=A.dtype, device=A.device)
        gamma = torch.linalg.solve(A, dF.T @ f)  # normal equations of argmin |f - dF gamma|
        return gx - (dX + dF) @ gamma
