"""The data set of one GAMP run: the very problem `attnphase.sim.simulate` draws for the same
configuration and seed (`attnphase.sim.SeedProblem`: teacher, training tokens, positions,
start), in the per-sample form of docs/theory.md §8 (K = x~ x~^T/d, Cm = y x~^T/d, c = |y|^2/(2d)).

Memory (Gaussian tokens): the tokens are drawn chunk by chunk straight into the one (n, L, d)
array GAMP keeps, and each chunk's targets y live only while its Cm and c are formed, so the
peak is the data's own n L d numbers plus a chunk (the simulations' draw holds x, y and y^2 at
once, three times the data). torch's CPU normal draw fills blocks of 16 numbers in stream order,
so chunks of a multiple of 16 numbers give the same numbers as one draw (checked in
tests/gamp/test_speed.py against `SeedProblem.draw`).
"""

from __future__ import annotations

import torch

from ..params import DEFAULT_N_TEST, ModelParams
from ..sim import SeedProblem, SimConfig
from ..sim.config import DTYPES, pick_device
from ..sim.data import generator, targets
from ..sim.measure import held_out_errors
from ..sim.problem import (
    held_out_set,
    initial_weights,
    position_vectors,
    positional_target,
)
from ..sim.risk import StructuredRisk

CHUNK_BYTES = 64 * 2**20  # tokens drawn (and test samples measured) per chunk, at most


def chunk_samples(L: int, d: int, itemsize: int) -> int:
    """Samples per chunk: CHUNK_BYTES of tokens, a multiple of 16 samples (>= 16)."""
    return max(16, (CHUNK_BYTES // (L * d * itemsize)) // 16 * 16)


class Problem(SeedProblem):
    """A `SeedProblem` with GAMP's s2 = mean_l |x~_l|^2/d (docs/theory.md §8 step 6)."""

    @property
    def s2(self) -> float:
        return float(self.K.diagonal(dim1=-2, dim2=-1).mean())

    def test_error(self, Q: torch.Tensor) -> float:
        """eps_g of weights Q (d, r) on this seed's test set (eq. 4), as `simulate` measures it,
        in chunks of `chunk_samples` (the same draws; only the order of the sum differs)."""
        size = chunk_samples(self.cfg.L, self.d, Q.element_size())
        chunks = held_out_set(
            self.cfg, self.teacher, [self.seed], self.A, Q.dtype, Q.device, chunk=size
        )
        err, _ = held_out_errors(self.cfg, chunks, Q[None], self.positions)
        return float(err[0])

    @classmethod
    def draw_lean(cls, cfg: SimConfig, seed: int) -> Problem:
        """`SeedProblem.draw(cfg, seed)` for Gaussian tokens, holding only x~ (n, L, d) and one
        chunk's targets at a time (module docstring)."""
        dtype, device = DTYPES[cfg.dtype], pick_device(cfg.device)
        n, L, d, p = cfg.n, cfg.L, cfg.d, cfg.params
        positions, directions = position_vectors(cfg, dtype, device)
        gen_t = generator(seed, "teacher", device)
        teacher = torch.randn(d, p.teacher_rank, generator=gen_t, dtype=dtype, device=device)[None]
        A = positional_target(cfg, dtype, device)
        gen = generator(seed, "train", device)
        x_pos = torch.empty(n, L, d, dtype=dtype, device=device)
        K = torch.empty(n, L, L, dtype=dtype, device=device)
        Cm = torch.empty(n, L, L, dtype=dtype, device=device)
        c = torch.empty(n, dtype=dtype, device=device)
        step = chunk_samples(L, d, x_pos.element_size())
        for a in range(0, n, step):
            x = x_pos[a : a + step]
            torch.randn(x.shape, generator=gen, dtype=dtype, device=device, out=x)
            x.mul_(p.sigma)  # sigma z (`attnphase.sim.data.sample_tokens`)
            # y from the tokens without positions
            y = targets(x[None], teacher, p.omega, A, p.causal_target)[0]
            x += positions
            K[a : a + step] = x @ x.transpose(-1, -2) / d
            Cm[a : a + step] = y @ x.transpose(-1, -2) / d
            c[a : a + step] = y.pow(2).sum((-1, -2)) / (2 * d)
            del y
        return cls(
            cfg=cfg,
            seed=seed,
            risk=StructuredRisk(
                x_pos=x_pos[None], K=K[None], Cm=Cm[None], c=c[None], lam=p.lam, layout=cfg.layout
            ),
            teacher=teacher,
            positions=positions,
            directions=directions,
            A=A,
            Q0=initial_weights(cfg, teacher, [seed], dtype, device)[0],
        )


def build_problem(
    params: ModelParams,
    d: int,
    alpha: float,
    init,
    seed: int,
    device: torch.device,
    n_test: int = DEFAULT_N_TEST,
) -> Problem:
    """The training set and start of `simulate(SimConfig(params=params, d=d, alpha=alpha,
    init=init, n_test=n_test), seeds=[seed])`, in float64 on `device` (Gaussian tokens on the
    CPU: drawn in chunks, `Problem.draw_lean`)."""
    cfg = SimConfig(params=params, d=d, alpha=alpha, init=init, n_test=n_test, device=str(device))
    if params.mixture is None and pick_device(cfg.device).type == "cpu":
        return Problem.draw_lean(cfg, seed)
    return Problem.draw(cfg, seed)
