"""The trend of the L table tested (docs/scaling.md §5): each transition of the committed table
rescaled by each count of `attnphase.scaling.trend.COUNTS`, how far it is from collapsing
printed and written beside the figure.

    python studies/scaling_trend.py [docs/scaling.csv] --out docs/scaling_trend.png
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from attnphase.figures.scaling import trend_figure
from attnphase.scaling.trend import collapse, rescaled
from attnphase.sweep.run import write_table


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("table", nargs="?", type=Path, default=Path("docs/scaling.csv"))
    ap.add_argument("--out", type=Path, required=True, help="the figure (PNG; its CSV beside)")
    args = ap.parse_args()
    df = pd.read_csv(args.table)
    summary = collapse(df)
    write_table(summary, args.out.with_suffix(".csv"))
    trend_figure(rescaled(df), summary, args.out)
    with pd.option_context("display.width", 200, "display.precision", 3):
        print(summary.to_string(index=False))
    print(f"-> {args.out} and {args.out.with_suffix('.csv')}")


if __name__ == "__main__":
    main()
