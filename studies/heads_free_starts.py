"""Two heads at alpha 1.5 (omega 0.3, sigma 0.5, lambda 0.01, the paper's A, L = 2), solved from
the two symmetric starts that are no branch of their own, with nothing pinned: every head
positional (M = 0.2 in both) and every head semantic (the tied semantic start of rank 2), by QMC
(1024 x 2 points). Prints what each iteration reached (docs/variants.md §6).

    python studies/heads_free_starts.py
"""

from __future__ import annotations

import warnings

import numpy as np

from attnphase import QMC, ModelParams, solve
from attnphase.params import Heads
from attnphase.theory.branches import START_V
from attnphase.theory.overlaps import MatrixOverlaps


def main() -> None:
    warnings.simplefilter("ignore")
    p = ModelParams(variant=Heads(2))
    V = START_V * np.eye(2)
    starts = {
        "every head positional": MatrixOverlaps(
            q=0.02 * np.eye(2), M=np.array([[0.2, 0.2]]), theta=np.zeros((1, 2)), V=V
        ),
        "every head semantic": MatrixOverlaps(
            q=0.5 * np.eye(2) + 0.4, M=np.zeros((1, 2)), theta=np.full((1, 2), 0.35 / 2**0.5), V=V
        ),
    }
    for name, start in starts.items():
        r = solve(1.5, p, start=start, method=QMC(1024, 2))
        print(f"{name}: converged {r.converged} ({r.status}) after {r.iterations} iterations")
        print(f"  q {np.round(r.q, 4).tolist()}  M {np.round(r.m, 4).tolist()}")
        print(f"  theta {np.round(r.theta, 4).tolist()}  training loss {r.train_loss:.5f}")


if __name__ == "__main__":
    main()
