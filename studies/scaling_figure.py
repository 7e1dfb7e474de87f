"""The scaling page's table and figure from the tables of several `attnphase scaling --plot`
runs (docs/scaling.md §3): the linear family at its settings and the simplex family at its
cheaper ones. The rows are concatenated (a row of a later table replaces the same L, omega
and encodings of an earlier one) and drawn by `attnphase.figures.scaling.scaling_figure`. At
L = 2 both families are the paper's model (encodings (+1, -1), rank 1), so a simplex curve
without its own L = 2 row starts from the linear one at its omega.

    python studies/scaling_figure.py DIR1/scaling.csv DIR2/scaling.csv --out docs/scaling.png
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from attnphase.figures.scaling import scaling_figure
from attnphase.sweep.run import write_table

KEY = ["L", "omega", "encodings"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tables", nargs="+", type=Path, help="scaling.csv files, later ones win")
    ap.add_argument("--out", type=Path, required=True, help="the figure (PNG; its CSV beside)")
    args = ap.parse_args()
    df = pd.concat([pd.read_csv(t) for t in args.tables], ignore_index=True)
    df = df.drop_duplicates(KEY, keep="last")
    simplex = set(df.loc[df["encodings"] == "simplex", "omega"])
    shared = df[(df["L"] == 2) & (df["encodings"] == "linear") & df["omega"].isin(simplex)]
    df = pd.concat([df, shared.assign(encodings="simplex")], ignore_index=True)
    df = df.drop_duplicates(KEY, keep="first").sort_values(["encodings", "omega", "L"])
    write_table(df, args.out.with_suffix(".csv"))
    scaling_figure(df, args.out)
    print(f"{len(df)} rows -> {args.out} and {args.out.with_suffix('.csv')}")


if __name__ == "__main__":
    main()
