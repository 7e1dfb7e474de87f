"""The histogram task's quick mode alone and beside busy processes, in one run: its wall time
quiet, under `--load` CPU-bound processes with the package's thread settings (pools sized to the
usable cores, OpenMP threads that sleep when idle), and under the same load with OpenMP's
threads spinning (OMP_WAIT_POLICY=ACTIVE, the libraries' own default), each with its ratio to
the quiet time.

    python benchmarks/bench_threads.py [--load 4]

The busy processes are pure-Python loops (one core each while they run); they are started
before and stopped after the timed run.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import subprocess
import sys
import tempfile
import time

COMMAND = [sys.executable, "-m", "attnphase", "-q", "histogram", "--quick", "--format", "csv"]


def _spin() -> None:
    while True:
        pass


def timed(env: dict[str, str]) -> float:
    """Wall seconds of one quick histogram run in a fresh interpreter and checkpoint folder."""
    with tempfile.TemporaryDirectory() as folder:
        t = time.perf_counter()
        subprocess.run(
            [*COMMAND, "--checkpoint", os.path.join(folder, "c")],
            check=True,
            env=env,
            stdout=subprocess.DEVNULL,
        )
        return time.perf_counter() - t


def under_load(load: int, env: dict[str, str]) -> float:
    busy = [mp.Process(target=_spin, daemon=True) for _ in range(load)]
    for p in busy:
        p.start()
    try:
        return timed(env)
    finally:
        for p in busy:
            p.terminate()
            p.join()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--load", type=int, default=4, help="busy processes beside the run")
    args = ap.parse_args()
    base = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    print(f"cores usable: {len(os.sched_getaffinity(0))}; load average {os.getloadavg()}")
    quiet = timed(base)
    print(f"quiet                                   {quiet:7.1f} s")
    rows = [
        ("package settings (passive OpenMP)", base),
        ("spinning OpenMP (OMP_WAIT_POLICY=ACTIVE)", {**base, "OMP_WAIT_POLICY": "ACTIVE"}),
    ]
    for name, env in rows:
        seconds = under_load(args.load, env)
        print(f"load {args.load}, {name:<36} {seconds:7.1f} s  ratio {seconds / quiet:5.2f}x")


if __name__ == "__main__":
    main()
