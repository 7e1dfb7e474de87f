"""Quadrature-order convergence of the fixed point (THEORY.md §6), for the README table.

For each branch at a few alphas, solve at increasing (n_xi, n_y), warm-started from a
coarser solution, and print the relative deviation of q, V, theta, eps_g and the training loss
from a Richardson extrapolation in n_xi (error ~ n_xi^-p fitted from the three finest orders).

    python benchmarks/convergence.py [--alphas 1.25,2.0] [--fine 128]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from attnphase import ModelParams, solve

KEYS = ("q", "V", "theta", "test_error", "train_loss")


def study(alpha: float, branch: str, xi_orders, y_orders, p: ModelParams) -> None:
    base = solve(alpha, p, init=branch, order=(32, 12))
    start = (base.q, base.m, base.V, base.theta)
    rows = {}
    for n_y in y_orders:
        for n_xi in xi_orders:
            t = time.perf_counter()
            r = solve(alpha, p, init=start, order=(n_xi, n_y), tol=1e-10)
            rows[n_xi, n_y] = (r, time.perf_counter() - t)
    n_y_best = max(y_orders)
    ladder = [rows[n, n_y_best][0] for n in xi_orders]
    ref = {}
    for k in KEYS:
        v = np.array([getattr(r, k) for r in ladder[-3:]])
        n = np.array(xi_orders[-3:], dtype=float)
        d1, d2 = v[1] - v[0], v[2] - v[1]
        # fitted algebraic order p from three orders (fallback p=2 when the ratio is unusable)
        ratio = d1 / d2 if d2 != 0 else np.inf
        p_fit = np.log(abs(ratio)) / np.log(n[2] / n[1]) if np.isfinite(ratio) and ratio > 1 else 2.0
        ref[k] = v[2] + d2 / ((n[2] / n[1]) ** p_fit - 1)
    print(f"\n{branch} alpha={alpha}: relative deviation from the n_xi-extrapolated values (n_y={n_y_best})")
    print(f"{'n_xi':>5} {'n_y':>4} " + " ".join(f"{k:>11}" for k in KEYS) + "   seconds")
    for (n_xi, n_y), (r, secs) in sorted(rows.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        devs = " ".join(f"{abs(getattr(r, k) / ref[k] - 1):11.2e}" for k in KEYS)
        print(f"{n_xi:5d} {n_y:4d} {devs}   {secs:7.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--alphas", default="1.25,2.0")
    ap.add_argument("--xi", default="24,32,48,64,96")
    ap.add_argument("--y", default="8,12,16")
    args = ap.parse_args()
    p = ModelParams()
    for alpha in map(float, args.alphas.split(",")):
        for branch in ("semantic", "positional"):
            study(alpha, branch, [int(x) for x in args.xi.split(",")],
                  [int(x) for x in args.y.split(",")], p)


if __name__ == "__main__":
    main()
