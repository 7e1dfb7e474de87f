"""Speed of the general engine against the goals (docs/theory.md §7), in one process.

Per case, at the point count that gives about 1e-3 relative accuracy with R = 4 scramblings
(measured in docs/general-engine-accuracy.md, `studies/general_convergence.py`):

- cold: `solve` with a `QMC` method (after a 64-point solve that compiles the numba kernels)
  from the branch's start (damped stage on points/8, then Anderson);
- warm: the next alpha (+0.1) on the same scramblings, started from the cold fixed point, as
  along a learning curve (`learning_curve`);
- where the time goes: the share of the cold solve spent in the global prox (cProfile);
- L=2: the exact l2 engine on the same point of the same branch, run in the same process, and
  the ratio of the two.

Goals: L=3, r=1 at 1e-3 in under 60 s cold and 15 s warm; L=2 through the general
engine within 10x of the l2 engine at equal accuracy.

    python benchmarks/general_speed.py [--cases L3-semantic,L2-semantic] [--points-scale 1]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import time
from dataclasses import dataclass

import numpy as np

from attnphase import QMC, ModelParams, solve
from attnphase.theory.qmc.engine import make_channels, solve_qmc

L3 = ModelParams(A=(np.full((3, 3), 0.2) + 0.4 * np.eye(3)).tolist())


@dataclass(frozen=True)
class Case:
    params: ModelParams
    alpha: float
    branch: str
    points: int  # for ~1e-3 relative accuracy at R = 4 (docs/general-engine-accuracy.md)


CASES = {
    "L3-semantic": Case(L3, 1.5, "semantic", 2048),
    "L3-positional": Case(L3, 0.8, "positional", 65536),
    "L2-semantic": Case(ModelParams(), 1.5, "semantic", 16384),
    "L2-positional": Case(ModelParams(), 1.5, "positional", 65536),
}


def prox_share(profile: cProfile.Profile) -> float:
    """Fraction of the profiled time spent inside attnphase.prox.global_prox."""
    stats = pstats.Stats(profile)
    total = stats.total_tt
    inside = sum(v[3] for k, v in stats.stats.items() if k[2] == "global_prox")
    return inside / total if total else float("nan")


def run(name: str, case: Case, scale: float) -> None:
    points = max(int(case.points * scale), 64)
    solve_qmc(case.alpha, case.params, None, case.branch, QMC(64, 1))  # JIT
    channels = make_channels(case.params, QMC(points, 4))
    profile = cProfile.Profile()
    t0 = time.perf_counter()
    profile.enable()
    cold = solve_qmc(case.alpha, case.params, None, case.branch, QMC(), channels=channels)
    profile.disable()
    t_cold = time.perf_counter() - t0
    t0 = time.perf_counter()
    warm = solve_qmc(
        case.alpha + 0.1,
        case.params,
        cold.solutions[0].overlaps,
        case.branch,
        QMC(),
        channels=channels,
    )
    t_warm = time.perf_counter() - t0
    line = (
        f"{name:14s} alpha {case.alpha}: {points} points x 4  cold {t_cold:6.1f} s "
        f"({cold.iterations} it., {cold.kind}, prox {100 * prox_share(profile):.0f}%)  "
        f"warm {t_warm:6.1f} s ({warm.iterations} it., {warm.kind})"
    )
    if case.params.L == 2 and case.params.rank == 1:
        t0 = time.perf_counter()
        exact = solve(case.alpha, case.params, branch=case.branch)
        t_l2 = time.perf_counter() - t0
        line += f"  l2 {t_l2:5.1f} s ({exact.kind}): general/l2 = {t_cold / t_l2:.1f}"
    print(line, flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=",".join(CASES), help="comma-separated: " + ",".join(CASES))
    ap.add_argument("--points-scale", type=float, default=1.0, help="multiply the point counts")
    args = ap.parse_args()
    names = args.cases.split(",")
    unknown = [n for n in names if n not in CASES]
    if unknown:
        ap.error(f"--cases: unknown {unknown}; known: {list(CASES)}")
    print(f"load average at start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)")
    for name in names:
        run(name, CASES[name], args.points_scale)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
