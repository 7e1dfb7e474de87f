"""`attnphase gamp`: GAMP on data (docs/theory.md §8), optionally traced against the state
evolution."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from .._core.interrupt import Interrupted, PartialInterrupt
from .._core.memory import check_memory, data_bytes, data_text
from .._core.progress import progress_bar
from ..params import DEFAULT_N_TEST, check_damping, check_dimension, check_int, variant_of
from .app import app
from .common import (
    STANDARD_A_TEXT,
    AlphaOpt,
    AOpt,
    EncodingOpt,
    FormatOpt,
    HeadsOpt,
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
    check_outputs,
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
from .tables import FORMATS, render

GAMP_COLUMNS = [
    "alpha",
    "seed",
    "init",
    "q",
    "m",
    "theta",
    "V",
    "test_error",
    "train_loss",
    "grad_norm",
    "converged",
    "iterations",
    "status",
    "seconds",
]
TRACE_COLUMNS = [
    "alpha",
    "init",
    "seed",
    "iteration",
    "q",
    "se_q",
    "m",
    "se_m",
    "theta",
    "se_theta",
    "V",
    "se_V",
]


def _print(runs: list, format: str, trace: bool) -> None:
    """One row per run, or with `trace` one per iteration, on standard output."""
    from ..gamp import trace_table

    if trace:
        rows = [row for res in runs for row in trace_table(res)]
        typer.echo(render(rows, format, TRACE_COLUMNS))
    else:
        typer.echo(render([res.as_dict() for res in runs], format, GAMP_COLUMNS))


# a GAMP run at d = 1000, alpha = 1.5: about 5 s (2 seeds 15.5 s, 6 seeds 35.0 s, on 2 cores);
# an iteration's cost grows like n d = alpha d^2
GAMP_RUN_SECONDS = 5.0


@app.command(**command_help("gamp"))
def gamp(
    d: Annotated[int, typer.Option(help="dimension d (>= 2)")] = 1000,
    alpha: AlphaOpt = "1.5",
    omega: OmegaOpt = 0.3,
    sigma: SigmaOpt = 0.5,
    lam: LamOpt = 0.01,
    A: AOpt = STANDARD_A_TEXT,
    rank: RankOpt = 1,
    teacher_rank: TeacherRankOpt = 1,
    encoding: EncodingOpt = None,
    init: Annotated[
        str, typer.Option(help="semantic, positional, random, or a list of them")
    ] = "semantic",
    seeds: Annotated[int, typer.Option(help="runs seeds 0..N-1 (the simulations' data)")] = 1,
    max_iter: Annotated[int, typer.Option(help="maximum GAMP iterations (>= 1)")] = 1000,
    damping: Annotated[
        float | None, typer.Option(help="weight of the old value, in [0, 1) [0.75]")
    ] = None,
    format: FormatOpt = "table",
    trace: Annotated[
        bool, typer.Option(help="per-iteration overlaps beside the state evolution's (se_*)")
    ] = False,
    plot: Annotated[
        Path | None,
        typer.Option(help="draw GAMP's iterates beside the state evolution's here (computes it)"),
    ] = None,
    mask: MaskOpt = "none",
    target_mask: TargetMaskOpt = "none",
    heads: HeadsOpt = 1,
    rope: RopeOpt = None,
) -> None:
    """GAMP (the paper's Appendix B) on the data `attnphase simulate` draws for each seed: one row
    per alpha, start and seed, or with --trace one row per iteration beside the state evolution;
    --plot draws the latter (predicted vs actual, per overlap) for one alpha and one start."""
    try:
        p = build_params(omega, sigma, lam, A, rank, teacher_rank, encoding)
        try:
            variant = variant_of(
                False,
                mask=mask,
                target_mask=target_mask,
                heads=heads,
                rotary=parse_frequencies(rope),
            )
            p = replace(p, variant=variant)
        except ValueError as err:
            raise usage(err) from None
        if format not in FORMATS:
            raise UsageError(f"--format: must be one of {FORMATS}, got {format!r}")
        try:
            d = check_dimension(d)
            alphas = parse_alphas(alpha)
            inits = parse_list(init, "--init", str)
            check_int("seeds", seeds)
            check_int("max_iter", max_iter)
            damping = None if damping is None else check_damping(damping)
            n = int(round(max(alphas) * d))  # the data's memory and the runs' time, before torch
            need = data_bytes(d, n, DEFAULT_N_TEST, p.L)  # a fixed test set: d sizes it all
            check_memory("d", need, data_text(d, n, DEFAULT_N_TEST, p.L))
            seconds = GAMP_RUN_SECONDS * seeds * len(inits) * sum(alphas) / 1.5 * (d / 1000) ** 2
            refuse_long(
                "--seeds",
                seconds,
                f"{seeds} seed(s) x {len(inits)} start(s) x {len(alphas)} alpha(s) (about "
                f"{GAMP_RUN_SECONDS:.2g} s a run at d = 1000, alpha = 1.5; it grows like "
                "alpha d^2)",
            )
            from ..gamp.algorithm import DEFAULT_DAMPING, check_init  # torch, numba

            damping = DEFAULT_DAMPING if damping is None else damping
            width = rank * heads
            for one in inits:
                check_init(one, d, width)
            from ..sim import SimConfig

            SimConfig(params=p, d=d, alpha=max(alphas))  # the library's own checks of the data
        except ValueError as err:
            raise usage(err, {"max_iter": "--max-iter"}) from None
        if plot is not None:
            if len(alphas) * len(inits) > 1:
                raise UsageError("--plot: draws one alpha and one --init; give one of each")
            check_outputs({"--plot": figure_files(plot)}, {})
    except UsageError as err:
        fail(err)
    warn_long(seconds, f"{seeds * len(inits) * len(alphas)} GAMP run(s) at d = {d}")
    from ..gamp import gamp_runs

    runs: list = []
    try:
        for a in alphas:
            for one in inits:
                runs += gamp_runs(
                    p,
                    d,
                    a,
                    init=one,
                    seeds=seeds,
                    damping=damping,
                    max_iter=max_iter,
                    progress=show_progress(),
                )
    except PartialInterrupt as err:
        runs += err.finished
        if runs:
            _print(runs, format, trace)
        total = len(alphas) * len(inits) * seeds
        raise Interrupted(
            f"{len(runs)} of {total} runs finished" + (" (printed above)" if runs else "")
        ) from None
    _print(runs, format, trace)
    if plot is not None:
        from ..figures.gamp import gamp_trace_figure
        from ..gamp import trace_table

        bar = progress_bar(runs, enabled=show_progress(), desc="state evolution", unit="run")
        try:
            with bar:
                rows = [row for res in bar for row in trace_table(res)]
        except KeyboardInterrupt:
            raise Interrupted(
                f"all {len(runs)} runs finished (printed above); --plot {plot} not written (the "
                "state evolution beside each run was not finished)"
            ) from None
        try:
            gamp_trace_figure(runs, rows, plot)
        except (OSError, ValueError) as err:
            plot_failed(err)
