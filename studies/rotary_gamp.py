"""Where GAMP and L-BFGS land for rotary positions with the paper's encodings (docs/variants.md
§11): phi = 0.5, rank 2, alpha 1.5, d = 1000, semantic start, seeds 0 and 1; then the state
evolution solved from GAMP's end point with nothing pinned, beside the semantic branch.

    python studies/rotary_gamp.py
"""

import warnings

import numpy as np

from attnphase import QMC, ModelParams, Rotary, SimConfig, run_gamp, simulate, solve
from attnphase.theory.overlaps import MatrixOverlaps

warnings.simplefilter("ignore")
p = ModelParams(rank=2, variant=Rotary((0.5,)))
ALPHA, D = 1.5, 1000


def overlaps(r) -> str:
    q = np.linalg.eigvalsh(np.atleast_2d(r.q))
    return (
        f"eig q {np.round(q, 4)}  m {np.round(np.ravel(r.m), 4)}  "
        f"theta {np.round(np.ravel(r.theta), 4)}  eps_g {r.test_error:.5f}  "
        f"train {r.train_loss:.6f}"
    )


runs = [run_gamp(p, D, ALPHA, init="semantic", seed=s, device="cpu", n_test=5000) for s in (0, 1)]
sims = simulate(SimConfig(params=p, d=D, alpha=ALPHA, init="semantic", n_test=5000), [0, 1])
for g, s in zip(runs, sims, strict=True):
    print(f"GAMP   seed {g.seed}: {overlaps(g)}  ({g.status})")
    print(f"L-BFGS seed {s.seed}: {overlaps(s)}")
g = runs[0]
start = MatrixOverlaps(*(np.atleast_2d(x) for x in (g.q, g.m, g.theta, g.V)))
for branch in (None, "semantic"):
    r = solve(ALPHA, p, start=start, branch=branch, method=QMC(4096, 4))
    label = "from GAMP's end, nothing pinned" if branch is None else "the semantic branch"
    print(f"theory, {label}: kind {r.kind}, {overlaps(r)}, eps_g error {r.test_error_err:.1e}")
