"""Declarative, resumable sweeps of theory points or simulation runs.

A sweep is a Cartesian grid (any parameter: alpha, omega, init/branch, seed, d, ...) over a
fixed base. Each point's run id is the sha256 of its canonical JSON (kind and every parameter),
never a lossy file name. Finished points go to an SQLite store, one transaction per point:
SQLite's journal makes each commit atomic, so a sweep killed at any moment (even by SIGKILL)
keeps every finished point, loses the running ones, and its rerun computes only what is missing.
An exception at one point is stored with that point (status "error") and the sweep goes on.
Backends: "serial", "process" (local processes, default) and "dask" (an existing scheduler or a
LocalCluster); the point function is the same on all of them, so the table is the same.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import sqlite3
import sys
import traceback
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

KINDS = ("theory", "simulation")
BACKENDS = ("serial", "process", "dask")
_SCHEMA = {"run_id", "kind", "params", "result", "status", "error"}


class StoreError(RuntimeError):
    """The results file is not a readable attnphase store."""


@dataclass(frozen=True)
class SweepSpec:
    """kind: "theory" (one `solve` per point; `branch` picks the start) or "simulation" (one
    `simulate` per point and seed). grid: parameter -> list of values; base: fixed parameters."""

    kind: str
    grid: dict[str, list] = field(default_factory=dict)
    base: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
        for name, values in self.grid.items():
            if not isinstance(values, (list, tuple)) or not values:
                raise ValueError(f"grid values for {name!r} must be a non-empty list")
        overlap = set(self.grid) & set(self.base)
        if overlap:
            raise ValueError(f"parameters both in grid and base: {sorted(overlap)}")

    def points(self) -> list[dict]:
        names = sorted(self.grid)
        return [
            {**self.base, **dict(zip(names, combo, strict=True))}
            for combo in itertools.product(*(self.grid[n] for n in names))
        ]


def _canonical(value):
    """Numbers as floats (alpha=1 and alpha=1.0 are one point), sequences as lists."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    return value


def run_id(kind: str, params: dict) -> str:
    """sha256 of the canonical JSON of (kind, params)."""
    text = json.dumps(
        {"kind": kind, "params": {k: _canonical(v) for k, v in params.items()}},
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(text.encode()).hexdigest()


def evaluate(kind: str, params: dict) -> dict:
    """The result record of one point (runs in workers; imports lazily)."""
    if kind == "theory":
        from .params import ModelParams
        from .theory import solve

        p = dict(params)
        model = ModelParams(**{k: p.pop(k) for k in ("omega", "sigma", "lam", "A") if k in p})
        branch = p.pop("branch", "semantic")
        res = solve(p.pop("alpha"), model, init=branch, **p)
        out = res.as_dict()
        return {k: v for k, v in out.items() if k not in params}
    import torch

    from .sim import SimConfig, simulate

    torch.set_num_threads(1)
    p = dict(params)
    seed = p.pop("seed", 0)
    (res,) = simulate(SimConfig(**p), seeds=[seed])
    return {k: v for k, v in res.as_dict().items() if k not in params and k != "seed"}


def _evaluate_safely(kind: str, params: dict) -> tuple[str, dict | None, str | None]:
    try:
        return "ok", evaluate(kind, params), None
    except Exception as err:  # recorded with the point; the sweep goes on
        return "error", None, f"{type(err).__name__}: {err}\n{traceback.format_exc(limit=3)}"


class ResultStore:
    """SQLite file of finished points: one row per run id, written in one transaction."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(self.path)
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS results (run_id TEXT PRIMARY KEY, kind TEXT, "
                "params TEXT, result TEXT, status TEXT, error TEXT)"
            )
            cols = {row[1] for row in self._db.execute("PRAGMA table_info(results)")}
        except sqlite3.DatabaseError as err:
            raise StoreError(f"{self.path} is not an attnphase results store: {err}") from None
        if cols != _SCHEMA:
            raise StoreError(
                f"{self.path} has a 'results' table with columns {sorted(cols)}, "
                f"expected {sorted(_SCHEMA)}"
            )

    def close(self) -> None:
        self._db.close()

    def done(self) -> set[str]:
        return {row[0] for row in self._db.execute("SELECT run_id FROM results")}

    def put(self, rid: str, kind: str, params: dict, status: str, result, error) -> None:
        with self._db:  # one transaction per point
            self._db.execute(
                "INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?, ?)",
                (
                    rid,
                    kind,
                    json.dumps(params, sort_keys=True),
                    None if result is None else json.dumps(result, default=_json_default),
                    status,
                    error,
                ),
            )

    def frame(self) -> pd.DataFrame:
        """Tidy table, one row per point: run_id, run_kind, run_status ("ok" or "error"),
        run_error, the point's parameters and its results."""
        rows = []
        try:
            cursor = self._db.execute(
                "SELECT run_id, kind, params, result, status, error FROM results ORDER BY rowid"
            )
            for rid, kind, params, result, status, error in cursor:
                row = {"run_id": rid, "run_kind": kind, "run_status": status, "run_error": error}
                row.update(json.loads(params))
                if result is not None:
                    row.update(json.loads(result))
                rows.append(row)
        except (sqlite3.DatabaseError, json.JSONDecodeError) as err:
            raise StoreError(f"{self.path}: unreadable results ({err})") from None
        return pd.DataFrame(rows)


def _json_default(value):
    """Arrays and tensors as lists (json itself writes floats, NaN included)."""
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"not serialisable: {type(value).__name__}")


def _submit_all(todo, kind, backend, workers, scheduler):
    """Yield (run_id, params, outcome) as points finish, on the chosen backend."""
    if backend == "serial":
        for rid, params in todo:
            yield rid, params, _evaluate_safely(kind, params)
    elif backend == "process":
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor, as_completed

        with ProcessPoolExecutor(workers, mp_context=mp.get_context("spawn")) as pool:
            futures = {
                pool.submit(_evaluate_safely, kind, params): (rid, params) for rid, params in todo
            }
            for fut in as_completed(futures):
                rid, params = futures[fut]
                yield rid, params, fut.result()
    else:
        from distributed import Client, LocalCluster, as_completed

        cluster = None
        if scheduler is None:
            cluster = LocalCluster(
                n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
            )
        client = Client(scheduler if scheduler is not None else cluster)
        try:
            futures = {
                client.submit(_evaluate_safely, kind, params, key=f"point-{rid}", pure=False): (
                    rid,
                    params,
                )
                for rid, params in todo
            }
            for fut in as_completed(futures):
                rid, params = futures[fut]
                yield rid, params, fut.result()
        finally:
            client.close()
            if cluster is not None:
                cluster.close()


def run_sweep(
    spec: SweepSpec,
    store: str | Path,
    *,
    backend: str = "process",
    workers: int = 2,
    scheduler: str | None = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """Run the points of `spec` missing from `store`; return the store's whole table."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    db = ResultStore(store)
    try:
        done = db.done()
        todo = [(run_id(spec.kind, p), p) for p in spec.points()]
        todo = [(rid, p) for rid, p in dict(todo).items() if rid not in done]
        from tqdm.auto import tqdm

        show = sys.stderr.isatty() if progress is None else progress
        with tqdm(
            total=len(todo), desc=f"{spec.kind} sweep", unit="point", disable=not show
        ) as bar:
            for rid, params, (status, result, error) in _submit_all(
                todo, spec.kind, backend, workers, scheduler
            ):
                db.put(rid, spec.kind, params, status, result, error)
                bar.update()
        return db.frame()
    finally:
        db.close()


def parse_grid(items: Iterable[str]) -> dict[str, list]:
    """name=v1,v2,... or name=start:stop:num  ->  {name: [values]} (numbers where they parse)."""
    import numpy as np

    grid = {}
    for item in items:
        name, _, text = item.partition("=")
        if not name or not text:
            raise ValueError(f"grid entry must be name=values, got {item!r}")
        if text.count(":") == 2:
            start, stop, num = text.split(":")
            values = [float(v) for v in np.linspace(float(start), float(stop), int(num))]
        else:
            values = [_number(v) for v in text.split(",")]
        grid[name] = values
    return grid


def _number(text: str):
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text
