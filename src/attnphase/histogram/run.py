"""The histogram experiment end to end (paper, Appendix A and Table 1): train restricted
positional and semantic models, map them into the unrestricted model, perturb, retrain with
plain SGD, and measure accuracies, parameter distances and mechanism scores."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch

from .._core.progress import progress_bar
from ..sim import pick_device
from .config import HistogramConfig
from .data import EXAMPLES, HistogramData, make_dataset, seed_for
from .mechanism import mechanism_scores
from .model import StackedTransformer
from .training import History, evaluate, train


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
