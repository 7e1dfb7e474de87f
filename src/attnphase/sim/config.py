"""The configuration of one finite-d experiment (docs/theory.md §1): `SimConfig`, the starts and
dtypes it accepts, and the device it runs on."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from .._core.device import check_device, torch_device
from .._core.memory import check_memory, data_bytes, data_option, data_text
from ..params import (
    DEFAULT_N_TEST,
    ModelParams,
    check_dimension,
    check_finite,
    check_int,
    check_nonnegative,
    check_positive,
    check_step_size,
)
from ..run_options import INITS, OPTIMIZERS, check_gtol
from .models import Layout

DTYPES = {"float64": torch.float64, "float32": torch.float32}


def pick_device(device: str = "auto") -> torch.device:
    """The torch device of `device` (`_core.device.check_device`): "auto" is CUDA when
    available, the CPU otherwise."""
    return torch_device(check_device(device))


@dataclass(frozen=True)
class SimConfig:
    """A finite-d experiment (docs/theory.md §1) of the model `params` (a `ModelParams`: omega,
    sigma, lam, the positional target A, which fixes L, student rank r = `params.rank`, teacher
    rank t = `params.teacher_rank`, the encodings and the variant), at dimension d with
    n = round(alpha d) training samples. The model is validated by ModelParams alone (so L >= 2:
    A is at least 2 x 2); SimConfig checks only what the finite-d experiment adds (d, alpha,
    n >= 1, K <= d, clusters <= d, the start, the optimizer, ...).

    init: "semantic" (Q = Q*), "positional" (Q = init_m 1_d, so m = init_m), "random"
    (N(0, init_scale^2) entries), "mixed" (r >= 2: column 1 = Q*'s first column, column 2
    positional, the others random; with several heads of rank r, head 2's first column, r + 1,
    is the positional one), or a given (d, width) array of packed weights (width = r
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
    Gaussian-mixture tokens x_l = mu_{c_l} + sigma z_l (docs/theory.md §10): K centred means of norm
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
    n_test: int = DEFAULT_N_TEST
    dtype: str = "float64"
    device: str = "auto"
    positions: object = field(default=None, repr=False)
    value_rank: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.params, ModelParams):
            raise ValueError(f"params must be a ModelParams, got {self.params!r}")
        check_dimension(self.d)
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
        ranks = (
            ("rank", self.params.rank),
            ("teacher_rank", self.params.teacher_rank),
            ("value_rank", self.value_rank),
        )
        for name, rank in ranks:
            if rank > self.d:  # the d x rank weights would have more columns than dimensions
                raise ValueError(f"{name} must be <= d = {self.d}, got {rank}")
        check_memory(data_option(self.n, self.n_test), self.memory_bytes, self.memory_text)
        mixture = self.params.mixture
        if mixture is not None and mixture.clusters > self.d:
            raise ValueError(
                f"clusters: K = {mixture.clusters} cluster means need d >= K, got d={self.d}"
            )
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {self.optimizer!r}")
        if self.dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {tuple(DTYPES)}, got {self.dtype!r}")
        if self.lr is not None:
            check_step_size("lr", self.lr, self.dtype)
        if self.steps is not None:
            check_int("steps", self.steps)
        if isinstance(self.init, str):
            if self.init not in INITS:
                raise ValueError(
                    f"init must be one of {INITS} or a (d, r) matrix, got {self.init!r}"
                )
            if self.init == "mixed" and self.params.rank * self.params.heads < 2:
                raise ValueError(
                    f"init: the mixed start (one semantic, one positional column) needs rank "
                    f"r >= 2 or several heads, got r = {self.params.rank}"
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
        check_gtol(self.gtol)
        check_device(self.device)

    @property
    def n(self) -> int:
        return int(round(self.alpha * self.d))

    @property
    def memory_bytes(self) -> float:
        """A lower bound of the memory a run needs: its training and test tokens, twice (the
        data and the fields and gradients computed from them)."""
        itemsize = 4 if self.dtype == "float32" else 8
        return data_bytes(self.d, self.n, self.n_test, self.params.L, itemsize)

    def check_seeds(self, seeds: int) -> None:
        """ValueError naming `seeds` when that many seeds, trained as one batch, would not fit
        in memory."""
        check_memory("seeds", seeds * self.memory_bytes, f"{seeds} seeds of {self.memory_text}")

    @property
    def memory_text(self) -> str:
        return data_text(self.d, self.n, self.n_test, self.params.L)

    @property
    def L(self) -> int:
        return self.params.L

    @property
    def K(self) -> int | None:
        """Number of encoding directions (None for explicit positions)."""
        return None if self.positions is not None else self.params.K

    @property
    def layout(self) -> Layout:
        """How the trained weights are packed (tied: just Q; H heads: their H r columns)."""
        r = self.params.rank * self.params.heads
        return Layout(r, self.params.variant, int(self.value_rank))

    @property
    def init_name(self) -> str:
        return self.init if isinstance(self.init, str) else "given"
