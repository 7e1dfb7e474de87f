"""The histogram experiment end to end (paper, Appendix A and Table 1): train restricted
positional and semantic models, map them into the unrestricted model, perturb, retrain with
plain SGD, and measure accuracies, parameter distances and mechanism scores."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np
import torch

from .._core.progress import progress_bar
from ..params import check_nonnegative, check_positive
from ..sim import pick_device
from .data import EXAMPLES, HistogramData, make_dataset, seed_for
from .mechanism import mechanism_scores
from .model import RESTRICTED, StackedTransformer
from .train import History, TrainConfig, evaluate, train


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
        check_positive("retrain_lr", self.retrain_lr)
        if self.retrain_epochs < 0:
            raise ValueError(f"retrain_epochs must be >= 0, got {self.retrain_epochs}")
        check_nonnegative("noise", self.noise)
        if self.n_mechanism < 2:
            raise ValueError(f"n_mechanism must be >= 2, got {self.n_mechanism}")
        bad = [m for m in self.models if m not in RESTRICTED]
        if not self.models or bad:
            raise ValueError(f"models must be a non-empty subset of {RESTRICTED}, got {bad}")
        self.adam()  # validates batch_size, lr, schedule, target_accuracy

    @classmethod
    def quick(cls, **overrides) -> HistogramConfig:
        """The quick mode: 3 runs per model, 6 epochs at most, stop at 95 %, 2 SGD epochs (its
        time: the documentation gallery's histogram tutorial, measured at every build)."""
        base = {"runs": 3, "epochs": 6, "target_accuracy": 0.95, "retrain_epochs": 2}
        return cls(**{**base, **overrides})

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


@dataclass
class ModelResult:
    """One model type: per-run numbers, histories and example attention maps."""

    model: str
    val_accuracy: list[float]
    epochs: int
    seconds: float
    accuracy_noisy: list[float]
    accuracy_after: list[float]
    distance: list[float]
    noise_distance: list[float]
    parameter_norm: list[float]
    mechanism_before: dict[str, list[float]]
    mechanism_after: dict[str, list[float]]
    retrain_seconds: float
    history: dict
    retrain_history: dict
    examples_before: np.ndarray = field(repr=False)  # [run, example, query, key]
    examples_after: np.ndarray = field(repr=False)

    def summary(self, cfg: HistogramConfig) -> dict:
        """The JSON object of this model (Table 1 and the mechanism scores, run means)."""

        def mean(x):
            return float(np.mean(x))

        def std(x):
            return float(np.std(x, ddof=1)) if len(x) > 1 else math.nan

        return {
            "model": self.model,
            "runs": len(self.val_accuracy),
            "epochs": self.epochs,
            "max_epochs": cfg.epochs,
            "seconds": self.seconds + self.retrain_seconds,
            "val_accuracy_mean": mean(self.val_accuracy),
            "val_accuracy_std": std(self.val_accuracy),
            "val_accuracy_min": float(np.min(self.val_accuracy)),
            "retrain_epochs": cfg.retrain_epochs,
            "accuracy_noisy_mean": mean(self.accuracy_noisy),
            "accuracy_after_mean": mean(self.accuracy_after),
            "accuracy_after_std": std(self.accuracy_after),
            "distance_mean": mean(self.distance),
            "distance_std": std(self.distance),
            "noise_distance_mean": mean(self.noise_distance),
            "parameter_norm_mean": mean(self.parameter_norm),
            "mechanism_score_before": mean(self.mechanism_before["score"]),
            "mechanism_score_after": mean(self.mechanism_after["score"]),
            "positional_fraction_before": mean(self.mechanism_before["positional"]),
            "semantic_fraction_before": mean(self.mechanism_before["semantic"]),
            "positional_fraction_after": mean(self.mechanism_after["positional"]),
            "semantic_fraction_after": mean(self.mechanism_after["semantic"]),
            "train_seconds": self.seconds,
            "retrain_seconds": self.retrain_seconds,
        }


@dataclass
class HistogramResult:
    config: HistogramConfig
    models: list[ModelResult]

    def summaries(self) -> list[dict]:
        return [m.summary(self.config) for m in self.models]


@torch.no_grad()
def attention_maps(model: StackedTransformer, tokens: torch.Tensor) -> np.ndarray:
    """Attention of every run on shared sequences: [run, batch, query, key]."""
    _, attn = model(tokens.to(model.tok.device))
    return attn.cpu().double().numpy()


def run_mechanism(model: StackedTransformer, tokens: torch.Tensor) -> dict[str, list[float]]:
    """Mechanism scores of each run (one head) on the given sequences."""
    maps = attention_maps(model, tokens)
    per_run = [mechanism_scores(m[:, None], tokens.numpy()) for m in maps]
    return {
        key: [float(getattr(s, key)[0]) for s in per_run]
        for key in ("positional", "semantic", "score")
    }


def _perturb(model: StackedTransformer, noise: float, seed: int) -> None:
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(noise * torch.randn(p.shape, generator=g).to(p))


def run_model(
    mode: str,
    cfg: HistogramConfig,
    data: HistogramData,
    device: torch.device,
    checkpoint_dir: Path | None = None,
    progress: Callable[[str, int], EpochBar] | None = None,
) -> ModelResult:
    """Train the runs of one restricted model, then the unfreeze-and-retrain check."""
    init_seeds = [seed_for("init", cfg.seed, mode, i) for i in range(cfg.runs)]
    run_seeds = [seed_for("run", cfg.seed, mode, i) for i in range(cfg.runs)]
    model = StackedTransformer([mode] * cfg.runs, init_seeds).to(device)
    adam_ckpt = checkpoint_dir / f"{mode}-adam.pt" if checkpoint_dir else None
    sgd_ckpt = checkpoint_dir / f"{mode}-sgd-{cfg.key()}.pt" if checkpoint_dir else None
    fingerprint = {"config": cfg.adam_key(), "mode": mode}
    hist = _stage(model, data, cfg.adam(), run_seeds, adam_ckpt, fingerprint, progress, mode)
    probe = data.val_x[: cfg.n_mechanism]
    examples = torch.tensor(EXAMPLES)
    mech_before = run_mechanism(model, probe)
    maps_before = attention_maps(model, examples)

    free = model.unrestricted()
    start = free.flat().clone()
    _perturb(free, cfg.noise, seed_for("noise", cfg.seed, mode))
    noise_distance = (free.flat() - start).norm(dim=1)
    _, acc_noisy = evaluate(free, data.val_x, data.val_y)
    fingerprint = {"config": cfg.key(), "mode": mode}
    retrain = _stage(free, data, cfg.sgd(), run_seeds, sgd_ckpt, fingerprint, progress, mode)
    # the last epoch of each stage already evaluated the final parameters
    acc_after = retrain.val_accuracy[-1] if retrain.epochs else acc_noisy.tolist()
    return ModelResult(
        model=mode,
        val_accuracy=hist.val_accuracy[-1],
        epochs=hist.epochs,
        seconds=hist.seconds,
        accuracy_noisy=acc_noisy.tolist(),
        accuracy_after=acc_after,
        distance=(free.flat() - start).norm(dim=1).cpu().tolist(),
        noise_distance=noise_distance.cpu().tolist(),
        parameter_norm=start.norm(dim=1).cpu().tolist(),
        mechanism_before=mech_before,
        mechanism_after=run_mechanism(free, probe),
        retrain_seconds=retrain.seconds,
        history=asdict(hist),
        retrain_history=asdict(retrain),
        examples_before=maps_before,
        examples_after=attention_maps(free, examples),
    )


def _stage(model, data, train_cfg, run_seeds, ckpt, fingerprint, progress, mode) -> History:
    """One training stage with its progress bar (closed however the stage ends)."""
    label = f"{mode} {train_cfg.optimizer}"
    bar = progress(label, train_cfg.epochs) if progress else None
    try:
        return train(model, data, train_cfg, run_seeds, ckpt, fingerprint, bar)
    finally:
        if bar is not None:
            bar.close()


class EpochBar:
    """A progress bar over epochs (`progress_bar`), usable as an `on_epoch` callback."""

    def __init__(self, label: str, total: int) -> None:
        self.bar = progress_bar(total=total, desc=label, unit="epoch", enabled=True)

    def __call__(self, epoch: int, hist: History) -> None:
        self.bar.n = epoch
        self.bar.set_postfix(val_min=f"{min(hist.val_accuracy[-1]):.4f}")
        self.bar.refresh()

    def close(self) -> None:
        self.bar.close()


def run_histogram(
    cfg: HistogramConfig,
    checkpoint_dir: Path | None = None,
    device: str = "auto",
    progress: bool = False,
) -> HistogramResult:
    """Every model of `cfg`; with `checkpoint_dir`, an interrupted call resumes (per epoch):
    checkpoints live in `checkpoint_dir/<adam_key>/`, the SGD stage's named by the full key."""
    data = make_dataset(cfg.seed, cfg.n_sequences)
    dev = pick_device(device)
    if checkpoint_dir is not None:
        checkpoint_dir = Path(checkpoint_dir) / cfg.adam_key()
        checkpoint_dir.mkdir(parents=True, exist_ok=True)
    models = [
        run_model(mode, cfg, data, dev, checkpoint_dir, EpochBar if progress else None)
        for mode in cfg.models
    ]
    return HistogramResult(cfg, models)


def config_from(quick: bool, **overrides) -> HistogramConfig:
    """The full (paper-sized) or quick configuration with explicit overrides applied."""
    base = HistogramConfig.quick() if quick else HistogramConfig()
    return replace(base, **{k: v for k, v in overrides.items() if v is not None})
