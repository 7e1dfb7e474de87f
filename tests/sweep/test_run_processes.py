"""Sweeps across processes: a SIGKILLed sweep resumes with only the missing points, two
concurrent sweeps on one store compute each point once, and the workers of a SIGKILLed sweep
(local processes or a Dask LocalCluster) die with it."""

import os
import re
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from attnphase.sweep import SweepSpec, run_sweep
from tests.sweep_points import counted, markers

ROOT = Path(__file__).resolve().parents[2]
ALPHAS = [0.25 * i for i in range(1, 13)]
SUMMARY = re.compile(r"(\d+) computed, (\d+) already stored, (\d+) failed")
pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads Linux sessions")


def _script(store: Path, backend: str = "serial", wait_for: Path | None = None) -> str:
    """A sweep over ALPHAS with the counting point function (optionally started only once
    every file in `wait_for` ... exists: a start line for concurrent runs)."""
    return textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        sys.path.insert(0, {str(ROOT)!r})
        from attnphase.sweep import SweepSpec, run_sweep
        from tests.sweep_points import counted
        gate = {str(wait_for) if wait_for else None!r}
        if gate:
            Path(gate, sys.argv[1]).touch()
            while len(list(Path(gate).iterdir())) < 2:
                time.sleep(0.01)
        spec = SweepSpec("theory", {{"alpha": {ALPHAS!r}}})
        run_sweep(spec, {str(store)!r}, backend={backend!r}, workers=2, progress=False,
                  evaluate_point=counted)
    """)


def _env(**values) -> dict:
    return {**os.environ, **{k: str(v) for k, v in values.items()}}


def _rows(store: Path, table: str) -> int:
    try:
        with sqlite3.connect(store, timeout=10) as db:
            return db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
    except sqlite3.OperationalError:  # not created yet
        return 0


def _wait(predicate, proc, seconds=120.0) -> None:
    deadline = time.time() + seconds
    while not predicate():
        assert proc.poll() is None, "the sweep ended before it could be killed"
        assert time.time() < deadline, "the sweep did not get going"
        time.sleep(0.05)


def _session(sid: int) -> list[psutil.Process]:
    """Live (non-zombie) processes of session `sid`."""
    out = []
    for proc in psutil.process_iter(["status"]):
        try:
            if os.getsid(proc.pid) == sid and proc.info["status"] != psutil.STATUS_ZOMBIE:
                out.append(proc)
        except (ProcessLookupError, PermissionError):
            pass
    return out


def _workers(parent: int) -> list[psutil.Process]:
    kids = psutil.Process(parent).children()
    return [p for p in kids if "spawn_main" in " ".join(p.cmdline())]


def _kill_and_check_session(proc: subprocess.Popen) -> None:
    """SIGKILL the session leader; no process of its session may survive 10 s."""
    assert len(_session(proc.pid)) >= 3  # the sweep and its workers
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.time() + 10.0
    while _session(proc.pid) and time.time() < deadline:
        time.sleep(0.2)
    left = _session(proc.pid)
    for p in left:
        p.kill()
    assert not left, f"left alive: {[' '.join(p.cmdline())[:80] for p in left]}"


def test_killed_sweep_reruns_only_the_missing_points(tmp_path):
    store = tmp_path / "s.sqlite"
    proc = subprocess.Popen(
        [sys.executable, "-c", _script(store)],
        env=_env(SWEEP_SLEEP=0.3, SWEEP_MARKERS=tmp_path),  # markers of the killed run: unused
    )
    _wait(lambda: _rows(store, "results") >= 3, proc)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    with sqlite3.connect(store) as db:
        kept = {r[0] for r in db.execute("SELECT json_extract(params, '$.alpha') FROM results")}
        held = db.execute("SELECT COUNT(*) FROM claims").fetchone()[0]
    assert 3 <= len(kept) < len(ALPHAS)
    rerun = tmp_path / "rerun"
    rerun.mkdir()
    os.environ["SWEEP_MARKERS"] = str(rerun)
    try:
        spec = SweepSpec("theory", {"alpha": ALPHAS})
        df = run_sweep(
            store=store, spec=spec, backend="serial", progress=False, evaluate_point=counted
        )
    finally:
        del os.environ["SWEEP_MARKERS"]
    missing = sorted(set(ALPHAS) - kept)
    assert df.attrs["summary"] == {"computed": len(missing), "stored": len(kept), "failed": 0}
    assert markers(rerun) == dict.fromkeys(missing, 1)  # each missing point once, nothing else
    assert sorted(df["alpha"]) == ALPHAS and df["run_id"].is_unique
    with sqlite3.connect(store) as db:
        statuses = dict(db.execute("SELECT status, COUNT(*) FROM attempts GROUP BY status"))
    # the point the killed run held (if any) was taken over from its dead owner
    assert statuses.get("abandoned", 0) == held <= 1
    assert _rows(store, "claims") == 0


def test_two_concurrent_sweeps_compute_each_point_once(tmp_path):
    store, gate, marks = tmp_path / "s.sqlite", tmp_path / "gate", tmp_path / "markers"
    gate.mkdir()
    marks.mkdir()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _script(store, wait_for=gate), name],
            env=_env(SWEEP_SLEEP=0.4, SWEEP_MARKERS=marks),
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("a", "b")
    ]
    outs = [p.communicate(timeout=300)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    counts = [tuple(map(int, SUMMARY.findall(err)[-1])) for err in outs]
    assert markers(marks) == dict.fromkeys(ALPHAS, 1)  # every point computed exactly once
    assert sum(c[0] for c in counts) == len(ALPHAS)
    assert all(c[0] + c[1] == len(ALPHAS) and c[2] == 0 for c in counts)
    assert all(c[0] > 0 for c in counts), f"the runs did not overlap: {counts}"


def test_workers_die_with_a_killed_sweep_command(tmp_path):
    store = tmp_path / "s.sqlite"
    cmd = [sys.executable, "-m", "attnphase", "sweep", "--kind", "simulation"]
    cmd += ["--set", "d=60", "--set", "n_test=500", "--seeds", "8", "--workers", "2"]
    proc = subprocess.Popen(
        [*cmd, "--store", str(store)],
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _wait(lambda: _rows(store, "results") >= 1 and len(_workers(proc.pid)) == 2, proc)
    _kill_and_check_session(proc)


def test_dask_workers_die_with_a_killed_sweep(tmp_path):
    store = tmp_path / "s.sqlite"
    proc = subprocess.Popen(
        [sys.executable, "-c", _script(store, backend="dask")],
        env=_env(SWEEP_SLEEP=60),
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _wait(lambda: _rows(store, "claims") == 2 and len(_workers(proc.pid)) == 2, proc)
    _kill_and_check_session(proc)
