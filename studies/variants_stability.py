"""The trust measures of docs/theory.md §9 (the smooth replicon factor rs_stability and the jump
mass) at fixed points of the attention variants, beside the tied model's (docs/variants.md):
omega 0.3, sigma 0.5, lambda 0.01, L = 2, QMC 1024 x 2 points, at alpha 1.5 and 3.

    python studies/variants_stability.py ["2 heads, rank 2" [BRANCH]]

The optional arguments keep the models whose name contains the first, and the one branch named
by the second. One line per (model, branch,
alpha): kind, rs_stability +- its standard error over scramblings, jump_mass +- its, test
error.
"""

from __future__ import annotations

import sys
import warnings

from attnphase import QMC, Causal, Heads, ModelParams, Rotary, solve
from attnphase.validity.stability import with_stability

NO_ENCODINGS = ((0.0,), (0.0,))
MODELS = [
    ("tied, rank 1", ModelParams(), ("semantic", "positional")),
    ("tied, rank 2", ModelParams(rank=2), ("semantic",)),
    (
        "causal (A = [[1, 0], [0.4, 0.6]])",
        ModelParams(A=((1, 0), (0.4, 0.6)), variant=Causal(True)),
        ("semantic", "positional"),
    ),
    ("2 heads", ModelParams(variant=Heads(2)), ("mixed", "positional")),
    ("2 heads, rank 2", ModelParams(rank=2, variant=Heads(2)), ("mixed", "positional")),
    ("rotary, phi 0", ModelParams(rank=2, variant=Rotary((0.0,))), ("semantic", "positional")),
    ("rotary, phi 1", ModelParams(rank=2, variant=Rotary((1.0,))), ("semantic", "positional")),
    (
        "rotary, phi 1, no encodings",
        ModelParams(rank=2, variant=Rotary((1.0,)), encodings=NO_ENCODINGS),
        ("semantic", "trivial"),
    ),
]


def main() -> None:
    warnings.simplefilter("ignore")
    method = QMC(1024, 2)
    only = sys.argv[1] if len(sys.argv) > 1 else ""
    one = sys.argv[2] if len(sys.argv) > 2 else None
    for name, p, branches in (m for m in MODELS if only in m[0]):
        for branch in (b for b in branches if one in (None, b)):
            for alpha in (1.5, 3.0):
                r = with_stability(solve(alpha, p, branch=branch, method=method))
                print(
                    f"{name} | {branch} | {alpha} | {r.kind} | {r.rs_stability:.3f} +- "
                    f"{r.rs_stability_err:.3f} | {r.jump_mass:.4f} +- {r.jump_mass_err:.4f} | "
                    f"{r.test_error:.5f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
