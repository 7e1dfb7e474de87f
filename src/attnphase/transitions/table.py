"""Transition lines as a table, one row per value of the varied parameter (docs/theory.md §5): by
continuation (`line_table`, resumable and parallel) or by an independent scan at each value
(`find_transitions`), with either integration method, in one column layout.

Columns: the parameter, then for each line of LINES its value, `_err`, `_status` and
`_evaluations` (SE map evaluations; 0 for scans), and `status`: "converged" when every line
converged at this value, else the lines that did not, with their reasons.
"""

from __future__ import annotations

import json
import math
import tempfile
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd

from .._core.interrupt import Interrupted
from .._core.progress import progress_bar
from ..params import ModelParams
from ..theory import QMC, Method, resolve_method
from . import TRANSITION_POINTS
from .line_table import stored_lines
from .paths import LINES, PATHS

APPROACHES = ("auto", "continuation", "scan")


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


def _scan_rows(p, values, parameter, progress, **scan) -> list[dict]:
    """`find_transitions(**scan)` at every value."""
    from . import find_transitions

    rows = []
    for s in progress_bar(values, desc="transition scans", enabled=progress):
        t = find_transitions(p.with_value(parameter, s), approach="scan", **scan)
        # the integration that answered (with a precision, refined per value)
        row: dict = {parameter: s, **{k: v for k, v in t.method.columns().items() if k != "method"}}
        for name in LINES:
            value = getattr(t, name)
            row[name] = value
            row[f"{name}_err"] = getattr(t, f"{name}_err", math.nan)
            row[f"{name}_status"] = "scan" if math.isfinite(value) else "not in the scanned range"
            row[f"{name}_evaluations"] = 0
        rows.append(row)
    return rows


def _refined_lines(
    follow: Callable[[Method], pd.DataFrame], method: Method, precision: float, parameter: str
) -> pd.DataFrame:
    """The lines followed at `method`, then again at each `finer` integration while a value's
    alpha_c or alpha_l misses `precision` (`above_precision`): each row is that of the first
    integration at which it met the precision, or of the last one, with a PrecisionWarning
    naming the values the budget left short. Every value is followed again, not only those
    short of the target: a line is continued through its values."""
    from ..theory.precision import PrecisionWarning, finer
    from . import above_precision

    rows = follow(method).to_dict("records")
    while short := [i for i, row in enumerate(rows) if above_precision(row, precision)]:
        nxt = finer(method)
        if nxt is None:
            values = ", ".join(f"{rows[i][parameter]:g}" for i in short)
            warnings.warn(
                f"precision {precision:g} not reached at {values} at the budget's end "
                f"({method.settings()})",
                PrecisionWarning,
                stacklevel=3,
            )
            break
        method = nxt
        again = follow(method).to_dict("records")
        for i in short:
            rows[i] = again[i]
    return pd.DataFrame(rows)


@contextmanager
def _kept_only_in(store: str | Path | None) -> Iterator[None]:
    """An interrupt of lines followed in a temporary store (no `store`) says that nothing was
    kept, rather than naming the removed store."""
    try:
        yield
    except Interrupted:
        if store is not None:
            raise
        raise Interrupted(
            "nothing kept: the lines were followed in a temporary store (--store, store= keeps "
            "their finished points for a rerun)"
        ) from None


def transition_table(
    p: ModelParams,
    values: Sequence[float],
    *,
    parameter: str = "omega",
    approach: str = "auto",
    method: Method | str = "auto",
    alpha_min: float = 0.2,
    alpha_max: float = 2.5,
    num: int = 24,
    store: str | Path | None = None,
    lines: Sequence[str] = LINES,
    workers: int = 2,
    scheduler: str | None = None,
    progress: bool = False,
    precision: float | None = None,
) -> pd.DataFrame:
    """alpha_c, alpha_l and both spinodals at each value of `parameter` (omega, sigma or lam).

    approach "continuation": the lines followed through `store` (resumable; a temporary store
    when None), in `workers` local processes or on the Dask `scheduler`, on every replica of
    the method (Gauss-Hermite: one, errors from its check order; QMC: every scrambling, errors
    from their spread). "scan": `find_transitions` at every value (num alphas per scan). "auto":
    continuation with Gauss-Hermite, scan with QMC. method: the integration method ("auto":
    Gauss-Hermite where it applies, else QMC with TRANSITION_POINTS points per scrambling).
    `lines`: the lines to follow (continuation; a scan finds all four). precision: each scan
    refined until alpha_c and alpha_l meet it (`find_transitions`; the row's integration
    columns say what answered); the scan's alone (the continuation follows one integration)."""
    if approach not in APPROACHES:
        raise ValueError(f"approach must be one of {APPROACHES}, got {approach!r}")
    if parameter not in PATHS or parameter == "A":
        raise ValueError(f"parameter must be omega, sigma or lam, got {parameter!r}")
    values = sorted({float(v) for v in values})
    for s in values:
        p.with_value(parameter, s)  # ModelParams validates every value before any work
    m = resolve_method(method, p, QMC(points=TRANSITION_POINTS))
    if approach == "auto":  # following the lines on every scrambling costs more than a scan
        approach = "scan" if m.averages_replicas else "continuation"
    if approach == "scan":
        rows = _scan_rows(
            p,
            values,
            parameter,
            progress,
            method=m,
            alpha_min=alpha_min,
            alpha_max=alpha_max,
            num=num,
            precision=precision,
        )
        df = pd.DataFrame(rows)
    else:
        backend = "dask" if scheduler else ("process" if workers > 1 else "serial")
        with tempfile.TemporaryDirectory() as tmp, _kept_only_in(store):

            def follow(method: Method) -> pd.DataFrame:
                df = stored_lines(
                    p,
                    values,
                    parameter=parameter,
                    alpha_min=alpha_min,
                    alpha_max=alpha_max,
                    method=method,
                    store=Path(store) if store is not None else Path(tmp) / "lines.sqlite",
                    names=lines,
                    workers=workers,
                    backend=backend,
                    scheduler=scheduler,
                    progress=progress,
                )
                for k, v in method.columns().items():  # the integration that answered
                    if k != "method":
                        df[k] = v
                return df

            df = follow(m) if precision is None else _refined_lines(follow, m, precision, parameter)
    if approach == "continuation":
        df = _global_minimum_alpha_l(df)
    df["status"] = [_summary(r) for r in df.to_dict("records")]
    for k in ("omega", "sigma", "lam"):
        if k != parameter:
            df[k] = getattr(p, k)
    df["A"] = json.dumps([list(map(float, row)) for row in p.A])
    df["alpha_min"], df["alpha_max"] = alpha_min, alpha_max
    for k, v in m.columns().items():
        if k != "method" and k not in df:  # the column names the approach; a scan's row its own
            df[k] = v
    df["method"] = approach
    return df
