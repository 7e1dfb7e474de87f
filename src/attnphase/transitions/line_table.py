"""Transition lines as a table, one row per parameter value, resumable through a sweep store and
split into segments that run in parallel, for every integration method.

On each replica of the method (`lines.replicas`: one for Gauss-Hermite, one per QMC scrambling)
each line (alpha_c, alpha_l, the two spinodals) starts at the value nearest the model's own
value of the parameter (`lines.line_starts`: one scan there), or, for a line that does not exist
there, at an end of the range (one more scan); from its start it is followed up and down the
values: two independent segments per line and replica, which the sweep backends run in local
processes or on Dask. A row holds the replica's point (Gauss-Hermite) or the mean over
scramblings with its standard error (QMC, `scrambling_lines.combine`). Every scan and every line
point is a point of the store (kinds "transition_scan" and "transition_line", ids from their
parameters) computed through the sweeps' runner (`sweep.runner.compute_once`: claimed before it
is computed and committed when done), the segments are the runner's points without a store: a
killed run resumes from the last stored point of each segment, and two runs on one store compute
each point once (a point another live run holds is waited for).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .._core.interrupt import Interrupted
from .._core.progress import progress_bar
from ..params import ModelParams
from ..sweep.backends import check_backend
from ..sweep.runner import Session, compute_once, point_id, run_points
from ..sweep.store import ResultStore, StoreError, check_store
from ..theory import Method
from ..theory.method import EXACT, pop_method
from .continuation import LinePoint, point_columns
from .lines import (
    Lines,
    check_line_model,
    check_lines,
    line_follower,
    line_starts,
    method_lines,
)
from .paths import LINES, parameter_path
from .scrambling_lines import combine

SCAN_KIND, LINE_KIND = "transition_scan", "transition_line"
SEGMENT_KIND = "transition_segment"  # a task of the backends, not stored
LEASE_SECONDS = 300.0  # a scan or a first fold can take minutes; renewed every 100 s


def _model_dict(p: ModelParams) -> dict:
    """The tied model as JSON-ready keyword arguments of ModelParams (the line systems solve
    the tied model with Gaussian tokens only)."""
    d = dataclasses.asdict(p)
    del d["variant"]
    d["A"] = [list(map(float, row)) for row in p.A]
    if d["encodings"] is not None:
        d["encodings"] = [list(map(float, row)) for row in d["encodings"]]
    return d


@dataclasses.dataclass(frozen=True)
class LineSetup:
    """What every point of a set of lines on one replica shares (the model along the path is p
    with `parameter` replaced by the point's value)."""

    model: dict
    parameter: str
    A_end: list | None
    alpha_min: float
    alpha_max: float
    method: Method
    replica: int = 0

    def lines(self) -> Lines:
        p = ModelParams(**self.model)
        path = parameter_path(p, self.parameter, self.A_end)
        return method_lines(path, self.method, self.replica)

    def on_replica(self, replica: int) -> LineSetup:
        return dataclasses.replace(self, replica=replica)

    def key(self) -> dict:
        """The setup as JSON-ready parameters (what a stored point's id is computed from):
        the orders of Gauss-Hermite, or the points, randomisations, seed and scrambling of
        QMC."""
        d = {
            "model": self.model,
            "parameter": self.parameter,
            "A_end": self.A_end,
            "alpha_min": self.alpha_min,
            "alpha_max": self.alpha_max,
        }
        d.update(self.method.settings())
        if self.method.averages_replicas:
            d["replica"] = self.replica
        return d

    @classmethod
    def from_key(cls, key: dict) -> LineSetup:
        """The setup of `key` (JSON lists as the pairs they were stored from)."""
        d = dict(key)
        method = pop_method(d)
        return cls(**d, method=method)

    def scan_params(self, s: float) -> dict:
        return {**self.key(), "value": float(s)}

    def point_params(self, name: str, s: float) -> dict:
        return {**self.key(), "line": name, "value": float(s)}

    def point_id(self, name: str, s: float) -> str:
        return point_id(LINE_KIND, self.point_params(name, s))


def _point_record(pt: LinePoint) -> dict:
    return {
        "alpha": pt.alpha,
        "alpha_err": pt.alpha_err,
        "status": pt.status,
        "evaluations": pt.evaluations,
        "z": None if pt.z is None else [float(v) for v in pt.z],
        "t": pt.t,
        "states": {b: [float(v) for v in x] for b, x in pt.states.items()},
    }


def _step_record(follower, s: float) -> dict:
    """The follower's point at s, as stored."""
    return _point_record(follower.step(s))


def _point_from(s: float, rec: dict) -> LinePoint:
    z = None if rec["z"] is None else np.array(rec["z"])
    t = math.nan if rec["t"] is None else float(rec["t"])
    states = {b: np.array(x) for b, x in rec["states"].items()}
    alpha, err = (math.nan if v is None else float(v) for v in (rec["alpha"], rec["alpha_err"]))
    return LinePoint(s, alpha, err, states, rec["evaluations"], rec["status"], z, t)


def _start_record(name: str, start: tuple | str):
    """A line's start as JSON: its reason, [t0, z0] (spinodal) or [z0]."""
    if isinstance(start, str):
        return start
    if name.startswith("spinodal"):
        return [float(start[0]), [float(v) for v in start[1]]]
    return [[float(v) for v in start[0]]]


def _start_from(name: str, rec) -> tuple | str:
    if isinstance(rec, str):
        return rec
    if name.startswith("spinodal"):
        return float(rec[0]), np.array(rec[1])
    return (np.array(rec[0]),)


def run_segment(kind: str, params: dict) -> dict:
    """Point function of the sweep backends: one segment of one line (params: setup, line,
    values in the order to follow, start) through the store; returns its point count."""
    setup = LineSetup.from_key(params["setup"])
    name, values = params["line"], params["values"]
    start = _start_from(name, params["start"]) if params["start"] is not None else None
    window = (setup.alpha_min, setup.alpha_max)
    follower = line_follower(name, setup.lines(), start, window)
    with Session(params["store"], LEASE_SECONDS) as session:
        for s in values:
            step = functools.partial(_step_record, follower, s)
            rec = compute_once(session, LINE_KIND, setup.point_params(name, s), step)
            pt = _point_from(s, rec)
            if not follower.history or follower.history[-1][0] != s:
                follower.resume(pt)
    return {"points": len(values)}


def _start_index(values: list[float], p: ModelParams, parameter: str) -> int:
    own = getattr(p, parameter) if parameter != "A" else 0.0
    return min(range(len(values)), key=lambda i: abs(values[i] - own))


def _segments(values: list[float], i: int) -> list[list[float]]:
    """From index i up to the end and down to the start (each including i)."""
    out = [values[i:]]
    if i > 0:
        out.append(values[i::-1])
    return out


def stored_lines(
    p: ModelParams,
    values: Sequence[float],
    *,
    parameter: str = "omega",
    A_end=None,
    alpha_min: float = 0.2,
    alpha_max: float = 2.5,
    method: Method = EXACT,
    store: str | Path,
    names: Sequence[str] = LINES,
    backend: str = "process",
    workers: int = 2,
    scheduler: str | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """alpha_c, alpha_l and both spinodals at each of `values` of `parameter` (docs/theory.md §5),
    with errors (Gauss-Hermite: |root(order) - root(check_order)|; QMC: the standard error over
    scramblings), statuses and SE map evaluations, by continuation through `store` (created if
    new; resumed if it holds points of these lines). One row per value, in increasing order;
    columns of the lines not in `names` are NaN with status "not requested"."""
    values = sorted({float(v) for v in values})
    if not values:
        raise ValueError(f"{parameter}: give at least one value")
    check_lines(names, alpha_min, alpha_max)
    check_line_model(p, method)
    check_backend(backend, workers)
    store = Path(store)
    check_store(store)
    base = LineSetup(
        _model_dict(p),
        parameter,
        None if A_end is None else [list(map(float, r)) for r in A_end],
        float(alpha_min),
        float(alpha_max),
        method,
    )
    setups = [base.on_replica(k) for k in method.replicas()]
    with Session(store, LEASE_SECONDS) as session:

        def scan(setup: LineSetup, s: float) -> dict:
            rec = compute_once(
                session,
                SCAN_KIND,
                setup.scan_params(s),
                lambda: {
                    name: _start_record(name, start)
                    for name, start in line_starts(setup.lines(), s, alpha_min, alpha_max).items()
                },
            )
            return {name: _start_from(name, rec[name]) for name in LINES}

        try:
            i0 = _start_index(values, p, parameter)
            tasks = []
            with progress_bar(
                total=len(setups), desc="scans for the starts", enabled=progress
            ) as bar:
                for setup in setups:
                    found = scan(setup, values[i0])
                    starts = {name: (i0, found[name]) for name in names}
                    for i in (0, len(values) - 1):
                        if i != i0 and any(isinstance(st, str) for _, st in starts.values()):
                            more = scan(setup, values[i])
                            for name, (_, st) in list(starts.items()):
                                if isinstance(st, str) and not isinstance(more[name], str):
                                    starts[name] = (i, more[name])
                    tasks += [
                        {
                            "setup": setup.key(),
                            "line": name,
                            "values": seg,
                            "start": _start_record(name, start),
                            "store": str(store),
                        }
                        for name, (i, start) in starts.items()
                        for seg in _segments(values, i)
                    ]
                    bar.update()
            segments = run_points(
                [(point_id(SEGMENT_KIND, task), SEGMENT_KIND, task) for task in tasks],
                run_segment,
                store=None,
                backend=backend,
                workers=workers,
                scheduler=scheduler,
                progress=progress,
                desc="transition line segments",
            )
        except (KeyboardInterrupt, Interrupted):
            total = len(setups) * len(names) * len(values)
            stored = sum(
                session.db.result(setup.point_id(name, v)) is not None
                for setup in setups
                for name in names
                for v in values
            )
            raise Interrupted(
                f"{stored} of {total} line points stored in {store}; rerun the same command to "
                "resume"
            ) from None
        errors = [error for status, _, error in segments.outcomes.values() if status != "ok"]
        if errors:
            raise StoreError(f"{len(errors)} line segment(s) failed; first: {errors[0]}")
        rows = []
        for s in values:
            row: dict = {parameter: s}
            for name in LINES:
                pt = _row_point(session.db, setups, name, s) if name in names else None
                missing = "not computed (a run failed)" if name in names else "not requested"
                row.update(point_columns(name, pt, missing))
            rows.append(row)
    return pd.DataFrame(rows)


def _row_point(db: ResultStore, setups: list[LineSetup], name: str, s: float) -> LinePoint | None:
    """The stored point of a line at s: the replica's own (one replica) or the combination of
    every scrambling's (None where one is missing)."""
    points = []
    for setup in setups:
        got = db.result(setup.point_id(name, s))
        if not got or got[0] != "ok":
            return None
        assert got[1] is not None  # an "ok" point is stored with its record
        points.append(_point_from(s, got[1]))
    if not setups[0].method.averages_replicas:
        return points[0]
    return combine(s, points)
