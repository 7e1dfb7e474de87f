"""Quadrature-order convergence of the fixed point (THEORY.md §6), for the README table.

For each branch at the given alphas, solve at increasing (n_xi, n_y), warm-started from a
default-order solution, and print the relative deviation of q, V, theta, eps_g and the training
loss from the finest solve (n_xi=128, n_y=16). The last line of each table is the change from
n_xi=96 to 128, an estimate of the error left in the finest solve itself.

    python benchmarks/convergence.py [--alphas 1.25,2.0]
"""

from __future__ import annotations

import argparse
import time

from attnphase import ModelParams, solve

KEYS = ("q", "V", "theta", "test_error", "train_loss")
FINEST = (128, 16)


def study(alpha: float, branch: str, orders, p: ModelParams) -> None:
    base = solve(alpha, p, init=branch, order=(32, 12))
    start = (base.q, base.m, base.V, base.theta)
    rows = {}
    for order in list(orders) + [(96, FINEST[1]), FINEST]:
        t = time.perf_counter()
        r = solve(alpha, p, init=start, order=order, tol=1e-8, max_iter=60, strict=True)
        rows[order] = (r, time.perf_counter() - t)
    ref = rows[FINEST][0]
    print(f"\n{branch} alpha={alpha}: |x / x(n_xi={FINEST[0]}, n_y={FINEST[1]}) - 1|", flush=True)
    print(f"{'n_xi':>5} {'n_y':>4} " + " ".join(f"{k:>11}" for k in KEYS) + "   seconds")
    for (n_xi, n_y), (r, secs) in rows.items():
        if (n_xi, n_y) == FINEST:
            continue
        devs = " ".join(f"{abs(getattr(r, k) / getattr(ref, k) - 1):11.1e}" for k in KEYS)
        print(f"{n_xi:5d} {n_y:4d} {devs}   {secs:7.1f}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--alphas", default="1.25,2.0")
    ap.add_argument("--orders", default="24,8;32,12;48,8;48,12;48,16;64,12")
    args = ap.parse_args()
    orders = [tuple(int(v) for v in o.split(",")) for o in args.orders.split(";")]
    p = ModelParams()
    for alpha in map(float, args.alphas.split(",")):
        for branch in ("semantic", "positional"):
            study(alpha, branch, orders, p)


if __name__ == "__main__":
    main()
