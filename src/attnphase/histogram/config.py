"""The histogram task's settings (docs/figures.md, the paper's Appendix A): the model types, a
training stage (`TrainConfig`) and the experiment (`HistogramConfig`), checked without torch, so
that the command line refuses a bad setting before anything heavy loads."""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import asdict, dataclass, replace

from ..params import check_nonnegative, check_step_size

MODES = ("positional", "semantic", "free")
# the cost model of `HistogramConfig.seconds`, measured on this project's 2-core machine: per
# model and epoch, STEP_SECONDS a step whatever the runs (the runs train together), and per run
# EPOCH_SECONDS + BATCH_SECONDS / batch_size per 50,000 sequences, after SETUP_SECONDS of data
# and scoring. One run, one epoch of each stage, 50,000 sequences (load 1.5): 177.7, 51.4, 19.5
# and 8.3 s at batch 4, 16, 64 and 1024 (estimated 173, 49, 18, 7.8 s); quick settings with one
# epoch of each stage (load 0.6): 17.9 s at 3 runs, 54.4 s at 12 (estimated 25, 61 s)
SETUP_SECONDS = 5.7
STEP_SECONDS = 2.5e-3
EPOCH_SECONDS = 0.36
BATCH_SECONDS = 41.0
RESTRICTED = ("positional", "semantic")
SCHEDULES = ("constant", "cosine")
MAX_NOISE = 1e3  # std of the retraining's start perturbation: the weights are O(1)


@dataclass(frozen=True)
class TrainConfig:
    """One training stage. `target_accuracy`: stop once every run's validation accuracy reaches
    it (None: run all epochs). `optimizer`: "adam" (betas, lr) or "sgd" (plain, lr).
    `schedule`: "constant" lr, or "cosine" decay from lr to 0 over `epochs` (set per epoch)."""

    epochs: int = 200
    batch_size: int = 32
    lr: float = 1e-3
    optimizer: str = "adam"
    betas: tuple[float, float] = (0.9, 0.98)
    target_accuracy: float | None = None
    schedule: str = "constant"

    def lr_at(self, epoch: int) -> float:
        """Learning rate of epoch `epoch` (0-based)."""
        if self.schedule == "constant":
            return self.lr
        return 0.5 * self.lr * (1.0 + math.cos(math.pi * epoch / self.epochs))

    def __post_init__(self) -> None:
        if self.epochs < 0:
            raise ValueError(f"epochs must be >= 0, got {self.epochs}")
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {self.batch_size}")
        check_step_size("lr", self.lr, "float32")  # the model's parameters
        if self.optimizer not in ("adam", "sgd"):
            raise ValueError(f"optimizer must be 'adam' or 'sgd', got {self.optimizer!r}")
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {SCHEDULES}, got {self.schedule!r}")
        if self.target_accuracy is not None and not 0.0 < self.target_accuracy <= 1.0:
            raise ValueError(f"target_accuracy must lie in (0, 1], got {self.target_accuracy}")


@dataclass(frozen=True)
class HistogramConfig:
    """The experiment. Adam stage (betas 0.9/0.98): `epochs` at most with the learning rate
    following `schedule` over them, stopping once every run of a model reaches
    `target_accuracy` on the validation set (None: all epochs). SGD stage: `retrain_epochs`
    of plain SGD (`retrain_lr`) from the mapped model plus Gaussian noise of std `noise`.

    Defaults are tuned for speed (benchmarks/bench_histogram.py): batch 64 and lr 3e-3 with a
    cosine decay over 20 epochs reach 99.9 %, the accuracy the paper reports after 200 epochs
    at batch 32, lr 1e-3; `schedule="constant"`, `batch_size=32`, `lr=1e-3`, `epochs=200` and
    `retrain_epochs=100` is the authors' protocol."""

    runs: int = 10
    epochs: int = 20
    batch_size: int = 64
    lr: float = 3e-3
    schedule: str = "cosine"
    target_accuracy: float | None = 0.999
    retrain_epochs: int = 20
    retrain_lr: float = 1e-2
    noise: float = 1e-3
    n_sequences: int = 50_000
    n_mechanism: int = 2000
    models: tuple[str, ...] = RESTRICTED
    seed: int = 0

    def __post_init__(self) -> None:
        if self.runs < 1:
            raise ValueError(f"runs must be >= 1, got {self.runs}")
        if self.epochs < 1:
            raise ValueError(f"epochs must be >= 1, got {self.epochs}")
        check_step_size("retrain_lr", self.retrain_lr, "float32")
        if self.retrain_epochs < 0:
            raise ValueError(f"retrain_epochs must be >= 0, got {self.retrain_epochs}")
        check_nonnegative("noise", self.noise)
        if self.noise > MAX_NOISE:
            raise ValueError(
                f"noise must be <= {MAX_NOISE:g} (the weights it perturbs are O(1); far larger "
                f"noise overflows the training), got {self.noise:g}"
            )
        if self.n_mechanism < 2:
            raise ValueError(f"n_mechanism must be >= 2, got {self.n_mechanism}")
        bad = [m for m in self.models if m not in RESTRICTED]
        if not self.models or bad:
            raise ValueError(f"models must be a non-empty subset of {RESTRICTED}, got {bad}")
        self.adam()  # validates batch_size, lr, schedule, target_accuracy

    @classmethod
    def quick(cls, **overrides) -> HistogramConfig:
        """The quick mode: 3 runs per model, 6 epochs at most, stop at 95 %, 2 SGD epochs (49 s
        on a quiet 2-core machine: the command the gallery's histogram tutorial names)."""
        base = {"runs": 3, "epochs": 6, "target_accuracy": 0.95, "retrain_epochs": 2}
        return cls(**{**base, **overrides})

    def seconds(self) -> float:
        """A rough upper bound of the run's duration on 2 CPU cores: every epoch of both stages
        run (the Adam stage stops earlier once `target_accuracy` is reached), a model-epoch
        costing STEP_SECONDS a step and, per run, EPOCH_SECONDS + BATCH_SECONDS / batch_size per
        50,000 sequences."""
        steps = STEP_SECONDS * self.n_sequences / self.batch_size
        per_run = (EPOCH_SECONDS + BATCH_SECONDS / self.batch_size) * self.n_sequences / 50_000
        epochs = self.epochs + self.retrain_epochs
        return SETUP_SECONDS + len(self.models) * epochs * (steps + self.runs * per_run)

    def adam(self) -> TrainConfig:
        return TrainConfig(
            epochs=self.epochs,
            batch_size=self.batch_size,
            lr=self.lr,
            optimizer="adam",
            target_accuracy=self.target_accuracy,
            schedule=self.schedule,
        )

    def sgd(self) -> TrainConfig:
        return TrainConfig(
            epochs=self.retrain_epochs,
            batch_size=self.batch_size,
            lr=self.retrain_lr,
            optimizer="sgd",
        )

    def key(self) -> str:
        """Content hash of every setting (names the SGD-stage checkpoints)."""
        return _hash(asdict(self))

    def adam_key(self) -> str:
        """Content hash of the settings the Adam stage depends on (names the checkpoint
        directory, so changing only the retraining reuses the trained models)."""
        later = ("retrain_epochs", "retrain_lr", "noise", "n_mechanism", "models")
        return _hash({k: v for k, v in asdict(self).items() if k not in later})


def _hash(obj: dict) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()[:16]


def config_from(quick: bool, **overrides) -> HistogramConfig:
    """The full (paper-sized) or quick configuration with explicit overrides applied."""
    base = HistogramConfig.quick() if quick else HistogramConfig()
    return replace(base, **{k: v for k, v in overrides.items() if v is not None})
