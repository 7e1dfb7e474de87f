"""Two tied heads at omega 0.3 (sigma 0.5, lambda 0.01, the paper's A, L = 2): the fixed points
of the state evolution along alpha against one head and against the linear baseline, and the
fixed point L-BFGS reaches from each start at finite d (docs/variants.md).

    python studies/heads_fixed_points.py [--alphas 0.5:3:11] [--points 2048] [--d 1000] [--seeds 2]

Theory rows (model, branch): "2 heads" positional (one head positional, the other trivial),
mixed (one semantic, one positional: the specialised fixed point) and trivial, by QMC
(`--points` x 4 scramblings); "identical heads" semantic and positional: the one-head model with
ridge 2 lambda, the risk on Q_1 = Q_2 (Gauss-Hermite); "one head": the paper's model
(Gauss-Hermite). Simulation rows: the two-head student from the semantic (both heads on the
teacher), positional (head 1) and mixed starts, per seed, with its overlaps. Every row goes to
studies/data/heads_fixed_points.csv as it ends.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import time
import warnings
from pathlib import Path

import numpy as np

from attnphase import QMC, ModelParams, learning_curve
from attnphase.params import Heads
from attnphase.sim import SimConfig, simulate

OUT = Path(__file__).parent / "data" / "heads_fixed_points.csv"
FIELDS = ["source", "model", "branch", "alpha", "test_error", "test_error_err", "train_loss"]
FIELDS += ["q", "m", "theta", "kind", "linear_test_error", "seed", "wall_s"]


def _alphas(text: str) -> list[float]:
    a, b, n = text.split(":")
    return [float(x) for x in np.linspace(float(a), float(b), int(n))]


def _row(**kw) -> dict:
    return {k: kw.get(k, "") for k in FIELDS}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--alphas", default="0.5:3:11")
    ap.add_argument("--points", type=int, default=2048)
    ap.add_argument("--d", type=int, default=1000)
    ap.add_argument("--seeds", type=int, default=2)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    alphas = _alphas(args.alphas)
    one = ModelParams()
    theories = [
        ("one head", one, "auto", ("semantic", "positional")),
        (
            "identical heads",
            dataclasses.replace(one, lam=2 * one.lam),
            "auto",
            ("semantic", "positional"),
        ),
        (
            "2 heads",
            ModelParams(variant=Heads(2)),
            QMC(args.points, 4),
            ("mixed", "positional", "trivial"),
        ),
    ]
    new = not OUT.exists()
    with OUT.open("a", newline="") as fh:
        out = csv.DictWriter(fh, FIELDS)
        if new:
            out.writeheader()
        for model, p, method, branches in theories:
            for branch in branches:
                t0 = time.perf_counter()
                curve = learning_curve(alphas, p, branch=branch, method=method)
                wall = time.perf_counter() - t0
                for r in curve:
                    out.writerow(
                        _row(
                            source="theory",
                            model=model,
                            branch=branch,
                            alpha=f"{r.alpha:.4g}",
                            test_error=f"{r.test_error:.6g}",
                            test_error_err=f"{r.test_error_err:.2g}",
                            train_loss=f"{r.train_loss:.6g}",
                            q=np.round(r.q, 5).tolist(),
                            m=np.round(r.m, 5).tolist(),
                            theta=np.round(r.theta, 5).tolist(),
                            kind=r.kind,
                            linear_test_error=f"{r.linear_test_error:.6g}",
                            wall_s=f"{wall / len(curve):.1f}",
                        )
                    )
                fh.flush()
                print(model, branch, f"{wall:.0f} s", flush=True)
        p = ModelParams(variant=Heads(2))
        for alpha in alphas:
            for init in ("semantic", "positional", "mixed"):
                t0 = time.perf_counter()
                cfg = SimConfig(params=p, alpha=alpha, d=args.d, init=init)
                runs = simulate(cfg, seeds=range(args.seeds))
                wall = time.perf_counter() - t0
                for r in runs:
                    out.writerow(
                        _row(
                            source=f"simulation d={args.d}",
                            model="2 heads",
                            branch=init,
                            alpha=f"{alpha:.4g}",
                            test_error=f"{r.test_error:.6g}",
                            train_loss=f"{r.train_loss:.6g}",
                            q=np.round(r.q, 4).tolist(),
                            m=np.round(r.m, 4).tolist(),
                            theta=np.round(r.theta, 4).tolist(),
                            linear_test_error=f"{r.linear_test_error:.6g}",
                            seed=r.seed,
                            wall_s=f"{wall:.1f}",
                        )
                    )
                fh.flush()
                print("simulation", alpha, init, f"{wall:.0f} s", flush=True)


if __name__ == "__main__":
    main()
