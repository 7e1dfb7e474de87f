"""Speed of the theory engine, against a straightforward implementation.

1. One state-evolution iteration (all hats) at one alpha point with our engine, vs the same
   nodes with scipy.optimize.minimize per node started at h = 0 (the authors' approach). The
   baseline is timed on a random sample of the nodes and scaled to the full grid (its cost is
   linear in the number of nodes); the sampled fraction is printed.
2. Wall time of a whole learning curve, 20 alphas x 2 branches, at the default order.

    python benchmarks/bench_theory.py [--sample 2000]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from attnphase.theory.gauss_hermite.softmax2 import prox_objective, target_centres
from scipy.optimize import minimize

from attnphase import GaussHermite, ModelParams, learning_curve
from attnphase._core.quadrature import gauss_hermite
from attnphase.theory import DEFAULT_ORDER
from attnphase.theory.gauss_hermite.channel import ChannelIntegrator


def scipy_prox_nodes(q, m, V, theta, p: ModelParams, order, sample: int, seed: int = 0):
    """Per-node scipy prox (BFGS from h = 0) on `sample` random nodes of the product grid."""
    xi, _ = gauss_hermite(order[0])
    y, _ = gauss_hermite(order[1])
    rng = np.random.default_rng(seed)
    idx = np.stack(
        [
            rng.integers(0, order[0], sample),
            rng.integers(0, order[0], sample),
            rng.integers(0, order[1], sample),
            rng.integers(0, order[1], sample),
        ],
        1,
    )
    v = math.sqrt(p.rho - theta**2 / q)
    t = time.perf_counter()
    for i1, i2, j1, j2 in idx:
        w = (math.sqrt(q) * xi[i1] + m, math.sqrt(q) * xi[i2] - m)
        hs = (theta / math.sqrt(q) * xi[i1] + v * y[j1], theta / math.sqrt(q) * xi[i2] + v * y[j2])
        c = target_centres(*hs, p.omega, *p.A_array.ravel())

        def fun(h, w=w, c=c):
            f, g1, g2, *_ = prox_objective(h[0], h[1], w[0], w[1], V, c[0], c[1], p.sigma**2)
            return f, np.array([g1, g2])

        minimize(fun, np.zeros(2), jac=True, method="BFGS")
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sample", type=int, default=2000, help="nodes timed for the scipy baseline")
    ap.add_argument("--num", type=int, default=20, help="alphas per branch")
    args = ap.parse_args()
    p = ModelParams()
    order = DEFAULT_ORDER
    nodes = order[0] ** 2 * order[1] ** 2
    point = dict(q=0.0819, m=0.0, V=17.27, theta=0.1217)  # semantic, alpha = 1.25

    integ = ChannelIntegrator(*order)
    integ.moments(**point, rho=p.rho, sigma2=p.sigma**2, omega=p.omega, A=p.A_array)  # compile
    integ.reset()
    t = time.perf_counter()
    integ.moments(**point, rho=p.rho, sigma2=p.sigma**2, omega=p.omega, A=p.A_array)
    ours_cold = time.perf_counter() - t
    t = time.perf_counter()
    integ.moments(**point, rho=p.rho, sigma2=p.sigma**2, omega=p.omega, A=p.A_array)
    ours_warm = time.perf_counter() - t
    visited = integ.nodes_visited[False, False]
    per_node = scipy_prox_nodes(**point, p=p, order=order, sample=args.sample) / args.sample
    base = per_node * visited
    print(f"order {order}: {nodes} grid nodes, {visited} visited after pruning weights < 1e-18")
    print(f"  ours, one iteration (cold prox)     {ours_cold:8.3f} s")
    print(f"  ours, one iteration (warm prox)     {ours_warm:8.3f} s")
    print(
        f"  scipy BFGS per node from h=0        {base:8.1f} s on the same {visited} nodes", end=""
    )
    print(f" (timed on {args.sample}, scaled)")
    print(
        f"  speed-up, same nodes                {base / ours_cold:8.0f}x cold, "
        f"{base / ours_warm:.0f}x warm"
    )
    print(f"  scipy on the unpruned grid          {per_node * nodes:8.1f} s")

    alphas = np.linspace(0.1, 2.0, args.num)
    t = time.perf_counter()
    iters = 0
    for branch in ("semantic", "positional"):
        res = learning_curve(alphas, p, branch=branch, method=GaussHermite(order))
        iters += sum(r.iterations for r in res)
        ok = sum(r.converged for r in res)
        on = sum(r.kind == branch for r in res)
        print(f"  {branch:10s}: {ok}/{len(res)} converged, {on} on the branch")
    wall = time.perf_counter() - t
    print(
        f"learning curve {args.num} alphas x 2 branches at order {order}: {wall:.1f} s, "
        f"{iters} map evaluations in all"
    )


if __name__ == "__main__":
    main()
