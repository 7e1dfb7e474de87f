"""Two heads of rank 2 at alpha 1.5 (omega 0.3, sigma 0.5, lambda 0.01, the paper's A, L = 2):
the specialised fixed point (head 1's first column semantic, head 2's first positional, the
other columns trivial) by QMC (4096 x 4 points) against L-BFGS at d = 1000 (seeds 0 and 1, from
the mixed and the positional start), and the same point iterated with nothing pinned from a
small push off its manifold (1024 x 2 points). Prints what each reached, with every head's
norms of M and theta (invariant under the rotations within a head), docs/variants.md §7.

    python studies/heads_rank_two.py
"""

from __future__ import annotations

import warnings

import numpy as np

from attnphase import QMC, ModelParams, solve
from attnphase.params import Heads
from attnphase.sim import SimConfig, simulate
from attnphase.theory.overlaps import MatrixOverlaps

RANK = 2


def head_norms(matrix) -> list[float]:
    """Each head's column block's Frobenius norm (rotation-invariant within the head)."""
    a = np.atleast_2d(np.asarray(matrix))
    return [round(float(np.linalg.norm(a[:, h * RANK : (h + 1) * RANK])), 4) for h in range(2)]


def show(name: str, r) -> None:
    print(f"{name}: test error {r.test_error:.6f}, training loss {r.train_loss:.6f}")
    print(f"  |M| per head {head_norms(r.m)}, |theta| per head {head_norms(r.theta)}")


def main() -> None:
    warnings.simplefilter("ignore")
    p = ModelParams(rank=RANK, variant=Heads(2))
    theory = solve(1.5, p, branch="mixed", method=QMC(4096, 4))
    show("theory, mixed, 4096 x 4", theory)
    print(f"  errors: test {theory.test_error_err:.1e}, training {theory.train_loss_err:.1e}")
    for init in ("mixed", "positional"):
        for run in simulate(SimConfig(params=p, alpha=1.5, d=1000, init=init), seeds=[0, 1]):
            show(f"L-BFGS d = 1000 from {init}, seed {run.seed}", run)
    coarse = solve(1.5, p, branch="mixed", method=QMC(1024, 2))
    show("theory, mixed, 1024 x 2", coarse)
    M, theta = np.array(coarse.m), np.array(coarse.theta)
    M[0, 1], theta[0, 2] = 0.1, 0.02
    push = MatrixOverlaps(q=np.array(coarse.q), M=M, theta=theta, V=np.array(coarse.V))
    free = solve(1.5, p, start=push, method=QMC(1024, 2))
    show(f"nothing pinned, {free.status} after {free.iterations} iterations", free)
    print(f"  training loss error {free.train_loss_err:.1e}; q {np.round(free.q, 4).tolist()}")


if __name__ == "__main__":
    main()
