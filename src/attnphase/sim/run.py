"""One simulation point: draw the problem, train from a chosen start, measure (THEORY.md §1).

`simulate(config, seeds)` runs the same configuration for several seeds as one batch and
returns one `SimResult` per seed, with q, m, theta in the conventions of THEORY.md §1 and §7:
q = sigma^2 Q^T Q/d, theta = sigma^2 Q*^T Q/d and, for positions given by encodings
p_l = sum_k C_lk u_k, m = M = U^T Q/sqrt(d) (K x r; = 1_d^T Q/d for K = 1); for explicit
positions, m = p_1^T Q/sqrt(d). The sign of Q is arbitrary (S(h) = S(-h)); overlaps are
reported as found.

Extensions (THEORY.md §10; `Layout` packs the weights): variant `Untied()` trains Q_Q and Q_K
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

import math
import time
import warnings
from dataclasses import asdict, dataclass, field

import numpy as np
import torch

from ..params import (
    Mixture,
    ModelParams,
    check_finite,
    check_int,
    check_nonnegative,
    check_positive,
)
from .data import (
    ROLES,
    cluster_means,
    encoded_positions,
    encoding_basis,
    generator,
    sample_labels,
    sample_tokens,
    targets,
)
from .linear import fit_linear
from .models import Layout, linear_output, student_output
from .risk import StructuredRisk
from .train import OPTIMIZERS, Diverged, minimise

INITS = ("semantic", "positional", "random", "mixed")
DTYPES = {"float64": torch.float64, "float32": torch.float32}


class SimulationWarning(RuntimeWarning):
    """A run diverged or did not converge; the result says so."""


def mixture_fields(params: ModelParams) -> dict:
    """clusters, label_correlation and cluster_norm as the results and tables report them:
    the `Mixture`'s, or 1, 0.0 and 1.0 (its defaults) for Gaussian tokens (Tied, Untied)."""
    mixture = params.mixture
    if mixture is None:
        off = Mixture()
        return {
            "clusters": 1,
            "label_correlation": off.label_correlation,
            "cluster_norm": off.cluster_norm,
        }
    return {
        "clusters": mixture.clusters,
        "label_correlation": mixture.label_correlation,
        "cluster_norm": mixture.cluster_norm,
    }


def pick_device(device: str = "auto") -> torch.device:
    """CUDA when available (for "auto"), CPU otherwise."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


@dataclass(frozen=True)
class SimConfig:
    """A finite-d experiment (THEORY.md §1) of the model `params` (a `ModelParams`: omega,
    sigma, lam, the positional target A, which fixes L, student rank r = `params.rank`, teacher
    rank t = `params.teacher_rank`, the encodings and the variant), at dimension d with
    n = round(alpha d) training samples. The model is validated by ModelParams alone (so L >= 2:
    A is at least 2 x 2); SimConfig checks only what the finite-d experiment adds (d, alpha,
    n >= 1, K <= d, clusters <= d, the start, the optimizer, ...).

    init: "semantic" (Q = Q*), "positional" (Q = init_m 1_d, so m = init_m), "random"
    (N(0, init_scale^2) entries), "mixed" (r >= 2: column 1 = Q*'s first column, column 2
    positional, the others random), or a given (d, width) array of packed weights (width = r
    for the tied model, see `Layout`). Columns a start does not set are random. With r > t,
    "semantic" sets the first t columns (Q*) and "positional" the first; the tied model depends
    on Q only through Q Q^T, so these are the starts with all columns semantic (positional)
    up to a factor sqrt(r) in the start's scale.
    variant `Untied()`: separate query and key matrices, both started at the same start
    ("random": two independent draws). value_rank: rank of the trainable value correction
    U W^T/d (0: none). lam_linear: the baseline's own ridge (None: params.lam).
    The positions are `params.encodings`, the coefficients C (L x K) of p_l = sum_k C_lk u_k
    with the directions of `attnphase.sim.encoding_basis` (u_1 = 1_d/sqrt(d); default
    `default_encodings(L)`, c_l from +1 to -1, K = 1), unless an explicit L x d matrix
    `positions` is given: then they replace the encodings, and params.encodings is ignored.
    variant `Mixture(clusters, label_correlation, cluster_norm)` (clusters K >= 2) gives
    Gaussian-mixture tokens x_l = mu_{c_l} + sigma z_l (THEORY.md §10): K centred means of norm
    cluster_norm in random directions (`cluster_means`, from the seed's "clusters" generator)
    and labels c_l a Markov chain over positions whose neighbours have (one-hot Pearson)
    correlation label_correlation in [0, 1] (`sample_labels`). `Tied()` and `Untied()` use
    the tied model's Gaussian data, the very same numbers (reported as clusters = 1 with
    label_correlation 0 and cluster_norm 1).
    """

    params: ModelParams = field(default_factory=ModelParams)
    d: int = 1000
    alpha: float = 1.0
    init: object = "semantic"
    init_m: float = 0.2
    init_scale: float = 0.01
    optimizer: str = "lbfgs"
    lr: float | None = None
    steps: int | None = None
    gtol: float = 1e-8
    lam_linear: float | None = None
    n_test: int = 10_000
    dtype: str = "float64"
    device: str = "auto"
    positions: object = field(default=None, repr=False)
    value_rank: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.params, ModelParams):
            raise ValueError(f"params must be a ModelParams, got {self.params!r}")
        check_int("d", self.d)
        check_positive("alpha", self.alpha)
        if self.n < 1:
            raise ValueError(f"n = round(alpha d) must be >= 1, got alpha={self.alpha}, d={self.d}")
        if self.lam_linear is not None:
            check_nonnegative("lam_linear", self.lam_linear)
        if self.positions is None and self.params.K > self.d:
            raise ValueError(
                f"encodings: K = {self.params.K} directions need d >= K, got d={self.d}"
            )
        check_int("n_test", self.n_test)
        check_int("value_rank", self.value_rank, minimum=0)
        mixture = self.params.mixture
        if mixture is not None and mixture.clusters > self.d:
            raise ValueError(
                f"clusters: K = {mixture.clusters} cluster means need d >= K, got d={self.d}"
            )
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {self.optimizer!r}")
        if self.lr is not None:
            check_positive("lr", self.lr)
        if self.steps is not None:
            check_int("steps", self.steps)
        if self.dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {tuple(DTYPES)}, got {self.dtype!r}")
        if isinstance(self.init, str):
            if self.init not in INITS:
                raise ValueError(
                    f"init must be one of {INITS} or a (d, r) matrix, got {self.init!r}"
                )
            if self.init == "mixed" and self.params.rank < 2:
                raise ValueError(
                    f"init: the mixed start (one semantic, one positional column) needs rank "
                    f"r >= 2, got r = {self.params.rank}"
                )
        else:
            Q0 = np.asarray(self.init, dtype=float)
            shape = (self.d, self.layout.width)
            if Q0.shape != shape:
                raise ValueError(
                    f"init matrix must have shape (d, width) = {shape} (packed weights), "
                    f"got {Q0.shape}"
                )
            if not np.isfinite(Q0).all():
                raise ValueError("init matrix must be finite (found NaN or inf)")
        check_finite("init_m", self.init_m)
        check_positive("init_scale", self.init_scale)
        check_positive("gtol", self.gtol)
        if self.device != "auto":
            try:
                torch.device(self.device)
            except (RuntimeError, TypeError):
                raise ValueError(
                    f"device must be 'auto' or a torch device name, got {self.device!r}"
                ) from None

    @property
    def n(self) -> int:
        return int(round(self.alpha * self.d))

    @property
    def L(self) -> int:
        return self.params.L

    @property
    def K(self) -> int | None:
        """Number of encoding directions (None for explicit positions)."""
        return None if self.positions is not None else self.params.K

    @property
    def layout(self) -> Layout:
        """How the trained weights are packed (tied: just Q)."""
        return Layout(self.params.rank, self.params.variant, int(self.value_rank))

    @property
    def init_name(self) -> str:
        return self.init if isinstance(self.init, str) else "given"


@dataclass(frozen=True)
class SimResult:
    """Metrics of one run. test_error = eps_g on the test set (eq. 4); train_loss = R(Q)/d;
    train_loss_sum = R(Q); linear_test_error = eps_g of the exact ridge baseline. For
    r = t = K = 1 q, m, theta are numbers; otherwise nested lists (q r x r, m = M K x r,
    theta t x r; with explicit positions m = p_1^T Q/sqrt(d) is r numbers), as in the theory.
    batch_seconds: wall time of the whole `simulate` call that produced this result (data,
    training and test of all `batch_size` seeds, run together), so it is the same for every
    seed of a batch; a per-seed time is not measured (GD and Adam train the seeds jointly).
    Extensions (None when they do not apply): q_query, m_query, theta_query and q_key, ...
    of Q_Q and Q_K (untied; q, m, theta are those of (Q_Q + Q_K)/2); value_norm =
    ||U W^T||_F/d (value matrix); column_q, column_m, column_theta (r >= 2, tied query/key):
    per column of Q in its principal frame (eigenvectors of q, each column's sign making its
    theta >= 0), sorted by teacher overlap |theta| descending: q of the column, its m (one
    number per encoding direction, a number for K = 1) and theta (a number for t = 1);
    cluster_m (clusters >= 2): mu_k^T Q/sqrt(d) for each cluster mean (of (Q_Q + Q_K)/2 when
    untied), K numbers for r = 1, K x r lists otherwise."""

    d: int
    n: int
    alpha: float
    omega: float
    sigma: float
    lam: float
    init: str
    seed: int
    optimizer: str
    test_error: float
    train_loss: float
    train_loss_sum: float
    q: object
    m: object
    theta: object
    linear_test_error: float
    converged: bool
    steps: int
    grad_rms: float
    batch_seconds: float
    batch_size: int
    status: str
    untied: bool = False
    value_rank: int = 0
    q_query: object = None
    m_query: object = None
    theta_query: object = None
    q_key: object = None
    m_key: object = None
    theta_key: object = None
    value_norm: float | None = None
    column_q: list | None = None
    column_m: list | None = None
    column_theta: list | None = None
    clusters: int = 1
    label_correlation: float = 0.0
    cluster_norm: float = 1.0
    cluster_m: list | None = None

    def as_dict(self) -> dict:
        return asdict(self)


_METRICS = (
    "test_error",
    "train_loss",
    "train_loss_sum",
    "q",
    "m",
    "theta",
    "linear_test_error",
    "grad_rms",
)


def _query_start(cfg: SimConfig, teacher: torch.Tensor, noise: torch.Tensor) -> torch.Tensor:
    """A (d, r) start of the named kind from N(0, 1) noise [B, d, r] (see SimConfig.init)."""
    Q0 = cfg.init_scale * noise
    if cfg.init in ("semantic", "mixed"):
        k = 1 if cfg.init == "mixed" else min(cfg.params.rank, cfg.params.teacher_rank)
        Q0[:, :, :k] = teacher[:, :, :k].clone()  # a copy: training must never touch Q*
    if cfg.init == "positional":
        Q0[:, :, 0] = cfg.init_m
    elif cfg.init == "mixed":
        Q0[:, :, 1] = cfg.init_m
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

    blocks = [_query_start(cfg, teacher, draw(cfg.params.rank))]
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
        U = encoding_basis(cfg.d, cfg.K, dtype, device)
        return encoded_positions(cfg.params.encodings, cfg.d, dtype, device), U
    positions = torch.as_tensor(np.asarray(cfg.positions, dtype=float), dtype=dtype, device=device)
    if positions.shape != (cfg.L, cfg.d) or not torch.isfinite(positions).all():
        raise ValueError(f"positions must be a finite (L, d) = {(cfg.L, cfg.d)} matrix")
    return positions, positions[:1].T


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
        if cfg.params.rank >= 2 and not untied:
            cols = principal_columns(q[b], m[b], theta[b])
            for key in ("q", "m", "theta"):
                rec[f"column_{key}"] = [c[key] for c in cols]
        out.append(rec)
    return out


@torch.no_grad()
def target_matrix(cfg: SimConfig, dtype, device) -> torch.Tensor:
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
    return teacher, x, targets(x, teacher, cfg.params.omega, target_matrix(cfg, dtype, device))


def held_out_errors(cfg, teacher, Q, Bmat, seeds, positions, A, dtype, device, chunk=4096):
    """eps_g of the attention model (Q: packed weights of cfg.layout) and (unless Bmat is
    None) of the baseline on fresh test data, in chunks; the baseline's errors are None
    without Bmat."""
    gens = [generator(s, "test", device) for s in seeds]
    label_gens = [generator(s, "test_labels", device) for s in seeds]
    means = mixture_means(cfg, seeds, dtype, device)
    err_att = torch.zeros(len(seeds), dtype=dtype, device=device)
    err_lin = torch.zeros(len(seeds), dtype=dtype, device=device)
    done = 0
    while done < cfg.n_test:
        size = min(chunk, cfg.n_test - done)
        x = draw_tokens(cfg, size, gens, label_gens, means, dtype, device)
        y = targets(x, teacher, cfg.params.omega, A)
        err_att += (y - student_output(x + positions, Q, cfg.layout)).pow(2).sum(dim=(1, 2, 3))
        if Bmat is not None:
            err_lin += (y - linear_output(x, Bmat)).pow(2).sum(dim=(1, 2, 3))
        done += size
    scale = 2 * cfg.d * cfg.n_test
    return (err_att / scale).tolist(), (err_lin / scale).tolist() if Bmat is not None else None


def simulate(cfg: SimConfig, seeds=(0,)) -> list[SimResult]:
    """Run `cfg` for each seed (teacher, data, test set and start all drawn from that seed),
    as one batch; returns one result per seed. A diverging run is reported with
    status "diverged", converged=False and NaN metrics (and a SimulationWarning)."""
    seeds = [check_int("seeds", s, minimum=0) for s in seeds]
    if not seeds:
        raise ValueError("seeds must not be empty")
    t0 = time.perf_counter()
    dtype, device = DTYPES[cfg.dtype], pick_device(cfg.device)
    A = target_matrix(cfg, dtype, device)
    positions, directions = position_vectors(cfg, dtype, device)
    teacher, x, y = draw_training_set(cfg, seeds, dtype, device)
    p = cfg.params
    lam_lin = p.lam if cfg.lam_linear is None else cfg.lam_linear
    Bmat = fit_linear(x, y, lam_lin)
    risk = StructuredRisk.build(x + positions, y, p.lam, cfg.layout)
    del y
    Q0 = initial_weights(cfg, teacher, seeds, dtype, device)
    base = dict(
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
    )
    try:
        rep = minimise(risk, Q0, cfg.optimizer, cfg.lr, cfg.steps, cfg.gtol)
    except Diverged as err:
        warnings.warn(
            f"{cfg.init_name} start, alpha={cfg.alpha}: {err}", SimulationWarning, stacklevel=2
        )
        nan = float("nan")
        failed = dict.fromkeys(_METRICS, nan) | {
            "converged": False,
            "steps": 0,
            "batch_seconds": time.perf_counter() - t0,
            "batch_size": len(seeds),
            "status": f"diverged: {err}",
        }
        return [SimResult(**base, seed=s, **failed) for s in seeds]
    with torch.no_grad():
        R = risk(rep.Q)
    means = mixture_means(cfg, seeds, dtype, device)
    overlaps = extension_overlaps(cfg, rep.Q, teacher, directions, means)
    err_att, err_lin = held_out_errors(
        cfg, teacher, rep.Q, Bmat, seeds, positions, A, dtype, device
    )
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
