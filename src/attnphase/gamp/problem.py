"""The data set of one GAMP run: the very problem `attnphase.sim.simulate` draws for the same
configuration and seed (`attnphase.sim.SeedProblem`: teacher, training tokens, positions,
start), in the per-sample form of docs/theory.md §8 (K = x~ x~^T/d, Cm = y x~^T/d, c = |y|^2/(2d)).
"""

from __future__ import annotations

import torch

from ..params import ModelParams
from ..sim import SeedProblem, SimConfig


class Problem(SeedProblem):
    """A `SeedProblem` with GAMP's s2 = mean_l |x~_l|^2/d (docs/theory.md §8 step 6)."""

    @property
    def s2(self) -> float:
        return float(self.K.diagonal(dim1=-2, dim2=-1).mean())


def build_problem(
    params: ModelParams,
    d: int,
    alpha: float,
    init,
    seed: int,
    device: torch.device,
    n_test: int = 10_000,
) -> Problem:
    """The training set and start of `simulate(SimConfig(params=params, d=d, alpha=alpha,
    init=init, n_test=n_test), seeds=[seed])`, in float64 on `device`."""
    cfg = SimConfig(params=params, d=d, alpha=alpha, init=init, n_test=n_test, device=str(device))
    return Problem.draw(cfg, seed)
