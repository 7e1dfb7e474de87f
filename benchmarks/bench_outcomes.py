"""Speed of the outcome study ("Speed": 11 alphas x 50 runs at d = 500 in under 15 min).

Baseline: the study as first written: serial, one torch thread, its temporary store on disk
(every point's claim and result synced), measured on the first --baseline-runs seeds of every
alpha and scaled to --runs. Now: `attnphase.validity.outcomes` with --workers processes and its
default temporary store (in memory, /dev/shm). Same protocol (Adam lr 0.01, at most 5000 steps,
RMS gradient 1e-8; L-BFGS for the informed runs), so the same run ids and the same end points:
the script checks that the baseline's runs got the outcomes the full study gives them. The
machine's load (`uptime`) is printed with every timing: the cores may be shared.
--store keeps the full study's runs (`attnphase outcomes --store` reads them back); --gtol
changes the trained runs' stopping rule (the baseline keeps 1e-8); --baseline-runs 0 skips it.

    python benchmarks/bench_outcomes.py [--runs 50] [--d 500] \
        [--alpha 0.5:3:11] [--baseline-runs 3] [--workers 2] [--gtol 1e-8] \
        [--store runs.sqlite] [--plot docs/outcomes.png]
"""

from __future__ import annotations

import argparse
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from attnphase.cli.common import STANDARD_A_TEXT
from attnphase.cli.tables import render
from attnphase.figures.outcomes import outcome_figure, study_title
from attnphase.validity.outcomes import outcomes

COLUMNS = ["alpha", "runs", "n_semantic", "n_positional", "n_other", "fraction_semantic"]
COLUMNS += ["fraction_positional", "fraction_other", "not_converged"]


def load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def timed(label: str, **kwargs):
    print(f"{label}: start  | {load()}", flush=True)
    t = time.perf_counter()
    study = outcomes(**kwargs)
    secs = time.perf_counter() - t
    print(f"{label}: {secs:.1f} s | {load()}", flush=True)
    return study, secs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--d", type=int, default=500)
    ap.add_argument("--alpha", default="0.5:3:11", help="start:stop:num")
    ap.add_argument("--baseline-runs", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--gtol", type=float, default=1e-8, help="the full study's trained runs")
    ap.add_argument("--store", type=Path, default=None, help="the full study's store")
    ap.add_argument("--plot", type=Path, default=None, help="figure of the full study")
    args = ap.parse_args()
    start, stop, num = args.alpha.split(":")
    alphas = [float(f"{a:.12g}") for a in np.linspace(float(start), float(stop), int(num))]
    common = dict(alphas=alphas, d=args.d, progress=False)

    base, scaled = None, None
    if args.baseline_runs > 0:
        with tempfile.TemporaryDirectory(prefix="bench-outcomes-") as tmp:  # on disk, as before
            base, base_secs = timed(
                f"baseline: {len(alphas)} alphas x {args.baseline_runs} runs, serial, "
                "store on disk",
                runs=args.baseline_runs,
                store=Path(tmp) / "runs.sqlite",
                backend="serial",
                **common,
            )
        scaled = base_secs * args.runs / args.baseline_runs
        print(f"baseline scaled to {args.runs} runs/alpha: {scaled:.0f} s", flush=True)
    where = "in memory" if args.store is None else str(args.store)
    now, secs = timed(
        f"now: {len(alphas)} alphas x {args.runs} runs, {args.workers} workers, "
        f"gtol {args.gtol:g}, store {where}",
        runs=args.runs,
        backend="process" if args.workers > 1 else "serial",
        workers=args.workers,
        gtol=args.gtol,
        store=args.store,
        **common,
    )
    print(f"full study: {secs:.0f} s = {secs / 60:.1f} min")
    if base is not None:
        full = {(r["alpha"], r["seed"]): r["outcome"] for r in now.runs}
        same = all(full[(r["alpha"], r["seed"])] == r["outcome"] for r in base.runs)
        print(f"baseline runs' outcomes identical in the full study: {same}")
        print(f"baseline (scaled) / now = {scaled / secs:.2f}x")
    print(render(now.fractions, "table", COLUMNS))
    if args.plot is not None:
        title = study_title(
            d=args.d, runs=args.runs, init="random", optimizer="adam", lr=None, steps=None,
            gtol=args.gtol, omega=0.3, sigma=0.5, lam=0.01, A_text=STANDARD_A_TEXT,
        )  # fmt: skip
        outcome_figure(now.fractions, args.plot, title)
        print(f"figure: {args.plot}")


if __name__ == "__main__":
    main()
