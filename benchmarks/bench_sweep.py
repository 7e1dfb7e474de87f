"""Speed of the transition lines and of an empirical phase diagram, the speed-up
of the process and Dask backends over one worker on the same sweep, and the store's cost per
point (claim, result and lease in SQLite) measured with a point function that does nothing.

    python benchmarks/bench_sweep.py [--omegas 10] [--grid 10] [--d 500] [--quick]
                                     [--parts lines,backends,store]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from attnphase import ModelParams
from attnphase.paper.recipes import transition_lines
from attnphase.sweep import SweepSpec, run_sweep


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--omegas", type=int, default=10)
    ap.add_argument("--grid", type=int, default=10)
    ap.add_argument("--d", type=int, default=500)
    ap.add_argument("--quick", action="store_true", help="coarse quadrature for the lines")
    ap.add_argument("--parts", default="lines,backends,store", help="what to measure")
    args = ap.parse_args()
    parts = set(args.parts.split(","))
    if "store" in parts:
        store_overhead()
    if "lines" in parts:
        lines(args)
    if "backends" in parts:
        backends(args)


def _nothing(kind: str, params: dict) -> dict:
    return {}


def store_overhead(n: int = 400) -> None:
    spec = SweepSpec("theory", {"alpha": [0.01 * (i + 1) for i in range(n)]})
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        run_sweep(spec, Path(tmp) / "s.sqlite", backend="serial", evaluate_point=_nothing)
        first = time.perf_counter() - t
        t = time.perf_counter()
        run_sweep(spec, Path(tmp) / "s.sqlite", backend="serial", evaluate_point=_nothing)
        again = time.perf_counter() - t
    print(
        f"store overhead, {n} points doing nothing (serial): {1e3 * first / n:.2f} ms/point "
        f"computed, {1e3 * again / n:.2f} ms/point found stored"
    )


def lines(args) -> None:
    omegas = list(np.linspace(0.05, 0.5, args.omegas))
    t = time.perf_counter()
    table = transition_lines(omegas, ModelParams(), quick=args.quick)
    secs = time.perf_counter() - t
    print(
        f"transition lines, {args.omegas} omegas ({'quick' if args.quick else 'default'} "
        f"orders): {secs:.1f} s"
    )
    print(
        table[["omega", "alpha_c", "alpha_c_err", "alpha_l", "alpha_l_err"]].to_string(index=False)
    )


def backends(args) -> None:
    spec = SweepSpec(
        "simulation",
        {
            "alpha": [float(a) for a in np.linspace(0.4, 2.4, args.grid)],
            "omega": [float(w) for w in np.linspace(0.05, 0.5, args.grid)],
            "init": ["semantic", "positional"],
        },
        {"d": args.d, "n_test": 2000},
    )
    times = {}
    with tempfile.TemporaryDirectory() as tmp:
        for backend, workers in (("serial", 1), ("process", 2), ("dask", 2)):
            t = time.perf_counter()
            run_sweep(
                spec,
                Path(tmp) / f"{backend}.sqlite",
                backend=backend,
                workers=workers,
                progress=False,
            )
            times[backend] = time.perf_counter() - t
    n = len(spec.points())
    print(f"empirical phase diagram {args.grid} x {args.grid} x 2 inits at d={args.d} ({n} runs):")
    for backend, secs in times.items():
        print(
            f"  {backend:8s} {secs:8.1f} s   speed-up over one worker "
            f"{times['serial'] / secs:4.2f}x"
        )


if __name__ == "__main__":
    main()
