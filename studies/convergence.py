"""Quadrature-order convergence of the fixed point (docs/theory.md §6), for the README table.

For each branch at the given alphas, solve at increasing (n_xi, n_y) and print the relative
deviation of q, V, the branch's order parameter (theta or m), eps_g and the training loss from
the finest solve (n_xi=128, n_y=32). The last line of each table (n_xi=96, n_y=24) estimates
the error left in the finest solve itself.

    python studies/convergence.py [--alphas 1.25,2.0]
"""

from __future__ import annotations

import argparse
import time

from attnphase import GaussHermite, ModelParams, solve

FINEST = (128, 32)
CHECK = (96, 24)


def study(alpha: float, branch: str, orders, p: ModelParams) -> None:
    keys = ("q", "V", "theta" if branch == "semantic" else "m", "test_error", "train_loss")
    rows = {}
    for order in [*orders, CHECK, FINEST]:
        t = time.perf_counter()
        r = solve(alpha, p, branch=branch, method=GaussHermite(order), tol=1e-8, strict=True)
        assert r.kind == branch, (alpha, branch, order, r.kind)
        rows[order] = (r, time.perf_counter() - t)
    ref = rows[FINEST][0]
    print(f"\n{branch} alpha={alpha}: |x / x(n_xi={FINEST[0]}, n_y={FINEST[1]}) - 1|", flush=True)
    print(f"{'n_xi':>5} {'n_y':>4} " + " ".join(f"{k:>11}" for k in keys) + "   seconds")
    for (n_xi, n_y), (r, secs) in rows.items():
        if (n_xi, n_y) == FINEST:
            continue
        devs = " ".join(f"{abs(getattr(r, k) / getattr(ref, k) - 1):11.1e}" for k in keys)
        print(f"{n_xi:5d} {n_y:4d} {devs}   {secs:7.1f}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--alphas", default="0.5,1.25,2.0")
    ap.add_argument("--orders", default="32,12;48,12;48,16;64,16;64,24")
    args = ap.parse_args()
    orders = [tuple(int(v) for v in o.split(",")) for o in args.orders.split(";")]
    p = ModelParams()
    for alpha in map(float, args.alphas.split(",")):
        for branch in ("semantic", "positional"):
            if branch == "semantic" and alpha < 0.8:
                continue  # the semantic branch ends near alpha = 0.7
            study(alpha, branch, orders, p)


if __name__ == "__main__":
    main()
