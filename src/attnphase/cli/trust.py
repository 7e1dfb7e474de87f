"""`attnphase trust`: where in (alpha, omega) the replica-symmetric answer is trustworthy
(docs/theory.md §9; `attnphase.validity.trust`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .._core.memory import check_data_memory
from ..params import check_dimension, check_int, check_unit_interval
from ..theory.method import QMC
from .app import app
from .common import (
    STANDARD_A_TEXT,
    AlphaOpt,
    AOpt,
    FormatOpt,
    LamOpt,
    SigmaOpt,
    UsageError,
    build_params,
    check_outputs,
    check_store_option,
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

TRUST_COLUMNS = [
    "alpha",
    "omega",
    "sem_kind",
    "sem_theta",
    "sim_sem_theta",
    "gamp_theta",
    "sem_m",
    "sim_sem_m",
    "global_min",
    "sem_rs_stability",
    "sem_jump_mass",
    "gamp_status",
    "verdict",
    "reasons",
]


def parse_omegas(text: str) -> list[float]:
    """Mixes omega: `parse_values` with each value in [0, 1]."""
    return parse_values(text, "--omega", lambda v: check_unit_interval("omega", v))


# a seed of a cell at d = 1000, alpha = 1, on 2 cores: about 8 s of L-BFGS (3 seeds with
# --no-gamp in 32 s) and 20 s with GAMP (1 seed 97 s, 3 seeds 138 s)
LBFGS_SECONDS, GAMP_SECONDS = 8.0, 12.0


@app.command(**command_help("trust"))
def trust(
    ctx: typer.Context,
    alpha: AlphaOpt = "0.3:2:8",
    omega: Annotated[str, typer.Option(help="values in [0, 1]: value, list or start:stop:num")] = (
        "0.1:0.5:5"
    ),
    d: Annotated[int, typer.Option(help="dimension d of L-BFGS and GAMP (>= 2)")] = 1000,
    seeds: Annotated[int, typer.Option(help="L-BFGS on seeds 0..N-1")] = 2,
    gamp: Annotated[bool, typer.Option("--gamp/--no-gamp", help="run GAMP")] = True,
    gamp_seeds: Annotated[
        int | None, typer.Option(help="GAMP on the first k seeds (default: all)")
    ] = None,
    gamp_max_iter: Annotated[int, typer.Option(help="GAMP iterations at most")] = 400,
    points: Annotated[int, typer.Option(help="Sobol points of the stability measure")] = 4096,
    randomisations: Annotated[int, typer.Option(help="scramblings of the stability measure")] = 4,
    n_test: Annotated[int, typer.Option(help="test-set size of the simulations")] = 2000,
    sigma: SigmaOpt = 0.5,
    lam: LamOpt = 0.01,
    A: AOpt = STANDARD_A_TEXT,
    store: Annotated[
        Path | None, typer.Option(help="sweep store that keeps finished points (resumes)")
    ] = None,
    format: FormatOpt = "table",
    plot: Annotated[Path | None, typer.Option(help="the (alpha, omega) overlay figure")] = None,
) -> None:
    """One row per (alpha, omega): the theory's semantic and positional fixed points with
    their RS stability and jump mass, L-BFGS and GAMP at finite d, and the verdict
    (trustworthy, or rugged with the failed criteria)."""
    try:
        alphas = parse_alphas(alpha)
        omegas = parse_omegas(omega)
        p = build_params(0.0, sigma, lam, A)
        if p.L != 2:
            raise UsageError(f"--A: the map uses the exact L = 2 engine, got L = {p.L}")
        if format not in FORMATS:
            raise UsageError(f"--format: must be one of {FORMATS}, got {format!r}")
        if not gamp:
            refuse_ignored(
                ctx, ("gamp_seeds", "gamp_max_iter"), "applies to GAMP, which --no-gamp turns off"
            )
        try:
            check_dimension(d)
            check_int("seeds", seeds)
            if gamp_seeds is not None:
                check_int("gamp_seeds", gamp_seeds)
                if gamp_seeds > seeds:
                    raise ValueError(
                        f"gamp_seeds: GAMP runs on the simulations' seeds, at most --seeds = "
                        f"{seeds}, got {gamp_seeds}"
                    )
            check_int("gamp_max_iter", gamp_max_iter)
            QMC(points, randomisations)  # a power of two, >= MIN_POINTS; scramblings >= 1
            check_int("n_test", n_test)
            n = int(round(max(alphas) * d))  # the data's memory and the runs' time, before torch
            check_data_memory(d, n, n_test, p.L)
            runs = len(omegas) * sum(alphas) * (d / 1000) ** 2  # a run's cost grows like alpha d^2
            gamp_runs = (gamp_seeds if gamp_seeds is not None else seeds) if gamp else 0
            seconds = runs * (LBFGS_SECONDS * seeds + GAMP_SECONDS * gamp_runs)
            refuse_long(
                "--seeds",
                seconds,
                f"{seeds} seed(s) at {len(alphas)} alpha(s) x {len(omegas)} omega(s) (about "
                f"{LBFGS_SECONDS:.2g} s of L-BFGS and {GAMP_SECONDS:.2g} s of GAMP a seed at "
                "d = 1000, alpha = 1; it grows like alpha d^2)",
            )
            from ..sim import SimConfig

            SimConfig(params=p, d=d, alpha=max(alphas), n_test=n_test)  # the library's checks
        except ValueError as err:
            raise usage(err) from None
        if store is not None:
            check_store_option(store)
        if plot is not None:
            check_outputs({"--plot": figure_files(plot)}, {})
    except UsageError as err:
        fail(err)
    warn_long(seconds, f"the simulations and GAMP runs of {len(alphas) * len(omegas)} point(s)")
    if points < 1024:
        typer.secho(
            f"warning: --points {points}: the stability measure's jump mass is resolved to about "
            f"1/{points * randomisations}; the defaults use 4096 x 4",
            err=True,
            fg="yellow",
        )
    from ..validity.trust import trust_map

    rows = trust_map(
        p,
        alphas,
        omegas,
        d,
        seeds,
        gamp=gamp,
        gamp_seeds=gamp_seeds,
        gamp_max_iter=gamp_max_iter,
        points=points,
        randomisations=randomisations,
        n_test=n_test,
        store=store,
        progress=show_progress(),
    )
    columns = [c for c in TRUST_COLUMNS if any(c in r for r in rows)]  # --no-gamp: no gamp_*
    typer.echo(render(rows, format, columns))
    if plot is not None:
        from ..figures.trust import trust_figure

        note = f"GAMP {gamp_seeds or seeds} seed(s)" if gamp else "no GAMP"
        try:
            trust_figure(
                rows, plot, f"A = ({A}), {note}, stability {points} x {randomisations} points"
            )
        except (OSError, ValueError) as err:
            plot_failed(err)
