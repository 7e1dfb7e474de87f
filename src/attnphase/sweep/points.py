"""The computation of one sweep point: `solve` (theory) or `simulate` (simulation).

`evaluate` sets no global state: it runs unchanged in the caller's process (serial backend) and
in workers; what only workers may do (one torch thread each) is in `backends.run_in_worker`.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable

PointFunction = Callable[[str, dict], dict]


def evaluate(kind: str, params: dict) -> dict:
    """The result record of one canonical point (the parameters themselves left out)."""
    p = dict(params)
    if kind == "theory":
        from ..theory.engine import solve_cold
        from .spec import theory_method, theory_model

        out = solve_cold(p["alpha"], theory_model(p), p["branch"], theory_method(p)).as_dict()
    else:
        from ..sim import simulate
        from .spec import sim_config

        (res,) = simulate(sim_config(p), seeds=[p["seed"]])
        out = res.as_dict()
    return {k: v for k, v in out.items() if k not in params}


def run_point(fn: PointFunction, kind: str, params: dict) -> tuple[str, dict | None, str | None]:
    """("ok", result, None) or ("error", None, message and traceback): an exception at one
    point is recorded with it and the sweep goes on."""
    try:
        return "ok", fn(kind, params), None
    except Exception as err:
        return "error", None, f"{type(err).__name__}: {err}\n{traceback.format_exc(limit=4)}"
