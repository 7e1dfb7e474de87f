"""Command-line interface `attnphase` (typer). Bad input exits with code 2 and a message naming
the parameter; results are printed or written only after every point has been computed."""

from __future__ import annotations

import os
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import numpy as np
import typer

from .params import ModelParams, check_positive
from .tables import FORMATS, render, to_frame
from .theory import BRANCHES, DEFAULT_ORDER, branch_curves

app = typer.Typer(
    help="Positional vs semantic learning in a solvable model of dot-product attention.",
    no_args_is_help=True,
    add_completion=False,
)

THEORY_COLUMNS = [
    "branch",
    "alpha",
    "q",
    "m",
    "V",
    "theta",
    "test_error",
    "train_loss",
    "linear_test_error",
    "kind",
    "converged",
    "iterations",
]


OmegaOpt = Annotated[float, typer.Option(help="mix of positional target, in [0, 1]")]
SigmaOpt = Annotated[float, typer.Option(help="token standard deviation (> 0)")]
LamOpt = Annotated[float, typer.Option(help="l2 regularisation lambda (>= 0)")]
AOpt = Annotated[str, typer.Option("--A", help="positional target a11,a12,a21,a22")]
FormatOpt = Annotated[str, typer.Option("--format", help="table|csv|json")]
AlphaOpt = Annotated[str, typer.Option(help="value, list a,b,c or start:stop:num")]
STANDARD_A_TEXT = "0.6,0.4,0.4,0.6"


class UsageError(ValueError):
    """Bad command-line input (exit code 2)."""


def _usage(err: ValueError) -> UsageError:
    """A model's ValueError ("name must ...") as a UsageError naming the option --name."""
    name = str(err).split()[0].replace("_", "-")
    return UsageError(f"--{name}: {err}")


def parse_alphas(text: str) -> list[float]:
    """A value, a comma-separated list, or start:stop:num (inclusive, num points)."""
    try:
        if ":" in text:
            start, stop, num = text.split(":")
            n = int(num)
            if n < 1:
                raise ValueError
            values = list(np.linspace(float(start), float(stop), n))
        else:
            values = [float(v) for v in text.split(",")]
    except ValueError:
        raise UsageError(
            f"--alpha must be a value, a comma-separated list or start:stop:num, got {text!r}"
        ) from None
    for v in values:
        try:
            check_positive("alpha", v)
        except ValueError as err:
            raise UsageError(f"--alpha: {err}") from None
    return values


def parse_order(text: str) -> tuple[int, int]:
    """'64,24' -> (64, 24); '32' -> (32, 32)."""
    try:
        parts = [int(v) for v in text.split(",")]
    except ValueError:
        parts = []
    if len(parts) == 1:
        parts *= 2
    if len(parts) != 2 or min(parts) < 2:
        raise UsageError(f"--order must be n or n_xi,n_y with integers >= 2, got {text!r}")
    return parts[0], parts[1]


def parse_matrix(text: str) -> tuple[float, ...]:
    try:
        vals = tuple(float(v) for v in text.split(","))
    except ValueError:
        vals = ()
    if len(vals) != 4:
        raise UsageError(f"--A must be four numbers a11,a12,a21,a22, got {text!r}")
    return vals


def build_params(omega: float, sigma: float, lam: float, A: str) -> ModelParams:
    try:
        return ModelParams(omega=omega, sigma=sigma, lam=lam, A=parse_matrix(A))
    except ValueError as err:
        raise _usage(err) from None


def write_atomic(path: Path, text: str) -> None:
    """Write text to path via a temporary file and a rename: never a partial file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w") as fh:
        fh.write(text + "\n")
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp files are private; results are ordinary files
    os.replace(tmp, path)


def _fail(err: Exception) -> None:
    typer.secho(f"error: {err}", err=True, fg=typer.colors.RED)
    raise typer.Exit(code=2)


def run_theory(
    alphas: list[float],
    p: ModelParams,
    branches: list[str],
    order: tuple[int, int],
    progress: bool = False,
) -> list[dict]:
    return [r.as_dict() for r in branch_curves(alphas, p, branches, order, progress)]


@app.command()
def theory(
    alpha: AlphaOpt = "0.1:2:20",
    omega: OmegaOpt = 0.3,
    sigma: SigmaOpt = 0.5,
    lam: LamOpt = 0.01,
    A: AOpt = STANDARD_A_TEXT,
    branch: Annotated[str, typer.Option(help="semantic|positional|trivial|all")] = "all",
    order: Annotated[str, typer.Option(help="Gauss-Hermite orders n_xi,n_y")] = ",".join(
        map(str, DEFAULT_ORDER)
    ),
    format: FormatOpt = "table",
    plot: Annotated[Path | None, typer.Option(help="write the Fig. 2 learning curves here")] = None,
) -> None:
    """State-evolution fixed points along alpha (THEORY.md §3-§4)."""
    try:
        alphas = parse_alphas(alpha)
        p = build_params(omega, sigma, lam, A)
        orders = parse_order(order)
        if branch != "all" and branch not in BRANCHES:
            raise UsageError(f"--branch must be one of {BRANCHES + ('all',)}, got {branch!r}")
        if format not in FORMATS:
            raise UsageError(f"--format must be one of {FORMATS}, got {format!r}")
    except UsageError as err:
        _fail(err)
    branches = list(BRANCHES) if branch == "all" else [branch]
    records = run_theory(alphas, p, branches, orders, progress=sys.stderr.isatty())
    if plot is not None:
        from .plots import learning_curves

        learning_curves(to_frame(records), plot)
    typer.echo(render(records, format, THEORY_COLUMNS))


SIM_COLUMNS = [
    "alpha",
    "init",
    "seed",
    "test_error",
    "train_loss",
    "q",
    "m",
    "theta",
    "linear_test_error",
    "converged",
    "steps",
    "seconds",
]


def _simulate_group(args: tuple) -> list[dict]:
    """One (alpha, init) group over all seeds, in a worker process with its own thread count."""
    import torch

    from .sim import SimConfig, simulate

    cfg_kwargs, seeds, threads = args
    torch.set_num_threads(threads)
    return [r.as_dict() for r in simulate(SimConfig(**cfg_kwargs), seeds)]


def run_simulations(groups: list[dict], seeds: list[int], workers: int, threads: int) -> list[dict]:
    """Run the groups (in parallel processes when workers > 1), with a progress bar."""
    from tqdm.auto import tqdm

    jobs = [(g, seeds, threads) for g in groups]
    bar = tqdm(total=len(jobs), desc="simulate", unit="point", disable=not sys.stderr.isatty())
    results: list[list[dict]] = []
    if workers <= 1:
        for job in jobs:
            results.append(_simulate_group(job))
            bar.update()
    else:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(workers, mp_context=mp.get_context("spawn")) as pool:
            for res in pool.map(_simulate_group, jobs):
                results.append(res)
                bar.update()
    bar.close()
    return [rec for group in results for rec in group]


@app.command()
def simulate(
    d: Annotated[int, typer.Option(help="dimension d (>= 1)")] = 1000,
    alpha: AlphaOpt = "0.5:2:7",
    omega: OmegaOpt = 0.3,
    sigma: SigmaOpt = 0.5,
    lam: LamOpt = 0.01,
    lam_linear: Annotated[float | None, typer.Option(help="baseline ridge (default: lam)")] = None,
    A: AOpt = STANDARD_A_TEXT,
    init: Annotated[
        str, typer.Option(help="comma list of semantic,positional,random")
    ] = "semantic,positional",
    seeds: Annotated[int, typer.Option(help="number of seeds (teacher, data, test, start)")] = 5,
    optimizer: Annotated[str, typer.Option(help="gd|adam|lbfgs")] = "lbfgs",
    lr: Annotated[float | None, typer.Option(help="learning rate (default per optimizer)")] = None,
    steps: Annotated[int | None, typer.Option(help="maximum steps (default 5000)")] = None,
    n_test: Annotated[int, typer.Option(help="test-set size")] = 10_000,
    dtype: Annotated[str, typer.Option(help="float64|float32")] = "float64",
    workers: Annotated[int, typer.Option(help="parallel processes")] = 1,
    threads: Annotated[int, typer.Option(help="torch threads per process")] = 1,
    format: FormatOpt = "table",
    plot: Annotated[Path | None, typer.Option(help="overlay on the theory curves (Fig. 2)")] = None,
) -> None:
    """Train the finite-d model (THEORY.md §1) and report one row per (alpha, init, seed)."""
    from .sim import SimConfig

    try:
        alphas = parse_alphas(alpha)
        p = build_params(omega, sigma, lam, A)
        inits = [s.strip() for s in init.split(",") if s.strip()]
        if format not in FORMATS:
            raise UsageError(f"--format must be one of {FORMATS}, got {format!r}")
        if seeds < 1:
            raise UsageError(f"--seeds must be >= 1, got {seeds}")
        if workers < 1 or threads < 1:
            raise UsageError("--workers and --threads must be >= 1")
        groups = []
        for a in alphas:
            for i in inits:
                kw = dict(
                    d=d,
                    alpha=a,
                    omega=p.omega,
                    sigma=p.sigma,
                    lam=p.lam,
                    A=p.A,
                    init=i,
                    optimizer=optimizer,
                    lr=lr,
                    steps=steps,
                    lam_linear=lam_linear,
                    n_test=n_test,
                    dtype=dtype,
                )
                try:
                    SimConfig(**kw)
                except ValueError as err:
                    raise _usage(err) from None
                groups.append(kw)
    except UsageError as err:
        _fail(err)
    records = run_simulations(groups, list(range(seeds)), workers, threads)
    if plot is not None:
        from .plots import simulation_overlay

        theory = run_theory(
            sorted(set(alphas)), p, ["semantic", "positional"], DEFAULT_ORDER, progress=False
        )
        simulation_overlay(to_frame(theory), to_frame(records), plot)
    typer.echo(render(records, format, SIM_COLUMNS))


@app.command()
def transition(
    omega: OmegaOpt = 0.3,
    sigma: SigmaOpt = 0.5,
    lam: LamOpt = 0.01,
    A: AOpt = STANDARD_A_TEXT,
    alpha_min: Annotated[float, typer.Option(help="lower end of the alpha range")] = 0.2,
    alpha_max: Annotated[float, typer.Option(help="upper end of the alpha range")] = 2.5,
    num: Annotated[int, typer.Option(help="alpha grid points for the branch scans")] = 24,
    order: Annotated[str, typer.Option(help="Gauss-Hermite orders n_xi,n_y")] = ",".join(
        map(str, DEFAULT_ORDER)
    ),
    check_order: Annotated[
        str, typer.Option(help="second order, for the error estimate")
    ] = "48,16",
    format: FormatOpt = "table",
) -> None:
    """alpha_c (positional -> semantic global minimum), alpha_l (attention beats the linear
    baseline) with error estimates, and the spinodals (THEORY.md §5)."""
    from .transitions import find_transitions

    try:
        p = build_params(omega, sigma, lam, A)
        orders = parse_order(order), parse_order(check_order)
        if format not in FORMATS:
            raise UsageError(f"--format must be one of {FORMATS}, got {format!r}")
        if not 0 < alpha_min < alpha_max or not np.isfinite(alpha_max):
            raise UsageError(
                f"--alpha-min/--alpha-max: need 0 < min < max, got {alpha_min}, {alpha_max}"
            )
        if num < 3:
            raise UsageError(f"--num must be >= 3, got {num}")
    except UsageError as err:
        _fail(err)
    res = find_transitions(
        p, alpha_min=alpha_min, alpha_max=alpha_max, num=num, order=orders[0], check_order=orders[1]
    )
    typer.echo(render([res.as_dict()], format))


@app.command()
def sweep(
    kind: Annotated[str, typer.Option(help="theory|simulation")] = "theory",
    grid: Annotated[
        list[str], typer.Option(help="name=v1,v2 or name=start:stop:num (repeatable)")
    ] = None,
    set_: Annotated[list[str], typer.Option("--set", help="fixed name=value (repeatable)")] = None,
    store: Annotated[Path, typer.Option(help="SQLite results store (resumable)")] = Path(
        "results/sweep.sqlite"
    ),
    workers: Annotated[int, typer.Option(help="local processes (or Dask workers)")] = 2,
    dask_workers: Annotated[int, typer.Option(help="start a Dask LocalCluster of N")] = 0,
    scheduler: Annotated[str | None, typer.Option(help="Dask scheduler tcp://host:port")] = None,
    export: Annotated[Path | None, typer.Option(help="write the table (.csv or .parquet)")] = None,
    format: FormatOpt = "table",
) -> None:
    """Run a grid of theory points or simulations; finished points are kept in the store and
    skipped on rerun, errors are recorded per point."""
    from .sweep import KINDS, StoreError, SweepSpec, parse_grid, run_sweep

    try:
        if kind not in KINDS:
            raise UsageError(f"--kind must be one of {KINDS}, got {kind!r}")
        try:
            spec = SweepSpec(
                kind, parse_grid(grid or []), {k: v[0] for k, v in parse_grid(set_ or []).items()}
            )
        except ValueError as err:
            raise UsageError(f"--grid/--set: {err}") from None
        if export is not None and export.suffix not in (".csv", ".parquet"):
            raise UsageError(f"--export must end in .csv or .parquet, got {export}")
        if format not in FORMATS:
            raise UsageError(f"--format must be one of {FORMATS}, got {format!r}")
    except UsageError as err:
        _fail(err)
    backend = (
        "dask" if (dask_workers > 0 or scheduler) else ("process" if workers > 1 else "serial")
    )
    try:
        df = run_sweep(
            spec, store, backend=backend, workers=dask_workers or workers, scheduler=scheduler
        )
    except StoreError as err:
        _fail(err)
    if export is not None:
        export.parent.mkdir(parents=True, exist_ok=True)
        tmp = export.with_name(f".{export.name}.tmp")
        df.to_parquet(tmp) if export.suffix == ".parquet" else df.to_csv(tmp, index=False)
        os.replace(tmp, export)
    typer.echo(render(df.to_dict("records"), format))


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
    from .figures import FIGURES, MAKERS

    if name not in FIGURES:
        _fail(UsageError(f"NAME must be one of {FIGURES}, got {name!r}"))
    if workers < 1:
        _fail(UsageError(f"--workers must be >= 1, got {workers}"))
    MAKERS[name](out, quick=not full, workers=workers)
    typer.echo(f"wrote {out / name.replace('-', '_')}.png and .pdf")


HISTOGRAM_COLUMNS = [
    "model",
    "runs",
    "epochs",
    "seconds",
    "val_accuracy_mean",
    "val_accuracy_std",
    "accuracy_after_mean",
    "distance_mean",
    "noise_distance_mean",
    "mechanism_score_before",
    "mechanism_score_after",
]


@app.command()
def histogram(
    runs: Annotated[int | None, typer.Option(help="runs per model [10; quick 3]")] = None,
    epochs: Annotated[int | None, typer.Option(help="maximum Adam epochs [20; quick 6]")] = None,
    quick: Annotated[bool, typer.Option(help="3 runs, <= 6 epochs, stop at 95%")] = False,
    format: FormatOpt = "table",
    plot: Annotated[Path | None, typer.Option(help="write attention/training figures here")] = None,
    checkpoint: Annotated[
        Path, typer.Option(help="checkpoint directory (an interrupted run resumes from it)")
    ] = Path("histogram-checkpoints"),
    target_accuracy: Annotated[
        float | None,
        typer.Option(help="stop once every run reaches it; 0: never [0.999; quick 0.95]"),
    ] = None,
    batch_size: Annotated[int | None, typer.Option(help="minibatch size [64]")] = None,
    lr: Annotated[float | None, typer.Option(help="Adam learning rate [3e-3]")] = None,
    schedule: Annotated[str | None, typer.Option(help="cosine | constant [cosine]")] = None,
    retrain_epochs: Annotated[int | None, typer.Option(help="SGD epochs [20; quick 2]")] = None,
    retrain_lr: Annotated[float | None, typer.Option(help="SGD learning rate [1e-2]")] = None,
    noise: Annotated[float | None, typer.Option(help="std of the perturbation [1e-3]")] = None,
    seed: Annotated[int, typer.Option(help="seed of data, initialisations and order")] = 0,
    device: Annotated[str, typer.Option(help="auto | cpu | cuda")] = "auto",
) -> None:
    """The histogram (counting) task (paper, Appendix A, Table 1): restricted positional and
    semantic transformers, the unfreeze-and-retrain check, mechanism scores."""
    from .histogram import CheckpointError, config_from, run_histogram

    try:
        if format not in FORMATS:
            raise UsageError(f"--format must be one of {FORMATS}, got {format!r}")
        if device not in ("auto", "cpu", "cuda"):
            raise UsageError(f"--device must be auto, cpu or cuda, got {device!r}")
        if device == "cuda":
            import torch

            if not torch.cuda.is_available():
                raise UsageError("--device cuda: CUDA is not available on this machine")
        for name, path in (("--checkpoint", checkpoint), ("--plot", plot)):
            if path is not None and path.exists() and not path.is_dir():
                raise UsageError(f"{name} must be a directory, {path} is a file")
        try:
            cfg = config_from(
                quick,
                runs=runs,
                epochs=epochs,
                target_accuracy=None if target_accuracy == 0 else target_accuracy,
                batch_size=batch_size,
                lr=lr,
                schedule=schedule,
                retrain_epochs=retrain_epochs,
                retrain_lr=retrain_lr,
                noise=noise,
                seed=seed,
            )
            if target_accuracy == 0:
                cfg = replace(cfg, target_accuracy=None)
        except ValueError as err:
            raise _usage(err) from None
        result = run_histogram(cfg, checkpoint, device, progress=sys.stderr.isatty())
    except (UsageError, CheckpointError, FloatingPointError) as err:
        _fail(err)
    if plot is not None:
        from .histogram.figures import attention_figure, training_figure

        attention_figure(result, plot / "histogram_attention.png")
        training_figure(result, plot / "histogram_training.png")
    typer.echo(render(result.summaries(), format, HISTOGRAM_COLUMNS))


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
    from .figures import make_fig3, transition_lines
    from .plots import learning_curves

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
    from .histogram import HistogramConfig, run_histogram
    from .histogram.figures import attention_figure, training_figure

    cfg = HistogramConfig() if full else HistogramConfig.quick()
    result = run_histogram(cfg, out / "histogram-checkpoints", progress=sys.stderr.isatty())
    records = result.summaries()
    write_atomic(out / "histogram.csv", to_frame(records).to_csv(index=False).rstrip("\n"))
    attention_figure(result, out / "histogram_attention.png")
    training_figure(result, out / "histogram_training.png")
    typer.echo(render(records, "table", HISTOGRAM_COLUMNS))
