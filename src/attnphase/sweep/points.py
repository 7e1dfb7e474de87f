"""The computation of sweep points: `solve` (theory) or `simulate` (simulation), one point at a
time (`evaluate`) or a batch of points together (`evaluate_many`: theory points iterated
together, the batch axis of `attnphase.theory.solve_batch`).

Neither sets global state: they run unchanged in the caller's process (serial backend) and in
workers; what only workers may do (one torch thread each) is in `backends.run_in_worker`.
"""

from __future__ import annotations

import traceback
import warnings
from collections.abc import Callable

from .._core.interrupt import Interrupted

PointFunction = Callable[[str, dict], dict]
BatchFunction = Callable[[str, list[dict]], list[dict]]
Outcome = tuple[str, dict | None, str | None]


def evaluate(kind: str, params: dict) -> dict:
    """The result record of one canonical point (the parameters themselves left out); a
    simulation that diverged raises (RuntimeError), so that the point is a failed one."""
    p = dict(params)
    if kind == "theory":
        from ..theory.engine import solve_cold
        from .spec import theory_method, theory_model

        model, method = theory_model(p), theory_method(p)
        fixed = solve_cold(p["alpha"], model, p["branch"], method, p["precision"])
        out = fixed.as_dict()
        if p["precision"] is not None:  # the integration that answered, beside the point's own
            out |= {f"{k}_used": v for k, v in fixed.method.columns().items() if k != "method"}
    else:
        from ..sim import SimulationWarning, simulate
        from .spec import sim_config

        with warnings.catch_warnings():  # the result's status says what the warning would
            warnings.simplefilter("ignore", SimulationWarning)
            (res,) = simulate(sim_config(p), seeds=[p["seed"]])
        if res.status.startswith("diverged"):  # NaN throughout: a failed point, not a result
            raise RuntimeError(f"the run {res.status}")
        out = res.as_dict()
    return {k: v for k, v in out.items() if k not in params}


def evaluate_many(kind: str, batch: list[dict]) -> list[dict]:
    """`evaluate` at every point of `batch`, in order; theory points solved together
    (`theory.engine.solve_cold_many`: each result the one `evaluate` gives alone), except
    where a point asks for a precision (each climbs its own ladder)."""
    if kind != "theory" or any(p["precision"] is not None for p in batch):
        return [evaluate(kind, params) for params in batch]  # a precision: each its own ladder
    from ..theory.engine import solve_cold_many
    from .spec import theory_method, theory_model

    jobs = [(p["alpha"], theory_model(p), p["branch"], theory_method(p)) for p in batch]
    return [
        {k: v for k, v in res.as_dict().items() if k not in params}
        for res, params in zip(solve_cold_many(jobs), batch, strict=True)
    ]


def run_task(
    fn: PointFunction, many: BatchFunction | None, kind: str, batch: list[dict]
) -> list[Outcome]:
    """Every point's outcome (`run_point`): the batch through `many` when given; where it
    raises, each point again alone, so that the failing one is recorded with its own error."""
    if many is not None and len(batch) > 1:
        try:
            return [("ok", result, None) for result in many(kind, batch)]
        except Interrupted:
            raise
        except Exception:
            pass
    return [run_point(fn, kind, params) for params in batch]


def run_point(fn: PointFunction, kind: str, params: dict) -> Outcome:
    """("ok", result, None) or ("error", None, message and traceback): an exception at one
    point is recorded with it and the sweep goes on; an interrupt inside the point (a nested
    run stopped by Ctrl-C, `Interrupted`) stops the sweep instead."""
    try:
        return "ok", fn(kind, params), None
    except Interrupted:
        raise
    except Exception as err:
        return "error", None, f"{type(err).__name__}: {err}\n{traceback.format_exc(limit=4)}"
