"""GAMP runs over seeds, and each run's iterates beside the state evolution (`attnphase gamp`):
the orchestration the command line calls."""

from __future__ import annotations

from .._core.interrupt import PartialInterrupt
from ..params import ModelParams
from .algorithm import DEFAULT_DAMPING, run_gamp
from .result import GampResult
from .trace import trace_of_run


def gamp_runs(
    params: ModelParams,
    d: int,
    alpha: float,
    *,
    init: str = "semantic",
    seeds: int = 1,
    damping: float = DEFAULT_DAMPING,
    max_iter: int = 1000,
    progress: bool = False,
) -> list[GampResult]:
    """One GAMP run per seed 0..seeds-1 on the simulations' data for that seed; Ctrl-C raises
    `PartialInterrupt` with the runs finished so far."""
    out: list[GampResult] = []
    try:
        for s in range(seeds):
            out.append(
                run_gamp(
                    params,
                    d,
                    alpha,
                    init=init,
                    seed=s,
                    damping=damping,
                    max_iter=max_iter,
                    progress=progress,
                )
            )
    except KeyboardInterrupt:
        raise PartialInterrupt(out) from None
    return out


def trace_table(result: GampResult) -> list[dict]:
    """Per iteration of one run: GAMP's overlaps and, from the first iterate that can seed it
    (`trace_start`), the state evolution's with its standard error (columns se_*)."""
    se = {row["iteration"]: row for row in trace_of_run(result).rows()}
    out = []
    for row in result.trace_rows():
        merged = {"alpha": result.alpha, "init": result.init, "seed": result.seed, **row}
        theory = se.get(row["iteration"], {})
        for key in ("q", "m", "theta", "V", "test_error"):
            merged[f"se_{key}"] = theory.get(key, float("nan"))
            merged[f"se_{key}_err"] = theory.get(f"{key}_err", float("nan"))
        out.append(merged)
    return out
