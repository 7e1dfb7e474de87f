"""The wall time of each line of the README's Python example (and getting-started's), in one
process: one fixed point, a four-point curve, `find_transitions`, the three-token fixed point.
Each runs in a fresh process with its kernels cached ("warm") and, with --cold, with an empty
numba cache directory, whose extra time is the first call's compilation.

    python benchmarks/first_steps.py [--cold]

The machine's load average is printed before and after: the documentation quotes the times
with it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

STEPS = r"""
import json, time
t0 = time.perf_counter()
from attnphase import ModelParams, QMC, find_transitions, learning_curve, solve
out = {"import": time.perf_counter() - t0}

def timed(name, fn):
    start = time.perf_counter()
    value = fn()
    out[name] = time.perf_counter() - start
    return value

p = ModelParams(omega=0.3, sigma=0.5, lam=0.01)
timed("solve", lambda: solve(1.5, p, branch="semantic"))
timed("curve", lambda: learning_curve([0.5, 1.0, 1.5, 2.0], p, branch="positional"))
t = timed("find_transitions", lambda: find_transitions(p))
out["alpha_c"], out["alpha_l"] = t.alpha_c, t.alpha_l
p3 = ModelParams(A=[[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]])
timed("three_tokens", lambda: solve(2.0, p3, method=QMC(points=2048, randomisations=4)))
print(json.dumps(out))
"""


def run(env: dict[str, str]) -> dict[str, float]:
    res = subprocess.run(
        [sys.executable, "-c", STEPS], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cold", action="store_true", help="also with an empty numba cache")
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    runs = {"warm": run(dict(os.environ))}
    if args.cold:
        with tempfile.TemporaryDirectory() as cache:
            runs["cold"] = run({**os.environ, "NUMBA_CACHE_DIR": cache})
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    for label, out in runs.items():
        times = ", ".join(
            f"{k} {out[k]:.1f} s"
            for k in ("import", "solve", "curve", "find_transitions", "three_tokens")
        )
        print(f"{label}: {times}; alpha_c = {out['alpha_c']:.4f}, alpha_l = {out['alpha_l']:.4f}")


if __name__ == "__main__":
    main()
