"""The positional and trivial branches of two heads of rank 2 (omega 0.3, sigma 0.5, lambda 0.01,
the paper's A, L = 2), docs/variants.md §7: the positional branch at alpha 2.5 and 3 with
512 x 2 points (the transition scan's) and 1024 x 2; the trivial branch at alpha 1.5 with
1024 x 2 points stopped by max_iter 40 and 120, and with 2048 x 2 points, with the four
columns' q and V (the symmetries make them equal at a symmetric fixed point) and the training
loss.

    python studies/heads_rank_two_branches.py
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from attnphase import QMC, ModelParams, solve
from attnphase.params import Heads


def main() -> None:
    warnings.simplefilter("ignore")
    p = ModelParams(rank=2, variant=Heads(2))
    for points in (512, 1024):
        for alpha in (2.5, 3.0):
            t = time.perf_counter()
            r = solve(alpha, p, branch="positional", method=QMC(points, 2))
            print(
                f"positional, alpha {alpha}, {points} x 2: kind {r.kind}, converged "
                f"{r.converged} after {r.iterations} iterations, test error {r.test_error:.6f} "
                f"({time.perf_counter() - t:.0f} s)",
                flush=True,
            )
    for points, max_iter in ((1024, 40), (1024, 120), (2048, 40)):
        t = time.perf_counter()
        r = solve(1.5, p, branch="trivial", method=QMC(points, 2, max_iter=max_iter))
        print(
            f"trivial, alpha 1.5, {points} x 2, max_iter {max_iter}: converged {r.converged} after "
            f"{r.iterations} iterations ({time.perf_counter() - t:.0f} s)\n"
            f"  diag q {np.round(np.diag(r.q), 5).tolist()} +- "
            f"{np.round(np.diag(r.q_err), 5).tolist()}\n"
            f"  diag V {np.round(np.diag(r.V), 3).tolist()} +- "
            f"{np.round(np.diag(r.V_err), 3).tolist()}\n"
            f"  training loss {r.train_loss:.7f} +- {r.train_loss_err:.1e}, test error "
            f"{r.test_error:.7f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
