"""`attnphase sweep`: resumable grids of theory points or simulations."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from ..tables import FORMATS, render
from .app import app
from .common import FormatOpt, UsageError, _fail


@app.command()
def sweep(
    kind: Annotated[str, typer.Option(help="theory|simulation")] = "theory",
    grid: Annotated[
        list[str], typer.Option(help="name=v1,v2 or name=start:stop:num (repeatable)")
    ] = None,
    set_: Annotated[list[str], typer.Option("--set", help="fixed name=value (repeatable)")] = None,
    store: Annotated[Path, typer.Option(help="SQLite results store (resumable)")] = Path(
        "results/sweep.sqlite"
    ),
    workers: Annotated[int, typer.Option(help="local processes (or Dask workers)")] = 2,
    dask_workers: Annotated[int, typer.Option(help="start a Dask LocalCluster of N")] = 0,
    scheduler: Annotated[str | None, typer.Option(help="Dask scheduler tcp://host:port")] = None,
    export: Annotated[Path | None, typer.Option(help="write the table (.csv or .parquet)")] = None,
    format: FormatOpt = "table",
) -> None:
    """Run a grid of theory points or simulations; finished points are kept in the store and
    skipped on rerun, errors are recorded per point."""
    from ..sweep import KINDS, StoreError, SweepSpec, parse_grid, run_sweep

    try:
        if kind not in KINDS:
            raise UsageError(f"--kind must be one of {KINDS}, got {kind!r}")
        try:
            spec = SweepSpec(
                kind, parse_grid(grid or []), {k: v[0] for k, v in parse_grid(set_ or []).items()}
            )
        except ValueError as err:
            raise UsageError(f"--grid/--set: {err}") from None
        if export is not None and export.suffix not in (".csv", ".parquet"):
            raise UsageError(f"--export must end in .csv or .parquet, got {export}")
        if format not in FORMATS:
            raise UsageError(f"--format must be one of {FORMATS}, got {format!r}")
    except UsageError as err:
        _fail(err)
    backend = (
        "dask" if (dask_workers > 0 or scheduler) else ("process" if workers > 1 else "serial")
    )
    try:
        df = run_sweep(
            spec, store, backend=backend, workers=dask_workers or workers, scheduler=scheduler
        )
    except StoreError as err:
        _fail(err)
    if export is not None:
        export.parent.mkdir(parents=True, exist_ok=True)
        tmp = export.with_name(f".{export.name}.tmp")
        df.to_parquet(tmp) if export.suffix == ".parquet" else df.to_csv(tmp, index=False)
        os.replace(tmp, export)
    typer.echo(render(df.to_dict("records"), format))
