"""The device table: QMC fixed points solved on the CPU and on a CUDA device in one process,
printing both times, their ratio (above 1: the device is faster) and how far the device's
numbers are from the CPU's (the largest deviation over q, M, V, theta, test_error, relative to
the largest entry of each).

Rows (A_L(0.6), the default model otherwise; each after one small solve on each device, which
compiles the CPU kernels and starts CUDA):
  qmc-l3-2048   L = 3 semantic at alpha 2, 2048 points x 4 scramblings
  qmc-l4        L = 4 semantic at alpha 2, the default points (8192 x 4)
  qmc-l8        L = 8 semantic and positional at alpha 1, 1024 points x 2 scramblings

    python benchmarks/bench_device.py [ROW ...] [--device cuda]

Without CUDA it says so and exits 0.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from attnphase import QMC, ModelParams, solve

KEYS = ("q", "M", "V", "theta", "test_error")


def model(L: int) -> ModelParams:
    """A_L(0.6): 0.6 on the diagonal, the rest of each row spread evenly."""
    off = 0.4 / (L - 1)
    return ModelParams(A=tuple(tuple(0.6 if i == j else off for j in range(L)) for i in range(L)))


ROWS = {
    "qmc-l3-2048": [(3, 2.0, "semantic", 2048, 4)],
    "qmc-l4": [(4, 2.0, "semantic", 8192, 4)],
    "qmc-l8": [(8, 1.0, "semantic", 1024, 2), (8, 1.0, "positional", 1024, 2)],
}


def timed(p: ModelParams, alpha: float, branch: str, method: QMC):
    t = time.perf_counter()
    r = solve(alpha, p, branch=branch, method=method)
    return time.perf_counter() - t, r


def deviation(a, b) -> float:
    """max over KEYS of max|a - b| / max|a| (0 for an all-zero value)."""
    worst = 0.0
    for k in KEYS:
        x, y = np.asarray(a.values[k], float), np.asarray(b.values[k], float)
        scale = float(np.max(np.abs(x)))
        if scale > 0:
            worst = max(worst, float(np.max(np.abs(x - y))) / scale)
    return worst


def main() -> None:
    import torch

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rows", nargs="*", default=list(ROWS), help=f"rows among {list(ROWS)}")
    ap.add_argument("--device", default="cuda", help="the device compared with the CPU")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA device on this machine: nothing to compare")
        return
    warnings.simplefilter("ignore")
    print(f"device: {torch.cuda.get_device_name()}; CPU threads: {torch.get_num_threads()}")
    for device in ("cpu", args.device):  # compile the CPU kernels, start CUDA
        solve(2.0, model(3), branch="semantic", method=QMC(256, 2, device=device))
    for row in args.rows:
        for L, alpha, branch, points, scramblings in ROWS[row]:
            p = model(L)
            cpu_s, cpu = timed(p, alpha, branch, QMC(points, scramblings))
            dev_s, dev = timed(p, alpha, branch, QMC(points, scramblings, device=args.device))
            print(
                f"{row:<12} L={L} {branch:<10} {points}x{scramblings}: cpu {cpu_s:8.2f} s  "
                f"{args.device} {dev_s:8.2f} s  ratio {cpu_s / dev_s:6.2f}x  "
                f"deviation {deviation(cpu, dev):.1e}  iterations {cpu.iterations}/"
                f"{dev.iterations}  converged {cpu.converged}/{dev.converged}",
                flush=True,
            )


if __name__ == "__main__":
    main()
