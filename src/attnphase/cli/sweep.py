"""`attnphase sweep`: resumable grids of theory points or simulations."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..sweep.spec import KINDS, PARAMETERS
from .app import app
from .common import (
    FormatOpt,
    UsageError,
    check_scheduler_option,
    check_store_option,
    check_workers,
    fail,
    show_progress,
    usage,
)
from .help import command_help
from .tables import FORMATS, render

_PARAGRAPHS = (
    "Run a grid of theory points or simulations. Finished points are kept in the store and "
    "skipped on rerun; failed points are recorded and retried by a rerun (unless --no-retry); "
    "concurrent runs on one store compute each point once (a point another run is computing "
    'is waited for). Ends with "N computed, M already stored, K failed" on stderr.',
    f"Theory parameters: {', '.join(PARAMETERS['theory'])} (alpha has no default; branch is "
    "the start: semantic, positional or trivial, and mixed or clustered with method=qmc; "
    "method=gauss-hermite, the default, solves the paper's L=2 model with its order and "
    "solver options, method=qmc any model with points, randomisations and qmc_seed; untied and "
    "clusters >= 2 with label_correlation and cluster_norm choose the variant).",
    f"Simulation parameters: {', '.join(PARAMETERS['simulation'])} (seed is one seed value; "
    "--seeds N sweeps seed over 0..N-1).",
    "Defaults are those of ModelParams and solve (theory) or SimConfig (simulation); giving a "
    "default explicitly names the same point. Values: --grid name=v1,v2 or "
    "name=start:stop:num. order, A and encodings are multi-valued: in --set a comma list is "
    "one value (--set order=24,8 --set A=0.6,0.4,0.4,0.6), in --grid values are separated by ';' "
    '(--grid "order=32,12;64,24").',
)


DEFAULT_WORKERS = 2  # local worker processes when no option says where points run


@app.command(help="\n\n".join(_PARAGRAPHS), **command_help("sweep"))
def sweep(
    kind: Annotated[str, typer.Option(help="theory|simulation")] = "theory",
    grid: Annotated[
        list[str] | None,
        typer.Option(
            help="name=v1,v2 or name=start:stop:num; order/A/encodings: v1;v2 (repeatable)"
        ),
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option(
            "--set", help="fixed name=value; order/A/encodings: one comma list (repeatable)"
        ),
    ] = None,
    seeds: Annotated[
        int | None,
        typer.Option(
            help="simulation: the number of seeds, 0..N-1 (a count, as in `simulate`); "
            "for chosen seed values use --grid seed=3,7"
        ),
    ] = None,
    store: Annotated[Path, typer.Option(help="SQLite results store (resumable)")] = Path(
        "results/sweep.sqlite"
    ),
    workers: Annotated[
        int | None, typer.Option(help="local worker processes (1: serial)  [default: 2]")
    ] = None,
    dask_workers: Annotated[int, typer.Option(help="start a Dask LocalCluster of N")] = 0,
    scheduler: Annotated[str | None, typer.Option(help="Dask scheduler tcp://host:port")] = None,
    retry: Annotated[
        bool, typer.Option("--retry/--no-retry", help="recompute points stored as failed")
    ] = True,
    export: Annotated[Path | None, typer.Option(help="write the table (.csv or .parquet)")] = None,
    format: FormatOpt = "table",
    batch: Annotated[
        int,
        typer.Option(
            help="points per worker task; theory points of a task solved together (QMC: one "
            "prox call a round; pays on a GPU, --set device=cuda)"
        ),
    ] = 1,
) -> None:
    from ..sweep import SweepSpec, parse_grid, parse_set

    try:
        if kind not in KINDS:
            raise UsageError(f"--kind: must be one of {KINDS}, got {kind!r}")
        given = [
            o for o, v in (("--workers", workers), ("--scheduler", scheduler)) if v is not None
        ]
        given += ["--dask-workers"] if dask_workers else []
        if len(given) > 1:  # each names where the points run: one of them would be ignored
            raise UsageError(f"{'/'.join(given)}: give one (where the points run)")
        workers = DEFAULT_WORKERS if workers is None else workers
        check_workers("--workers", workers)
        if dask_workers < 0:
            raise UsageError(f"--dask-workers: must be >= 0, got {dask_workers}")
        if dask_workers > 0:
            check_workers("--dask-workers", dask_workers)
        if format not in FORMATS:
            raise UsageError(f"--format: must be one of {FORMATS}, got {format!r}")
        if batch < 1:
            raise UsageError(f"--batch: must be >= 1, got {batch}")
        try:
            values = parse_grid(grid or [], kind)
        except ValueError as err:
            raise UsageError(f"--grid: {err}") from None
        try:
            fixed = parse_set(set_ or [], kind)
        except ValueError as err:
            raise UsageError(f"--set: {err}") from None
        if seeds is not None:
            if kind != "simulation":
                raise UsageError("--seeds: theory points have no seed")
            if seeds < 1:
                raise UsageError(f"--seeds: must be >= 1, got {seeds}")
            if "seed" in values or "seed" in fixed:
                raise UsageError("--seeds: give either --seeds N or seed values, not both")
            values["seed"] = list(range(seeds))
        both = sorted(set(values) & set(fixed))
        if both:
            raise UsageError(f"--grid/--set: {', '.join(both)} given in both")
        try:
            spec = SweepSpec(kind, values, fixed)
        except ValueError as err:  # a parameter's value: the option that gave it
            options = {k: "--grid" for k in values} | {k: "--set" for k in fixed}
            options["seed"] = "--seeds" if seeds is not None else options.get("seed", "--grid")
            raise usage(err, options) from None
        from ..sweep import SweepError, check_export, run_sweep, write_table  # pandas: from here

        try:
            if export is not None:
                check_export(export, "--export")
        except ValueError as err:
            raise UsageError(str(err)) from None
        check_store_option(store)
        check_scheduler_option(scheduler)
    except UsageError as err:
        fail(err)
    backend = (
        "dask" if (dask_workers > 0 or scheduler) else ("process" if workers > 1 else "serial")
    )
    try:
        table = run_sweep(
            spec,
            store,
            backend=backend,
            workers=dask_workers or workers,
            scheduler=scheduler,
            retry=retry,
            progress=show_progress(),
            batch=batch,
        )
    except SweepError as err:
        fail(err)
    if export is not None:
        write_table(table, export)
    shown = table
    if format == "table" and "run_error" in table:  # the error's first line (the store keeps all)
        shown = table.assign(run_error=[_first_line(e) for e in table["run_error"]])
    typer.echo(render(shown.to_dict("records"), format))
    failed = table[table["run_status"] != "ok"] if not table.empty else table
    if len(table) and len(failed) == len(table):
        first = str(failed["run_error"].iloc[0]).splitlines()[0]
        fail(f"every point of this grid failed ({len(table)}); the first: {first}", code=1)
    converged = table["converged"].fillna(False).astype(bool) if "converged" in table else None
    if kind == "theory" and converged is not None and len(table) and not converged.any():
        fail(  # as `attnphase theory` answers a table without one converged fixed point
            f"none of the {len(table)} fixed points of this grid converged (their status column "
            "says why)",
            code=1,
        )


def _first_line(error: object) -> object:
    """A stored error's first line (its traceback left in the store); anything else as it is."""
    return error.splitlines()[0] if isinstance(error, str) and error else error
