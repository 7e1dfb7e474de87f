"""run_grid: serial and pooled runs agree, thread counts stay where the work runs, bad grids are
rejected before anything runs, and workers die with their parent."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import psutil
import pytest
import torch

import attnphase.sim.grid as grid
from attnphase.sim import SimConfig, run_grid, torch_threads

CONFIGS = [SimConfig(d=30, alpha=1.0, init=i, n_test=200) for i in ("semantic", "positional")]


def _numbers(results):
    return [r.as_dict() | {"batch_seconds": 0} for r in results]


def test_pool_and_serial_give_identical_results_in_order():
    before = torch.get_num_threads()
    serial = run_grid(CONFIGS, [0, 1], workers=1)
    pooled = run_grid(CONFIGS, [0, 1], workers=2)
    assert [(r.init, r.seed) for r in serial] == [
        (i, s) for i in ("semantic", "positional") for s in (0, 1)
    ]
    assert _numbers(pooled) == _numbers(serial)  # one thread each: bit-identical
    assert torch.get_num_threads() == before  # the pool never touched the caller's threads


def test_serial_path_sets_threads_only_for_the_call(monkeypatch):
    seen = []

    def record(cfg, seeds):
        seen.append(torch.get_num_threads())
        return []

    monkeypatch.setattr(grid, "simulate", record)
    with torch_threads(1):
        run_grid(CONFIGS, [0], workers=1, threads=2)
        assert seen == [2, 2]
        assert torch.get_num_threads() == 1


def test_serial_path_restores_threads_after_an_error(monkeypatch):
    def fail(cfg, seeds):
        raise RuntimeError("boom")

    monkeypatch.setattr(grid, "simulate", fail)
    with torch_threads(1):
        with pytest.raises(RuntimeError, match="boom"):
            run_grid(CONFIGS, [0], threads=2)
        assert torch.get_num_threads() == 1


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"workers": 0}, "^workers"),
        ({"threads": 0}, "^threads"),
        ({"threads": 1.5}, "^threads"),
        # more threads or processes than the cores allow slow every job beside this one
        ({"threads": 1000}, "^threads: 1000 threads on .* usable core"),
        ({"workers": 1000}, "^workers: 1000 local processes on"),
        ({"seeds": []}, "^seeds must not be empty"),
        ({"seeds": [-1]}, "^seeds"),
        ({"configs": [{"d": 10}]}, "^configs"),
    ],
)
def test_bad_grid_is_rejected_before_anything_runs(monkeypatch, kwargs, match):
    def never(cfg, seeds):
        raise AssertionError("simulated before the grid was checked")

    monkeypatch.setattr(grid, "simulate", never)
    args = {"configs": CONFIGS, "seeds": [0]} | kwargs
    with pytest.raises(ValueError, match=match):
        run_grid(**args)


PARENT = textwrap.dedent(
    """
    from attnphase.sim import SimConfig, run_grid
    # runs that never end on their own: GD with a tiny step and an unreachable tolerance
    cfg = SimConfig(d=20, alpha=1.0, optimizer="gd", lr=1e-12, steps=10**9, gtol=1e-300,
                    n_test=10)
    run_grid([cfg, cfg], [0], workers=2)
    """
)


def test_workers_die_with_a_killed_parent():
    parent = subprocess.Popen([sys.executable, "-c", PARENT])
    try:
        proc = psutil.Process(parent.pid)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            children = proc.children(recursive=True)
            workers = [c for c in children if "spawn_main" in " ".join(c.cmdline())]
            if len(workers) == 2:
                break
            time.sleep(0.2)
        assert len(workers) == 2, "workers did not start"
        time.sleep(1.0)  # the workers are inside their (endless) tasks, or still importing
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        # a worker still importing torch exits when its initializer runs: on a quiet machine
        # within a second, but 10 s were not enough with two test suites on the two cores
        gone, alive = psutil.wait_procs(children, timeout=60)
        assert alive == [], f"orphans left: {[p.pid for p in alive]}"
    finally:
        if parent.poll() is None:
            parent.kill()
