"""`attnphase figure` and `attnphase demo`: the paper's figures."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import numpy as np
import typer

from ..params import ModelParams
from ..tables import render, to_frame
from ..theory import DEFAULT_ORDER
from .app import app
from .common import UsageError, _fail, write_atomic
from .histogram import HISTOGRAM_COLUMNS
from .theory import THEORY_COLUMNS, run_theory


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

    if name not in FIGURES:
        _fail(UsageError(f"NAME must be one of {FIGURES}, got {name!r}"))
    if workers < 1:
        _fail(UsageError(f"--workers must be >= 1, got {workers}"))
    MAKERS[name](out, quick=not full, workers=workers)
    typer.echo(f"wrote {out / name.replace('-', '_')}.png and .pdf")


@app.command()
def demo(
    out: Annotated[Path, typer.Option(help="output directory")] = Path("results"),
    num: Annotated[int, typer.Option(help="number of alpha points in [0.1, 2]")] = 20,
    full: Annotated[bool, typer.Option(help="paper-sized figures (much longer)")] = False,
) -> None:
    """The paper in one command: learning curves of both branches for alpha in [0.1, 2]
    (results/theory.csv, fig2_theory.png), alpha_c and alpha_l for omega in {0.1, 0.3, 0.5}
    (transitions.csv), a small empirical phase diagram (d=100, 5 x 3 grid) with the theory
    lines (fig3.png), and the histogram task in its quick mode (histogram.csv,
    histogram_attention.png, histogram_training.png). --full: 10 omegas, a 10 x 10 diagram at
    d=500 and the 10-run histogram comparison (hours)."""
    from ..figures import make_fig3, transition_lines
    from ..plots import learning_curves

    p = ModelParams()
    alphas = list(np.linspace(0.1, 2.0, num))
    records = run_theory(
        alphas, p, ["semantic", "positional"], DEFAULT_ORDER, progress=sys.stderr.isatty()
    )
    df = to_frame(records)
    write_atomic(out / "theory.csv", df.to_csv(index=False).rstrip("\n"))
    learning_curves(df, out / "fig2_theory.png")
    typer.echo(render(records, "table", THEORY_COLUMNS))
    omegas = [float(w) for w in np.linspace(0.1, 0.5, 3 if not full else 10)]
    lines = transition_lines(omegas, p, quick=not full)
    write_atomic(out / "transitions.csv", lines.to_csv(index=False).rstrip("\n"))
    typer.echo(
        render(
            lines.to_dict("records"),
            "table",
            ["omega", "alpha_c", "alpha_c_err", "alpha_l", "alpha_l_err", "spinodal_semantic"],
        )
    )
    make_fig3(out, quick=not full, lines=lines)
    _demo_histogram(out, full)
    typer.echo(
        f"wrote theory.csv, fig2_theory.png, transitions.csv, fig3.png/.pdf, histogram.csv, "
        f"histogram_attention.png, histogram_training.png in {out}"
    )


def _demo_histogram(out: Path, full: bool) -> None:
    from ..histogram import HistogramConfig, run_histogram
    from ..histogram.figures import attention_figure, training_figure

    cfg = HistogramConfig() if full else HistogramConfig.quick()
    result = run_histogram(cfg, out / "histogram-checkpoints", progress=sys.stderr.isatty())
    records = result.summaries()
    write_atomic(out / "histogram.csv", to_frame(records).to_csv(index=False).rstrip("\n"))
    attention_figure(result, out / "histogram_attention.png")
    training_figure(result, out / "histogram_training.png")
    typer.echo(render(records, "table", HISTOGRAM_COLUMNS))
