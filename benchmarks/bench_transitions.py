"""Transition lines by continuation against scan-and-bisect, in one process.

    python benchmarks/bench_transitions.py [--omegas 0.025:0.5:20] [--workers 2]
        [--baseline-omega 0.3] [--skip-baseline] [--skip-spinodals]

1. baseline: `find_transitions` (two full branch scans at the default orders, then brentq) at
   one omega: its wall time is the cost per omega of scanning;
2. one omega cold by continuation (alpha_c and alpha_l: the start scan, then the defining
   systems at the working and check orders);
3. the alpha_c and alpha_l lines over --omegas, then all four lines (spinodals added, from the
   same store: only the new lines are computed), in --workers processes.
Prints wall times, the ratio (baseline seconds per omega x number of omegas) / line time, SE
map evaluations per line point, and the values at omega = 0.1, 0.2, 0.3, 0.4.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from attnphase import ModelParams, find_transitions
from attnphase.transitions.table import transition_table

REPORT = (0.1, 0.2, 0.3, 0.4)


def _values(text: str) -> list[float]:
    start, stop, num = text.split(":")
    return [float(f"{v:.12g}") for v in np.linspace(float(start), float(stop), int(num))]


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def _show(df, names) -> None:
    for name in names:
        ok = df[np.isfinite(df[name])]
        ev = ok[f"{name}_evaluations"]
        print(
            f"  {name}: {len(ok)}/{len(df)} values converged, SE map evaluations per point "
            f"median {ev.median():.0f} (min {ev.min()}, max {ev.max()})"
        )
        ended = df[~np.isfinite(df[name])]
        if len(ended):
            print(
                f"    missing at omega {ended['omega'].tolist()}: {ended.iloc[0][name + '_status']}"
            )
    rows = df[df["omega"].round(6).isin(REPORT)]
    for _, r in rows.iterrows():
        parts = [f"{n} {r[n]:.4f} ± {r[n + '_err']:.4f}" for n in names]
        print(f"    omega {r['omega']:g}: " + ", ".join(parts))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--omegas", default="0.025:0.5:20")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--baseline-omega", type=float, default=0.3)
    ap.add_argument("--skip-baseline", action="store_true")
    ap.add_argument("--skip-spinodals", action="store_true")
    args = ap.parse_args()
    omegas = _values(args.omegas)
    p = ModelParams()
    base = None
    if not args.skip_baseline:
        t, base = _timed(lambda: find_transitions(ModelParams(omega=args.baseline_omega)))
        print(
            f"baseline find_transitions(omega={args.baseline_omega}): {base:.0f} s, "
            f"alpha_c {t.alpha_c:.4f} ± {t.alpha_c_err:.4f}, alpha_l {t.alpha_l:.4f} ± "
            f"{t.alpha_l_err:.4f}",
            flush=True,
        )
    pair = ["alpha_c", "alpha_l"]
    one, cold = _timed(lambda: transition_table(p, [0.3], lines=pair, workers=1))
    print(f"one omega cold (0.3, alpha_c and alpha_l, 1 process): {cold:.0f} s", flush=True)
    _show(one, pair)
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "lines.sqlite"
        df, secs = _timed(
            lambda: transition_table(p, omegas, lines=pair, store=store, workers=args.workers)
        )
        print(
            f"alpha_c and alpha_l lines, {len(omegas)} omegas, {args.workers} processes: "
            f"{secs:.0f} s"
        )
        if base is not None:
            print(f"  ratio against scanning every omega: {base * len(omegas) / secs:.1f}x")
        _show(df, pair)
        if args.skip_spinodals:
            return
        all_lines = pair + ["spinodal_semantic", "spinodal_positional"]
        df, more = _timed(lambda: transition_table(p, omegas, store=store, workers=args.workers))
        print(
            f"adding both spinodal lines (same store): {more:.0f} s; all four: {secs + more:.0f} s"
        )
        _show(df, all_lines)


if __name__ == "__main__":
    main()
