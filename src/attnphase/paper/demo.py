"""The paper in one call (`attnphase demo`): learning curves of both branches, the transition
lines, a small empirical phase diagram, and the histogram task, written under one directory.

Each stage writes its table (CSV, atomically) before drawing its figure, and hands the table to
`report` as soon as it exists, so a failing figure never loses a computed result.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..io import check_output_dir, check_output_file
from ..params import ModelParams, check_int
from ..sweep import SweepError, check_store, write_table

ALPHA_RANGE = (0.1, 2.0)
REPORTED_OMEGAS = (0.1, 0.2, 0.3, 0.4)
# the spinodal lines cost 50-430 SE map evaluations a point against 20-50 for these
DEMO_LINES = ("alpha_c", "alpha_l")
TABLES = ("theory.csv", "transitions.csv", "histogram.csv")
FIGURES = ("fig2_theory", "fig3", "histogram_attention", "histogram_training")
CHECKPOINTS = "histogram-checkpoints"
LINES_STORE = "transitions.sqlite"


@dataclass(frozen=True)
class DemoResult:
    """The demo's tables: theory points (one row per branch and alpha), transition lines (one
    row per omega, `transition_table`'s columns) and the histogram summaries (one row per
    model)."""

    theory: pd.DataFrame
    transitions: pd.DataFrame
    histogram: pd.DataFrame


def output_files(out: str | Path) -> list[Path]:
    """Every file the demo writes directly under `out` (sweep stores of fig3 aside)."""
    out = Path(out)
    figures = [out / f"{name}.{ext}" for name in FIGURES for ext in ("png", "pdf")]
    return [out / name for name in TABLES] + figures + [out / LINES_STORE]


MAX_NUM = 1000  # alphas of the demo's curves: 1000 take about 20 min


def check_demo(out: str | Path, num: int) -> None:
    """Raise ValueError naming the parameter unless `num` >= 2 alphas, every output location
    under `out` can be written and a transitions store there is sound; creates nothing."""
    check_int("num", num, minimum=2)
    if num > MAX_NUM:
        raise ValueError(
            f"num must be <= {MAX_NUM} (each alpha is a fixed point of each branch, about 1.3 s "
            f"together), got {num}"
        )
    check_output_dir(out, "out")
    check_output_dir(Path(out) / CHECKPOINTS, "out")
    for path in output_files(out):
        check_output_file(path, "out")
    try:
        check_store(Path(out) / LINES_STORE)
    except SweepError as err:
        raise ValueError(f"out: {err}") from None


def run_demo(
    out: str | Path,
    full: bool = False,
    num: int = 20,
    progress: bool = False,
    report: Callable[[str, pd.DataFrame], None] | None = None,
) -> DemoResult:
    """Quick (default) or paper-sized (`full`) demo into `out`; `report(name, table)` is called
    with "theory", "transitions" (the rows at REPORTED_OMEGAS) and "histogram" as each table
    is written. The alpha_c and alpha_l lines are followed by continuation at the default
    accuracy over `recipes.line_omegas`, resumable through out/transitions.sqlite."""
    from ..figures.curves import learning_curves
    from ..figures.histogram import attention_figure, training_figure
    from ..histogram import HistogramConfig, run_histogram
    from ..theory import learning_curves as theory_learning_curves
    from .common import grid
    from .recipes import line_omegas, make_fig3

    check_demo(out, num)
    out = Path(out)
    announce = report or (lambda name, table: None)
    p = ModelParams()

    curves = theory_learning_curves(grid(*ALPHA_RANGE, num), p, progress=progress)
    theory = pd.DataFrame([r.as_dict() for r in curves])
    write_table(theory, out / "theory.csv")
    announce("theory", theory)
    learning_curves(theory, out / "fig2_theory.png")

    from ..transitions.table import transition_table

    lines = transition_table(
        p,
        line_omegas(not full),
        store=out / LINES_STORE,
        lines=DEMO_LINES,
        workers=2,
        progress=progress,
    )
    write_table(lines, out / "transitions.csv")
    announce("transitions", lines[lines["omega"].round(9).isin(REPORTED_OMEGAS)])
    make_fig3(out, quick=not full, lines=lines)

    cfg = HistogramConfig() if full else HistogramConfig.quick()
    result = run_histogram(cfg, out / CHECKPOINTS, progress=progress)
    histogram = pd.DataFrame(result.summaries())
    write_table(histogram, out / "histogram.csv")
    announce("histogram", histogram)
    attention_figure(result, out / "histogram_attention.png")
    training_figure(result, out / "histogram_training.png")
    return DemoResult(theory, lines, histogram)
