"""Declarative, resumable sweeps of theory points or simulation runs that never compute a point
twice and never lose a finished one, and the one runner behind every resumable computation.

A sweep is a Cartesian grid over a fixed base (`SweepSpec(kind, grid, base)`); every point is
completed with the defaults, canonicalised and validated before anything is computed or written
(`spec`). Its run id is the sha256 of the canonical point (`runner.point_id`, the run id of
every kind). Finished points go to an SQLite store (`store`), one transaction per point, with a
lease per point being computed and a table of attempts. The runner (`runner.run_points`, and
`runner.compute_once` for one point computed in the caller's process) claims, computes and
stores the points of sweeps, transition lines and the trust map: a run killed at any moment
(even by SIGKILL) keeps every finished point and its rerun computes only what is missing;
concurrent runs on one store share the points; failed points are retried by a rerun
(`retry=False` keeps them). Backends (`backends`): "serial" (the caller's process), "process"
(local workers that die with their parent, the default of sweeps) and "dask" (an existing
scheduler or a LocalCluster); the point function is the same on all of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._core.lazy import lazy_getattr
from .spec import (
    KINDS,
    PARAMETERS,
    SweepSpec,
    canonical_point,
    defaults,
    parse_grid,
    parse_set,
    run_id,
)

if TYPE_CHECKING:
    from .backends import BACKENDS, SchedulerError, check_scheduler
    from .points import evaluate, run_point
    from .run import check_export, run_sweep, write_table
    from .runner import Session, SweepSummary, compute_once, point_id, run_points
    from .store import ResultStore, StoreError, SweepError, check_store

# the store, the runner and the backends (pandas, psutil) load on first use: importing the
# package for the spec (the CLI's help text) stays light
_LAZY = {
    "BACKENDS": "backends",
    "SchedulerError": "backends",
    "check_scheduler": "backends",
    "evaluate": "points",
    "run_point": "points",
    "check_export": "run",
    "run_sweep": "run",
    "write_table": "run",
    "Session": "runner",
    "SweepSummary": "runner",
    "compute_once": "runner",
    "point_id": "runner",
    "run_points": "runner",
    "ResultStore": "store",
    "StoreError": "store",
    "SweepError": "store",
    "check_store": "store",
}


__getattr__ = lazy_getattr(__name__, _LAZY)


__all__ = [
    "BACKENDS",
    "KINDS",
    "PARAMETERS",
    "ResultStore",
    "SchedulerError",
    "Session",
    "StoreError",
    "SweepError",
    "SweepSpec",
    "SweepSummary",
    "canonical_point",
    "check_export",
    "check_scheduler",
    "check_store",
    "compute_once",
    "defaults",
    "evaluate",
    "parse_grid",
    "parse_set",
    "point_id",
    "run_id",
    "run_point",
    "run_points",
    "run_sweep",
    "write_table",
]
