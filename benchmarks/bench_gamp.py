"""Speed of GAMP on data (docs/theory.md §8) vs L-BFGS on the same data, in one process.

One GAMP run (default damping, relative change <= 1e-6 and RMS gradient <= 1e-9) from the
semantic start, and L-BFGS (`attnphase.sim.minimise`, the simulations' optimiser) from the same
start on the same data set to the same RMS gradient. Reported: wall times (GAMP's with and
without drawing the data and measuring the test error), iterations, seconds per iteration,
the ratio GAMP/L-BFGS, and the distance between the two end points.

    python benchmarks/bench_gamp.py [--d 4000] [--alpha 1.5] [--init semantic] [--threads 1]
"""

from __future__ import annotations

import argparse
import time

import numba
import torch

from attnphase import ModelParams
from attnphase.gamp import run_gamp
from attnphase.gamp.problem import build_problem
from attnphase.sim import minimise


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--d", type=int, default=4000)
    ap.add_argument("--alpha", type=float, default=1.5)
    ap.add_argument("--init", default="semantic")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    numba.set_num_threads(args.threads)
    p, cpu = ModelParams(), torch.device("cpu")
    run_gamp(p, 50, args.alpha, max_iter=2, n_test=10, device="cpu")  # compile the prox kernel

    t = time.perf_counter()
    prob = build_problem(p, args.d, args.alpha, args.init, args.seed, cpu)
    data_secs = time.perf_counter() - t
    t = time.perf_counter()
    rep = minimise(prob.risk, prob.Q0[None].clone(), "lbfgs", gtol=1e-9)
    lbfgs_secs = time.perf_counter() - t
    t = time.perf_counter()
    prob.test_error(rep.Q[0])
    test_secs = time.perf_counter() - t

    res = run_gamp(p, args.d, args.alpha, init=args.init, seed=args.seed, device="cpu")
    loop_secs = res.seconds - data_secs - test_secs
    dist = float((torch.as_tensor(res.Q) - rep.Q[0]).norm() / rep.Q[0].norm())
    print(
        f"d={args.d} alpha={args.alpha} n={res.n} init={args.init} seed={args.seed}, "
        f"{args.threads} thread(s)"
    )
    print(
        f"GAMP    {res.seconds:8.1f} s in all ({loop_secs:.1f} s iterating; data "
        f"{data_secs:.1f} s, test error {test_secs:.1f} s), {res.iterations} iterations, "
        f"{loop_secs / max(res.iterations, 1):.3f} s/iteration, status: {res.status}, "
        f"|grad R|/sqrt(d) {res.grad_norm:.1e}"
    )
    print(
        f"L-BFGS  {lbfgs_secs:8.1f} s, {rep.steps[0]} iterations, "
        f"|grad R|/sqrt(d) {rep.grad_rms[0]:.1e}"
    )
    print(f"ratio GAMP/L-BFGS (iterating): {loop_secs / lbfgs_secs:.1f}")
    print(f"|Q_gamp - Q_lbfgs| / |Q_lbfgs| = {dist:.1e}")


if __name__ == "__main__":
    main()
