"""Figures of the histogram experiment: attention maps on the paper's example sequences
(before and after the unfreeze-and-retrain check, Fig. 1/4) and training curves. Drawn with
matplotlib's object API (no pyplot, no backend switch); colours from `attnphase.figures.style`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.patches import Rectangle

from ..histogram.config import HistogramConfig
from ..histogram.data import EXAMPLES, letters
from ..histogram.run import HistogramResult
from .style import color, new_figure, save


def settings_text(cfg: HistogramConfig) -> str:
    """The training settings of a result, one line, for figure titles."""
    stop = f", stop at {cfg.target_accuracy:.4g}" if cfg.target_accuracy else ""
    return (
        f"{cfg.runs} runs per model; Adam lr {cfg.lr:g} ({cfg.schedule}), batch {cfg.batch_size}, "
        f"≤ {cfg.epochs} epochs{stop}; noise std {cfg.noise:g}, "
        f"{cfg.retrain_epochs} SGD epochs at lr {cfg.retrain_lr:g}"
    )


def attention_figure(result: HistogramResult, path: str | Path, run: int = 0) -> dict:
    """Rows: each model before / after retraining; columns: the three example sequences.
    Tick labels are the tokens as letters; cells where key and query share a token are
    outlined. Returns the plotted maps {(model, stage): [example, query, key]}."""
    rows = [(m, stage) for m in result.models for stage in ("before", "after")]
    fig, axes = new_figure(len(rows), len(EXAMPLES), (3.4 * len(EXAMPLES), 3 * len(rows) + 0.4))
    data = {}
    for i, (m, stage) in enumerate(rows):
        maps = (m.examples_before if stage == "before" else m.examples_after)[run]
        data[(m.model, stage)] = maps
        for j, seq in enumerate(EXAMPLES):
            ax = axes[i, j]
            image = ax.imshow(maps[j], vmin=0.0, vmax=maps.max(), cmap="viridis")
            labels = letters(seq)
            ax.set_xticks(range(len(seq)), labels)
            ax.set_yticks(range(len(seq)), labels)
            for q, a in enumerate(seq):
                for k, b in enumerate(seq):
                    if a == b:
                        ax.add_patch(
                            Rectangle((k - 0.5, q - 0.5), 1, 1, fill=False, ec="red", lw=0.8)
                        )
            if j == 0:
                ax.set_ylabel(f"{m.model}, {stage}\nquery", color=color(m.model))
            if i == len(rows) - 1:
                ax.set_xlabel("key")
        fig.colorbar(image, ax=axes[i].tolist(), shrink=0.9, label="attention")
    fig.suptitle(
        f"Attention maps of run {run}; red: key and query share a token; "
        "after: unrestricted model after noise and SGD retraining\n" + settings_text(result.config),
        fontsize=10,
    )
    save(fig, path)
    return data


def training_figure(result: HistogramResult, path: str | Path) -> dict:
    """Validation error (1 - accuracy, log scale) and training loss per epoch (run mean,
    min-max band over the runs), Adam stage followed by the SGD retraining. Returns the curves
    {model: {"val_accuracy" | "train_loss": [epoch, run]}}."""
    fig, axes = new_figure(1, 2, (10.5, 4.4))
    ax_acc, ax_loss = axes[0]
    curves = {}
    for m in result.models:
        acc = np.array(m.history["val_accuracy"] + m.retrain_history["val_accuracy"])
        loss = np.array(m.history["train_loss"] + m.retrain_history["train_loss"])
        curves[m.model] = {"val_accuracy": acc, "train_loss": loss}
        epochs = np.arange(1, len(acc) + 1)
        c = color(m.model)
        for ax, y in ((ax_acc, 1.0 - acc), (ax_loss, loss)):
            ax.plot(epochs, y.mean(1), color=c, label=f"{m.model}: mean")
            ax.fill_between(
                epochs,
                y.min(1),
                y.max(1),
                color=c,
                alpha=0.25,
                label=f"{m.model}: min–max over {y.shape[1]} runs",
            )
            ax.axvline(m.epochs + 0.5, color=c, ls=":", lw=1, label=f"{m.model}: start of SGD")
    ax_acc.set(yscale="log", xlabel="epoch", ylabel="validation error (1 - accuracy)")
    ax_loss.set(yscale="log", xlabel="epoch", ylabel="training loss")
    handles, labels = ax_acc.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside right center", frameon=False, fontsize=8)
    fig.suptitle(settings_text(result.config), fontsize=9)
    save(fig, path)
    return curves
