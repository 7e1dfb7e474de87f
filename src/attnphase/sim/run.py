"""One simulation point: draw the problem, train from a chosen start, measure (docs/theory.md §1);
the configuration is in `config`, the drawing in `problem`, the measurements in `measure`, the
record in `result`.

`simulate(config, seeds)` runs the same configuration for several seeds as one batch and
returns one `SimResult` per seed, with q, m, theta in the conventions of docs/theory.md §1 and §7:
q = sigma^2 Q^T Q/d, theta = sigma^2 Q*^T Q/d and, for positions given by encodings
p_l = sum_k C_lk u_k, m = M = U^T Q/sqrt(d) (K x r; = 1_d^T Q/d for K = 1); for explicit
positions, m = p_1^T Q/sqrt(d). The sign of Q is arbitrary (S(h) = S(-h)); overlaps are
reported as found.

Extensions (docs/theory.md §10; `Layout` packs the weights): variant `Untied()` trains Q_Q and Q_K
separately (q, m, theta are then those of (Q_Q + Q_K)/2, the tied Q when Q_Q = Q_K, and
q_query, m_query, ... those of each matrix); `value_rank=R` adds the value matrix
I + U W^T/d (U = 0 and W ~ N(0, 1) entries at the start, so training starts at the tied model;
value_norm = ||U W^T||_F/d); for r >= 2 the per-column overlaps are reported in the principal
frame (the eigenvectors of q: the columns of Q are defined only up to a rotation), sorted by
teacher overlap. Variant `Mixture(clusters=K, ...)` (K >= 2) draws Gaussian-mixture tokens
x_l = mu_{c_l} + sigma z_l (z_l ~ N(0, I_d); means from `cluster_means`, labels a Markov chain
over positions with neighbour correlation `label_correlation`, `sample_labels`); the positions
are added to x and the teacher sees x as in the tied model, and cluster_m = mu_k^T Q/sqrt(d)
is reported per cluster.

A `SimConfig` and a theory point are described by the same `ModelParams`:
`SimConfig(params=params, d=..., alpha=...)`; the result tables report the model flat
(omega, sigma, lam, untied, clusters, label_correlation, cluster_norm).
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import torch

from ..params import check_int, check_values
from .config import DTYPES, INITS, SimConfig, pick_device
from .data import ROLES
from .linear import fit_linear
from .measure import extension_overlaps, held_out_errors
from .problem import (
    draw_training_set,
    held_out_set,
    initial_weights,
    mixture_means,
    position_vectors,
    positional_target,
)
from .result import METRICS, SimResult, mixture_fields
from .risk import StructuredRisk
from .train import Diverged, minimise


class SimulationWarning(RuntimeWarning):
    """A run diverged or did not converge; the result says so."""


def simulate(cfg: SimConfig, seeds=(0,)) -> list[SimResult]:
    """Run `cfg` for each seed (teacher, data, test set and start all drawn from that seed),
    as one batch; returns one result per seed. A diverging run is reported with
    status "diverged", converged=False and NaN metrics but its linear baseline (and a
    SimulationWarning).

    Examples
    --------
    L-BFGS from the semantic start at d = 200 (about a second), two seeds:

    >>> from attnphase import SimConfig, simulate
    >>> runs = simulate(SimConfig(d=200, alpha=1.5, init="semantic", n_test=1000), seeds=[0, 1])
    >>> [(r.seed, r.converged) for r in runs]
    [(0, True), (1, True)]
    >>> all(0.0 < r.test_error < 0.01 for r in runs)
    True
    """
    seeds = check_values("seeds", seeds, lambda s: check_int("seeds", s, minimum=0))
    cfg.check_seeds(len(seeds))
    t0 = time.perf_counter()
    dtype, device = DTYPES[cfg.dtype], pick_device(cfg.device)
    A = positional_target(cfg, dtype, device)
    positions, directions = position_vectors(cfg, dtype, device)
    teacher, x, y = draw_training_set(cfg, seeds, dtype, device)
    p = cfg.params
    lam_lin = p.lam if cfg.lam_linear is None else cfg.lam_linear
    Bmat = fit_linear(x, y, lam_lin)
    risk = StructuredRisk.build(x + positions, y, p.lam, cfg.layout)
    del y
    Q0 = initial_weights(cfg, teacher, seeds, dtype, device)
    base: dict[str, Any] = dict(  # the SimResult fields every seed shares
        d=cfg.d,
        n=cfg.n,
        alpha=cfg.alpha,
        omega=p.omega,
        sigma=p.sigma,
        lam=p.lam,
        init=cfg.init_name,
        optimizer=cfg.optimizer,
        untied=p.untied,
        value_rank=cfg.value_rank,
        **mixture_fields(p),
        mask=p.mask,
        target_mask=p.target_mask,
        heads=p.heads,
        rotary=list(p.rotary) or None,
    )
    try:
        rep = minimise(risk, Q0, cfg.optimizer, cfg.lr, cfg.steps, cfg.gtol)
    except Diverged as err:
        warnings.warn(
            f"{cfg.init_name} start, alpha={cfg.alpha}: {err}", SimulationWarning, stacklevel=2
        )
        chunks = held_out_set(cfg, teacher, seeds, A, dtype, device)
        _, err_lin = held_out_errors(cfg, chunks, Q0, positions, Bmat)  # the baseline's alone
        failed: dict[str, Any] = dict.fromkeys(METRICS, float("nan")) | {
            "converged": False,
            "steps": 0,
            "batch_seconds": time.perf_counter() - t0,
            "batch_size": len(seeds),
            "status": f"diverged: {err}",
        }
        return [
            SimResult(**base, seed=s, linear_test_error=err_lin[b], **failed)
            for b, s in enumerate(seeds)
        ]
    with torch.no_grad():
        R = risk(rep.Q)
    means = mixture_means(cfg, seeds, dtype, device)
    overlaps = extension_overlaps(cfg, rep.Q, teacher, directions, means)
    chunks = held_out_set(cfg, teacher, seeds, A, dtype, device)
    err_att, err_lin = held_out_errors(cfg, chunks, rep.Q, positions, Bmat)
    secs = time.perf_counter() - t0
    out = [
        SimResult(
            **base,
            seed=s,
            test_error=err_att[b],
            train_loss=float(R[b]) / cfg.d,
            train_loss_sum=float(R[b]),
            **overlaps[b],
            linear_test_error=err_lin[b],
            grad_rms=rep.grad_rms[b],
            converged=rep.converged[b],
            steps=rep.steps[b],
            batch_seconds=secs,
            batch_size=len(seeds),
            status="converged" if rep.converged[b] else "not converged (gradient above gtol)",
        )
        for b, s in enumerate(seeds)
    ]
    if not all(rep.converged):
        warnings.warn(
            f"{cfg.init_name} start, alpha={cfg.alpha}: some runs did not converge",
            SimulationWarning,
            stacklevel=2,
        )
    return out


__all__ = [
    "INITS",
    "ROLES",
    "SimConfig",
    "SimResult",
    "SimulationWarning",
    "pick_device",
    "simulate",
]
