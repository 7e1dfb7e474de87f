"""`attnphase landscape`: L-BFGS from starts of every overlap c with the teacher (docs/theory.md
§9)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .._core.interrupt import Interrupted, PartialInterrupt
from .._core.memory import check_data_memory
from ..params import check_dimension, check_int, check_unit_interval
from ..run_options import TRACE_METHODS
from .app import app
from .common import (
    STANDARD_A_TEXT,
    AlphaOpt,
    AOpt,
    EncodingOpt,
    FormatOpt,
    LamOpt,
    OmegaOpt,
    RankOpt,
    SigmaOpt,
    TeacherRankOpt,
    UsageError,
    build_params,
    check_outputs,
    fail,
    figure_files,
    parse_alphas,
    parse_values,
    plot_failed,
    refuse_ignored,
    refuse_long,
    show_progress,
    usage,
    warn_long,
)
from .help import command_help
from .tables import FORMATS, render

LANDSCAPE_COLUMNS = [
    "alpha",
    "c",
    "seed",
    "theta",
    "m",
    "q",
    "train_loss",
    "test_error",
    "grad_norm",
    "hessian_min",
    "V_sim",
    "V_sim_err",
]


def parse_starts(text: str) -> list[float]:
    """Start overlaps c: `parse_values` with each value in [0, 1]."""
    return parse_values(text, "--start-overlap", lambda v: check_unit_interval("start_overlap", v))


# an L-BFGS run and its dense tr(H^-1) at d = 1000, alpha = 2: about 3.7 s (1 seed 10.6 s,
# 3 seeds 17.9 s, one start, on 2 cores); L-BFGS grows like alpha d^2, the dense trace like d^3
RUN_SECONDS = 3.7


@app.command(**command_help("landscape"))
def landscape(
    ctx: typer.Context,
    d: Annotated[int, typer.Option(help="dimension d (>= 2)")] = 1000,
    alpha: AlphaOpt = "2",
    omega: OmegaOpt = 0.3,
    sigma: SigmaOpt = 0.5,
    lam: LamOpt = 0.01,
    A: AOpt = STANDARD_A_TEXT,
    rank: RankOpt = 1,
    teacher_rank: TeacherRankOpt = 1,
    encoding: EncodingOpt = None,
    start_overlap: Annotated[
        str, typer.Option(help="overlaps c in [0, 1]: value, list a,b or start:stop:num")
    ] = "0:1:6",
    seeds: Annotated[int, typer.Option(help="runs seeds 0..N-1 (the simulations' data)")] = 2,
    n_test: Annotated[int, typer.Option(help="test-set size")] = 10_000,
    method: Annotated[
        str, typer.Option(help="tr(H^-1): auto|dense|hutchinson (auto: dense up to d r = 3000)")
    ] = "auto",
    probes: Annotated[int, typer.Option(help="Hutchinson probes (>= 2)")] = 30,
    format: FormatOpt = "table",
    plot: Annotated[
        Path | None, typer.Option(help="theta_final(c) and the training loss (needs r = t = 1)")
    ] = None,
) -> None:
    """L-BFGS from Q0 = c Q* + sqrt(1 - c^2) g on the data `attnphase simulate` draws for each
    seed: one row per (alpha, c, seed) with the end point's overlaps, losses, smallest Hessian
    eigenvalue and V_sim = sigma^2 tr(H^-1)/d. A flat theta_final(c): one minimum; a sloped
    one: a continuum of minima."""
    try:
        alphas = parse_alphas(alpha)
        starts = parse_starts(start_overlap)
        p = build_params(omega, sigma, lam, A, rank, teacher_rank, encoding)
        if format not in FORMATS:
            raise UsageError(f"--format: must be one of {FORMATS}, got {format!r}")
        try:
            check_dimension(d)
            check_int("seeds", seeds)
            check_int("n_test", n_test)
            check_int("probes", probes, minimum=2)
            n = int(round(max(alphas) * d))  # the data's memory, before torch
            check_data_memory(d, n, n_test, p.L)
            seconds = RUN_SECONDS * seeds * len(starts) * sum(alphas) / 2 * (d / 1000) ** 2
            refuse_long(
                "--seeds",
                seconds,
                f"{seeds} seed(s) x {len(starts)} start(s) x {len(alphas)} alpha(s) (about "
                f"{RUN_SECONDS:.2g} s a run at d = 1000, alpha = 2; it grows like alpha d^2 "
                "at least)",
            )
        except ValueError as err:
            raise usage(err) from None
        if method not in TRACE_METHODS:
            raise UsageError(f"--method: must be one of {TRACE_METHODS}, got {method!r}")
        if method == "dense":
            refuse_ignored(ctx, ("probes",), "applies to --method hutchinson, not dense")
        elif method == "auto":
            from ..validity.landscape import DENSE_MAX, trace_method

            if trace_method(method, d * p.rank) == "dense":  # what the run takes
                refuse_ignored(
                    ctx,
                    ("probes",),
                    f"applies to --method hutchinson; auto takes dense at d r = {d * p.rank} "
                    f"<= {DENSE_MAX} (give --method hutchinson)",
                )
        if plot is not None:
            if p.rank != 1 or p.teacher_rank != 1:
                raise UsageError(
                    f"--plot: the figure draws scalar theta, so it needs --rank 1 and "
                    f"--teacher-rank 1, got {p.rank} and {p.teacher_rank}"
                )
            check_outputs({"--plot": figure_files(plot)}, {})
    except UsageError as err:
        fail(err)
    warn_long(seconds, f"{len(alphas) * len(starts) * seeds} landscape run(s) at d = {d}")
    from ..validity.landscape import probe_landscape

    total = len(alphas) * len(starts) * seeds
    try:
        result = probe_landscape(
            p,
            d,
            alphas,
            starts,
            range(seeds),
            n_test=n_test,
            method=method,
            probes=probes,
            progress=show_progress(),
        )
    except PartialInterrupt as err:
        rows = err.finished[0].rows()
        if rows:
            typer.echo(render(rows, format, LANDSCAPE_COLUMNS))
        raise Interrupted(
            f"{len(rows)} of {total} starts finished" + (" (printed above)" if rows else "")
        ) from None
    rows = result.rows()
    typer.echo(render(rows, format, LANDSCAPE_COLUMNS))
    if plot is not None:
        from ..figures.landscape import landscape_figure

        try:
            landscape_figure(rows, plot)
        except (OSError, ValueError) as err:
            plot_failed(err)
