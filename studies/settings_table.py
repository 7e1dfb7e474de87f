"""The settings table of docs/trust.md: for each integration setting, one fixed point's time
(cold, after a first solve has compiled the kernels) and the relative error it reports
(`theory.precision.relative_error`: the largest error / size over the test error, the training
loss and the order parameter), on the paper's model at L = 2 and on A_3(0.6) at L = 3
(omega 0.3, sigma 0.5, lambda 0.01, the semantic branch).

    python studies/settings_table.py

Prints one line per setting with the machine's load average before it.
"""

from __future__ import annotations

import os
import time
import warnings

from attnphase import QMC, GaussHermite, ModelParams, solve
from attnphase.theory.precision import relative_error

A3 = ((0.6, 0.2, 0.2), (0.2, 0.6, 0.2), (0.2, 0.2, 0.6))
CASES = [
    (
        "L = 2, alpha 1.5",
        ModelParams(),
        1.5,
        GaussHermite((32, 12), (24, 8)),
        "gauss-hermite (32, 12)",
    ),
    ("L = 2, alpha 1.5", ModelParams(), 1.5, GaussHermite(), "gauss-hermite (64, 24), default"),
    (
        "L = 2, alpha 1.5",
        ModelParams(),
        1.5,
        GaussHermite((96, 32), (64, 24)),
        "gauss-hermite (96, 32)",
    ),
    ("L = 2, alpha 1.5", ModelParams(), 1.5, QMC(1024, 4), "qmc 4 x 1024"),
    ("L = 2, alpha 1.5", ModelParams(), 1.5, QMC(), "qmc 4 x 8192, default"),
    ("L = 3, alpha 2", ModelParams(A=A3), 2.0, QMC(1024, 4), "qmc 4 x 1024"),
    ("L = 3, alpha 2", ModelParams(A=A3), 2.0, QMC(2048, 4), "qmc 4 x 2048"),
    ("L = 3, alpha 2", ModelParams(A=A3), 2.0, QMC(), "qmc 4 x 8192, default"),
]


def main() -> None:
    warnings.simplefilter("ignore")
    solve(1.0, ModelParams(), method=GaussHermite((16, 8), (12, 8)))  # compile
    solve(2.0, ModelParams(A=A3), method=QMC(256, 2))
    for model, p, alpha, method, name in CASES:
        load = os.getloadavg()[0]
        t0 = time.perf_counter()
        r = solve(alpha, p, branch="semantic", method=method)
        seconds = time.perf_counter() - t0
        print(
            f"{model} | {name} | {seconds:.1f} s | {relative_error(r):.1e} | "
            f"eps_g {r.test_error:.6f} | load {load:.1f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
