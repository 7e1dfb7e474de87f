"""Untied query/key: the general engine's fixed points against simulations at d = 1000
(docs/theory-untied.md), the measurement behind the tolerances of
tests/validation/test_untied_vs_sim.py, and
the untied alpha_c from both branches' training losses.

    .venv/bin/python studies/untied_vs_sim.py [--alphas 1,2] [--seeds 8] [--points 4096]
    .venv/bin/python studies/untied_vs_sim.py --crossing 1.0:2.0:11
    .venv/bin/python studies/untied_vs_sim.py --balance 4096,16384

Prints, per branch and alpha, theory (mean +- SE over scramblings) and simulation (mean +- SE
over seeds) for the training loss, test error, q, and the order parameters of the query and key
matrices, with the deviation in simulation SEs and in percent. With --crossing, both branches'
learning curves on one set of points and the alpha where their training losses cross. With
--balance, q_query - q_key at the positional fixed point at alpha 2 (4 scramblings) per point
count: zero at the exact fixed point (docs/theory-untied.md §6), so its size is the integration
error along the soft rescaling direction.
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

from attnphase import QMC, ModelParams, Untied, solve
from attnphase.sim import SimConfig, simulate
from attnphase.theory.qmc.engine import make_channels, qmc_curve

NAMES = {
    "semantic": ("train_loss", "test_error", "q_query", "q_key", "theta_query", "theta_key"),
    "positional": ("train_loss", "test_error", "q_query", "q_key", "m_query", "m_key"),
}


def compare(alphas, seeds: int, points: int, d: int) -> None:
    torch.set_num_threads(1)
    p = ModelParams(omega=0.3, sigma=0.5, lam=0.01, variant=Untied())
    print(
        f"{'branch':<11}{'alpha':>6} {'name':<12}{'theory':>22}{'simulation':>22}{'SE':>7}{'%':>7}"
    )
    for branch, names in NAMES.items():
        for alpha in alphas:
            th = solve(alpha, p, branch=branch, method=QMC(points, 2))
            row = th.as_dict()
            cfg = SimConfig(params=p, d=d, alpha=alpha, init=branch)
            sims = simulate(cfg, seeds=list(range(seeds)))
            for name in names:
                v = np.abs([getattr(r, name) for r in sims])
                mean, se = v.mean(), v.std(ddof=1) / np.sqrt(len(v))
                t, te = abs(np.ravel(row[name])[0]), np.ravel(row.get(f"{name}_err", np.nan))[0]
                print(
                    f"{branch:<11}{alpha:>6.2f} {name:<12}{t:>12.5f} +- {te:<7.1e}"
                    f"{mean:>12.5f} +- {se:<7.1e}"
                    f"{(t - mean) / se:>7.2f}{100 * (t - mean) / mean:>7.2f}"
                )
            gap = row["q_query"] - row["q_key"]
            err = np.hypot(row["q_query_err"], row["q_key_err"])
            print(f"{branch:<11}{alpha:>6.2f} q_query - q_key (theory) {gap:.2e} +- {err:.1e}")


def crossing(grid: str, points: int) -> None:
    lo, hi, n = grid.split(":")
    alphas = np.linspace(float(lo), float(hi), int(n)).round(6).tolist()
    p = ModelParams(omega=0.3, sigma=0.5, lam=0.01, variant=Untied())
    channels = make_channels(p, QMC(points, 2))
    curves = {
        b: qmc_curve(alphas, p, b, QMC(points, 2), channels=channels)
        for b in ("semantic", "positional")
    }
    diff = []
    for s, q in zip(curves["semantic"], curves["positional"], strict=True):
        diff.append(s.train_loss - q.train_loss)
        err = np.hypot(s.train_loss_err, q.train_loss_err)
        print(
            f"alpha {s.alpha:.3f}  {s.kind:>10} {q.kind:>10}  "
            f"R_sem - R_pos {diff[-1]:+.3e} +- {err:.1e}"
        )
    for a0, a1, d0, d1 in zip(alphas[:-1], alphas[1:], diff[:-1], diff[1:], strict=True):
        if d0 > 0 >= d1:
            print(f"untied alpha_c (linear interpolation): {a0 + (a1 - a0) * d0 / (d0 - d1):.4f}")


def balance(points: str) -> None:
    p = ModelParams(omega=0.3, sigma=0.5, lam=0.01, variant=Untied())
    for n in (int(x) for x in points.split(",")):
        r = solve(2.0, p, branch="positional", method=QMC(n, 4))
        row = r.as_dict()
        print(
            f"points {n:>6}: q_query {row['q_query']:.5f} +- {row['q_query_err']:.1e}, "
            f"q_key {row['q_key']:.5f} +- {row['q_key_err']:.1e}, "
            f"gap {row['q_query'] - row['q_key']:+.1e}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--alphas", default="1,2")
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--points", type=int, default=4096)
    ap.add_argument("--d", type=int, default=1000)
    ap.add_argument("--crossing", default=None, help="lo:hi:n alphas for the untied alpha_c")
    ap.add_argument("--balance", default=None, help="point counts for q_query - q_key")
    args = ap.parse_args()
    if args.balance:
        balance(args.balance)
    elif args.crossing:
        crossing(args.crossing, args.points)
    else:
        compare([float(a) for a in args.alphas.split(",")], args.seeds, args.points, args.d)


if __name__ == "__main__":
    main()
