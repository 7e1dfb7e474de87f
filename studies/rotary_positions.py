"""Rotary positions at L = 2 (omega 0.3, sigma 0.5, lambda 0.01, the paper's A, student rank 2:
one rotated pair): the fixed points against the frequency phi, with the paper's additive
encodings (+1, -1) and without them (rotations alone), and the simulations without encodings
(docs/variants.md).

    python studies/rotary_positions.py [--phis 0,0.25,0.5,1,1.5,2,3.14159] [--alphas 1.5,3]
        [--points 2048] [--d 1000] [--seeds 2] [--parts branches,positional,simulations]

Theory rows: the semantic and trivial branches by QMC (`--points` x 4 scramblings), with the kind
of fixed point each start reached; the positional start with the paper's encodings at alpha
1.5, cold and warm from the tied rank-2 solver's pinned positional fixed point, at 1024 x 2
points (the iterations in the `seed` column). Simulation rows:
L-BFGS from the semantic and a random start, zero encodings, at alpha 1.5. Every row goes to
studies/data/rotary_positions.csv as it ends.
"""

from __future__ import annotations

import argparse
import csv
import time
import warnings
from pathlib import Path

import numpy as np

from attnphase import QMC, ModelParams, solve
from attnphase.params import Rotary
from attnphase.sim import SimConfig, simulate
from attnphase.theory.overlaps import MatrixOverlaps

OUT = Path(__file__).parent / "data" / "rotary_positions.csv"
FIELDS = ["source", "encodings", "phi", "alpha", "branch", "kind", "test_error"]
FIELDS += ["test_error_err", "train_loss", "train_loss_err", "q", "m", "theta", "seed", "wall_s"]
ENCODINGS = {"none": ((0.0,), (0.0,)), "paper": ((1.0,), (-1.0,))}
BRANCHES = ("semantic", "trivial")
# the positional start, with the paper's encodings: cold, and warm from the tied rank-2 solver's
# positional fixed point (pinned), at these frequencies and POSITIONAL_POINTS x 2 points
POSITIONAL_PHIS = (0.0, 0.25, 0.5, 1.0)
POSITIONAL_POINTS = 1024


def _numbers(text: str) -> list[float]:
    return [float(x) for x in text.split(",")]


def positional_rows() -> list[dict]:
    """The positional start with the paper's encodings at alpha 1.5, cold and warm from the tied
    rank-2 model's pinned positional fixed point (the rotary model at phi = 0); `seed` holds
    the iterations."""
    method = QMC(POSITIONAL_POINTS, 2)
    tied = solve(1.5, ModelParams(rank=2), branch="positional", method=method)
    pinned = MatrixOverlaps(
        q=np.asarray(tied.q),
        M=np.asarray(tied.m),
        theta=np.asarray(tied.theta),
        V=np.asarray(tied.V),
    )
    rows = [
        dict(
            source="theory",
            encodings="paper",
            phi="tied",
            alpha=1.5,
            branch="positional",
            kind=tied.kind,
            test_error=f"{tied.test_error:.6g}",
            train_loss=f"{tied.train_loss:.6g}",
            m=np.round(tied.m, 4).tolist(),
            seed=tied.iterations,
        )
    ]
    for phi in POSITIONAL_PHIS:
        p = ModelParams(rank=2, variant=Rotary((phi,)), encodings=ENCODINGS["paper"])
        for name, start in (("positional", None), ("positional, warm from tied", pinned)):
            r = solve(1.5, p, branch="positional", start=start, method=method)
            rows.append(
                dict(
                    source="theory",
                    encodings="paper",
                    phi=phi,
                    alpha=1.5,
                    branch=name,
                    kind=r.kind,
                    test_error=f"{r.test_error:.6g}",
                    train_loss=f"{r.train_loss:.6g}",
                    m=np.round(r.m, 4).tolist(),
                    q=np.round(r.q, 4).tolist(),
                    seed=r.iterations,
                )
            )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--phis", default="0,0.25,0.5,1,1.5,2,3.14159")
    ap.add_argument("--alphas", default="1.5,3")
    ap.add_argument("--points", type=int, default=2048)
    ap.add_argument("--d", type=int, default=1000)
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--encodings", default="none,paper", help="which of none, paper to run")
    ap.add_argument("--parts", default="branches,positional,simulations", help="rows to compute")
    args = ap.parse_args()
    parts = args.parts.split(",")
    warnings.simplefilter("ignore")
    method = QMC(args.points, 4)
    new = not OUT.exists()
    with OUT.open("a", newline="") as fh:
        out = csv.DictWriter(fh, FIELDS, lineterminator="\n")
        if new:
            out.writeheader()
        for enc in args.encodings.split(",") if "branches" in parts else []:
            C = ENCODINGS[enc]
            for phi in _numbers(args.phis):
                p = ModelParams(rank=2, variant=Rotary((phi,)), encodings=C)
                for alpha in _numbers(args.alphas):
                    for branch in BRANCHES:
                        t0 = time.perf_counter()
                        r = solve(alpha, p, branch=branch, method=method)
                        row = dict(
                            source="theory",
                            encodings=enc,
                            phi=phi,
                            alpha=alpha,
                            branch=branch,
                            kind=r.kind,
                            test_error=f"{r.test_error:.6g}",
                            test_error_err=f"{r.test_error_err:.2g}",
                            train_loss=f"{r.train_loss:.6g}",
                            train_loss_err=f"{r.train_loss_err:.2g}",
                            q=np.round(r.q, 4).tolist(),
                            m=np.round(r.m, 4).tolist(),
                            theta=np.round(r.theta, 4).tolist(),
                            wall_s=f"{time.perf_counter() - t0:.1f}",
                        )
                        out.writerow(row)
                        fh.flush()
                        print(enc, phi, alpha, branch, r.kind, row["test_error"], flush=True)
        for row in positional_rows() if "positional" in parts else []:
            out.writerow(row)
            fh.flush()
            print(row["branch"], row["phi"], row["kind"], row["seed"], flush=True)
        for phi in (0.0, 1.0, 3.14159) if "simulations" in parts else ():
            p = ModelParams(rank=2, variant=Rotary((phi,)), encodings=ENCODINGS["none"])
            for init in ("semantic", "random"):
                t0 = time.perf_counter()
                cfg = SimConfig(params=p, alpha=1.5, d=args.d, init=init)
                for r in simulate(cfg, seeds=range(args.seeds)):
                    out.writerow(
                        dict(
                            source=f"simulation d={args.d}",
                            encodings="none",
                            phi=phi,
                            alpha=1.5,
                            branch=init,
                            test_error=f"{r.test_error:.6g}",
                            train_loss=f"{r.train_loss:.6g}",
                            q=np.round(r.q, 4).tolist(),
                            theta=np.round(r.theta, 4).tolist(),
                            seed=r.seed,
                            wall_s=f"{time.perf_counter() - t0:.1f}",
                        )
                    )
                fh.flush()
                print("simulation", phi, init, flush=True)


if __name__ == "__main__":
    main()
