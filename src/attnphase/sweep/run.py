"""Running a sweep: validate, then the points of the spec through the one runner
(`runner.run_points`), then the store's table and the summary.

Order of work: the spec is validated when it is built; the store location is checked and an
existing store verified; the backend is started (a Dask scheduler must answer); only then is a
new store file created. Concurrent runs on one store share the grid: each point is computed
once, by whichever run claims it first.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from ..io import atomic_output, check_output_file
from .points import BatchFunction, PointFunction, evaluate, evaluate_many
from .runner import run_points
from .spec import SweepSpec
from .store import ResultStore

EXPORT_SUFFIXES = (".csv", ".parquet")


def run_sweep(
    spec: SweepSpec,
    store: str | Path,
    *,
    backend: str = "process",
    workers: int = 2,
    scheduler: str | None = None,
    progress: bool | None = None,
    retry: bool = True,
    evaluate_point: PointFunction | None = None,
    batch: int = 1,
    evaluate_batch: BatchFunction | None = None,
) -> pd.DataFrame:
    """Compute the points of `spec` that `store` lacks; return their rows of the store's table
    (`readable`).

    retry: recompute points stored as failed (their errors stay in the attempts table).
    evaluate_point(kind, params) -> dict replaces the theory/simulation computation (it must be
    importable by workers). batch: up to this many points go to a worker as one task, theory
    points solved together (`points.evaluate_many`, or evaluate_batch(kind, [params, ...]) with
    evaluate_point): QMC points share one prox call a round, which pays on a GPU (2.4x for 16
    L = 3 points on an H200, docs/numerics.md) and not on a CPU (1.06x), every number the one
    computed alone. The summary line (`SweepSummary`) goes to stderr, its counts to
    `table.attrs["summary"]` ({"computed": N, "stored": M, "failed": K}).
    """
    summary = run_points(
        [(rid, spec.kind, params) for rid, params in spec.runs()],
        evaluate_point or evaluate,
        store=store,
        backend=backend,
        workers=workers,
        scheduler=scheduler,
        retry=retry,
        progress=progress,
        desc=f"{spec.kind} sweep",
        batch=batch,
        many=evaluate_batch if evaluate_point is not None else evaluate_many,
    )
    with ResultStore(store) as db:
        table = readable(db.frame({rid for rid, _ in spec.runs()}), spec)
    table.attrs["summary"] = summary.counts()
    print(summary, file=sys.stderr, flush=True)
    return table


# the observables a reader looks for first, after the grid's parameters
LEADING = ("q", "m", "theta", "V", "test_error", "train_loss", "linear_test_error", "converged")


def readable(table: pd.DataFrame, spec: SweepSpec) -> pd.DataFrame:
    """The spec's points of a store's table (`ResultStore.frame` read for the spec's run ids)
    for a reader, in grid order: columns the grid's parameters, the main observables, the
    rest, and the run's bookkeeping (run_id, ...) last."""
    if table.empty:
        return table
    order = {rid: i for i, (rid, _) in enumerate(spec.runs())}
    table = table.iloc[table["run_id"].map(order).argsort(kind="stable")].reset_index(drop=True)
    runs = [c for c in table if c.startswith("run_")]
    first = [c for c in (*spec.grid, *LEADING) if c in table and c not in runs]
    rest = [c for c in table if c not in first and c not in runs]
    return table[first + rest + runs]


def check_export(path: str | Path, option: str = "export") -> Path:
    """ValueError naming `option` unless `path` ends in .csv or .parquet and can be written."""
    path = Path(path)
    if path.suffix not in EXPORT_SUFFIXES:
        raise ValueError(f"{option}: must end in .csv or .parquet, got {path}")
    return check_output_file(path, option)


def write_table(table: pd.DataFrame, path: str | Path) -> None:
    """The table as CSV or Parquet (by suffix), written atomically."""
    path = Path(path)
    with atomic_output(path) as tmp:
        if path.suffix == ".parquet":
            table.to_parquet(tmp)
        else:
            table.to_csv(tmp, index=False)
