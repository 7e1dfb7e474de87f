"""Transition scans of rotary positions at L = 2 (omega 0.3, sigma 0.5, lambda 0.01, the paper's A
and encodings, student rank 2: one rotated pair) against the tied rank-2 model, which the rotary
model is at phi = 0 (docs/variants.md §10). QMC 512 x 2 points, the default window.

    python studies/rotary_transitions.py [--phis 0,1] [--points 512]
"""

from __future__ import annotations

import argparse
import time
import warnings

from attnphase import QMC, ModelParams, Rotary, find_transitions


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--phis", default="0,1")
    ap.add_argument("--points", type=int, default=512)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    method = QMC(args.points, 2)
    models = [("tied, rank 2", ModelParams(rank=2))]
    models += [
        (f"rotary, phi = {phi:g}", ModelParams(rank=2, variant=Rotary((float(phi),))))
        for phi in args.phis.split(",")
    ]
    print("| model | α_c | α_l | semantic spinodal | wall time |")
    print("|---|---|---|---|---|")
    for name, p in models:
        t0 = time.perf_counter()
        tr = find_transitions(p, method=method)
        print(
            f"| {name} | {tr.alpha_c:.3f} ± {tr.alpha_c_err:.3f} | {tr.alpha_l:.3f} ± "
            f"{tr.alpha_l_err:.3f} | {tr.spinodal_semantic:.3f} | "
            f"{time.perf_counter() - t0:.0f} s |",
            flush=True,
        )


if __name__ == "__main__":
    main()
