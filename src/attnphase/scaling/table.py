"""The scaling table (docs/scaling.md §2; the transitions of docs/theory.md §5): one row per
(L, omega, encoding family), each point computed once through the sweeps' runner
(`sweep.runner.run_points`, kind "scaling") into a sweep store, so that a rerun computes only
what is missing; on local processes or Dask like every sweep. Points run L by L, shortest
first: with a time limit, the lengths not started before it are rows that say so.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .._core.interrupt import Interrupted
from ..params import check_positive, check_unit_interval, check_values
from ..sweep.runner import point_id, run_points
from ..transitions.paths import LINES
from .family import check_family, check_length, family_variant
from .settings import ScanSettings

KIND = "scaling"
VERSION = 2  # part of the run id: a change of what a point computes makes new points
QUANTITIES = LINES
COLUMNS = [  # the table's leading columns, in order
    "L",
    "omega",
    "encodings",
    "mask",
    "heads",
    "status",
    *(c for q in QUANTITIES for c in (q, f"{q}_err", f"{q}_status")),
    "eps_lin",
    "eps_lin_err",
    "notes",
    "mixed",
    "mixed_found",
    "mixed_global",
    "rank",
    "K",
    "method",
    "seconds",
]


def evaluate_point(kind: str, params: dict) -> dict:
    """The point function of the runner (importable by workers): `scaling_point` of a point."""
    from .point import scaling_point

    fields = ScanSettings.__dataclass_fields__
    settings = ScanSettings(**{k: params[k] for k in fields if k in params})
    return scaling_point(
        params["L"],
        params["omega"],
        params["encodings"],
        settings,
        mixed=params["mixed"],
        mask=params.get("mask", "none"),
        heads=params.get("heads", 1),
    )


def scaling_table(
    lengths: Sequence[int],
    omegas: Sequence[float],
    families: Sequence[str] = ("linear",),
    settings: ScanSettings | None = None,
    *,
    mixed: bool = True,
    mask: str = "none",
    heads: int = 1,
    store: str | Path | None = None,
    backend: str = "serial",
    workers: int = 1,
    scheduler: str | None = None,
    time_limit: float | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """alpha_c, alpha_l and the branches' ends with their errors and statuses, one row per
    (L, omega, family) (`point.scaling_point` at `settings`, default `ScanSettings()`);
    `status` is "computed", "failed: ..." or "not computed: ..." (the time limit in seconds
    was reached before its L started). mask, heads: the variant of every row (`family_model`;
    a point's parameters name them only away from the default, so that earlier stores resume).
    store: a sweep-store file that keeps finished points (None: nothing kept)."""
    lengths = sorted(check_values("lengths", lengths, check_length))
    omegas = check_values("omegas", omegas, lambda w: check_unit_interval("omega", w))
    families = check_values("families", families, check_family)
    for f in families:
        family_variant(f, mask, heads)
    variant = ({"mask": mask} if mask != "none" else {}) | ({"heads": heads} if heads > 1 else {})
    if time_limit is not None:
        check_positive("time_limit", time_limit)
    settings = settings or ScanSettings()
    start = time.monotonic()
    rows: list[dict] = []
    for L in lengths:
        grid = [
            {"version": VERSION, "L": L, "omega": w, "encodings": f, "mixed": mixed}
            | variant
            | settings.as_dict()
            for f in families
            for w in omegas
        ]
        late = time_limit is not None and time.monotonic() - start > time_limit
        ids = [point_id(KIND, point) for point in grid]
        if late:
            outcomes = None
        else:
            try:
                outcomes = _run(L, ids, grid, store, backend, workers, scheduler, progress)
            except Interrupted as err:
                finished = sorted({r["L"] for r in rows})
                before = (
                    f"; L = {', '.join(map(str, finished))} finished before" if finished else ""
                )
                raise Interrupted(f"{err}{before}") from None
        for rid, point in zip(ids, grid, strict=True):
            head = {"L": L, "omega": point["omega"], "encodings": point["encodings"]}
            head |= {"mask": mask, "heads": heads}
            if outcomes is None:
                reason = f"not computed: the time limit of {time_limit:g} s was reached"
                rows.append({**head, "status": reason})
                continue
            status, result, error = outcomes[rid]
            if status == "ok":
                assert result is not None  # an "ok" point has its record
                rows.append({**head, "status": "computed", **result})
            else:
                assert error is not None  # a failed point has its message
                message = error.splitlines()[0]
                warnings.warn(f"scaling, L {L} omega {point['omega']:g}: {message}", stacklevel=2)
                rows.append({**head, "status": f"failed: {message}"})
    return _frame(rows, settings.as_dict())


LEASE_SECONDS = 1800.0  # a point (two branches on every scrambling) can take many minutes


def _run(L, ids, grid, store, backend, workers, scheduler, progress) -> dict:
    """The outcomes of one length's points (`run_points`)."""
    return run_points(
        [(rid, KIND, point) for rid, point in zip(ids, grid, strict=True)],
        evaluate_point,
        store=store,
        backend=backend,
        workers=workers,
        scheduler=scheduler,
        lease=LEASE_SECONDS,
        progress=progress,
        desc=f"scaling L = {L}",
    ).outcomes


def _frame(rows: list[dict], settings: dict) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    for c in COLUMNS:
        if c not in df:
            df[c] = math.nan
    for q in QUANTITIES:  # a row that was not computed says so in every status
        df[f"{q}_status"] = df[f"{q}_status"].astype(object)
        missing = df[f"{q}_status"].isna()
        df.loc[missing, f"{q}_status"] = df.loc[missing, "status"]
    df["notes"] = [
        "; ".join(f"{q}: {r[f'{q}_status']}" for q in QUANTITIES if not np.isfinite(r[q]))
        for r in df.to_dict("records")
    ]
    for k, v in settings.items():
        df[k] = v
    rest = [c for c in df if c not in COLUMNS]
    return df[COLUMNS + rest]
