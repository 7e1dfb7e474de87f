"""Figures of the histogram experiment: attention maps on the paper's example sequences
(before and after the unfreeze-and-retrain check, Fig. 1/4) and training curves."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

from ..plots import _save  # noqa: E402
from .data import EXAMPLES, letters  # noqa: E402
from .run import HistogramResult  # noqa: E402


def attention_figure(result: HistogramResult, path: str | Path, run: int = 0) -> dict:
    """Rows: each model before / after retraining; columns: the three example sequences.
    Tick labels are the tokens as letters; cells where key and query share a token are
    outlined. Returns the plotted maps {(model, stage): [example, query, key]}."""
    rows = [(m, stage) for m in result.models for stage in ("before", "after")]
    fig, axes = plt.subplots(
        len(rows), len(EXAMPLES), figsize=(3.4 * len(EXAMPLES), 3 * len(rows)), layout="constrained"
    )
    axes = np.atleast_2d(axes)
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
                ax.set_ylabel(f"{m.model}, {stage}\nquery")
            if i == len(rows) - 1:
                ax.set_xlabel("key")
        fig.colorbar(image, ax=axes[i].tolist(), shrink=0.9, label="attention")
    fig.suptitle(
        f"Attention maps of run {run}; red: key and query share a token\n"
        "after: unrestricted model after noise and SGD retraining"
    )
    _save(fig, Path(path))
    return data


def training_figure(result: HistogramResult, path: str | Path) -> dict:
    """Validation error (1 - accuracy, log scale) and training loss per epoch (run mean,
    min-max band), Adam stage followed by the SGD retraining. Returns the curves
    {model: {"val_accuracy" | "train_loss": [epoch, run]}}."""
    fig, (ax_acc, ax_loss) = plt.subplots(1, 2, figsize=(10, 3.8))
    curves = {}
    for m in result.models:
        acc = np.array(m.history["val_accuracy"] + m.retrain_history["val_accuracy"])
        loss = np.array(m.history["train_loss"] + m.retrain_history["train_loss"])
        curves[m.model] = {"val_accuracy": acc, "train_loss": loss}
        epochs = np.arange(1, len(acc) + 1)
        for ax, y in ((ax_acc, 1.0 - acc), (ax_loss, loss)):
            (line,) = ax.plot(epochs, y.mean(1), label=m.model)
            ax.fill_between(epochs, y.min(1), y.max(1), color=line.get_color(), alpha=0.25)
            ax.axvline(m.epochs + 0.5, color=line.get_color(), ls=":", lw=1)
    ax_acc.set(yscale="log", xlabel="epoch", ylabel="validation error (1 - accuracy)")
    ax_loss.set(yscale="log", xlabel="epoch", ylabel="training loss")
    ax_acc.legend(title="dotted: start of SGD")
    fig.tight_layout()
    _save(fig, Path(path))
    return curves
