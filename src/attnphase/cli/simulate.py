"""`attnphase simulate`: finite-d simulations of the model."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ..tables import FORMATS, render, to_frame
from ..theory import DEFAULT_ORDER
from .app import app
from .common import (
    STANDARD_A_TEXT,
    AlphaOpt,
    AOpt,
    FormatOpt,
    LamOpt,
    OmegaOpt,
    SigmaOpt,
    UsageError,
    _fail,
    _usage,
    build_params,
    parse_alphas,
)
from .theory import run_theory

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

    from ..sim import SimConfig, simulate

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
    from ..sim import SimConfig

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
        from ..plots import simulation_overlay

        theory = run_theory(
            sorted(set(alphas)), p, ["semantic", "positional"], DEFAULT_ORDER, progress=False
        )
        simulation_overlay(to_frame(theory), to_frame(records), plot)
    typer.echo(render(records, format, SIM_COLUMNS))
