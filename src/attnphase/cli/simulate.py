"""`attnphase simulate`: finite-d simulations of the model."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from .._core.interrupt import Interrupted
from ..params import ModelParams, check_dimension, check_int, variant_of
from ..run_options import OPTIMIZERS
from .app import app
from .common import (
    STANDARD_A_TEXT,
    AlphaOpt,
    AOpt,
    ClusterNormOpt,
    ClustersOpt,
    EncodingOpt,
    FormatOpt,
    HeadsOpt,
    LabelCorrelationOpt,
    LamOpt,
    MaskOpt,
    OmegaOpt,
    RankOpt,
    RopeOpt,
    SigmaOpt,
    TargetMaskOpt,
    TeacherRankOpt,
    UsageError,
    build_params,
    check_cluster_options,
    check_outputs,
    check_workers,
    fail,
    figure_files,
    parse_alphas,
    parse_frequencies,
    parse_list,
    plot_failed,
    refuse_long,
    show_progress,
    usage,
    warn_long,
)
from .help import command_help
from .tables import FORMATS, render, to_frame
from .theory import MASK_COLUMNS

SIM_COLUMNS = [
    "alpha",
    "init",
    "seed",
    "test_error",
    "train_loss",
    "q",
    "m",
    "theta",
    "linear_test_error",
    "converged",
    "steps",
    "batch_seconds",
]
UNTIED_COLUMNS = ["m_query", "theta_query", "m_key", "theta_key"]
COLUMN_COLUMNS = ["column_m", "column_theta"]


# one evaluation of the risk and its gradient per entry of the n x L x d tokens and column of
# the student: gd at d = 2000, alpha 2 took 5.8 s for 100 steps (3.6e-9 s an entry)
SECONDS_PER_ENTRY = 3.6e-9
LBFGS_EVALUATIONS = 120  # a typical L-BFGS run's evaluations (at d = 1000; its cap is 5000)


def run_seconds(configs: list, seeds: int) -> float:
    """A rough duration of the runs on one core: their evaluations (the steps asked, or a
    typical L-BFGS run, or a first-order optimiser's step cap) times the tokens' entries."""
    from ..sim.train import DEFAULTS

    total = 0.0
    for cfg in configs:
        steps = cfg.steps
        if steps is None:
            steps = (
                LBFGS_EVALUATIONS if cfg.optimizer == "lbfgs" else DEFAULTS[cfg.optimizer]["steps"]
            )
        n = round(cfg.alpha * cfg.d)
        total += steps * n * cfg.params.L * cfg.d * cfg.params.rank * SECONDS_PER_ENTRY
    return seeds * total


def sim_columns(p: ModelParams, value_rank: int) -> list[str]:
    """The table's columns: SIM_COLUMNS, then those of the extensions in use (the model's
    variant and rank, the value matrix's rank)."""
    extra = UNTIED_COLUMNS if p.untied else []
    extra += ["value_norm"] if value_rank > 0 else []
    extra += COLUMN_COLUMNS if p.rank >= 2 and not p.untied and p.heads == 1 else []
    extra += ["cluster_m"] if p.mixture is not None else []
    extra += MASK_COLUMNS if p.mask != "none" else []
    extra += ["heads"] if p.heads > 1 else []
    extra += ["rotary"] if p.rotary else []
    return SIM_COLUMNS[:-3] + extra + SIM_COLUMNS[-3:]


@app.command(**command_help("simulate"))
def simulate(
    d: Annotated[int, typer.Option(help="dimension d (>= 2)")] = 1000,
    alpha: AlphaOpt = "0.5:2:7",
    omega: OmegaOpt = 0.3,
    sigma: SigmaOpt = 0.5,
    lam: LamOpt = 0.01,
    lam_linear: Annotated[float | None, typer.Option(help="baseline ridge (default: lam)")] = None,
    A: AOpt = STANDARD_A_TEXT,
    rank: RankOpt = 1,
    teacher_rank: TeacherRankOpt = 1,
    encoding: EncodingOpt = None,
    init: Annotated[
        str, typer.Option(help="comma list of semantic,positional,random,mixed (mixed: rank >= 2)")
    ] = "semantic,positional",
    untied: Annotated[
        bool,
        typer.Option(
            "--untied/--tied", help="separate query and key matrices (docs/theory.md §10)"
        ),
    ] = False,
    value_rank: Annotated[
        int, typer.Option(help="rank of a trainable value matrix I + U W^T/d (0: none)")
    ] = 0,
    clusters: ClustersOpt = 1,
    label_correlation: LabelCorrelationOpt = 0.0,
    cluster_norm: ClusterNormOpt = 1.0,
    mask: MaskOpt = "none",
    target_mask: TargetMaskOpt = "none",
    heads: HeadsOpt = 1,
    rope: RopeOpt = None,
    seeds: Annotated[
        int,
        typer.Option(help="number of seeds: runs seeds 0..N-1 (each: teacher, data, test, start)"),
    ] = 5,
    optimizer: Annotated[str, typer.Option(help="gd|adam|lbfgs")] = "lbfgs",
    lr: Annotated[float | None, typer.Option(help="learning rate (default per optimizer)")] = None,
    steps: Annotated[int | None, typer.Option(help="maximum steps (default 5000)")] = None,
    n_test: Annotated[int, typer.Option(help="test-set size")] = 10_000,
    dtype: Annotated[str, typer.Option(help="float64|float32")] = "float64",
    workers: Annotated[int, typer.Option(help="parallel processes (one (alpha, init) each)")] = 1,
    threads: Annotated[int, typer.Option(help="torch threads per process (>= 1)")] = 1,
    format: FormatOpt = "table",
    plot: Annotated[
        Path | None,
        typer.Option(help="overlay on the theory curves (Fig. 2; needs rank = teacher rank = 1)"),
    ] = None,
) -> None:
    """Train the finite-d model (docs/theory.md §1, §7) and report one row per (alpha, init, seed).
    The model options mean what they mean for `attnphase theory` (the same ModelParams).
    Extensions (docs/theory.md §10): --untied, --value-rank R, --rank 2 --init mixed,
    --clusters K --label-correlation RHO [--cluster-norm N] (Gaussian-mixture tokens)."""
    try:
        alphas = parse_alphas(alpha)
        p = build_params(omega, sigma, lam, A, rank, teacher_rank, encoding)
        inits = parse_list(init, "--init", str)
        if format not in FORMATS:
            raise UsageError(f"--format: must be one of {FORMATS}, got {format!r}")
        if seeds < 1:
            raise UsageError(f"--seeds: must be >= 1, got {seeds}")
        if optimizer not in OPTIMIZERS:
            raise UsageError(f"--optimizer: must be one of {OPTIMIZERS}, got {optimizer!r}")
        check_workers("--workers", workers)
        from .._core.threads import check_threads

        try:
            check_threads("--threads", threads)
        except ValueError as err:
            raise UsageError(str(err)) from None
        check_cluster_options(clusters, label_correlation, cluster_norm)
        try:
            p = replace(
                p,
                variant=variant_of(
                    untied,
                    clusters,
                    label_correlation,
                    cluster_norm,
                    mask,
                    target_mask,
                    heads,
                    parse_frequencies(rope),
                ),
            )
            check_dimension(d)
            check_int("n_test", n_test)
            if steps is not None:  # None: the optimizer's default
                check_int("steps", steps)
        except ValueError as err:
            raise usage(err) from None
        from ..sim import SimConfig, iter_grid  # torch: once the options that need none pass
        from ..sim.grid import check_grid

        try:
            configs = [
                SimConfig(
                    params=p,
                    d=d,
                    alpha=a,
                    init=i,
                    optimizer=optimizer,
                    lr=lr,
                    steps=steps,
                    lam_linear=lam_linear,
                    n_test=n_test,
                    dtype=dtype,
                    value_rank=value_rank,
                )
                for a in alphas
                for i in inits
            ]
            check_grid(configs, range(seeds), workers, threads)
        except ValueError as err:
            raise usage(err, {"n": "--alpha/--d", "encodings": "--encoding"}) from None
        if plot is not None and (not p.is_tied_gaussian or value_rank):
            raise UsageError(
                "--plot: the overlay draws the tied model's theory, not available with "
                "--untied, --value-rank or --clusters"
            )
        if plot is not None:
            if p.rank != 1 or p.teacher_rank != 1:
                raise UsageError(
                    "--plot: the overlay draws scalar theta and m, so it needs --rank 1 and "
                    f"--teacher-rank 1, got {p.rank} and {p.teacher_rank}"
                )
            check_outputs({"--plot": figure_files(plot)}, {})
        seconds = run_seconds(configs, seeds)
        refuse_long("--d", seconds, f"{len(configs) * seeds} runs")
    except UsageError as err:
        fail(err)
    warn_long(seconds, f"{len(configs) * seeds} runs (on one core)")
    columns = sim_columns(p, value_rank)
    records: list[dict] = []
    try:
        for batch in iter_grid(configs, range(seeds), workers, threads, show_progress()):
            records += [r.as_dict() for r in batch]
    except KeyboardInterrupt:
        if records:
            typer.echo(render(records, format, columns))
        done = len(records) // seeds
        raise Interrupted(
            f"{done} of {len(configs)} (alpha, init) points finished"
            + (" (printed above)" if records else "")
        ) from None
    typer.echo(render(records, format, columns))
    if all(math.isnan(r["test_error"]) for r in records):  # every run diverged
        fail(f"all {len(records)} runs diverged (NaN rows above; the warnings say why)", code=1)
    if plot is not None:
        from ..figures.curves import simulation_overlay
        from ..theory import learning_curves

        branches, grid = ["semantic", "positional"], sorted(set(alphas))
        theory = learning_curves(grid, p, branches, progress=not p.is_l2 and show_progress())
        try:
            simulation_overlay(to_frame([r.as_dict() for r in theory]), to_frame(records), plot)
        except (OSError, ValueError) as err:
            plot_failed(err)
