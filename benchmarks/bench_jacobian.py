"""How much an exact Jacobian could save the exact L = 2 engine (docs/numerics.md, "Newton's
Jacobian"): the paper's learning curve (24 alphas on [0.2, 2.5], semantic and positional,
default orders and errors) solved as shipped, with the chord Jacobian (finite differences at
the mid order, reused along the curve while its steps contract), and again with a fresh
finite-difference Jacobian of the full-order map at every point before its Newton steps. The
second run's Newton steps are those an implicit Jacobian (`prox_jacobian` through the channel)
would take; its own cost is counted apart. Printed: wall time, channel evaluations per order,
the full-order evaluations that are Newton steps, and the largest difference in test error.

    python benchmarks/bench_jacobian.py
"""

from __future__ import annotations

import time
import warnings
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np

from attnphase import ModelParams
from attnphase.theory.engine import learning_curve
from attnphase.theory.gauss_hermite import channel, engine
from attnphase.theory.iterate import InadmissibleStep, residual_jacobian

ALPHAS = [float(a) for a in np.linspace(0.2, 2.5, 24)]
FULL = (64, 24)  # the default order (GaussHermite().order)


def run(fresh: bool) -> tuple[float, Counter, int, np.ndarray]:
    """(seconds, evaluations per order, full-order evaluations spent on fresh Jacobians, test
    errors) of both branches' curves."""
    calls: Counter = Counter()
    jacobian_calls = 0
    moments, checked = channel.ChannelIntegrator.moments, engine.iterate_checked

    def counted(self: Any, *args: Any, **kw: Any) -> Any:
        calls[self.n_xi, self.n_y] += 1
        return moments(self, *args, **kw)

    def with_fresh_jacobian(fmap: Any, x: np.ndarray, **kw: Any) -> Any:
        nonlocal jacobian_calls
        if fresh and "jacobian" in kw and (fmap.integ.n_xi, fmap.integ.n_y) == FULL:
            fmap.local = True
            before = calls[FULL]
            try:
                fx, _ = fmap.step(x)
                kw["jacobian"] = residual_jacobian(fmap.step, x, fx, fmap.keep > 0)
            except InadmissibleStep:
                pass
            jacobian_calls += calls[FULL] - before
        return checked(fmap, x, **kw)

    patches: list[tuple[Any, str, Callable]] = [
        (channel.ChannelIntegrator, "moments", counted),
        (engine, "iterate_checked", with_fresh_jacobian),
    ]
    saved = [(obj, name, getattr(obj, name)) for obj, name, _ in patches]
    for obj, name, fn in patches:
        setattr(obj, name, fn)
    try:
        t0 = time.perf_counter()
        errors = [
            [r.test_error for r in learning_curve(ALPHAS, ModelParams(), branch=b)]
            for b in ("semantic", "positional")
        ]
        seconds = time.perf_counter() - t0
    finally:
        for obj, name, fn in saved:
            setattr(obj, name, fn)
    return seconds, calls, jacobian_calls, np.array(errors)


def main() -> None:
    warnings.simplefilter("ignore")
    learning_curve(ALPHAS[:2], ModelParams())  # compile
    points = 2 * len(ALPHAS)
    rows = {"chord (shipped)": run(False), "fresh Jacobian": run(True)}
    print(f"{'':18} {'seconds':>8} {'full-order Newton/iter. evals':>30}  evaluations by order")
    for name, (seconds, calls, jac, _) in rows.items():
        steps = calls[FULL] - jac
        per = f"{steps} ({steps / points:.1f} a point)"
        print(f"{name:18} {seconds:8.1f} {per:>30}  {dict(sorted(calls.items()))}")
    chord, fresh = rows["chord (shipped)"], rows["fresh Jacobian"]
    saved = 1 - (fresh[1][FULL] - fresh[2]) / chord[1][FULL]
    print(f"full-order steps an exact Jacobian saves: {saved:.0%}")
    print(f"largest test-error difference: {np.nanmax(np.abs(chord[3] - fresh[3])):.1e}")


if __name__ == "__main__":
    main()
