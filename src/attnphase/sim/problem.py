"""Drawing a simulation's problem (docs/theory.md §1): positions, teacher, training and test sets,
start; and `SeedProblem`, the problem of one seed as GAMP and the landscape probe use it.

Every draw comes from the seed's own generator of its role (`attnphase.sim.data.generator`),
so `simulate`, GAMP and the landscape probe see the same numbers for the same seed.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Self

import numpy as np
import torch

from .config import DTYPES, SimConfig, pick_device
from .data import (
    cluster_means,
    encoded_positions,
    encoding_basis,
    generator,
    sample_labels,
    sample_tokens,
    targets,
)
from .measure import held_out_errors, sim_overlaps
from .risk import StructuredRisk


def _query_start(cfg: SimConfig, teacher: torch.Tensor, noise: torch.Tensor) -> torch.Tensor:
    """A (d, r) start of the named kind from N(0, 1) noise [B, d, r] (see SimConfig.init); with
    several heads r = H times the rank, the semantic start in every head."""
    Q0 = cfg.init_scale * noise
    r = cfg.params.rank
    if cfg.init == "semantic":  # every head's first columns along the teacher
        k = min(r, cfg.params.teacher_rank)
        for a in range(cfg.params.heads):
            Q0[:, :, a * r : a * r + k] = teacher[:, :, :k].clone()  # training never touches Q*
    elif cfg.init == "mixed":
        Q0[:, :, :1] = teacher[:, :, :1].clone()
    if cfg.init == "positional":
        Q0[:, :, 0] = cfg.init_m
    elif cfg.init == "mixed":  # several heads: the first column of head 2
        Q0[:, :, r if cfg.params.heads > 1 else 1] = cfg.init_m
    return Q0


def initial_weights(cfg: SimConfig, teacher: torch.Tensor, seeds, dtype, device) -> torch.Tensor:
    """The start of every seed as packed weights [B, d, width] (`Layout`; tied: Q0 [B, d, r]).
    cfg.init: semantic, positional, random, mixed or explicit. Each block's noise is drawn in
    turn from the seed's init generator (Q_Q first, as in the tied model): Q_K is the query's
    start, or a second draw for "random"; U = 0 and W = the next N(0, 1) draw."""
    B = len(seeds)
    if not isinstance(cfg.init, str):
        Q0 = torch.as_tensor(np.asarray(cfg.init, dtype=float), dtype=dtype, device=device)
        return Q0.expand(B, -1, -1).clone()
    gens = [generator(s, "init", device) for s in seeds]

    def draw(k: int) -> torch.Tensor:
        return torch.stack(
            [torch.randn(cfg.d, k, generator=g, dtype=dtype, device=device) for g in gens]
        )

    blocks = [_query_start(cfg, teacher, draw(cfg.params.rank * cfg.params.heads))]
    if cfg.params.untied:
        key_noise = draw(cfg.params.rank)
        blocks.append(cfg.init_scale * key_noise if cfg.init == "random" else blocks[0].clone())
    if cfg.value_rank:
        blocks += [torch.zeros(B, cfg.d, cfg.value_rank, dtype=dtype, device=device)]
        blocks += [draw(cfg.value_rank)]
    return torch.cat(blocks, dim=2) if len(blocks) > 1 else blocks[0]


def position_vectors(cfg: SimConfig, dtype, device) -> tuple[torch.Tensor, torch.Tensor]:
    """The positions (L x d) and the directions m is measured along: the columns of U
    (d x K) for encodings, p_1 for explicit positions (a d x 1 matrix)."""
    if cfg.positions is None:
        U = encoding_basis(cfg.d, cfg.params.K, dtype, device)
        return encoded_positions(cfg.params.encodings, cfg.d, dtype, device), U
    positions = torch.as_tensor(np.asarray(cfg.positions, dtype=float), dtype=dtype, device=device)
    if positions.shape != (cfg.L, cfg.d) or not torch.isfinite(positions).all():
        raise ValueError(f"positions must be a finite (L, d) = {(cfg.L, cfg.d)} matrix")
    return positions, positions[:1].T


def positional_target(cfg: SimConfig, dtype, device) -> torch.Tensor:
    """The positional target A of the configuration as a tensor."""
    return torch.as_tensor(cfg.params.A_array, dtype=dtype, device=device)


def mixture_means(cfg: SimConfig, seeds, dtype, device) -> torch.Tensor | None:
    """The cluster means [B, K, d] of every seed (each from its "clusters" generator), None
    for the tied model's Gaussian tokens (variant Tied or Untied)."""
    mixture = cfg.params.mixture
    if mixture is None:
        return None
    return torch.stack(
        [
            cluster_means(
                mixture.clusters,
                cfg.d,
                mixture.cluster_norm,
                generator(s, "clusters", device),
                dtype,
                device,
            )
            for s in seeds
        ]
    )


def draw_tokens(cfg: SimConfig, size: int, gens, label_gens, means, dtype, device) -> torch.Tensor:
    """`size` sentences per seed [B, size, L, d], without positions: sigma z from the seed's
    generator in `gens` (the tied model's draws, unchanged) plus, for mixtures (`means` not
    None), mu_{c_l} with labels drawn from the seed's generator in `label_gens`."""
    sigma = cfg.params.sigma
    x = torch.stack([sample_tokens(size, cfg.L, cfg.d, sigma, g, dtype, device) for g in gens])
    if means is not None:
        mixture = cfg.params.mixture
        assert mixture is not None  # means are drawn for mixtures only
        K, rho = mixture.clusters, mixture.label_correlation
        labels = torch.stack([sample_labels(size, cfg.L, K, rho, g, device) for g in label_gens])
        x += means[torch.arange(len(gens), device=device)[:, None, None], labels]
    return x


def draw_training_set(cfg: SimConfig, seeds, dtype, device):
    """Teacher Q* (B, d, t), training tokens x (B, n, L, d, without positions) and targets y
    (B, n, L, d) of every seed, each from that seed's own generators: the training data that
    `simulate` and `attnphase.gamp` see for a seed (mixture tokens for a `Mixture` variant)."""
    teacher = torch.stack(
        [
            torch.randn(
                cfg.d,
                cfg.params.teacher_rank,
                generator=generator(s, "teacher", device),
                dtype=dtype,
                device=device,
            )
            for s in seeds
        ]
    )
    x = draw_tokens(
        cfg,
        cfg.n,
        [generator(s, "train", device) for s in seeds],
        [generator(s, "train_labels", device) for s in seeds],
        mixture_means(cfg, seeds, dtype, device),
        dtype,
        device,
    )
    A = positional_target(cfg, dtype, device)
    return teacher, x, targets(x, teacher, cfg.params.omega, A, cfg.params.causal_target)


def held_out_set(
    cfg: SimConfig, teacher: torch.Tensor, seeds, A: torch.Tensor, dtype, device, chunk: int = 4096
) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """The n_test fresh test samples of every seed (tokens without positions, targets), in chunks
    of at most `chunk` samples: [B, size, L, d] each, from the seeds' "test" generators."""
    gens = [generator(s, "test", device) for s in seeds]
    label_gens = [generator(s, "test_labels", device) for s in seeds]
    means = mixture_means(cfg, seeds, dtype, device)
    done = 0
    while done < cfg.n_test:
        size = min(chunk, cfg.n_test - done)
        x = draw_tokens(cfg, size, gens, label_gens, means, dtype, device)
        yield x, targets(x, teacher, cfg.params.omega, A, cfg.params.causal_target)
        done += size


@dataclass(frozen=True)
class SeedProblem:
    """The problem `simulate(cfg, [seed])` draws for one seed, for tied weights (a batch axis of
    one is kept where `attnphase.sim` expects it): risk, the `StructuredRisk` of the tokens with
    their positions x~ = x + p; teacher Q* (1, d, t); positions (L, d); directions (d, K) along
    which M is measured; A the positional target; Q0 (d, r) the start of cfg.init.

    The per-sample form of docs/theory.md §8 is the risk's, without the batch axis: x_pos (n, L, d),
    K = x~ x~^T/d and Cm = y x~^T/d (n, L, L), c = |y|^2/(2d) (n,)."""

    cfg: SimConfig
    seed: int
    risk: StructuredRisk
    teacher: torch.Tensor
    positions: torch.Tensor
    directions: torch.Tensor
    A: torch.Tensor
    Q0: torch.Tensor

    @classmethod
    def draw(cls, cfg: SimConfig, seed: int) -> Self:
        """The problem of `cfg` and `seed`, in cfg's dtype on cfg's device."""
        dtype, device = DTYPES[cfg.dtype], pick_device(cfg.device)
        positions, directions = position_vectors(cfg, dtype, device)
        teacher, x, y = draw_training_set(cfg, [seed], dtype, device)
        x += positions  # in place: the tokens are needed only with their positions from here on
        return cls(
            cfg=cfg,
            seed=seed,
            risk=StructuredRisk.build(x, y, cfg.params.lam, cfg.layout),
            teacher=teacher,
            positions=positions,
            directions=directions,
            A=positional_target(cfg, dtype, device),
            Q0=initial_weights(cfg, teacher, [seed], dtype, device)[0],
        )

    @property
    def d(self) -> int:
        return self.cfg.d

    @property
    def n(self) -> int:
        return self.cfg.n

    @property
    def x_pos(self) -> torch.Tensor:
        return self.risk.x_pos[0]

    @property
    def K(self) -> torch.Tensor:
        return self.risk.K[0]

    @property
    def Cm(self) -> torch.Tensor:
        return self.risk.Cm[0]

    @property
    def c(self) -> torch.Tensor:
        return self.risk.c[0]

    def overlaps(self, Q: torch.Tensor) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q, M, theta) of weights Q (d, r) as `simulate` measures them: sigma^2 Q^T Q/d,
        U^T Q/sqrt(d), sigma^2 Q*^T Q/d."""
        q, m, theta = sim_overlaps(Q[None], self.teacher, self.directions, self.cfg.params.sigma)
        return q[0].cpu().numpy(), m[0].cpu().numpy(), theta[0].cpu().numpy()

    def teacher_overlap(self) -> np.ndarray:
        """rho_d = sigma^2 Q*^T Q*/d (t x t), the teacher field's variance on this data set."""
        Qs = self.teacher[0]
        return (self.cfg.params.sigma**2 * Qs.T @ Qs / self.d).cpu().numpy()

    def test_error(self, Q: torch.Tensor) -> float:
        """eps_g of weights Q (d, r) on this seed's test set (eq. 4), as `simulate` measures it."""
        chunks = held_out_set(self.cfg, self.teacher, [self.seed], self.A, Q.dtype, Q.device)
        err, _ = held_out_errors(self.cfg, chunks, Q[None], self.positions)
        return float(err[0])
