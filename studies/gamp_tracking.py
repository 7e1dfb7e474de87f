"""Does the state evolution track GAMP iteration by iteration, and does the gap shrink like
d^-1/2? (docs/theory.md §8, §8.1)

alpha = 1.5, omega = 0.3, sigma = 0.5, lambda = 0.01, L = 2 (the defaults of ModelParams).

1. Tracking (undamped, where the trace is exact): GAMP with damping 0 for 8 iterations from
   the semantic and the positional start, at d = 2000, 5000, 10000 (4, 3, 2 seeds), each
   beside `trace_of_run` (the undamped state evolution from the run's first admissible
   iterate: 1 for the semantic start Qh = Q*, 0 for the positional one; 4096 QMC points x 4
   scramblings). Per iterate and overlap (q, m, theta, V): GAMP - SE over seeds (RMS, bias,
   sd) and the slope of log RMS against log d (`gamp_study`, beside this script).
2. End points (default damping 0.75, to convergence or a cycling/stall status): the same
   starts at the same sizes (2, 1, 1 seeds), against `attnphase.solve(1.5)` on each branch.

Writes, beside this script, results/gamp_tracking.sqlite (the runs, git-ignored; the script
resumes from it), data/gamp_tracking_deviations.csv (per
start, d, iterate, overlap) and data/gamp_tracking.json (fits, end points vs solve,
statuses), and docs/gamp_tracking.png; prints a summary.
Wall time on one core of a shared 2-core machine: 18 minutes (measured; the d = 10000 runs
take 40-130 s each and ~8 GB of memory; they run last, one at a time).

    python studies/gamp_tracking.py [--tracking-seeds 4,3,2] [--endpoint-seeds 2,1,1]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numba
import numpy as np
import pandas as pd
import torch
from gamp_study import deviation_summary, scaling_fit, trace_deviations, tracking_figure
from runlog import run_study, seeds_option

from attnphase import ModelParams, solve
from attnphase.gamp import run_gamp, trace_of_run

ALPHA, SIZES, INITS = 1.5, (2000, 5000, 10000), ("semantic", "positional")
ITERATIONS = 8  # undamped iterations: the undamped map oscillates and, positional, blows up
# iterates pooled in the fit: semantic from 2 (iterate 1 seeds the trace, zero by design);
# positional 1-2 (from iterate 3 the undamped positional map grows by ~-4.5 per step, §8.1)
WINDOWS = {"semantic": range(2, ITERATIONS + 1), "positional": range(1, 3)}
HERE = Path(__file__).resolve().parent
DOCS, DATA, RESULTS = HERE.parent / "docs", HERE / "data", HERE / "results"
seeds_arg = seeds_option(SIZES)


def tracking_run(p: ModelParams, d: int, init: str, seed: int) -> dict:
    t0 = time.perf_counter()
    res = run_gamp(p, d, ALPHA, init=init, seed=seed, damping=0.0, max_iter=ITERATIONS, n_test=1000)
    tr = trace_of_run(res)
    return {
        "kind": "tracking", "d": d, "init": init, "seed": seed, "status": res.status,
        "trace_status": tr.status, "rows": trace_deviations(res, tr),
        "seconds": time.perf_counter() - t0,
    }  # fmt: skip


def endpoint_run(p: ModelParams, d: int, init: str, seed: int) -> dict:
    res = run_gamp(p, d, ALPHA, init=init, seed=seed)
    return {"kind": "endpoint", **res.as_dict()}


def endpoints_vs_solve(p: ModelParams, recs: list[dict]) -> list[dict]:
    """Per start and d: mean and sd over seeds of GAMP's end point, solve()'s value and the
    relative difference of the mean."""
    out = []
    for init in INITS:
        ref = solve(ALPHA, p, branch=init).as_dict()
        for d in SIZES:
            sub = [r for r in recs if r["init"] == init and r["d"] == d]
            if not sub:
                continue
            for name in ("q", "m", "theta", "V", "test_error", "train_loss"):
                vals = np.array([r[name] for r in sub], dtype=float)
                out.append(
                    {
                        "init": init, "d": d, "seeds": len(vals), "quantity": name,
                        "gamp_mean": float(vals.mean()),
                        "gamp_sd": float(vals.std(ddof=1)) if len(vals) > 1 else None,
                        "solve": float(ref[name]),
                        "rel_diff": float(vals.mean() / ref[name] - 1) if ref[name] else None,
                    }
                )  # fmt: skip
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tracking-seeds", type=seeds_arg, default=seeds_arg("4,3,2"))
    ap.add_argument("--endpoint-seeds", type=seeds_arg, default=seeds_arg("2,1,1"))
    args = ap.parse_args()
    torch.set_num_threads(1)
    numba.set_num_threads(1)
    p = ModelParams()
    for folder in (DOCS, DATA, RESULTS):
        folder.mkdir(exist_ok=True)
    t0 = time.perf_counter()
    points = [
        {"kind": kind, "d": d, "init": init, "seed": seed}
        for d in SIZES  # smallest first: d = 10000 last
        for kind, seeds in (("tracking", args.tracking_seeds), ("endpoint", args.endpoint_seeds))
        for seed in range(seeds[d])
        for init in INITS
    ]
    runs = {"tracking": tracking_run, "endpoint": endpoint_run}
    recs = run_study(
        "gamp_tracking", points, lambda k: runs[k["kind"]](p, k["d"], k["init"], k["seed"])
    )
    wall = time.perf_counter() - t0
    tracking = [r for r in recs if r["kind"] == "tracking"]
    endpoints = [r for r in recs if r["kind"] == "endpoint"]

    summary = deviation_summary([row for r in tracking for row in r["rows"]])
    summary.to_csv(DATA / "gamp_tracking_deviations.csv", index=False)
    fits = pd.concat(
        [scaling_fit(summary[summary["init"] == i], WINDOWS[i]) for i in INITS], ignore_index=True
    )
    per_iterate = pd.concat(
        [scaling_fit(summary, [t]).assign(iteration=t) for t in range(ITERATIONS + 1)],
        ignore_index=True,
    ).dropna(subset=["slope"])
    comparison = endpoints_vs_solve(p, endpoints)
    out = {
        "alpha": ALPHA, "params": {"omega": p.omega, "sigma": p.sigma, "lam": p.lam, "L": p.L},
        "iterations": ITERATIONS, "windows": {k: list(v) for k, v in WINDOWS.items()},
        "fits": fits.to_dict("records"), "per_iterate_slopes": per_iterate.to_dict("records"),
        "endpoints_vs_solve": comparison,
        "tracking_runs": [
            {k: r[k] for k in ("d", "init", "seed", "status", "trace_status", "seconds")}
            for r in tracking
        ],
        "endpoint_runs": [
            {k: r[k] for k in ("d", "init", "seed", "status", "iterations", "grad_norm",
                               "train_loss", "seconds")}
            for r in endpoints
        ],
        "compute_seconds": sum(r["seconds"] for r in recs),
        "this_invocation_seconds": wall,
    }  # fmt: skip
    (DATA / "gamp_tracking.json").write_text(json.dumps(out, indent=1) + "\n")
    tracking_figure(summary, fits, WINDOWS, p, ALPHA, DOCS / "gamp_tracking.png")

    pd.set_option("display.width", 160)
    print(f"\nalpha {ALPHA}: undamped GAMP minus its state evolution, RMS over seeds")
    wide = summary.pivot_table(index=["init", "iteration"], columns=["overlap", "d"], values="rms")
    print(wide.to_string(float_format=lambda v: f"{v:.1e}"))
    print("\nslope of log RMS vs log d (pooled window; -0.5 = fluctuations, 0 = a fixed gap):")
    print(fits.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    print("\nend points (damping 0.75) vs solve(1.5):")
    print(pd.DataFrame(comparison).to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    print("\nstatuses:")
    for r in out["endpoint_runs"]:
        print(f"  d={r['d']} {r['init']} seed {r['seed']}: {r['status']} "
              f"({r['iterations']} iterations, |grad R|/sqrt(d) {r['grad_norm']:.1e})")  # fmt: skip
    print(
        f"\ncompute {out['compute_seconds'] / 60:.1f} min in all; "
        f"this invocation {wall / 60:.1f} min"
    )


if __name__ == "__main__":
    main()
