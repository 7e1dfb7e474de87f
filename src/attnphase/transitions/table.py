"""Transition lines as a table, one row per value of the varied parameter (THEORY.md §5,
issue 12): by continuation (`line_table` for the exact L=2 engine, `general_lines` for the
general one) or by an independent scan at each value (`find_transitions`, either engine), in
one column layout.

Columns: the parameter, then for each line of LINES its value, `_err`, `_status` and
`_evaluations` (SE map evaluations; 0 for scans), and `status`: "converged" when every line
converged at this value, else the lines that did not, with their reasons.
"""

from __future__ import annotations

import json
import math
import tempfile
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from ..params import ModelParams
from ..theory import DEFAULT_ORDER, DEFAULT_RANDOMISATIONS, pick_engine
from .continuation import point_columns
from .l2 import CHECK_ORDER
from .l2_lines import LINES, PATHS
from .line_table import transition_table as l2_line_table

METHODS = ("auto", "continuation", "scan")


def _summary(row: dict) -> str:
    parts = [
        f"{name}: {row[f'{name}_status']}"
        for name in LINES
        if not str(row[f"{name}_status"]).startswith("converged")
        and row[f"{name}_status"] != "not requested"
    ]
    return "; ".join(parts) or "converged"


def _global_minimum_alpha_l(df: pd.DataFrame) -> pd.DataFrame:
    """alpha_l is where the GLOBAL minimum's eps_g crosses eps_lin; the continuation follows
    the semantic branch's crossing. Where that lies below alpha_c the positional branch is the
    global minimum there, and eps_g jumps below eps_lin at alpha_c: alpha_l = alpha_c. This
    assumes the positional branch's own eps_g stays above eps_lin below alpha_c, which is not
    checked here (the scan method checks it)."""
    df = df.copy()
    below = np.isfinite(df["alpha_l"]) & (df["alpha_l"] < df["alpha_c"])
    for i in np.flatnonzero(below.to_numpy()):
        row = df.index[i]
        semantic = df.at[row, "alpha_l"]
        df.at[row, "alpha_l"] = df.at[row, "alpha_c"]
        df.at[row, "alpha_l_err"] = df.at[row, "alpha_c_err"]
        df.at[row, "alpha_l_status"] = (
            f"converged (= alpha_c: the semantic branch crosses eps_lin at {semantic:.4f}, "
            "below alpha_c, where the positional branch is the global minimum)"
        )
    return df


def _general_rows(p, values, parameter, **kw) -> pd.DataFrame:
    """`general_transition_lines` (continuation on every scrambling, in this process) as rows:
    mean over scramblings and its standard error."""
    from .general_lines import general_transition_lines

    lines = general_transition_lines(p, values, parameter=parameter, **kw)
    rows = []
    for i, s in enumerate(values):
        row: dict = {parameter: s}
        for name in LINES:
            pt = lines[name][i] if name in lines else None
            row.update(point_columns(name, pt, "not requested"))
        rows.append(row)
    return pd.DataFrame(rows)


def _scan_rows(p, values, parameter, progress, **scan) -> list[dict]:
    """`find_transitions(**scan)` at every value."""
    from tqdm.auto import tqdm

    from . import find_transitions

    rows = []
    for s in tqdm(values, desc="transition scans", disable=not progress):
        t = find_transitions(replace(p, **{parameter: s}), **scan)
        row: dict = {parameter: s}
        for name in LINES:
            value = getattr(t, name)
            row[name] = value
            row[f"{name}_err"] = getattr(t, f"{name}_err", math.nan)
            row[f"{name}_status"] = "scan" if math.isfinite(value) else "not in the scanned range"
            row[f"{name}_evaluations"] = 0
        rows.append(row)
    return rows


def transition_table(
    p: ModelParams,
    values: Sequence[float],
    *,
    parameter: str = "omega",
    method: str = "auto",
    engine: str = "auto",
    alpha_min: float = 0.2,
    alpha_max: float = 2.5,
    num: int = 24,
    order=DEFAULT_ORDER,
    check_order=CHECK_ORDER,
    points: int = 4096,
    randomisations: int = DEFAULT_RANDOMISATIONS,
    store: str | Path | None = None,
    lines: Sequence[str] = LINES,
    workers: int = 2,
    scheduler: str | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """alpha_c, alpha_l and both spinodals at each value of `parameter` (omega, sigma or lam).

    method "continuation": exact L=2 engine, the lines followed through `store` (resumable;
    a temporary store when None), in `workers` local processes or on the Dask `scheduler`;
    general engine, followed on every scrambling in this process (`general_lines`; no store,
    `points` per scrambling). "scan": `find_transitions` at every value (num alphas per scan;
    either engine). "auto": continuation with the exact engine, scan with the general one.
    `lines`: the lines to follow (continuation; a scan finds all four)."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if parameter not in PATHS or parameter == "A":
        raise ValueError(f"parameter must be omega, sigma or lam, got {parameter!r}")
    values = sorted({float(v) for v in values})
    for s in values:
        replace(p, **{parameter: s})  # ModelParams validates every value before any work
    chosen = pick_engine(engine, p)
    if method == "auto":
        method = "continuation" if chosen == "l2" else "scan"
    if method == "scan":
        rows = _scan_rows(
            p,
            values,
            parameter,
            progress,
            engine=chosen,
            alpha_min=alpha_min,
            alpha_max=alpha_max,
            num=num,
            order=order,
            check_order=check_order,
            points=points,
            randomisations=randomisations,
        )
        df = pd.DataFrame(rows)
    elif chosen == "general":
        df = _general_rows(
            p,
            values,
            parameter,
            points=points,
            randomisations=randomisations,
            alpha_min=alpha_min,
            alpha_max=alpha_max,
            names=lines,
            progress=progress,
        )
    else:
        backend = "dask" if scheduler else ("process" if workers > 1 else "serial")
        with tempfile.TemporaryDirectory() as tmp:
            df = l2_line_table(
                p,
                values,
                parameter=parameter,
                alpha_min=alpha_min,
                alpha_max=alpha_max,
                order=order,
                check_order=check_order,
                store=Path(store) if store is not None else Path(tmp) / "lines.sqlite",
                names=lines,
                workers=workers,
                backend=backend,
                scheduler=scheduler,
                progress=progress,
            )
    if method == "continuation":
        df = _global_minimum_alpha_l(df)
    df["status"] = [_summary(r) for r in df.to_dict("records")]
    for k in ("omega", "sigma", "lam"):
        if k != parameter:
            df[k] = getattr(p, k)
    df["A"] = json.dumps([list(map(float, row)) for row in p.A])
    df["alpha_min"], df["alpha_max"] = alpha_min, alpha_max
    if chosen == "l2":
        df["n_xi"], df["n_y"] = order
        df["check_n_xi"], df["check_n_y"] = check_order
    df["method"] = method
    return df
