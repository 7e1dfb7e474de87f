"""The thread pools' size: the usable cores (affinity, cgroup quota), the override, and the
user's own settings left alone."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from attnphase._core import threads


@pytest.mark.parametrize(
    "text,cores", [("max 100000", None), ("150000 100000", 2), ("50000 100000", 1), ("x", None)]
)
def test_the_cgroup_quota_in_cores_rounds_up(tmp_path, text, cores):
    cpu_max = tmp_path / "cpu.max"
    cpu_max.write_text(text + "\n")
    assert threads.cgroup_cores(cpu_max) == cores
    assert threads.cgroup_cores(tmp_path / "missing") is None


def test_the_override_wins_and_a_bad_one_warns(monkeypatch):
    monkeypatch.setenv(threads.OVERRIDE, "3")
    assert threads.usable_cores() == 3
    monkeypatch.setenv(threads.OVERRIDE, "zero")
    with pytest.warns(UserWarning, match="ATTNPHASE_THREADS='zero' is not an integer >= 1"):
        cores = threads.usable_cores()
    assert 1 <= cores <= len(os.sched_getaffinity(0))


def test_torch_and_numba_take_the_size_and_the_users_setting_wins():
    """In a fresh interpreter: ATTNPHASE_THREADS=1 gives torch and numba one thread each and a
    passive OpenMP; an explicit NUMBA_NUM_THREADS is kept."""
    code = (
        "import attnphase, os, torch, numba\n"
        "print(torch.get_num_threads(), numba.get_num_threads(), os.environ['OMP_WAIT_POLICY'])"
    )
    env = {**os.environ, threads.OVERRIDE: "1"}
    for name in (*threads.POOL_VARIABLES, "OMP_WAIT_POLICY"):
        env.pop(name, None)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.split() == ["1", "1", "PASSIVE"], out.stderr
    env["NUMBA_NUM_THREADS"] = "2"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.split()[1] == str(min(2, os.cpu_count() or 1)), out.stderr
