"""`attnphase figure` and `attnphase demo`: the paper's figures."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from .._core.interrupt import Interrupted
from .app import app
from .common import (
    UsageError,
    check_outputs,
    check_store_option,
    check_workers,
    fail,
    figure_files,
    show_progress,
    usage,
)
from .help import command_help
from .histogram import HISTOGRAM_COLUMNS
from .tables import render
from .theory import THEORY_COLUMNS
from .transition import TABLE_COLUMNS as TRANSITION_COLUMNS


@app.command(**command_help("figure"))
def figure(
    name: Annotated[
        str,
        typer.Argument(
            help="fig2 | fig3 | finite-size | fig7 | fig8 | fig9 | histogram | extensions | all"
        ),
    ],
    out: Annotated[Path, typer.Option(help="output directory (PNG, PDF, sweep stores)")] = Path(
        "results"
    ),
    full: Annotated[bool, typer.Option(help="paper-sized runs instead of quick ones")] = False,
    workers: Annotated[int, typer.Option(help="local processes for the simulations")] = 2,
) -> None:
    """Draw one of the paper's figures, or `all` of them but the histogram task's and the
    extensions' (simulations resume from the sweep stores in --out, theory from its cached
    tables)."""
    from ..paper.outputs import FIGURES, HISTOGRAM_CHECKPOINTS, output_stems

    try:
        if name not in (*FIGURES, "all"):
            raise UsageError(f"NAME: must be one of {(*FIGURES, 'all')}, got {name!r}")
        check_workers("--workers", workers)
        files = [
            path
            for stem in output_stems(name)
            for path in figure_files(out / f"{stem}.png", "--out")
        ]
        dirs = [out, out / HISTOGRAM_CHECKPOINTS] if name == "histogram" else [out]
        check_outputs({"--out": files}, {"--out": dirs})
        for store in sorted(out.glob("*.sqlite")) if out.is_dir() else []:
            check_store_option(store, "--out")  # a corrupt store, named before any work
    except UsageError as err:
        fail(err)
    if full:
        warn_full()
    from ..histogram import CheckpointError
    from ..paper.recipes import MAKERS, make_all
    from ..sweep import SweepError

    def done(fig: str, seconds: float) -> None:
        stems = ", ".join(f"{stem}.png" for stem in output_stems(fig))
        typer.echo(f"wrote {out}/{stems} and .pdf ({seconds:.0f} s)")

    try:
        if name == "all":
            make_all(out, quick=not full, workers=workers, report=done)
        else:
            start = time.perf_counter()
            MAKERS[name](out, quick=not full, workers=workers)
            done(name, time.perf_counter() - start)
    except (SweepError, CheckpointError) as err:  # e.g. a store in --out from an older attnphase
        fail(err)


# the measured reference of a paper-sized run (docs/figures.md): the full Fig. 3
FULL_NOTE = (
    "--full runs the paper's sizes: up to hours on a 2-core machine (the full Fig. 3 alone took "
    "19 min with --workers 2 on a quiet machine, 1 h 54 min with one worker beside other jobs, "
    "docs/figures.md); Ctrl-C keeps every finished stage and point, and the same command resumes"
)


def warn_full() -> None:
    """One line on stderr before a paper-sized run starts: what it costs, how to stop it."""
    typer.secho(f"warning: {FULL_NOTE}", err=True, fg="yellow")


TABLE_COLUMNS = {
    "theory": THEORY_COLUMNS,
    "transitions": ["omega", *TRANSITION_COLUMNS],
    "histogram": HISTOGRAM_COLUMNS,
}


@app.command(**command_help("demo"))
def demo(
    out: Annotated[Path, typer.Option(help="output directory")] = Path("results"),
    num: Annotated[int, typer.Option(help="number of alpha points in [0.1, 2] (>= 2)")] = 20,
    full: Annotated[bool, typer.Option(help="paper-sized figures (much longer)")] = False,
) -> None:
    """The paper in one command: learning curves of both branches for alpha in [0.1, 2]
    (results/theory.csv, fig2_theory.png), the transition lines by continuation over omega
    0.05..0.5 at the default accuracy (transitions.csv; the rows at omega 0.1-0.4 printed), a
    small empirical phase diagram (d=100, 5 x 3 grid) with the theory lines (fig3.png), and
    the histogram task in its quick mode (histogram.csv, histogram_attention.png,
    histogram_training.png). --full: 25 omegas, the paper's 25 x 25 diagram at d=1000 and the
    10-run histogram comparison (hours)."""
    from ..histogram import CheckpointError
    from ..paper.demo import check_demo, run_demo
    from ..sweep import SweepError

    try:
        check_demo(out, num)
    except ValueError as err:
        fail(usage(err))
    if full:
        warn_full()

    def show(name: str, table) -> None:
        columns = [c for c in TABLE_COLUMNS[name] if c in table]
        typer.echo(render(table.to_dict("records"), "table", columns))

    try:
        run_demo(out, full=full, num=num, progress=show_progress(), report=show)
    except KeyboardInterrupt:
        if not out.exists():
            raise Interrupted("nothing was kept: no stage had finished") from None
        raise Interrupted(
            f"the stages finished (printed above) and every stored point are kept in {out}; "
            "the same command resumes"
        ) from None
    except (CheckpointError, SweepError) as err:
        fail(err)
    except OSError as err:
        fail(f"--out: the tables above are complete, but writing the rest failed: {err}", code=1)
    typer.echo(
        f"wrote theory.csv, fig2_theory.png, transitions.csv, fig3.png/.pdf, histogram.csv, "
        f"histogram_attention.png, histogram_training.png in {out}"
    )
