"""Below alpha ~ 1, where does GAMP go: to the state evolution's RS fixed point, nowhere
(stall/cycle), or to the strict local minima gradient descent finds? (docs/theory.md §8.1, §9)

omega = 0.3, sigma = 0.5, lambda = 0.01, L = 2; alpha = 0.5 and 0.8; d = 2000, 5000, 10000
(3, 2, 2 seeds). Per run, on the same data set (same seed): GAMP from the semantic start
(default damping 0.75; `polish=True` adds a labelled L-BFGS run from GAMP's end point when it
does not converge) and L-BFGS from the same start (`attnphase.simulate`, optimizer lbfgs).
Compared: theta, m, training loss R/d, |grad R|/sqrt(d), status. References: the RS fixed point
`attnphase.solve(alpha)` (semantic start) and, per alpha, the identically damped state
evolution from the d = 2000 seed-0 run's first admissible iterate for 300 iterations
(`trace_of_run`, 1024 QMC points x 4 scramblings).

Writes, beside this script, results/gamp_rugged.sqlite (the runs, git-ignored; the script
resumes from it), data/gamp_rugged.csv (one row per alpha, d,
seed) and data/gamp_rugged.json (plus the references), and docs/gamp_rugged.png; prints the
table. Wall time on one core of a shared 2-core machine:
26 minutes (measured: 14 of them GAMP and L-BFGS, most of the rest the two state-evolution
traces).

    python studies/gamp_rugged.py [--seeds 3,2,2]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numba
import pandas as pd
import torch
from gamp_study import rugged_figure
from runlog import run_study, seeds_option

from attnphase import ModelParams, SimConfig, simulate, solve
from attnphase.gamp import run_gamp, trace_of_run

ALPHAS, SIZES = (0.5, 0.8), (2000, 5000, 10000)
HERE = Path(__file__).resolve().parent
DOCS, DATA, RESULTS = HERE.parent / "docs", HERE / "data", HERE / "results"
seeds_arg = seeds_option(SIZES)
COLUMNS = ("theta", "m", "q", "train_loss")
SE_ITERATIONS = 300  # the damped map needs ~250-320 iterations to its fixed point here


def one_run(p: ModelParams, alpha: float, d: int, seed: int) -> dict:
    """GAMP and L-BFGS on the data set of (alpha, d, seed), both from the semantic start."""
    g = run_gamp(p, d, alpha, init="semantic", seed=seed, polish=True)
    cfg = SimConfig(params=p, d=d, alpha=alpha, init="semantic", optimizer="lbfgs")
    (lb,) = simulate(cfg, seeds=[seed])
    rec = {"kind": "run", "alpha": alpha, "d": d, "seed": seed}
    rec.update({f"gamp_{k}": v for k, v in g.as_dict().items() if k not in rec})
    rec["gamp_history"] = [
        {k: s[k] for k in ("iteration", "theta", "m", "grad_norm", "train_loss", "switched")}
        for s in g.trace_rows()
    ]
    rec.update({f"lbfgs_{k}": v for k, v in lb.as_dict().items() if k not in rec and k != "omega"})
    if d == SIZES[0] and seed == 0:  # the state evolution beside one run per alpha
        tr = trace_of_run(g, max(g.iterations, SE_ITERATIONS), points=1024, randomisations=4)
        rec["se_trace"] = tr.rows()
        rec["se_trace_status"] = tr.status
    return rec


def table(recs: list[dict], refs: dict) -> pd.DataFrame:
    rows = []
    for r in sorted(recs, key=lambda r: (r["alpha"], r["d"], r["seed"])):
        row = {"alpha": r["alpha"], "d": r["d"], "seed": r["seed"]}
        row["rs_theta"] = refs[r["alpha"]]["theta"]
        for k in COLUMNS:
            row[f"gamp_{k}"] = r[f"gamp_{k}"]
            row[f"lbfgs_{k}"] = r[f"lbfgs_{k}"]
        row["gamp_grad_norm"], row["lbfgs_grad_norm"] = r["gamp_grad_norm"], r["lbfgs_grad_rms"]
        row["gamp_V"] = r["gamp_V"]
        row["gamp_status"], row["gamp_iterations"] = r["gamp_status"], r["gamp_iterations"]
        row["lbfgs_status"], row["lbfgs_steps"] = r["lbfgs_status"], r["lbfgs_steps"]
        for k in ("theta", "train_loss", "grad_norm"):
            row[f"polish_{k}"] = r.get(f"gamp_polish_{k}")
        row["gamp_seconds"], row["lbfgs_seconds"] = r["gamp_seconds"], r["lbfgs_batch_seconds"]
        rows.append(row)
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=seeds_arg, default=seeds_arg("3,2,2"))
    args = ap.parse_args()
    torch.set_num_threads(1)
    numba.set_num_threads(1)
    p = ModelParams()
    for folder in (DOCS, DATA, RESULTS):
        folder.mkdir(exist_ok=True)
    refs = {a: solve(a, p, branch="semantic").as_dict() for a in ALPHAS}
    t0 = time.perf_counter()
    points = [
        {"alpha": alpha, "d": d, "seed": seed}
        for d in SIZES  # d = 10000 last
        for alpha in ALPHAS
        for seed in range(args.seeds[d])
    ]
    recs = run_study("gamp_rugged", points, lambda k: one_run(p, k["alpha"], k["d"], k["seed"]))
    wall = time.perf_counter() - t0
    df = table(recs, refs)
    df.to_csv(DATA / "gamp_rugged.csv", index=False)
    keep = ("q", "m", "theta", "V", "test_error", "train_loss", "converged", "status", "kind")
    out = {
        "params": {"omega": p.omega, "sigma": p.sigma, "lam": p.lam, "L": p.L},
        "rs_fixed_points": {str(a): {k: refs[a][k] for k in keep} for a in ALPHAS},
        "runs": df.to_dict("records"),
        "se_trace_status": {str(r["alpha"]): r["se_trace_status"] for r in recs if "se_trace" in r},
        "compute_seconds": sum(r["gamp_seconds"] + r["lbfgs_batch_seconds"] for r in recs),
        "this_invocation_seconds": wall,
    }
    (DATA / "gamp_rugged.json").write_text(json.dumps(out, indent=1, default=float) + "\n")
    rugged_figure(recs, refs, p, DOCS / "gamp_rugged.png")

    pd.set_option("display.width", 200)
    show = [
        "alpha",
        "d",
        "seed",
        "rs_theta",
        "gamp_theta",
        "lbfgs_theta",
        "polish_theta",
        "gamp_m",
        "lbfgs_m",
        "gamp_train_loss",
        "lbfgs_train_loss",
        "polish_train_loss",
        "gamp_grad_norm",
        "lbfgs_grad_norm",
        "gamp_iterations",
    ]
    print(df[show].to_string(index=False, float_format=lambda v: f"{v:.6g}"))
    for _, r in df.iterrows():
        print(
            f"  alpha={r['alpha']} d={r['d']} seed {r['seed']}: GAMP {r['gamp_status']}; "
            f"L-BFGS {r['lbfgs_status']}"
        )
    for a in ALPHAS:
        ref = refs[a]
        print(
            f"RS fixed point (solve, semantic start) alpha {a}: theta {ref['theta']:.4g}, "
            f"q {ref['q']:.4g}, V {ref['V']:.4g}, train_loss {ref['train_loss']:.6g}, "
            f"branch {ref['kind']}"
        )
    print(
        f"compute {out['compute_seconds'] / 60:.1f} min in all; this invocation {wall / 60:.1f} min"
    )


if __name__ == "__main__":
    main()
