"""A grid of simulation configurations, each run for the same seeds, serially or in the package's
pool of worker processes (`attnphase._core.orphans.worker_pool`, also the sweeps' local backend).

Thread counts are set only where the work runs: each worker process sets its own torch thread count
once at start-up, and the serial path sets it for the duration of the call and restores the caller's
count afterwards. Workers exit on their own when the process that started them dies (even by
SIGKILL), so an interrupted grid never leaves idle processes behind.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import torch

from .._core.orphans import close_pool, worker_pool
from .._core.progress import progress_bar
from .._core.threads import check_processes, check_threads
from ..params import check_int
from .run import SimConfig, SimResult, simulate


@contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """torch uses n intra-op threads inside the block; the previous count is restored after."""
    previous = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def _run_one(job: tuple[SimConfig, list[int]]) -> list[SimResult]:
    cfg, seeds = job
    return simulate(cfg, seeds)


def check_grid(configs: Sequence[SimConfig], seeds: Sequence[int], workers: int, threads: int):
    """Raise ValueError naming the parameter on a bad grid, before anything runs."""
    for cfg in configs:
        if not isinstance(cfg, SimConfig):
            raise ValueError(f"configs must be SimConfig instances, got {type(cfg).__name__}")
    if len(seeds) == 0:
        raise ValueError("seeds must not be empty")
    for cfg in configs:  # before the seeds one by one: 1e8 of them are refused at once
        cfg.check_seeds(len(seeds))
    for s in seeds:
        check_int("seeds", s, minimum=0)  # as in simulate
    check_processes("workers", workers)
    check_threads("threads", threads)


def iter_grid(
    configs: Sequence[SimConfig],
    seeds: Sequence[int] = (0,),
    workers: int = 1,
    threads: int = 1,
    progress: bool = False,
) -> Iterator[list[SimResult]]:
    """`simulate(cfg, seeds)` for every configuration, yielding each configuration's results (one
    per seed) as soon as they are in, in configuration order. workers > 1: that many spawned
    processes with `threads` torch threads each; otherwise in this process with `threads` threads.
    The grid is checked before anything runs; stopping the iteration (an interrupt) cancels the
    configurations not yet started."""
    configs, seeds = list(configs), list(seeds)
    check_grid(configs, seeds, workers, threads)
    jobs = [(cfg, [int(s) for s in seeds]) for cfg in configs]
    with progress_bar(total=len(jobs), desc="simulate", unit="point", enabled=progress) as bar:
        if workers == 1 or len(jobs) <= 1:
            with torch_threads(threads):
                for job in jobs:
                    yield _run_one(job)
                    bar.update()
            return
        pool = worker_pool(min(workers, len(jobs)), threads)
        finished = False
        try:
            for res in pool.map(_run_one, jobs):
                yield res
                bar.update()
            finished = True
        finally:
            close_pool(pool, finished)  # stopped early: the workers at once


def run_grid(
    configs: Sequence[SimConfig],
    seeds: Sequence[int] = (0,),
    workers: int = 1,
    threads: int = 1,
    progress: bool = False,
) -> list[SimResult]:
    """All of `iter_grid` at once: results in configuration order, seeds within."""
    grid = iter_grid(configs, seeds, workers, threads, progress)
    return [r for batch in grid for r in batch]
