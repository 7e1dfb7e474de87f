"""The scaling study's evidence (docs/scaling.md §3): at L = 4 and L = 6 (linear encodings,
omega 0.3), L-BFGS at d = 1000 from both starts at two alphas on each side of alpha_c, against
the fixed points the theory reaches from the same starts, with the trust verdict of
docs/theory.md §9 at each point.

For every (L, alpha, start): the theory's fixed point from that start (QMC, `--points` x
`--randomisations`; its kind says where the start went), the simulations (5 seeds), the
comparison of theta, m, q, eps_g and the training loss (pass: |sim - (theory + 1/d term)| <= 3
combined standard errors + 5%, `general_vs_sim.Row.passes`, + 1/sqrt(d) for a quantity the
theory sets to zero), and the trust criteria: the fixed point's smooth replicon factor and jump
mass (`with_stability`), GAMP from the semantic start on seed 0, and the verdict
(`validity.trust.judge`). Every point is kept in results/scaling_vs_sim.sqlite (a rerun
computes only what is missing); the rows go to docs/scaling_sims.csv.

    python studies/scaling_vs_sim.py [--L 4,6] [--alphas 4:0.2,0.3,0.6,0.9] [--d 1000]
        [--seeds 5] [--points 2048] [--randomisations 4] [--no-gamp]

Default alphas: alpha_c of docs/scaling.csv (omega 0.3, linear) times 0.5, 0.75, 1.5 and 2.
"""

from __future__ import annotations

import argparse
import math
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from general_vs_sim import compare, describe
from runlog import run_study

from attnphase.scaling import family_model
from attnphase.sim import SimConfig, simulate
from attnphase.theory import QMC, solve
from attnphase.validity.stability import with_stability
from attnphase.validity.trust import JUMP_MASS_MAX, RS_MAX

DOCS = Path(__file__).resolve().parent.parent / "docs"
FACTORS = (0.5, 0.75, 1.5, 2.0)  # alpha / alpha_c: two on each side
NAME = "scaling_vs_sim"


def default_alphas(L: int) -> list[float]:
    table = pd.read_csv(DOCS / "scaling.csv")
    row = table[(table.L == L) & (table.omega == 0.3) & (table.encodings == "linear")]
    if row.empty or not np.isfinite(row.alpha_c.iloc[0]):
        raise SystemExit(f"no alpha_c at L = {L} in docs/scaling.csv: give --alphas {L}:...")
    return [round(float(row.alpha_c.iloc[0]) * f, 4) for f in FACTORS]


def point(params: dict) -> dict:
    """One (L, alpha, start): theory, stability, simulations, GAMP; the comparison rows."""
    L, alpha, init = params["L"], params["alpha"], params["init"]
    p = family_model(L, 0.3, "linear")
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theory = solve(
            alpha, p, branch=init, method=QMC(params["points"], params["randomisations"])
        )
        theory = with_stability(theory)
    t_theory = time.perf_counter() - t0
    sims = simulate(
        SimConfig(params=p, d=params["d"], alpha=alpha, init=init, device="cpu"),
        seeds=range(params["seeds"]),
    )
    t_sim = time.perf_counter() - t0 - t_theory
    rows = compare(f"L{L} {init} a={alpha}", theory, sims) if theory.values else []
    zero_tol = 1 / math.sqrt(params["d"])
    record = {
        "theory_kind": theory.kind,
        "theory": describe(theory),
        "rs_stability": float(theory.values.get("rs_stability", np.nan)),
        "jump_mass": float(theory.values.get("jump_mass", np.nan)),
        "sims_converged": sum(s.converged for s in sims),
        "theory_seconds": t_theory,
        "sim_seconds": t_sim,
        "rows": [
            {
                "quantity": r.name,
                "theory": r.theory,
                "theory_err": r.theory_err,
                "finite_d": r.finite_d,
                "sim": r.sim,
                "sim_err": r.sim_err,
                "deviation_percent": r.percent,
                "agree": r.passes(zero_tol),
            }
            for r in rows
        ],
    }
    if params["gamp"] and init == "semantic":
        from attnphase.gamp import run_gamp

        t1 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            g = run_gamp(p, params["d"], alpha, init="semantic", seed=0, max_iter=400)
        record |= {
            "gamp_status": g.status.split(":")[0],
            "gamp_theta": abs(float(np.ravel(g.theta)[0])),
            "gamp_m": float(np.abs(np.ravel(g.m)).max()),
            "gamp_seconds": time.perf_counter() - t1,
        }
    return record


def verdict(rec: dict) -> tuple[str, str]:
    """docs/theory.md §9's criteria at one point: the simulations agree in every quantity, the
    replicon factor below 1, the jump mass below 1%, GAMP (semantic start) converged and within
    5% + 0.02 of the theory's theta."""
    failed = []
    if not rec["rows"] or not all(r["agree"] for r in rec["rows"]):
        failed.append("simulation")
    if not rec["rs_stability"] < RS_MAX:
        failed.append("rs_stability")
    if not rec["jump_mass"] < JUMP_MASS_MAX:
        failed.append("jump_mass")
    if "gamp_status" in rec:
        theta = next((r["theory"] for r in rec["rows"] if r["quantity"] == "theta"), math.nan)
        if rec["gamp_status"] != "converged":
            failed.append("gamp_converged")
        if not abs(rec["gamp_theta"] - abs(theta)) <= 0.05 * abs(theta) + 0.02:
            failed.append("gamp")
    return ("rugged" if failed else "trustworthy"), "+".join(failed)


def parse_alphas(text: str) -> dict[int, list[float]]:
    out = {}
    for part in text.split(";"):
        L, values = part.split(":")
        out[int(L)] = [float(v) for v in values.split(",")]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--L", default="4,6")
    ap.add_argument("--alphas", default=None, help="L:a,b,c,d;L:... (default: from alpha_c)")
    ap.add_argument("--d", type=int, default=1000)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--points", type=int, default=2048)
    ap.add_argument("--randomisations", type=int, default=4)
    ap.add_argument("--no-gamp", dest="gamp", action="store_false")
    ap.add_argument("--out", type=Path, default=DOCS / "scaling_sims.csv")
    args = ap.parse_args()
    lengths = [int(v) for v in args.L.split(",")]
    given = parse_alphas(args.alphas) if args.alphas else {}
    points = [
        {
            "L": L,
            "alpha": a,
            "init": init,
            "d": args.d,
            "seeds": args.seeds,
            "points": args.points,
            "randomisations": args.randomisations,
            "gamp": args.gamp,
        }
        for L in lengths
        for a in given.get(L) or default_alphas(L)
        for init in ("semantic", "positional")
    ]
    lines = []
    for params in points:
        (rec,) = run_study(NAME, [params], point)  # one at a time: a table grows as they finish
        v, why = verdict(rec)
        print(
            f"L {params['L']} alpha {params['alpha']} {params['init']} start: theory "
            f"{rec['theory']}; sims {rec['sims_converged']}/{params['seeds']} converged "
            f"({rec['theory_seconds']:.0f} s theory, {rec['sim_seconds']:.0f} s sims); "
            f"replicon {rec['rs_stability']:.3f}, jump mass {rec['jump_mass']:.4f}; {v} {why}",
            flush=True,
        )
        for r in rec["rows"]:
            print(
                f"   {r['quantity']:<11} theory {r['theory']:.5f} ± {r['theory_err']:.5f} "
                f"sims {r['sim']:.5f} ± {r['sim_err']:.5f} ({r['deviation_percent']:+.1f}%) "
                f"{'agree' if r['agree'] else 'DISAGREE'}",
                flush=True,
            )
        head = {k: params[k] for k in ("L", "alpha", "init")}
        extra = {
            k: rec.get(k, math.nan)
            for k in ("theory_kind", "rs_stability", "jump_mass", "gamp_status", "gamp_theta")
        }
        for r in rec["rows"]:
            lines.append({**head, **r, **extra, "verdict": v, "reasons": why})
        pd.DataFrame(lines).to_csv(args.out, index=False, float_format="%.6g")


if __name__ == "__main__":
    main()
