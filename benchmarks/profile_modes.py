"""Where the exact L = 2 channel's time goes: a workload's channel evaluations counted and timed
by quadrature order and by prox mode ("local": each node's Newton from its previous minimiser;
"global": the full search over the analytic starts that every end-point check makes).

Workloads:
  l2-curve          the L = 2 learning curve of both branches, 24 alphas 0.2..2.5, with errors
  find-transitions  `find_transitions(ModelParams())`

    python benchmarks/profile_modes.py [WORKLOAD ...]

Each runs after a first solve has loaded the compiled kernels; the load average is printed
before and after.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from collections import defaultdict

import numpy as np

from attnphase import ModelParams, find_transitions, learning_curves, solve
from attnphase.theory.gauss_hermite.channel import ChannelIntegrator

ALPHAS = [float(a) for a in np.linspace(0.2, 2.5, 24)]
WORKLOADS = {
    "l2-curve": lambda: learning_curves(ALPHAS, ModelParams()),
    "find-transitions": lambda: find_transitions(ModelParams()),
}


def profile(name: str) -> None:
    """Run one workload with `ChannelIntegrator.moments` timed per (order, mode); print a table."""
    counts: dict[tuple, list] = defaultdict(lambda: [0, 0.0])
    moments = ChannelIntegrator.moments

    def timed(self, *args, **kwargs):
        start = time.perf_counter()
        out = moments(self, *args, **kwargs)
        row = counts[(self.n_xi, self.n_y, "local" if kwargs.get("local") else "global")]
        row[0] += 1
        row[1] += time.perf_counter() - start
        return out

    ChannelIntegrator.moments = timed
    try:
        start = time.perf_counter()
        WORKLOADS[name]()
        total = time.perf_counter() - start
    finally:
        ChannelIntegrator.moments = moments
    print(f"{name}: {total:.1f} s")
    print("| order | mode | evaluations | seconds | ms each | share |")
    print("|---|---|---|---|---|---|")
    for (n_xi, n_y, mode), (n, seconds) in sorted(counts.items()):
        print(
            f"| ({n_xi}, {n_y}) | {mode} | {n} | {seconds:.2f} | {1e3 * seconds / n:.1f} "
            f"| {seconds / total:.0%} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workloads", nargs="*", metavar="WORKLOAD", help=", ".join(WORKLOADS))
    args = parser.parse_args()
    unknown = [w for w in args.workloads if w not in WORKLOADS]
    if unknown:
        parser.error(f"unknown workload {unknown[0]!r}; choose from {', '.join(WORKLOADS)}")
    warnings.simplefilter("ignore")
    solve(1.0, ModelParams(), branch="semantic")
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    for name in args.workloads or WORKLOADS:
        profile(name)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
