"""Deviation of the theory from the authors' reference values, split into its two measured parts.

For both branches at the reference alphas (tests/data), solve at a converged order (96, 24) and at
the test suite's order (32, 12), and print per row, relative to the reference value:
- ref_err = conv/ref - 1: the reference's own error (the authors' coarse cubature, prox from
  h = 0 and absolute tolerance 1e-4; docs/theory.md §6), uncertain by the (64, 24)-(96, 24)
  difference, also printed;
- quad = (test - conv)/ref: the quadrature error of the test order.
Then the maxima of |ref_err| and |quad| over the rows where the reference converged (the rows
tests/validation/test_reference.py checks). `--write` stores the converged solve in
tests/data/converged_omega0.3_sigma0.5_lambda0.01.csv, which that test reads.

    python studies/reference_deviation.py [--write]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pandas as pd

from attnphase import GaussHermite, ModelParams, learning_curve

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
CONVERGED, CHECK, TEST = (96, 24), (64, 24), (32, 12)
# rows where the reference converged: the same selection as tests/validation/test_reference.py
ROWS = {"semantic": lambda a: a > 0.95, "positional": lambda a: a > 0.2}
COLUMNS = {
    "semantic": ("q", "V", "theta", "mse", "Phi"),
    "positional": ("q", "V", "m", "mse", "Phi"),
}


def _record(r, branch: str) -> dict:
    return dict(
        branch=branch,
        alpha=r.alpha,
        kind=r.kind,
        converged=r.converged,
        q=r.q,
        m=r.m,
        V=r.V,
        theta=r.theta,
        mse=r.mse,
        Phi=r.phi,
        n_xi=r.method.order[0],
        n_y=r.method.order[1],
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="store the converged solve in tests/data")
    args = ap.parse_args()
    stored = []
    for branch in ("semantic", "positional"):
        ref = pd.read_csv(DATA / f"theory_{branch}_omega0.3_sigma0.5_lambda0.01.csv", index_col=0)
        solved = {}
        for order in (CONVERGED, CHECK, TEST):
            t0 = time.perf_counter()
            curve = learning_curve(
                ref["alpha"].to_numpy(), ModelParams(), branch=branch, method=GaussHermite(order)
            )
            solved[order] = [_record(r, branch) for r in curve]
            print(f"{branch} {order}: {time.perf_counter() - t0:.0f} s", flush=True)
        stored += solved[CONVERGED]
        cols = COLUMNS[branch]
        print(
            f"\n{branch}: per column ref_err = conv/ref - 1, quad = (test - conv)/ref, "
            f"unc = (check - conv)/ref"
        )
        print(
            "alpha   kind        "
            + "  ".join(f"{c + ' ref_err':>13} {'quad':>9} {'unc':>9}" for c in cols)
        )
        worst = {c: [0.0, 0.0, 0.0] for c in cols}
        for i, row in enumerate(ref.itertuples()):
            conv, chk, test = (solved[o][i] for o in (CONVERGED, CHECK, TEST))
            cells = []
            for c in cols:
                r = getattr(row, c)
                dev = (conv[c] / r - 1, (test[c] - conv[c]) / r, (chk[c] - conv[c]) / r)
                cells.append(f"{dev[0]:+13.2e} {dev[1]:+9.1e} {dev[2]:+9.1e}")
                if ROWS[branch](row.alpha) and conv["kind"] == branch:
                    worst[c] = [max(w, abs(d)) for w, d in zip(worst[c], dev, strict=True)]
            print(f"{row.alpha:<7.4f} {conv['kind']:<11} " + "  ".join(cells))
        print(
            "max over the checked rows: "
            + "; ".join(
                f"{c}: |ref_err| {w[0]:.2e}, |quad| {w[1]:.2e}, |unc| {w[2]:.2e}"
                for c, w in worst.items()
            )
        )
    if args.write:
        out = DATA / "converged_omega0.3_sigma0.5_lambda0.01.csv"
        pd.DataFrame(stored).to_csv(out, index=False)
        print(f"wrote {out}")


if __name__ == "__main__":
    main()
