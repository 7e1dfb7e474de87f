"""`attnphase outcomes`: which minimum a start reaches, how often (the paper's Fig. 15)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ..params import check_dimension, check_nonnegative, check_positive
from ..run_options import INITS, OPTIMIZERS, check_gtol
from .app import app
from .common import (
    STANDARD_A_TEXT,
    AOpt,
    FormatOpt,
    LamOpt,
    OmegaOpt,
    SigmaOpt,
    UsageError,
    check_outputs,
    check_store_option,
    check_workers,
    fail,
    figure_files,
    parse_alphas,
    parse_matrix,
    plot_failed,
    refuse_long,
    usage,
    warn_long,
)
from .help import command_help
from .tables import FORMATS, render

TABLE_COLUMNS = [
    "alpha",
    "runs",
    "n_semantic",
    "n_positional",
    "n_other",
    "fraction_semantic",
    "fraction_positional",
    "fraction_other",
    "not_converged",
]


# a run with its informed runs at d = 500, alpha 1: 1.3 s (8 runs in 13.7 s, 2 cores); the cost
# grows about like d
RUN_SECONDS = 1.3


@app.command(**command_help("outcomes"))
def outcomes(
    alpha: Annotated[str, typer.Option(help="value, list a,b,c or start:stop:num")] = "0.5:3:11",
    runs: Annotated[int, typer.Option(help="runs per alpha (seeds 0..runs-1)")] = 50,
    d: Annotated[int, typer.Option(help="dimension d (>= 2)")] = 500,
    init: Annotated[str, typer.Option(help="start of the runs: random|semantic|positional")] = (
        "random"
    ),
    optimizer: Annotated[str, typer.Option(help="optimizer of the runs: adam|gd|lbfgs")] = "adam",
    lr: Annotated[float | None, typer.Option(help="learning rate (default per optimizer)")] = None,
    steps: Annotated[int | None, typer.Option(help="maximum steps (default 5000)")] = None,
    gtol: Annotated[
        float, typer.Option(help="the runs stop at this RMS gradient (informed runs: 1e-8)")
    ] = 1e-8,
    omega: OmegaOpt = 0.3,
    sigma: SigmaOpt = 0.5,
    lam: LamOpt = 0.01,
    A: AOpt = STANDARD_A_TEXT,
    n_test: Annotated[int, typer.Option(help="test-set size of each run")] = 1000,
    overlap_atol: Annotated[
        float, typer.Option(help="overlap distance to an informed run's end point")
    ] = 0.1,
    loss_rtol: Annotated[
        float, typer.Option(help="relative loss tolerance to an informed run's loss")
    ] = 0.02,
    store: Annotated[
        Path | None, typer.Option(help="SQLite sweep store of the runs (a rerun resumes)")
    ] = None,
    workers: Annotated[int, typer.Option(help="parallel processes (one run each)")] = 1,
    format: FormatOpt = "table",
    plot: Annotated[Path | None, typer.Option(help="figure of the fractions vs alpha")] = None,
) -> None:
    """Train `runs` problems per alpha from --init with --optimizer, and on the same data the
    semantic and positional starts with L-BFGS; classify each end point as semantic, positional
    or other (by its loss and overlaps against the informed runs) and print one row per alpha
    (App. E.4). Progress on stderr."""
    try:
        alphas = parse_alphas(alpha)
        if runs < 1:
            raise UsageError(f"--runs: must be >= 1, got {runs}")
        check_workers("--workers", workers)
        if format not in FORMATS:
            raise UsageError(f"--format: must be one of {FORMATS}, got {format!r}")
        if init not in INITS:
            raise UsageError(f"--init: must be one of {INITS}, got {init!r}")
        if optimizer not in OPTIMIZERS:
            raise UsageError(f"--optimizer: must be one of {OPTIMIZERS}, got {optimizer!r}")
        try:
            check_dimension(d)
            check_gtol(gtol)
            check_positive("overlap_atol", overlap_atol)
            check_nonnegative("loss_rtol", loss_rtol)
        except ValueError as err:
            raise usage(err) from None
        refuse_long(
            "--runs",
            RUN_SECONDS * runs * len(alphas) * d / 500,
            f"{runs} runs at {len(alphas)} alpha(s) (about {RUN_SECONDS * d / 500:.2g} s a run "
            f"at d = {d})",
        )
        from ..validity.outcomes import outcome_specs  # torch: once the cheap checks pass

        options: dict[str, Any] = dict(  # the study's keyword arguments
            d=d, init=init, optimizer=optimizer, lr=lr, steps=steps, gtol=gtol, omega=omega,
            sigma=sigma, lam=lam, A=parse_matrix(A), n_test=n_test, overlap_atol=overlap_atol,
            loss_rtol=loss_rtol,
        )  # fmt: skip
        try:
            outcome_specs(alphas, runs, **options)
        except ValueError as err:
            raise usage(err, {"n": "--alpha/--d"}) from None
        check_outputs({} if plot is None else {"--plot": figure_files(plot)}, {})
        if store is not None:
            check_store_option(store)
    except UsageError as err:
        fail(err)
    warn_long(
        RUN_SECONDS * runs * len(alphas) * d / 500,
        f"{runs} runs at {len(alphas)} alpha(s) (about {RUN_SECONDS * d / 500:.2g} s a run at "
        f"d = {d}, on one core)",
    )
    from ..sweep import SweepError
    from ..validity.outcomes import outcomes as run_outcomes

    backend = "process" if workers > 1 else "serial"
    try:
        study = run_outcomes(alphas, runs, store=store, backend=backend, workers=workers, **options)
    except SweepError as err:
        fail(err)
    typer.echo(render(study.fractions, format, TABLE_COLUMNS))
    if plot is not None:
        from ..figures.outcomes import outcome_figure, study_title

        parameters = study_title(
            d=d, runs=runs, init=init, optimizer=optimizer, lr=lr, steps=steps, gtol=gtol,
            omega=omega, sigma=sigma, lam=lam, A_text=A,
        )  # fmt: skip
        try:
            outcome_figure(study.fractions, plot, parameters)
        except (OSError, ValueError) as err:
            plot_failed(err)
