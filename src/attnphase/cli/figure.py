"""`attnphase figure` and `attnphase demo`: the paper's figures."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ..tables import render
from .app import app
from .common import UsageError, _fail, _usage, check_outputs, figure_files
from .histogram import HISTOGRAM_COLUMNS
from .theory import THEORY_COLUMNS


@app.command()
def figure(
    name: Annotated[str, typer.Argument(help="fig2 | fig3 | finite-size")],
    out: Annotated[Path, typer.Option(help="output directory (PNG, PDF, sweep stores)")] = Path(
        "results"
    ),
    full: Annotated[bool, typer.Option(help="paper-sized runs instead of quick ones")] = False,
    workers: Annotated[int, typer.Option(help="local processes for the simulations")] = 2,
) -> None:
    """Draw one of the paper's figures (its simulations resume from the stores in --out)."""
    from ..figures import FIGURES, MAKERS

    try:
        if name not in FIGURES:
            raise UsageError(f"NAME must be one of {FIGURES}, got {name!r}")
        if workers < 1:
            raise UsageError(f"--workers must be >= 1, got {workers}")
        stem = out / name.replace("-", "_")
        check_outputs({"--out": figure_files(stem.with_suffix(".png"), "--out")}, {"--out": [out]})
    except UsageError as err:
        _fail(err)
    from ..sweep import SweepError

    try:
        MAKERS[name](out, quick=not full, workers=workers)
    except SweepError as err:  # e.g. a store in --out from an older attnphase
        _fail(err)
    typer.echo(f"wrote {out / name.replace('-', '_')}.png and .pdf")


TABLE_COLUMNS = {
    "theory": THEORY_COLUMNS,
    "transitions": [
        "omega",
        "alpha_c",
        "alpha_c_err",
        "alpha_l",
        "alpha_l_err",
        "spinodal_semantic",
    ],
    "histogram": HISTOGRAM_COLUMNS,
}


@app.command()
def demo(
    out: Annotated[Path, typer.Option(help="output directory")] = Path("results"),
    num: Annotated[int, typer.Option(help="number of alpha points in [0.1, 2] (>= 2)")] = 20,
    full: Annotated[bool, typer.Option(help="paper-sized figures (much longer)")] = False,
) -> None:
    """The paper in one command: learning curves of both branches for alpha in [0.1, 2]
    (results/theory.csv, fig2_theory.png), alpha_c and alpha_l for omega in {0.1, 0.3, 0.5}
    (transitions.csv), a small empirical phase diagram (d=100, 5 x 3 grid) with the theory
    lines (fig3.png), and the histogram task in its quick mode (histogram.csv,
    histogram_attention.png, histogram_training.png). --full: 10 omegas, a 10 x 10 diagram at
    d=500 and the 10-run histogram comparison (hours)."""
    from ..demo import check_demo, run_demo
    from ..histogram import CheckpointError
    from ..sweep import SweepError

    try:
        check_demo(out, num)
    except ValueError as err:
        _fail(_usage(err))

    from ..figures import QUICK_NOTE

    def show(name: str, table) -> None:
        columns = [c for c in TABLE_COLUMNS[name] if c in table]
        typer.echo(render(table.to_dict("records"), "table", columns))
        if name == "transitions" and not full:
            typer.echo(f"note: {QUICK_NOTE}")

    try:
        run_demo(out, full=full, num=num, progress=sys.stderr.isatty(), report=show)
    except (CheckpointError, SweepError) as err:
        _fail(err)
    except OSError as err:
        _fail(f"--out: the tables above are complete, but writing the rest failed: {err}", code=1)
    typer.echo(
        f"wrote theory.csv, fig2_theory.png, transitions.csv, fig3.png/.pdf, histogram.csv, "
        f"histogram_attention.png, histogram_training.png in {out}"
    )
