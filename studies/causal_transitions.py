"""alpha_c and alpha_l of the causal student on a causal target against the unmasked model,
at L = 2, 3, 4 (docs/variants.md), with the wall time of each `find_transitions` call.

    python studies/causal_transitions.py [--L 2,3,4] [--alpha-max 5] [--num 24] [--points 4096]

The models: the scaling family's linear member (`family_model`; unmasked A_L(0.6): 0.6 on the
diagonal, 0.4 spread evenly over each row) and its causal member (`mask="causal"`: 0.6 on the
diagonal, 0.4 spread over the earlier tokens, the first row (1, 0, ...)); omega 0.3, sigma 0.5,
lambda 0.01, linear encodings. Both
models by QMC (the same points and scramblings), so that the two columns differ by the mask
alone. Each row is printed, and appended to studies/data/causal_transitions.csv, as it ends.
"""

from __future__ import annotations

import argparse
import csv
import time
import warnings
from pathlib import Path

from attnphase import QMC, family_model, find_transitions

OUT = Path(__file__).parent / "data" / "causal_transitions.csv"
FIELDS = ["L", "mask", "points", "alpha_c", "alpha_c_err", "alpha_l", "alpha_l_err", "wall_s"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--L", default="2,3,4")
    ap.add_argument("--alpha-max", type=float, default=5.0)
    ap.add_argument("--num", type=int, default=24)
    ap.add_argument("--points", type=int, default=4096)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    method = QMC(args.points, 4)
    new = not OUT.exists()
    with OUT.open("a", newline="") as fh:
        out = csv.DictWriter(fh, FIELDS)
        if new:
            out.writeheader()
        print(" ".join(FIELDS), flush=True)
        for L in (int(x) for x in args.L.split(",")):
            models = {mask: family_model(L, 0.3, mask=mask) for mask in ("none", "causal")}
            for mask, p in models.items():
                t0 = time.perf_counter()
                tr = find_transitions(p, alpha_max=args.alpha_max, num=args.num, method=method)
                row = dict(
                    L=L,
                    mask=mask,
                    points=args.points,
                    alpha_c=f"{tr.alpha_c:.4f}",
                    alpha_c_err=f"{tr.alpha_c_err:.4f}",
                    alpha_l=f"{tr.alpha_l:.4f}",
                    alpha_l_err=f"{tr.alpha_l_err:.4f}",
                    wall_s=f"{time.perf_counter() - t0:.0f}",
                )
                out.writerow(row)
                fh.flush()
                print(" ".join(str(row[k]) for k in FIELDS), flush=True)


if __name__ == "__main__":
    main()
