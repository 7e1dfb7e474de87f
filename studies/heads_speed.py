"""The cost of a two-head fixed point against a one-head rank-2 one (docs/variants.md §6): the
same field width (L x 2), QMC 4096 x 4 points, alpha 1.5, cold, each branch of each model.

    python studies/heads_speed.py
"""

import time
import warnings

from attnphase import QMC, Heads, ModelParams, solve

warnings.simplefilter("ignore")
solve(1.5, ModelParams(), method=QMC(256, 2))  # compile the kernels
solve(1.5, ModelParams(variant=Heads(2)), method=QMC(256, 2), branch="positional")
MODELS = {
    "one head rank 2": (ModelParams(rank=2), ("semantic", "positional")),
    "two heads rank 1": (ModelParams(variant=Heads(2)), ("positional", "mixed")),
}
for name, (p, branches) in MODELS.items():
    for branch in branches:
        t0 = time.perf_counter()
        r = solve(1.5, p, branch=branch, method=QMC(4096, 4))
        seconds = time.perf_counter() - t0
        print(f"{name:<17} {branch:<10} {seconds:6.2f} s  {r.iterations:4d} evaluations  {r.kind}")
