"""Speed of one extension's phase-diagram sweep: the full grid of
`attnphase figure extensions --full` (25 alpha x 25 omega x 2 starts, d = 500, one seed) for
one extension through the sweep store with N worker processes, against a baseline measured
in this process: a sample of the same points run serially (one torch thread, as a worker),
for the extension and for the tied model. Prints the sweep's wall time, the serial estimate
(sample mean x points), their ratio (the workers' speed-up), the extension's cost per run
relative to the tied model's, and the load average before and after.

    python benchmarks/bench_extension_sweep.py [--extension untied] [--workers 2]
                                               [--sample 40] [--store PATH]

--store keeps the sweep's store (it must not exist yet: a store that holds points would be
resumed, not timed); `attnphase figure extensions --full --out DIR` resumes from it when it
is DIR/extensions_<extension>_d500.sqlite.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from attnphase.paper.extensions import EXTENSIONS, N_TEST, sizes, store_name
from attnphase.paper.recipes import INITS
from attnphase.sim import torch_threads
from attnphase.sweep import SweepSpec, evaluate, run_sweep


def spec_for(name: str) -> SweepSpec:
    """The full figure's sweep of one extension (the grid `make_extensions` sweeps)."""
    size = sizes(quick=False)
    grid = {"alpha": size["alphas"], "omega": size["omegas"], "init": INITS, "seed": [0]}
    base = {"d": size["d"], "n_test": N_TEST, **EXTENSIONS[name]}
    return SweepSpec("simulation", grid, base)


def serial_seconds(spec: SweepSpec, every: int) -> np.ndarray:
    """Wall time of every `every`-th point of `spec`, run here one after another."""
    seconds = []
    with torch_threads(1):
        for _, params in spec.runs()[::every]:
            start = time.perf_counter()
            evaluate("simulation", params)
            seconds.append(time.perf_counter() - start)
    return np.array(seconds)


def load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--extension", default="untied", choices=[n for n in EXTENSIONS if n != "tied"])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--sample", type=int, default=40, help="points of the serial baseline")
    ap.add_argument("--store", type=Path, help="keep the sweep's store here (must not exist)")
    args = ap.parse_args()
    if args.store is not None and args.store.exists():
        ap.error(f"--store: {args.store} exists (its points would be resumed, not timed)")
    spec, tied = spec_for(args.extension), spec_for("tied")
    n = len(spec.runs())
    every = max(1, n // args.sample)
    print(f"{args.extension}: {n} points (d = {sizes(False)['d']}); {load()}")
    ext_s = serial_seconds(spec, every)
    tied_s = serial_seconds(tied, every)
    print(
        f"serial baseline, {ext_s.size} points (1 in {every}), one thread: "
        f"{args.extension} {ext_s.mean():.2f} s/run, tied {tied_s.mean():.2f} s/run "
        f"(ratio {ext_s.mean() / tied_s.mean():.2f}); {load()}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        store = args.store or Path(tmp) / f"{store_name(args.extension, sizes(False)['d'])}.sqlite"
        start = time.perf_counter()
        table = run_sweep(spec, store, backend="process", workers=args.workers)
        wall = time.perf_counter() - start
    summary = table.attrs["summary"]
    estimate = ext_s.mean() * n
    print(
        f"sweep, {args.workers} workers: {wall:.0f} s = {wall / 60:.1f} min for {n} points "
        f"({summary['computed']} computed, {summary['failed']} failed); serial estimate "
        f"{estimate:.0f} s; speed-up {estimate / wall:.2f}x; target < 30 min: "
        f"{'met' if wall < 1800 else 'missed'}; {load()}"
    )


if __name__ == "__main__":
    main()
