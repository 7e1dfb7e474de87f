"""`attnphase histogram`: the counting task of the paper's Appendix A."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from .._core.interrupt import Interrupted
from .app import app
from .common import (
    LONG_SECONDS,
    FormatOpt,
    UsageError,
    check_outputs,
    fail,
    plot_failed,
    refuse_ignored,
    show_progress,
    usage,
)
from .help import command_help
from .tables import FORMATS, render

HISTOGRAM_COLUMNS = [
    "model",
    "runs",
    "epochs",
    "seconds",
    "val_accuracy_mean",
    "val_accuracy_std",
    "accuracy_after_mean",
    "distance_mean",
    "noise_distance_mean",
    "mechanism_score_before",
    "mechanism_score_after",
]


@app.command(**command_help("histogram"))
def histogram(
    ctx: typer.Context,
    runs: Annotated[int | None, typer.Option(help="runs per model [10; quick 3]")] = None,
    epochs: Annotated[int | None, typer.Option(help="maximum Adam epochs [20; quick 6]")] = None,
    quick: Annotated[bool, typer.Option(help="3 runs, <= 6 epochs, stop at 95%")] = False,
    format: FormatOpt = "table",
    plot: Annotated[Path | None, typer.Option(help="write attention/training figures here")] = None,
    checkpoint: Annotated[
        Path | None,
        typer.Option(
            help="checkpoint directory, from which an interrupted run resumes [--plot's folder "
            "/histogram-checkpoints, else ./histogram-checkpoints]"
        ),
    ] = None,
    target_accuracy: Annotated[
        float | None,
        typer.Option(help="stop once every run reaches it; 0: never [0.999; quick 0.95]"),
    ] = None,
    batch_size: Annotated[int | None, typer.Option(help="minibatch size [64]")] = None,
    lr: Annotated[float | None, typer.Option(help="Adam learning rate [3e-3]")] = None,
    schedule: Annotated[str | None, typer.Option(help="cosine | constant [cosine]")] = None,
    retrain_epochs: Annotated[int | None, typer.Option(help="SGD epochs [20; quick 2]")] = None,
    retrain_lr: Annotated[float | None, typer.Option(help="SGD learning rate [1e-2]")] = None,
    noise: Annotated[float | None, typer.Option(help="std of the perturbation [1e-3]")] = None,
    seed: Annotated[int, typer.Option(help="seed of data, initialisations and order")] = 0,
    device: Annotated[str, typer.Option(help="auto | cpu | cuda")] = "auto",
) -> None:
    """The histogram (counting) task (paper, Appendix A, Table 1): restricted positional and
    semantic transformers, the unfreeze-and-retrain check, mechanism scores."""
    try:
        if format not in FORMATS:
            raise UsageError(f"--format: must be one of {FORMATS}, got {format!r}")
        if device not in ("auto", "cpu", "cuda"):
            raise UsageError(f"--device: must be auto, cpu or cuda, got {device!r}")
        if device == "cuda":
            import torch

            if not torch.cuda.is_available():
                raise UsageError("--device: cuda asked, but CUDA is not available on this machine")
        if plot is not None:  # first: the default checkpoint folder lies inside it
            if plot.suffix.lower() in FIGURE_SUFFIXES:
                raise UsageError(
                    f"--plot: a folder for the task's two figures (histogram_attention, "
                    f"histogram_training), got the file name {str(plot)!r}"
                )
            check_outputs({"--plot": _figure_files(plot)}, {"--plot": [plot]})
        if checkpoint is None:
            checkpoint = (plot if plot is not None else Path(".")) / "histogram-checkpoints"
        check_outputs({}, {"--checkpoint": [checkpoint]})
        if retrain_epochs == 0:
            why = "applies to the retraining, which --retrain-epochs 0 turns off"
            refuse_ignored(ctx, ("retrain_lr",), why)
        from ..histogram import config_from  # torch: once the cheap checks pass

        try:
            cfg = config_from(
                quick,
                runs=runs,
                epochs=epochs,
                target_accuracy=None if target_accuracy == 0 else target_accuracy,
                batch_size=batch_size,
                lr=lr,
                schedule=schedule,
                retrain_epochs=retrain_epochs,
                retrain_lr=retrain_lr,
                noise=noise,
                seed=seed,
            )
            if target_accuracy == 0:
                cfg = replace(cfg, target_accuracy=None)
        except ValueError as err:
            raise usage(err) from None
        _check_cost(cfg.seconds())
        from ..histogram import CheckpointError, run_histogram

        try:
            result = run_histogram(cfg, checkpoint, device, progress=show_progress())
        except (CheckpointError, FloatingPointError) as err:
            raise UsageError(str(err)) from None
        except KeyboardInterrupt:
            raise Interrupted(
                f"the training done so far is checkpointed in {checkpoint}; the same command "
                "resumes from it"
            ) from None
    except UsageError as err:
        fail(err)
    typer.echo(render(result.summaries(), format, HISTOGRAM_COLUMNS))
    if plot is not None:
        from ..figures.histogram import attention_figure, training_figure

        try:
            attention_figure(result, plot / "histogram_attention.png")
            training_figure(result, plot / "histogram_training.png")
        except (OSError, ValueError) as err:
            plot_failed(err)


WARN_SECONDS = 120.0  # the estimated duration (checkpointed); refused over LONG_SECONDS


def _check_cost(seconds: float) -> None:
    """UsageError naming --runs when the run is estimated at over LONG_SECONDS; a warning on
    stderr over WARN_SECONDS (`HistogramConfig.seconds`, every epoch counted)."""
    hours = seconds / 3600
    if seconds > LONG_SECONDS:
        raise UsageError(
            f"--runs: these settings take up to {hours:.3g} h on 2 cores (runs x models x "
            "(epochs + retrain-epochs)); ask for fewer --runs or --epochs"
        )
    if seconds > WARN_SECONDS:
        typer.secho(
            f"warning: up to {seconds / 60:.3g} min on 2 cores (every epoch counted; the Adam "
            "stage stops earlier at --target-accuracy); Ctrl-C keeps a checkpoint",
            err=True,
            fg="yellow",
        )


FIGURE_SUFFIXES = (".png", ".pdf", ".svg", ".jpg", ".jpeg", ".eps")


def _figure_files(plot: Path) -> list[Path]:
    names = ("histogram_attention", "histogram_training")
    return [plot / f"{name}.{ext}" for name in names for ext in ("png", "pdf")]
