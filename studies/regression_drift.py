"""How far the pinned regression table's numbers move under a change meant to keep them (a
faster solver path): every point of tests/regression_points.py recomputed with the current code,
its largest relative deviation from the table over the values (and the value), over the
reported errors `<name>_err`, and the largest deviation of a value in units of its reported
error where the table holds one; iteration counts and rounding noise are left out.

A faster path reaches the same fixed point to within the solver's tolerance (relative residual
1e-6 Gauss-Hermite, 1e-5 QMC), not to the table's 1e-10; this study states by how much, before
the table is written anew (`python -m tests.regression_points --write`).

    python -m studies.regression_drift [--only PREFIX] [--skip-slow]   (from the repository root)
"""

from __future__ import annotations

import argparse
import json
import math
import re
import time

from tests.regression_points import ATOL, REGRESSION_POINTS, SLOW, TABLE, compute


def _skipped(key: str, value: float) -> bool:
    """Iteration counts, and values at the rounding-noise floor."""
    return key.split("@")[0] == "iterations" or abs(value) <= ATOL or not math.isfinite(value)


def _is_error(key: str) -> bool:
    """A reported error: `<name>_err`, `<name>_err[i]` or `<name>_err@alpha`."""
    return re.search(r"_err($|\[|@)", key) is not None


def drift(got: dict[str, float], want: dict[str, float], errors: bool) -> tuple[float, str]:
    """Largest |got - want| / |want| over the values (errors=False) or over their reported
    errors `<name>_err` (errors=True), above the noise floor, not iteration counts."""
    worst, where = 0.0, ""
    for key, value in want.items():
        if _skipped(key, value) or _is_error(key) != errors:
            continue
        rel = abs(got[key] - value) / abs(value)
        if rel > worst:
            worst, where = rel, key
    return worst, where


def in_errors(got: dict[str, float], want: dict[str, float]) -> float:
    """Largest |got - want| of a value in units of its reported error (where one is stored)."""
    worst = 0.0
    for key, value in want.items():
        err = want.get(key.replace("@", "_err@", 1) if "@" in key else f"{key}_err")
        if _skipped(key, value) or _is_error(key) or err is None or not err > 0:
            continue
        worst = max(worst, abs(got[key] - value) / err)
    return worst


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="points whose name starts with this")
    ap.add_argument("--skip-slow", action="store_true", help="leave out the slow points")
    args = ap.parse_args()
    table = json.loads(TABLE.read_text())
    for name in REGRESSION_POINTS:
        if not name.startswith(args.only) or (args.skip_slow and name in SLOW):
            continue
        t0 = time.perf_counter()
        got = compute(name)
        worst, where = drift(got, table[name], errors=False)
        worst_err, _ = drift(got, table[name], errors=True)
        units = in_errors(got, table[name])
        its = {k: (table[name][k], got[k]) for k in got if k.split("@")[0] == "iterations"}
        old_it = sum(v[0] for v in its.values())
        new_it = sum(v[1] for v in its.values())
        print(
            f"{name:<36} values {worst:8.1e} ({where:<14}) errors {worst_err:8.1e}  "
            f"in errors {units:8.1e}  iterations {old_it:.0f} -> {new_it:.0f}  "
            f"{time.perf_counter() - t0:5.1f} s",
            flush=True,
        )


if __name__ == "__main__":
    main()
