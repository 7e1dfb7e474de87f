"""GAMP on data (docs/theory.md §8): today's tree against the baseline revision, in one run.

Two rows, each run in a fresh interpreter on the baseline's worktree and on this tree
(`benchmarks/baseline.py`), one torch and one numba thread:

- "vs L-BFGS": d = 4000, alpha 1.5, semantic start, seed 0: GAMP's iterating time (its wall time
  less drawing the data and measuring the test error, timed apart in the same process) over
  L-BFGS's (`attnphase.sim.minimise`, the same data and start, RMS gradient 1e-9);
- "large": d = 10^4, alpha 2, semantic start, seed 0: GAMP's whole wall time (data, iterations,
  test error) and the process's peak resident memory (ru_maxrss), beside the training tokens'
  own size n L d x 8 bytes.

    nice -n 5 python benchmarks/bench_gamp_speed.py [--rows lbfgs,large] [--d-large 10000]

The large row needs ~10 GB on the baseline and takes minutes: run it alone on the machine.
"""

from __future__ import annotations

import argparse

from baseline import compare

SETUP = """
import json, resource, time
import numba, torch
torch.set_num_threads(1)
numba.set_num_threads(1)
from attnphase import ModelParams
from attnphase.gamp import run_gamp
from attnphase.gamp.problem import build_problem
p, cpu = ModelParams(), torch.device("cpu")
run_gamp(p, 50, 1.5, max_iter=2, n_test=10, device="cpu")  # compile the prox kernel
try:  # and the back-projection kernel, where the tree has one
    from attnphase.gamp.passes import back_project_once
    ones = torch.ones(4, 2, 8, dtype=torch.float64)
    back_project_once(ones, ones[..., :2].contiguous())
except ImportError:
    pass
"""

VS_LBFGS = (
    SETUP
    + """
from attnphase.sim import minimise
d, alpha = {d}, 1.5
t = time.perf_counter()
prob = build_problem(p, d, alpha, "semantic", 0, cpu)
data = time.perf_counter() - t
t = time.perf_counter()
rep = minimise(prob.risk, prob.Q0[None].clone(), "lbfgs", gtol=1e-9)
lbfgs = time.perf_counter() - t
t = time.perf_counter()
prob.test_error(rep.Q[0])
test = time.perf_counter() - t
del prob
res = run_gamp(p, d, alpha, init="semantic", seed=0, device="cpu")
loop = res.seconds - data - test
dist = float((torch.as_tensor(res.Q) - rep.Q[0]).norm() / rep.Q[0].norm())
print(json.dumps({{"ratio": loop / lbfgs, "gamp_s": loop, "lbfgs_s": lbfgs,
                  "iterations": res.iterations, "status": res.status, "dist": dist}}))
"""
)

LARGE = (
    SETUP
    + """
d, alpha = {d}, 2.0
res = run_gamp(p, d, alpha, init="semantic", seed=0, device="cpu")
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9
print(json.dumps({{"seconds": res.seconds, "peak_gb": peak, "data_gb": res.n * 2 * d * 8 / 1e9,
                  "iterations": res.iterations, "status": res.status, "q": res.q,
                  "theta": res.theta, "m": res.m, "test_error": res.test_error}}))
"""
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="lbfgs,large")
    ap.add_argument("--d-lbfgs", type=int, default=4000)
    ap.add_argument("--d-large", type=int, default=10_000)
    args = ap.parse_args()
    rows = args.rows.split(",")
    if "lbfgs" in rows:
        old, new = compare(
            f"GAMP/L-BFGS time, d={args.d_lbfgs} alpha 1.5",
            VS_LBFGS.format(d=args.d_lbfgs),
            "ratio",
        )
        for tag, r in (("baseline", old), ("new", new)):
            print(
                f"  {tag:<8} GAMP {r['gamp_s']:7.1f} s ({r['iterations']} iterations, "
                f"{r['status']}), L-BFGS {r['lbfgs_s']:6.1f} s, GAMP/L-BFGS {r['ratio']:5.2f}, "
                f"|Q_gamp - Q_lbfgs|/|Q_lbfgs| {r['dist']:.1e}"
            )
    if "large" in rows:
        old, new = compare(f"GAMP seconds, d={args.d_large} alpha 2", LARGE.format(d=args.d_large))
        for tag, r in (("baseline", old), ("new", new)):
            print(
                f"  {tag:<8} {r['seconds']:7.1f} s, {r['iterations']} iterations ({r['status']}), "
                f"peak {r['peak_gb']:.2f} GB = {r['peak_gb'] / r['data_gb']:.2f} x the data's "
                f"{r['data_gb']:.2f} GB; q {r['q']:.6f} theta {r['theta']:.6f} m {r['m']:.6f} "
                f"eps_g {r['test_error']:.6f}"
            )
        print(f"  peak memory ratio baseline/new {old['peak_gb'] / new['peak_gb']:.2f}x")


if __name__ == "__main__":
    main()
