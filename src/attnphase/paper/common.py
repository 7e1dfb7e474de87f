"""What every recipe shares: the two starts, the parameter grids, the model's cache key, the
table cache and the simulations of a grid from its resumable sweep store."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from ..io import atomic_output, write_atomic
from ..params import ModelParams
from ..sweep import SweepSpec, run_sweep

INITS = ["semantic", "positional"]


def grid(start: float, stop: float, num: int) -> list[float]:
    """num evenly spaced values from start to stop, rounded to 12 significant digits so that
    tables and stores show 0.3, not linspace's 0.30000000000000004."""
    return [float(f"{v:.12g}") for v in np.linspace(start, stop, num)]


def model_key(p: ModelParams) -> dict:
    """The model's part of a cache key."""
    return {"omega": p.omega, "sigma": p.sigma, "lam": p.lam, "A": p.A}


def cached_table(path: Path, key: dict, compute: Callable[[], pd.DataFrame]) -> pd.DataFrame:
    """The table at `path` if its sidecar JSON holds `key` (the parameters it was computed
    for), else compute() written there (CSV and sidecar, atomically): a rerun skips theory
    it already has."""
    key = json.loads(json.dumps(key))
    meta = path.with_suffix(".json")
    if path.exists() and meta.exists() and json.loads(meta.read_text()) == key:
        return pd.read_csv(path)
    table = compute()
    with atomic_output(path) as tmp:
        table.to_csv(tmp, index=False)
    write_atomic(meta, json.dumps(key))
    return table


def simulations(out: Path, name: str, points: dict, base: dict, workers: int) -> pd.DataFrame:
    """The finished runs of the grid `points` (errors left out; the plots keep the converged
    ones) from the resumable sweep store `<name>.sqlite`: only missing points are computed,
    and points of other grids the store holds are left out."""
    backend = "process" if workers > 1 else "serial"
    df = run_sweep(
        SweepSpec("simulation", points, base),
        out / f"{name}.sqlite",
        backend=backend,
        workers=workers,
    )
    keep = df["run_status"] == "ok"
    for key, values in points.items():
        keep &= df[key].isin(values)
    return df[keep]


__all__ = ["INITS", "cached_table", "grid", "model_key", "simulations"]
