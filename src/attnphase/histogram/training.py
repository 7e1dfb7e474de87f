"""Training loops for stacked histogram transformers: Adam on the restricted models, plain SGD
for the unfreeze-and-retrain check; per-epoch validation, early stopping at a target accuracy,
and atomic per-epoch checkpoints so an interrupted run resumes where it stopped."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch

from ..io import atomic_output
from .config import TrainConfig
from .data import HistogramData, seed_for
from .model import StackedTransformer


@dataclass
class History:
    """Per-epoch records, one list entry per epoch, each a list over runs."""

    train_loss: list[list[float]] = field(default_factory=list)
    val_loss: list[list[float]] = field(default_factory=list)
    val_accuracy: list[list[float]] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def epochs(self) -> int:
        return len(self.val_accuracy)


def make_optimizer(model: StackedTransformer, cfg: TrainConfig) -> torch.optim.Optimizer:
    """Adam / SGD over the stacked parameters (elementwise, so runs stay independent)."""
    if cfg.optimizer == "adam":
        return torch.optim.Adam(model.parameters(), lr=cfg.lr, betas=cfg.betas)
    return torch.optim.SGD(model.parameters(), lr=cfg.lr)


def batch_order(n: int, batch_size: int, run_seeds: list[int], epoch: int) -> list[torch.Tensor]:
    """Per-run shuffled sample indices for one epoch: a list of [R, batch] (last one shorter)."""
    perms = [
        torch.randperm(n, generator=torch.Generator().manual_seed(seed_for("order", s, epoch)))
        for s in run_seeds
    ]
    idx = torch.stack(perms)  # [R, n]
    return [idx[:, i : i + batch_size] for i in range(0, n, batch_size)]


@torch.no_grad()
def evaluate(
    model: StackedTransformer, x: torch.Tensor, y: torch.Tensor, chunk: int = 2048
) -> tuple[torch.Tensor, torch.Tensor]:
    """(mean cross-entropy [R], accuracy over all positions [R]) on shared data x, y."""
    device = model.tok.device
    loss = torch.zeros(model.runs, dtype=torch.float64, device=device)
    correct = torch.zeros(model.runs, dtype=torch.float64, device=device)
    for i in range(0, len(x), chunk):
        xb, yb = x[i : i + chunk].to(device), y[i : i + chunk].to(device)
        logits, _ = model(xb)
        target = yb.expand(model.runs, *yb.shape)
        ce = torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), target.reshape(-1), reduction="none"
        )
        loss += ce.reshape(model.runs, -1).sum(1).double()
        correct += (logits.argmax(-1) == target).reshape(model.runs, -1).sum(1).double()
    total = y.numel()
    return (loss / total).cpu(), (correct / total).cpu()


class CheckpointError(ValueError):
    """A checkpoint file that is unreadable or belongs to a different configuration."""


def _load_checkpoint(path: Path, fingerprint: dict) -> dict | None:
    if not path.exists():
        return None
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # torch raises several types; its advice (unsafe loading) is not ours
        raise CheckpointError(
            f"checkpoint {path} is not a readable attnphase checkpoint "
            f"({type(err).__name__}); delete it or use another checkpoint directory"
        ) from None
    if not isinstance(state, dict) or state.get("fingerprint") != fingerprint:
        raise CheckpointError(
            f"checkpoint {path} was written by a different configuration; delete it or use "
            "another checkpoint directory"
        )
    return state


def train(
    model: StackedTransformer,
    data: HistogramData,
    cfg: TrainConfig,
    run_seeds: list[int],
    checkpoint: Path | None = None,
    fingerprint: dict | None = None,
    on_epoch: Callable[[int, History], None] | None = None,
) -> History:
    """Train every run of `model` in place; returns the per-epoch history.

    With `checkpoint`, the model, optimizer and history are written atomically after every
    epoch and a later call with the same configuration continues from the last finished epoch
    (identical to an uninterrupted run: the batch order depends only on seeds and epoch)."""
    if len(run_seeds) != model.runs:
        raise ValueError(f"run_seeds must have one seed per run ({model.runs})")
    opt = make_optimizer(model, cfg)
    hist = History()
    fingerprint = {"train": asdict(cfg), "runs": list(run_seeds), **(fingerprint or {})}
    state = _load_checkpoint(checkpoint, fingerprint) if checkpoint else None
    if state is not None:
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        hist = History(**state["history"])
        if on_epoch is not None and hist.epochs:
            on_epoch(hist.epochs, hist)
    device = model.tok.device
    x, y = data.train_x.to(device), data.train_y.to(device)
    while hist.epochs < cfg.epochs and not _reached(hist, cfg.target_accuracy):
        t0 = time.perf_counter()
        for group in opt.param_groups:
            group["lr"] = cfg.lr_at(hist.epochs)
        total = torch.zeros(model.runs, device=device)
        for idx in batch_order(data.n_train, cfg.batch_size, run_seeds, hist.epochs):
            idx = idx.to(device)
            loss = model.loss(x[idx], y[idx])
            opt.zero_grad(set_to_none=True)
            loss.sum().backward()
            opt.step()
            total += loss.detach() * idx.shape[1]
        if not torch.isfinite(total).all():
            bad = torch.nonzero(~torch.isfinite(total)).flatten().tolist()
            raise FloatingPointError(
                f"training diverged (non-finite loss in runs {bad} at epoch {hist.epochs + 1}); "
                f"lower lr (now {cfg.lr_at(hist.epochs):g})"
            )
        val_loss, val_acc = evaluate(model, data.val_x, data.val_y)
        hist.train_loss.append((total / data.n_train).tolist())
        hist.val_loss.append(val_loss.tolist())
        hist.val_accuracy.append(val_acc.tolist())
        hist.seconds += time.perf_counter() - t0
        if checkpoint is not None:
            state = {
                "fingerprint": fingerprint,
                "model": model.state_dict(),
                "optimizer": opt.state_dict(),
                "history": asdict(hist),
            }
            with atomic_output(checkpoint) as tmp:
                torch.save(state, tmp)
        if on_epoch is not None:
            on_epoch(hist.epochs, hist)
    return hist


def _reached(hist: History, target: float | None) -> bool:
    return target is not None and hist.epochs > 0 and min(hist.val_accuracy[-1]) >= target
