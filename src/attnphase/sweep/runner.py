"""The one runner of resumable computations: points computed by a point function on a backend,
each claimed in a sweep store before it is computed and stored when it is done.

A point is (run id, kind, parameters); `point_id` is the run id of every kind. `run_points`
holds the loop (claim, compute on the backend, finish): a point stored before is read back, not
computed; a point another live run holds is waited for (polled) and counted as stored once that
run stores it; a point whose owner died (or whose lease expired) is taken over. Every write is
one transaction, so a killed run loses only the points it was computing and its rerun computes
only what is missing; an exception at a point is recorded as its outcome ("error") and the run
goes on; an interrupted run (Ctrl-C) releases its leases on the way out. `compute_once` is one
point computed in this process, its result or a StoreError: for computations that carry state
from point to point (the transition lines' followers), and for a table computed once per
parameter set. Without a store the points are only computed.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from .._core.interrupt import Interrupted
from .._core.progress import progress_bar
from ..io import check_output_file
from .backends import check_backend, open_backend
from .points import BatchFunction, Outcome, PointFunction
from .store import BUSY, DONE, Heartbeat, Owner, ResultStore, StoreError, check_store

Point = tuple[str, str, dict]  # (run id, kind, parameters)
LEASE_SECONDS = 120.0  # a lease not renewed for this long is taken over (renewed every lease/3)
POLL_SECONDS = 0.5  # how often points claimed by other runs are checked again
# kinds whose run ids were written as flat JSON before there was one id function: hashed as they
# were, so that their stores still resume
_FLAT_KINDS = frozenset({"trust"})


def point_id(kind: str, params: dict) -> str:
    """The run id of a point: the sha256 of the canonical JSON of (kind, params) (keys sorted,
    no spaces, no NaN); for the kinds of _FLAT_KINDS, of {"kind": kind, **params} as json.dumps
    writes it."""
    if kind in _FLAT_KINDS:
        text = json.dumps({"kind": kind, **params}, sort_keys=True)
    else:
        text = json.dumps(
            {"kind": kind, "params": params}, sort_keys=True, separators=(",", ":"), allow_nan=False
        )
    return hashlib.sha256(text.encode()).hexdigest()


class Session:
    """One run's hold on a store: its connection (`db`), its owner (a unique token and this
    process) and the heartbeat that renews the owner's leases; leaving it releases every lease
    the owner still holds."""

    def __init__(self, path: str | Path, lease: float = LEASE_SECONDS):
        self.path, self.lease, self.owner = Path(path), lease, Owner.current()

    def __enter__(self) -> Session:
        self.db = ResultStore(self.path)
        self._beat = Heartbeat(self.path, self.owner, self.lease)
        self._beat.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        try:
            self._beat.__exit__(*exc)
            self.db.release(self.owner)
        finally:
            self.db.close()


@dataclass(frozen=True)
class SweepSummary:
    """computed: evaluated by this run without error; stored: found in the store (finished
    before, by a concurrent run, or failed earlier and not retried); failed: evaluated by this
    run with an error. They add up to the number of distinct points. outcomes: run id ->
    (status, result, error) of every point."""

    computed: int
    stored: int
    failed: int
    outcomes: dict[str, Outcome] = field(default_factory=dict, repr=False, compare=False)

    def counts(self) -> dict[str, int]:
        return {"computed": self.computed, "stored": self.stored, "failed": self.failed}

    def __str__(self) -> str:
        return f"{self.computed} computed, {self.stored} already stored, {self.failed} failed"


def run_points(
    points: Iterable[Point],
    fn: PointFunction,
    *,
    store: str | Path | Session | None,
    backend: str = "serial",
    workers: int = 1,
    scheduler: str | None = None,
    lease: float = LEASE_SECONDS,
    retry: bool = True,
    progress: bool | None = False,
    desc: str = "points",
    batch: int = 1,
    many: BatchFunction | None = None,
) -> SweepSummary:
    """fn(kind, params) -> dict at every point that `store` lacks, on `backend` ("serial": this
    process, "process": `workers` local processes, "dask": the `scheduler` or a LocalCluster).

    store: a store file (checked, then created only once the backend has started; its leases
    last `lease` seconds), an open Session (its own lease), or None (nothing stored). retry:
    recompute points stored as failed. progress: a bar on stderr (None: when it is a terminal).
    batch: up to this many points of one kind, claimed together, go to a worker as one task,
    computed by many(kind, [params, ...]) -> [dict, ...] (each point alone where it raises).
    fn and many must be importable by workers on the process and Dask backends."""
    points = list(points)
    check_backend(backend, workers)
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise ValueError(f"batch must be an integer >= 1, got {batch!r}")
    task = Task(fn, many if batch > 1 else None, batch)
    if isinstance(store, (str, Path)):
        try:
            check_output_file(store, "store")
        except ValueError as err:
            raise StoreError(str(err)) from None
        check_store(store)
    try:
        pool = open_backend(backend, workers, scheduler)
    except KeyboardInterrupt:  # starting the workers takes seconds: not a bare "interrupted"
        raise Interrupted(
            f"none of the {len(points)} points ({desc}) computed: stopped while the "
            f"{backend} backend started"
        ) from None
    finished = False
    try:
        if isinstance(store, (str, Path)):
            with Session(store, lease) as session:
                summary = _drive(points, task, session, pool, retry, progress, desc)
        else:
            summary = _drive(points, task, store, pool, retry, progress, desc)
        finished = True
        return summary
    finally:
        pool.close(finished)  # interrupted: workers stopped at once, not at their task's end


@dataclass(frozen=True)
class Task:
    """What a backend runs: `fn` a point at a time, or `many` on up to `size` points."""

    fn: PointFunction
    many: BatchFunction | None
    size: int


def _drive(points, task: Task, session: Session | None, pool, retry, progress, desc):
    """`_loop`, an interruption turned into `Interrupted` saying how many points are stored."""
    counts = {"ok": 0, "error": 0, DONE: 0}
    try:
        return _loop(points, task, session, pool, retry, progress, desc, counts)
    except (KeyboardInterrupt, Interrupted):  # Ctrl-C here, or inside a point's own run
        done = counts["ok"] + counts["error"] + counts[DONE]
        where = (
            f"stored in {session.path}; rerun the same command to resume"
            if session is not None
            else "computed, none stored (no store)"
        )
        raise Interrupted(f"{done} of {len(points)} points ({desc}) {where}") from None


def _loop(points, task: Task, session, pool, retry, progress, desc, counts) -> SweepSummary:
    """Points are claimed just before the backend takes them (up to `task.size` of one kind at
    a time), so concurrent runs share the points."""
    pending = deque((rid, kind, params, retry) for rid, kind, params in points)
    waiting: list[Point] = []
    inflight: dict = {}
    outcomes: dict[str, Outcome] = {}
    show = sys.stderr.isatty() if progress is None else progress
    with progress_bar(total=len(pending), desc=desc, unit="point", enabled=show) as bar:
        while pending or waiting or inflight:
            while pending and len(inflight) < pool.capacity:
                claimed: list[tuple[str, str, dict, object]] = []  # rid, kind, params, attempt
                kind = pending[0][1]
                while pending and len(claimed) < task.size and pending[0][1] == kind:
                    rid, kind, params, may_retry = pending.popleft()
                    state, attempt = None, None
                    if session is not None:
                        state, attempt = session.db.claim(
                            rid, session.owner, retry=may_retry, lease=session.lease
                        )
                    if session is not None and state == DONE:
                        stored = session.db.result(rid)
                        assert stored is not None  # DONE: the point is stored
                        outcomes[rid] = stored
                        counts[DONE] += 1
                        bar.update()
                    elif state == BUSY:
                        waiting.append((rid, kind, params))
                    else:
                        claimed.append((rid, kind, params, attempt))
                if claimed:
                    handle = pool.submit(task.fn, task.many, kind, [c[2] for c in claimed])
                    inflight[handle] = claimed
            if inflight:
                done = pool.wait(list(inflight), timeout=POLL_SECONDS if waiting else None)
                for handle in done:
                    claimed = inflight.pop(handle)
                    results = pool.outcome(handle, len(claimed))
                    for (rid, kind, params, attempt), outcome in zip(claimed, results, strict=True):
                        if session is not None:
                            session.db.finish(rid, kind, params, attempt, session.owner, outcome)
                        outcomes[rid] = outcome
                        counts[outcome[0]] += 1
                        bar.update()
            elif waiting:
                time.sleep(POLL_SECONDS)
            if waiting:
                bar.set_postfix_str(f"waiting for {len(waiting)} points of other runs")
                # a point another run failed is not retried again here: that was its attempt
                pending.extend((rid, kind, params, False) for rid, kind, params in waiting)
                waiting.clear()
    return SweepSummary(counts["ok"], counts[DONE], counts["error"], outcomes)


def compute_once(
    store: str | Path | Session, kind: str, params: dict, compute: Callable[[], dict]
) -> dict:
    """The stored result of the point (kind, params), or compute() stored under it first (in
    this process); a point another live run holds is waited for. StoreError if the point
    failed, here or in the run that held it (a rerun computes it again)."""
    rid = point_id(kind, params)
    summary = run_points([(rid, kind, params)], lambda kind, params: compute(), store=store)
    status, result, error = summary.outcomes[rid]
    if status != "ok":
        raise StoreError(f"{kind} point failed: {error}")
    assert result is not None  # an "ok" point has its record
    return result
