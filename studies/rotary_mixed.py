"""The rotary model's mixed branch against its semantic branch (docs/variants.md §11): phi = 0.5,
rank 2, the paper's encodings, QMC 2048 x 4 points, each point cold.

    python studies/rotary_mixed.py
"""

import warnings

from attnphase import QMC, ModelParams, Rotary, solve

warnings.simplefilter("ignore")
POINTS = [(0.3, 0.5), (0.3, 1.0), (0.3, 2.0), (0.3, 5.0), (0.1, 1.0), (0.1, 3.0), (0.5, 1.0)]
POINTS += [(0.5, 3.0)]
print("| ω | α | mixed: ε_g | training loss | semantic: ε_g | training loss |")
print("|---|---|---|---|---|---|")
for omega, alpha in POINTS:
    p = ModelParams(omega=omega, rank=2, variant=Rotary((0.5,)))
    cells = []
    for branch in ("mixed", "semantic"):
        r = solve(alpha, p, branch=branch, method=QMC(2048, 4))
        shown = f"{r.test_error:.6f}" if r.kind == branch else f"{r.kind} point"
        cells += [shown if r.converged else "not converged", f"{r.train_loss:.6f}"]
    print(f"| {omega:g} | {alpha:g} | " + " | ".join(cells) + " |", flush=True)
