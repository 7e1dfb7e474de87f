"""`attnphase scaling`: alpha_c, alpha_l and the ends of both branches against the sequence
length L (docs/scaling.md; `attnphase.scaling`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..transitions.paths import VALUE_COLUMNS
from .app import app
from .common import (
    FormatOpt,
    LamOpt,
    SigmaOpt,
    UsageError,
    check_outputs,
    check_scheduler_option,
    check_store_option,
    check_workers,
    distinct,
    fail,
    parse_list,
    plot_failed,
    refuse_ignored,
    refuse_long,
    show_progress,
    usage,
    warn_long,
)
from .help import command_help
from .tables import FORMATS, render
from .trust import parse_omegas

SCALING_COLUMNS = ["L", "omega", "encodings", *VALUE_COLUMNS, "mixed_found", "seconds", "notes"]
FILES = {"table": "scaling.csv", "figure": "scaling.png", "store": "scaling.sqlite"}


def parse_lengths(text: str) -> list[int]:
    """Sequence lengths: a value, a list a,b,c or a range start:stop (inclusive, start <= stop)."""
    from ..scaling.family import check_length

    try:
        if ":" in text:
            lo, hi = (int(v) for v in text.split(":"))
            ends = [lo, hi]
        else:
            ends = [int(v) for v in text.split(",")]
        if not ends:
            raise ValueError
    except ValueError:
        raise UsageError(
            f"--L: must be an integer, a list a,b,c or a range start:stop, got {text!r}"
        ) from None
    try:
        ends = [check_length(L) for L in ends]  # a range's ends first: 2:100000 names 100000
    except ValueError as err:
        raise UsageError(f"--L: {err}") from None
    if ":" not in text:
        return distinct(ends, "--L")
    if ends[0] > ends[1]:
        raise UsageError(f"--L: a range start:stop needs start <= stop, got {text!r}")
    return list(range(ends[0], ends[1] + 1))


def parse_families(text: str) -> list[str]:
    from ..scaling.family import FAMILIES

    families = parse_list(text, "--encodings", str)
    bad = [f for f in families if f not in FAMILIES]
    if bad:
        raise UsageError(f"--encodings: must be a list of {','.join(FAMILIES)}, got {text!r}")
    return families


@app.command(**command_help("scaling"))
def scaling(
    ctx: typer.Context,
    L: Annotated[str, typer.Option("--L", help="sequence lengths: value, list or start:stop")] = (
        "2:8"
    ),
    omega: Annotated[str, typer.Option(help="values in [0, 1]: value, list or start:stop:num")] = (
        "0.1,0.3,0.5"
    ),
    encodings: Annotated[
        str, typer.Option(help="encoding families: linear (rank 1), simplex (rank L - 1)")
    ] = "linear",
    a: Annotated[float, typer.Option(help="the target's diagonal (0.6: the paper's A)")] = 0.6,
    sigma: SigmaOpt = 0.5,
    lam: LamOpt = 0.01,
    alpha_min: Annotated[float, typer.Option(help="lower end of the alpha window")] = 0.1,
    alpha_max: Annotated[float, typer.Option(help="upper end of the alpha window")] = 16.0,
    num: Annotated[int, typer.Option(help="alphas on the window (geometric)")] = 16,
    points: Annotated[int, typer.Option(help="QMC: Sobol points per scrambling (L >= 3)")] = 1024,
    randomisations: Annotated[int, typer.Option(help="QMC: scramblings (>= 2)")] = 4,
    max_points: Annotated[
        int | None,
        typer.Option(
            help="QMC: the points are doubled while the scramblings disagree on which branches "
            "exist, up to this many [max(--points, 2048)]"
        ),
    ] = None,
    precision: Annotated[
        float | None,
        typer.Option(
            help="climb the same ladder (QMC points doubled up to --max-points; at L = 2 the "
            "Gauss-Hermite orders raised) until the errors of alpha_c and alpha_l are at most "
            "this fraction of their value; the row's precision_status says if it was met"
        ),
    ] = None,
    mixed: Annotated[
        bool, typer.Option("--mixed/--no-mixed", help="search fixed points with m, theta != 0")
    ] = True,
    time_limit: Annotated[
        float | None, typer.Option(help="start no new L after this many seconds")
    ] = None,
    workers: Annotated[int, typer.Option(help="local processes (1: this process)")] = 1,
    scheduler: Annotated[str | None, typer.Option(help="Dask scheduler tcp://host:port")] = None,
    store: Annotated[
        Path | None,
        typer.Option(help="sweep store that keeps finished points [--plot's scaling.sqlite]"),
    ] = None,
    plot: Annotated[
        Path | None,
        typer.Option(help="folder for scaling.png (+ PDF), scaling.csv and the store"),
    ] = None,
    format: FormatOpt = "table",
    mask: Annotated[
        str,
        typer.Option(
            help="none | causal: a causal student facing the causal target (a on the diagonal, "
            "1 - a over the earlier tokens; linear family)"
        ),
    ] = "none",
    heads: Annotated[
        int, typer.Option(help="tied heads of rank 1, averaged with equal weights (linear family)")
    ] = 1,
) -> None:
    """alpha_c, alpha_l and the ends of the semantic and positional branches with their errors
    against the sequence length L, for each omega and encoding family (docs/scaling.md), with a
    search for fixed points where m and theta are both non-zero. Resumable: finished points
    stay in the store, and a rerun computes only what is missing."""
    from ..scaling.family import family_model, family_variant
    from ..scaling.settings import ScanSettings

    try:
        lengths = parse_lengths(L)
        omegas = parse_omegas(omega)
        families = parse_families(encodings)
        try:
            for family in families:
                family_variant(family, mask, heads)
        except ValueError as err:
            raise usage(err) from None
        if format not in FORMATS:
            raise UsageError(f"--format: must be one of {FORMATS}, got {format!r}")
        try:
            settings = ScanSettings(
                a=a,
                sigma=sigma,
                lam=lam,
                alpha_min=alpha_min,
                alpha_max=alpha_max,
                num=num,
                points=points,
                randomisations=randomisations,
                max_points=max_points,
                precision=precision,
            )
            models = [
                family_model(n, w, f, a=a, sigma=sigma, lam=lam, mask=mask, heads=heads)
                for n in lengths
                for w in omegas
                for f in families
            ]
        except ValueError as err:
            raise usage(err) from None
        exact = all(m.is_l2 for m in models)
        seconds = [settings.point_seconds(m) for m in models]
        slowest = max(range(len(models)), key=seconds.__getitem__)
        refuse_long(
            "--points",
            seconds[slowest],
            f"the scan at L = {models[slowest].L} with {points} QMC points x {randomisations} "
            "scramblings (doubled while they disagree) would",
        )
        if exact:
            refuse_ignored(
                ctx,
                ("points", "randomisations", "max_points"),
                "applies to the QMC engine (L >= 3); every row here is solved exactly at L = 2 "
                "(Gauss-Hermite)",
            )
        if time_limit is not None and not 0 < time_limit < float("inf"):
            raise UsageError(
                f"--time-limit: must be a finite number > 0 of seconds, got {time_limit}"
            )
        check_workers("--workers", workers)
        store_option = "--store"
        if plot is not None:
            files = [plot / FILES["table"], plot / FILES["figure"]]
            pdf = files[1].with_suffix(".pdf")
            check_outputs({"--plot": files + [pdf]}, {"--plot": [plot]})  # the folder first
            if store is None:  # the store in --plot's folder: its faults are --plot's
                store, store_option = plot / FILES["store"], "--plot"
        if store is not None:
            check_store_option(store, store_option)
        check_scheduler_option(scheduler)
    except UsageError as err:
        fail(err)
    warn_long(
        sum(seconds) / (workers if scheduler is None else 1),
        f"{len(models)} scaling points (fewer where the store holds them)",
    )
    from ..scaling.table import scaling_table

    backend = "dask" if scheduler else ("process" if workers > 1 else "serial")
    if plot is not None:
        try:
            plot.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            fail(f"--plot: cannot create the folder {plot}: {err.strerror}")
    table = scaling_table(
        lengths,
        omegas,
        families,
        settings,
        mixed=mixed,
        mask=mask,
        heads=heads,
        store=store,
        backend=backend,
        workers=workers,
        scheduler=scheduler,
        time_limit=time_limit,
        progress=show_progress(),
    )
    variant = (["mask"] if mask != "none" else []) + (["heads"] if heads > 1 else [])
    columns = SCALING_COLUMNS[:3] + variant + SCALING_COLUMNS[3:]
    if precision is not None:
        columns.insert(-1, "precision_status")
    typer.echo(render(table.to_dict("records"), format, columns))
    if plot is not None:
        from ..figures.scaling import scaling_figure
        from ..sweep.run import write_table

        try:
            write_table(table, plot / FILES["table"])
            scaling_figure(table, plot / FILES["figure"])
        except (OSError, ValueError) as err:
            plot_failed(err)
