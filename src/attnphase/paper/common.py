"""What every recipe shares: the two starts, the parameter grids, the model's cache key, the
table cache and the simulations of a grid from its resumable sweep store."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from ..params import ModelParams
from ..sweep import SweepSpec, compute_once, run_sweep, write_table

INITS = ["semantic", "positional"]


def grid(start: float, stop: float, num: int) -> list[float]:
    """num evenly spaced values from start to stop, rounded to 12 significant digits so that
    tables and stores show 0.3, not linspace's 0.30000000000000004."""
    return [float(f"{v:.12g}") for v in np.linspace(start, stop, num)]


def model_key(p: ModelParams) -> dict:
    """The model's part of a cache key."""
    return {"omega": p.omega, "sigma": p.sigma, "lam": p.lam, "A": p.A}


def cached_table(path: Path, key: dict, compute: Callable[[], pd.DataFrame]) -> pd.DataFrame:
    """The table computed for `key` (the parameters), through the runner: compute() runs once
    per key and is kept in the store `<path stem>.sqlite` beside `path` (a concurrent run waits
    for it, a rerun reads it back); the table is then written to `path` (CSV, atomically)."""
    params = {"table": path.stem, **json.loads(json.dumps(key))}
    result = compute_once(
        path.with_suffix(".sqlite"), "table", params, lambda: {"rows": compute().to_dict("records")}
    )
    table = pd.DataFrame(result["rows"])
    write_table(table, path)
    return table


def simulations(out: Path, name: str, points: dict, base: dict, workers: int) -> pd.DataFrame:
    """The finished runs of the grid `points` (errors left out; the plots keep the converged
    ones) from the resumable sweep store `<name>.sqlite`: only missing points are computed
    (`run_sweep` returns the grid's points alone)."""
    backend = "process" if workers > 1 else "serial"
    df = run_sweep(
        SweepSpec("simulation", points, base),
        out / f"{name}.sqlite",
        backend=backend,
        workers=workers,
    )
    return df[df["run_status"] == "ok"]


__all__ = ["INITS", "cached_table", "grid", "model_key", "simulations"]
