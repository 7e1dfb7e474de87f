"""The batch axis: a set of cold QMC fixed points (the cells of a small phase map) solved one
after another (`solve`, each solve's scramblings already batched) and together
(`solve_batch`), in one process on one device, printing both times, their ratio (above 1: the
batch is faster) and the largest difference between the two sets of numbers (0 on the CPU:
the numba prox solves every problem alone).

Rows:
  l3-cells   L = 3 (A_3(0.6)), semantic, alphas 1.2..2.6 (8) x omegas 0.2, 0.4: 16 points
             at 1024 points x 4 scramblings
  l2-cells   L = 2 by QMC, semantic and positional, alphas 0.8..2.2 (8): 16 points at
             1024 points x 4 scramblings

    python benchmarks/bench_batch.py [ROW ...] [--device cpu|cuda]
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np

from attnphase import QMC, ModelParams, solve, solve_batch

A3 = ((0.6, 0.2, 0.2), (0.2, 0.6, 0.2), (0.2, 0.2, 0.6))
ROWS = {
    "l3-cells": [
        (float(a), ModelParams(omega=w, A=A3), "semantic")
        for w in (0.2, 0.4)
        for a in np.linspace(1.2, 2.6, 8)
    ],
    "l2-cells": [
        (float(a), ModelParams(), b)
        for b in ("semantic", "positional")
        for a in np.linspace(0.8, 2.2, 8)
    ],
}


def numbers(r) -> np.ndarray:
    return np.concatenate([np.ravel(r.values[k]) for k in ("q", "M", "theta", "V")])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rows", nargs="*", default=list(ROWS), help=f"rows among {list(ROWS)}")
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    method = QMC(1024, 4, device=args.device)
    solve(2.0, ModelParams(A=A3), method=QMC(256, 2, device=args.device))  # compile, start
    print(f"device {args.device}; load average {os.getloadavg()[0]:.1f}")
    for row in args.rows:
        points = ROWS[row]
        t = time.perf_counter()
        alone = [solve(a, p, branch=b, method=method) for a, p, b in points]
        one_s = time.perf_counter() - t
        t = time.perf_counter()
        together = solve_batch(points, method=method)
        batch_s = time.perf_counter() - t
        diff = max(
            float(np.max(np.abs(numbers(x) - numbers(y))))
            for x, y in zip(alone, together, strict=True)
        )
        print(
            f"{row:<9} {len(points)} points: one by one {one_s:7.2f} s  batch {batch_s:7.2f} s  "
            f"ratio {one_s / batch_s:5.2f}x  largest difference {diff:.1e}  "
            f"converged {sum(r.converged for r in alone)} and "
            f"{sum(r.converged for r in together)} of {len(points)}",
            flush=True,
        )
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
