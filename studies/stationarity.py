"""Stationarity of Phi (docs/theory.md §7.5): deviation of the §7.2 hats from finite differences of
alpha E[M], per case, point count and scrambling. The spread sets the tolerances of
tests/theory/qmc/test_stationarity.py.

    .venv/bin/python studies/stationarity.py [--points 2048,4096,16384] [--seeds 3]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

from attnphase.theory.qmc.stationarity import check_stationarity

_spec = importlib.util.spec_from_file_location(
    "test_stationarity",
    Path(__file__).resolve().parents[1] / "tests" / "theory" / "qmc" / "test_stationarity.py",
)
cases = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = cases
_spec.loader.exec_module(cases)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", default="2048,4096,16384")
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args()
    print(
        f"{'case':<14}{'points':>8}{'seed':>6}{'Vhat':>10}{'Mhat':>10}{'thetahat':>10}{'qhat':>10}"
    )
    for name, (p, o, _, _) in cases.CASES.items():
        for n in (int(x) for x in args.points.split(",")):
            for seed in range(1, args.seeds + 1):
                c = check_stationarity(1.5, p, o, cases.channel(name, n, seed))
                dev = [c.deviation(k) for k in ("Vhat", "Mhat", "thetahat", "qhat")]
                print(
                    f"{name:<14}{n:>8}{seed:>6}"
                    + "".join(f"{x:10.4f}" for x in dev[:3])
                    + f"{dev[3]:10.1e}"
                )


if __name__ == "__main__":
    main()
