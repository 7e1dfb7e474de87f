"""What a simulation measures (docs/theory.md §1, §7): the overlaps of the trained weights, with the
extensions' per-matrix, per-column and per-cluster overlaps (§10), and the test errors."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import overload

import torch

from .config import SimConfig
from .models import linear_output, student_output


def sim_overlaps(Q: torch.Tensor, teacher: torch.Tensor, directions: torch.Tensor, sigma: float):
    """q = sigma^2 Q^T Q/d, m = directions^T Q/sqrt(d), theta = sigma^2 Q*^T Q/d, batched."""
    d = Q.shape[1]
    q = sigma**2 * Q.transpose(1, 2) @ Q / d
    m = torch.einsum("dk,bdr->bkr", directions, Q) / math.sqrt(d)
    theta = sigma**2 * teacher.transpose(1, 2) @ Q / d
    return q, m, theta


def scalar_or_list(x: torch.Tensor) -> float | list:
    """A number for a one-element overlap (r = t = K = 1), nested lists otherwise."""
    return float(x.reshape(())) if x.numel() == 1 else x.tolist()


def principal_columns(q: torch.Tensor, m: torch.Tensor, theta: torch.Tensor) -> list[dict]:
    """Per-column overlaps of one (unbatched) Q in its principal frame: q = V diag(q_k) V^T,
    column k of Q V has q_k, m = M v_k and theta = Theta v_k (sign chosen so that the first
    teacher overlap is >= 0), sorted by |theta_k| descending. Q -> Q O leaves the tied model
    unchanged, so only such a frame makes "per column" meaningful."""
    evals, V = torch.linalg.eigh(q)
    th = theta @ V  # [t, r]
    sign = torch.where(th[0] < 0, -1.0, 1.0).to(q.dtype)
    V, th = V * sign, th * sign
    mm = m @ V  # [K, r], or [r] for explicit positions
    order = torch.argsort(th.norm(dim=0), descending=True, stable=True).tolist()

    def one(x: torch.Tensor) -> float | list:
        return float(x) if x.numel() == 1 else x.tolist()

    return [{"q": float(evals[k]), "m": one(mm[..., k]), "theta": one(th[:, k])} for k in order]


def extension_overlaps(
    cfg: SimConfig, P: torch.Tensor, teacher, directions, means=None
) -> list[dict]:
    """Per seed: q, m, theta (of (Q_Q + Q_K)/2 when untied) and the extension fields of
    SimResult (per-matrix overlaps, value_norm, per-column overlaps, and cluster_m when
    `means` [B, K, d] are given)."""
    QQ, QK, U, W = cfg.layout.split(P)
    untied = cfg.params.untied
    Q = 0.5 * (QQ + QK) if untied else QQ

    def over(M):
        q, m, theta = sim_overlaps(M, teacher, directions, cfg.params.sigma)
        if cfg.positions is not None:
            m = m[:, 0, :]  # explicit positions: m = p_1^T Q/sqrt(d), r numbers
        return q, m, theta

    q, m, theta = over(Q)
    parts = [{"q": q, "m": m, "theta": theta}]
    if means is not None:
        cm = torch.einsum("bkd,bdr->bkr", means, Q) / math.sqrt(cfg.d)
        cm = cm[..., 0] if cfg.params.rank == 1 else cm  # K >= 2: always a list
        parts.append({"cluster_m": cm})
    if untied:
        for name, M in (("query", QQ), ("key", QK)):
            keys = (f"q_{name}", f"m_{name}", f"theta_{name}")
            parts.append(dict(zip(keys, over(M), strict=True)))
    out = []
    for b in range(P.shape[0]):
        rec = {k: scalar_or_list(v[b]) for part in parts for k, v in part.items()}
        if U is not None:
            rec["value_norm"] = float((U[b] @ W[b].T).norm()) / cfg.d
        if cfg.params.rank >= 2 and not untied and cfg.params.heads == 1:
            cols = principal_columns(q[b], m[b], theta[b])
            for key in ("q", "m", "theta"):
                rec[f"column_{key}"] = [c[key] for c in cols]
        out.append(rec)
    return out


@overload
def held_out_errors(
    cfg: SimConfig,
    chunks: Iterable[tuple[torch.Tensor, torch.Tensor]],
    Q: torch.Tensor,
    positions: torch.Tensor,
    Bmat: torch.Tensor,
) -> tuple[list[float], list[float]]: ...


@overload
def held_out_errors(
    cfg: SimConfig,
    chunks: Iterable[tuple[torch.Tensor, torch.Tensor]],
    Q: torch.Tensor,
    positions: torch.Tensor,
    Bmat: None = ...,
) -> tuple[list[float], None]: ...


def held_out_errors(
    cfg: SimConfig,
    chunks: Iterable[tuple[torch.Tensor, torch.Tensor]],
    Q: torch.Tensor,
    positions: torch.Tensor,
    Bmat: torch.Tensor | None = None,
) -> tuple[list[float], list[float] | None]:
    """eps_g (eq. 4) per seed of the attention model (Q: packed weights of cfg.layout, [B, d,
    width]) and, unless Bmat is None, of the baseline, over the test chunks (tokens without
    positions, targets) of `attnphase.sim.problem.held_out_set`."""
    err_att = Q.new_zeros(Q.shape[0])
    err_lin = Q.new_zeros(Q.shape[0])
    for x, y in chunks:
        err_att += (y - student_output(x + positions, Q, cfg.layout)).pow(2).sum(dim=(1, 2, 3))
        if Bmat is not None:
            err_lin += (y - linear_output(x, Bmat)).pow(2).sum(dim=(1, 2, 3))
    scale = 2 * cfg.d * cfg.n_test
    return (err_att / scale).tolist(), (err_lin / scale).tolist() if Bmat is not None else None
