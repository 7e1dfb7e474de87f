"""Transition lines as a table, one row per parameter value, resumable through a sweep store
and split into segments that run in parallel (issue 12).

Each line (alpha_c, alpha_l, the two spinodals) starts at the value nearest the model's own
value of the parameter (`lines.line_starts`: one scan there), or, for a line that does not
exist there, at an end of the range (one more scan); from its start it is followed up and down
the values: two independent segments, which the sweep backends run in local processes or on
Dask. Every scan and every line point is a point of the store (kinds "transition_scan" and
"transition_line", ids from their parameters), claimed before it is computed and committed when
done: a killed run resumes from the last stored point of each segment, and two runs on one
store compute each point once (a point another live run holds is waited for).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from ..params import ModelParams
from ..sweep.backends import check_backend, open_backend
from ..sweep.spec import point_hash
from ..sweep.store import BUSY, DONE, Heartbeat, Owner, ResultStore, StoreError, check_store
from ..theory import GaussHermite
from ..theory.method import EXACT, check_order
from .continuation import LinePoint, point_columns
from .lines import LINES, GaussHermiteLines, line_follower, line_starts, parameter_path

SCAN_KIND, LINE_KIND = "transition_scan", "transition_line"
LEASE_SECONDS = 300.0  # a scan or a first fold can take minutes; renewed every 100 s
POLL_SECONDS = 1.0


def _model_dict(p: ModelParams) -> dict:
    """The tied model as JSON-ready keyword arguments of ModelParams (the lines' points are
    solved with Gauss-Hermite, which solves the tied model only)."""
    d = dataclasses.asdict(p)
    del d["variant"]
    d["A"] = [list(map(float, row)) for row in p.A]
    if d["encodings"] is not None:
        d["encodings"] = [list(map(float, row)) for row in d["encodings"]]
    return d


@dataclasses.dataclass(frozen=True)
class LineSetup:
    """What every point of a set of lines shares (the model along the path is p with
    `parameter` replaced by the point's value)."""

    model: dict
    parameter: str
    A_end: list | None
    alpha_min: float
    alpha_max: float
    order: tuple[int, int]
    check_order: tuple[int, int]

    def lines(self) -> GaussHermiteLines:
        p = ModelParams(**self.model)
        path = parameter_path(p, self.parameter, self.A_end)
        return GaussHermiteLines(path, GaussHermite(self.order, self.check_order))

    def key(self) -> dict:
        """The setup as JSON-ready parameters (what a stored point's id is computed from)."""
        d = dataclasses.asdict(self)
        d["order"], d["check_order"] = list(self.order), list(self.check_order)
        return d

    def scan_id(self, s: float) -> str:
        return point_hash(SCAN_KIND, {**self.key(), "value": float(s)})

    def point_id(self, name: str, s: float) -> str:
        return point_hash(LINE_KIND, {**self.key(), "line": name, "value": float(s)})


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


def _point_from(s: float, rec: dict) -> LinePoint:
    z = None if rec["z"] is None else np.array(rec["z"])
    t = math.nan if rec["t"] is None else float(rec["t"])
    states = {b: np.array(x) for b, x in rec["states"].items()}
    alpha, err = (math.nan if v is None else float(v) for v in (rec["alpha"], rec["alpha_err"]))
    return LinePoint(s, alpha, err, states, rec["evaluations"], rec["status"], z, t)


def _stored_or_computed(
    db: ResultStore, owner: Owner, rid: str, kind: str, params: dict, compute: Callable
):
    """The stored result of point rid, or compute() stored under it (claimed by `owner`,
    whose leases a Heartbeat renews, first); a point another live run holds is waited for."""
    while True:
        state, attempt = db.claim(rid, owner, retry=True, lease=LEASE_SECONDS)
        if state == DONE:
            stored = db.result(rid)
            assert stored is not None  # DONE: the point is stored
            status, result, error = stored
            if status != "ok":
                raise StoreError(f"{kind} point failed in another run: {error}")
            return result
        if state != BUSY:
            break
        time.sleep(POLL_SECONDS)
    assert attempt is not None  # claimed: `claim` gave the new attempt's id
    try:
        result = compute()
    except Exception as err:
        db.finish(rid, kind, params, attempt, owner, ("error", None, repr(err)))
        raise
    db.finish(rid, kind, params, attempt, owner, ("ok", result, None))
    return result


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
    setup = LineSetup(**params["setup"])
    setup = dataclasses.replace(  # JSON lists as the pairs they were stored from
        setup,
        order=check_order("order", setup.order),
        check_order=check_order("check_order", setup.check_order),
    )
    name, values = params["line"], params["values"]
    start = _start_from(name, params["start"]) if params["start"] is not None else None
    window = (setup.alpha_min, setup.alpha_max)
    follower = line_follower(name, setup.lines(), start, window)
    owner = Owner.current()
    with ResultStore(params["store"]) as db, Heartbeat(Path(params["store"]), owner, LEASE_SECONDS):
        for s in values:
            rid = setup.point_id(name, s)
            point_params = {"line": name, "value": s, **setup.key()}
            rec = _stored_or_computed(
                db, owner, rid, LINE_KIND, point_params, lambda s=s: _point_record(follower.step(s))
            )
            pt = _point_from(s, rec)
            if not follower.history or follower.history[-1][0] != s:
                follower.resume(pt)
        db.release(owner)
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


def transition_table(
    p: ModelParams,
    values: Sequence[float],
    *,
    parameter: str = "omega",
    A_end=None,
    alpha_min: float = 0.2,
    alpha_max: float = 2.5,
    method: GaussHermite = EXACT,
    store: str | Path,
    names: Sequence[str] = LINES,
    backend: str = "process",
    workers: int = 2,
    scheduler: str | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """alpha_c, alpha_l and both spinodals at each of `values` of `parameter` (THEORY.md §5),
    with errors (|root(order) - root(check_order)| of the Gauss-Hermite `method`), statuses
    and SE map evaluations, by
    continuation through `store` (created if new; resumed if it holds points of these
    lines). One row per value, in increasing order; columns of the lines not in `names` are
    NaN with status "not requested"."""
    values = sorted({float(v) for v in values})
    if not values:
        raise ValueError(f"{parameter}: give at least one value")
    unknown = [n for n in names if n not in LINES]
    if unknown or not names:
        raise ValueError(f"lines must be a non-empty subset of {LINES}, got {list(names)}")
    if not 0 < alpha_min < alpha_max or not math.isfinite(alpha_max):
        raise ValueError(f"need 0 < alpha_min < alpha_max, got {alpha_min}, {alpha_max}")
    check_backend(backend, workers)
    store = Path(store)
    check_store(store)
    setup = LineSetup(
        _model_dict(p),
        parameter,
        None if A_end is None else [list(map(float, r)) for r in A_end],
        float(alpha_min),
        float(alpha_max),
        method.order,
        method.check_order,
    )
    lines = setup.lines()
    from tqdm.auto import tqdm

    with ResultStore(store) as db:
        owner = Owner.current()
        with Heartbeat(store, owner, LEASE_SECONDS):

            def scan(s: float) -> dict:
                rec = _stored_or_computed(
                    db,
                    owner,
                    setup.scan_id(s),
                    SCAN_KIND,
                    {"value": s, **setup.key()},
                    lambda: {
                        name: _start_record(name, start)
                        for name, start in line_starts(lines, s, alpha_min, alpha_max).items()
                    },
                )
                return {name: _start_from(name, rec[name]) for name in LINES}

            i0 = _start_index(values, p, parameter)
            with tqdm(total=1, desc="scan for the start", disable=not progress) as bar:
                found = scan(values[i0])
                starts = {name: (i0, found[name]) for name in names}
                bar.update()
            for i in (0, len(values) - 1):
                if i != i0 and any(isinstance(st, str) for _, st in starts.values()):
                    more = scan(values[i])
                    for name, (_, st) in list(starts.items()):
                        if isinstance(st, str) and not isinstance(more[name], str):
                            starts[name] = (i, more[name])
        db.release(owner)
        tasks = []
        for name, (i, start) in starts.items():
            for seg in _segments(values, i):
                rec = _start_record(name, start)
                tasks.append(
                    {
                        "setup": setup.key(),
                        "line": name,
                        "values": seg,
                        "start": rec,
                        "store": str(store),
                    }
                )
        _run_segments(tasks, db, setup, values, names, backend, workers, scheduler, progress)
        rows = []
        for s in values:
            row: dict = {parameter: s}
            for name in LINES:
                got = db.result(setup.point_id(name, s)) if name in names else None
                pt = None
                if got and got[0] == "ok":
                    assert got[1] is not None  # an "ok" point is stored with its record
                    pt = _point_from(s, got[1])
                missing = "not computed (a run failed)" if name in names else "not requested"
                row.update(point_columns(name, pt, missing))
            rows.append(row)
    return pd.DataFrame(rows)


def _run_segments(tasks, db, setup, values, names, backend, workers, scheduler, progress):
    from tqdm.auto import tqdm

    ids = [setup.point_id(name, s) for name in names for s in values]
    pool = open_backend(backend, workers, scheduler)
    errors = []
    try:
        handles = [pool.submit(run_segment, LINE_KIND, task) for task in tasks]
        with tqdm(
            total=len(ids), desc="transition lines", unit="point", disable=not progress
        ) as bar:
            pending = list(handles)
            while pending:
                done = pool.wait(pending, timeout=POLL_SECONDS)
                for h in done:
                    status, _, error = pool.outcome(h)
                    if status != "ok":
                        errors.append(error)
                pending = [h for h in pending if h not in done]
                stored = sum(1 for rid in ids if db.result(rid) is not None)
                bar.update(stored - bar.n)
    finally:
        pool.close()
    if errors:
        raise StoreError(f"{len(errors)} line segment(s) failed; first: {errors[0]}")
