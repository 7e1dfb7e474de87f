"""Running a sweep: validate, claim, compute, store, summarise.

Order of work: the spec is validated when it is built; the store location is checked and an
existing store verified; the backend is started (a Dask scheduler must answer); only then is a
new store file created. Points are claimed one at a time, just before a worker takes them, so
concurrent runs share the grid. A point claimed by another live run is waited for (polled) and
counted as already stored once that run stores it; if that run dies, its lease is taken over.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..io import atomic_output, check_output_file
from .backends import check_backend, open_backend
from .points import PointFunction, evaluate
from .spec import SweepSpec
from .store import BUSY, DONE, Heartbeat, Owner, ResultStore, StoreError, check_store

LEASE_SECONDS = 120.0  # a lease not renewed for this long is taken over (renewed every 40 s)
POLL_SECONDS = 0.5  # how often points claimed by other runs are checked again
EXPORT_SUFFIXES = (".csv", ".parquet")


@dataclass(frozen=True)
class SweepSummary:
    """computed: evaluated by this run without error; stored: found in the store (finished
    before, by a concurrent run, or failed earlier and not retried); failed: evaluated by this
    run with an error. They add up to the number of distinct points."""

    computed: int
    stored: int
    failed: int

    def __str__(self) -> str:
        return f"{self.computed} computed, {self.stored} already stored, {self.failed} failed"


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
) -> pd.DataFrame:
    """Compute the points of `spec` that `store` lacks; return the store's whole table.

    retry: recompute points stored as failed (their errors stay in the attempts table).
    evaluate_point(kind, params) -> dict replaces the theory/simulation computation (it must be
    importable by workers). The summary line (`SweepSummary`) goes to stderr, its counts to
    `table.attrs["summary"]` ({"computed": N, "stored": M, "failed": K}).
    """
    check_backend(backend, workers)
    store = Path(store)
    try:
        check_output_file(store, "store")
    except ValueError as err:
        raise StoreError(str(err)) from None
    check_store(store)
    fn = evaluate_point or evaluate
    owner = Owner.current()
    pool = open_backend(backend, workers, scheduler)
    try:
        with ResultStore(store) as db:
            try:
                with Heartbeat(store, owner, LEASE_SECONDS):
                    summary = _drive(spec, db, pool, fn, owner, retry, progress)
            finally:
                db.release(owner)
            table = db.frame()
    finally:
        pool.close()
    table.attrs["summary"] = dataclasses.asdict(summary)
    print(summary, file=sys.stderr, flush=True)
    return table


def _drive(spec, db, pool, fn, owner, retry, progress) -> SweepSummary:
    from tqdm.auto import tqdm

    runs = spec.runs()
    pending = deque((rid, params, retry) for rid, params in runs)
    waiting: list[tuple[str, dict]] = []
    inflight: dict = {}
    counts = {"ok": 0, "error": 0, DONE: 0}
    show = sys.stderr.isatty() if progress is None else progress
    with tqdm(total=len(runs), desc=f"{spec.kind} sweep", unit="point", disable=not show) as bar:
        while pending or waiting or inflight:
            while pending and len(inflight) < pool.capacity:
                rid, params, may_retry = pending.popleft()
                state, attempt = db.claim(rid, owner, retry=may_retry, lease=LEASE_SECONDS)
                if state == DONE:
                    counts[DONE] += 1
                    bar.update()
                elif state == BUSY:
                    waiting.append((rid, params))
                else:
                    inflight[pool.submit(fn, spec.kind, params)] = (rid, params, attempt)
            if inflight:
                done = pool.wait(list(inflight), timeout=POLL_SECONDS if waiting else None)
                for handle in done:
                    rid, params, attempt = inflight.pop(handle)
                    outcome = pool.outcome(handle)
                    db.finish(rid, spec.kind, params, attempt, owner, outcome)
                    counts[outcome[0]] += 1
                    bar.update()
            elif waiting:
                time.sleep(POLL_SECONDS)
            if waiting:
                bar.set_postfix_str(f"waiting for {len(waiting)} points of other runs")
                # a point another run failed is not retried again here: that was its attempt
                pending.extend((rid, params, False) for rid, params in waiting)
                waiting.clear()
    return SweepSummary(counts["ok"], counts[DONE], counts["error"])


def check_export(path: str | Path, option: str = "export") -> Path:
    """ValueError naming `option` unless `path` ends in .csv or .parquet and can be written."""
    path = Path(path)
    if path.suffix not in EXPORT_SUFFIXES:
        raise ValueError(f"{option} must end in .csv or .parquet, got {path}")
    return check_output_file(path, option)


def write_table(table: pd.DataFrame, path: str | Path) -> None:
    """The table as CSV or Parquet (by suffix), written atomically."""
    path = Path(path)
    with atomic_output(path) as tmp:
        if path.suffix == ".parquet":
            table.to_parquet(tmp)
        else:
            table.to_csv(tmp, index=False)
