"""The data set of one GAMP run: the very problem `attnphase.sim.simulate` draws for the same
configuration and seed (teacher, training tokens, positions, start), in the per-sample form
of THEORY.md §8 (K = x~ x~^T/d, Cm = y x~^T/d, c = |y|^2/(2d)).

The draws reuse the simulation's generators and helpers role by role, so a GAMP run and a
simulation with the same seed see the same numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from ..params import ModelParams
from ..sim.risk import StructuredRisk
from ..sim.run import (
    DTYPES,
    SimConfig,
    draw_training_set,
    held_out_errors,
    initial_weights,
    position_vectors,
    sim_overlaps,
    target_matrix,
)


@dataclass(frozen=True)
class Problem:
    """One training set in per-sample form (a batch axis of one is kept where `attnphase.sim`
    expects it). x_pos: (n, L, d) tokens plus positions; K, Cm: (n, L, L); c: (n,);
    s2 = mean_l |x~_l|^2/d (THEORY.md §8 step 6); teacher (1, d, t); positions (L, d);
    directions (d, K) along which M is measured; Q0 (d, r) the start; risk the
    `StructuredRisk` of the same data (for L-BFGS and checks)."""

    cfg: SimConfig
    seed: int
    x_pos: torch.Tensor
    K: torch.Tensor
    Cm: torch.Tensor
    c: torch.Tensor
    s2: float
    teacher: torch.Tensor
    positions: torch.Tensor
    directions: torch.Tensor
    Q0: torch.Tensor
    risk: StructuredRisk

    @property
    def d(self) -> int:
        return self.cfg.d

    @property
    def n(self) -> int:
        return self.cfg.n

    def overlaps(self, Q: torch.Tensor) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q, M, theta) of an estimate Q (d, r): sigma^2 Q^T Q/d, U^T Q/sqrt(d),
        sigma^2 Q*^T Q/d."""
        q, m, theta = sim_overlaps(Q[None], self.teacher, self.directions, self.cfg.params.sigma)
        return q[0].cpu().numpy(), m[0].cpu().numpy(), theta[0].cpu().numpy()

    def teacher_overlap(self) -> np.ndarray:
        """rho_d = sigma^2 Q*^T Q*/d (t x t), the teacher field's variance on this data set."""
        Qs = self.teacher[0]
        return (self.cfg.params.sigma**2 * Qs.T @ Qs / self.d).cpu().numpy()

    def test_error(self, Q: torch.Tensor) -> float:
        """eps_g on the simulation's fresh test set of this seed (eq. 4), as `simulate` measures
        it."""
        A = target_matrix(self.cfg, Q.dtype, Q.device)
        err, _ = held_out_errors(
            self.cfg, self.teacher, Q[None], None, [self.seed], self.positions, A, Q.dtype, Q.device
        )
        return float(err[0])


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
    dtype = DTYPES[cfg.dtype]
    positions, directions = position_vectors(cfg, dtype, device)
    teacher, x, y = draw_training_set(cfg, [seed], dtype, device)
    x = x[0]
    x += positions  # in place: the tokens are needed only with their positions from here on
    risk = StructuredRisk.build(x[None], y, cfg.params.lam)
    c = y[0].pow(2).sum((-1, -2)) / (2 * d)  # c_mu = |y_mu|^2/(2d)
    del y
    K = risk.gram[0]  # K_mu = x~ x~^T/d
    return Problem(
        cfg=cfg,
        seed=seed,
        x_pos=x,
        K=K,
        Cm=risk.cross[0],  # Cm_mu = y x~^T/d
        c=c,
        s2=float(K.diagonal(dim1=-2, dim2=-1).mean()),  # s2 = mean_l |x~_l|^2/d (§8 step 6)
        teacher=teacher,
        positions=positions,
        directions=directions,
        Q0=initial_weights(cfg, teacher, [seed], dtype, device)[0],
        risk=risk,
    )


def fields(x_pos: torch.Tensor, Q: torch.Tensor) -> torch.Tensor:
    """h = x~ Q/sqrt(d), (n, L, r)."""
    n, L, d = x_pos.shape
    return (x_pos.reshape(n * L, d) @ Q).reshape(n, L, -1) / math.sqrt(d)


def back_project(x_pos: torch.Tensor, F: torch.Tensor) -> torch.Tensor:
    """sum_{mu,l} x~_{mu,l}^T f_{mu,l}^T/sqrt(d), (d, r). Computed as (F^T X)^T: one pass over
    the data (an einsum, or X^T F with r > 1, is 10-30x slower on the CPU)."""
    n, L, d = x_pos.shape
    return (F.reshape(n * L, -1).T @ x_pos.reshape(n * L, d)).T / math.sqrt(d)
