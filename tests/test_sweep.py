"""Sweeps: run ids, resume after SIGKILL, per-point errors, corrupt stores, Dask backend."""

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import pandas as pd
import pytest
from typer.testing import CliRunner

from attnphase.cli import app
from attnphase.sweep import ResultStore, StoreError, SweepSpec, parse_grid, run_id, run_sweep

THEORY = SweepSpec(
    "theory",
    {"alpha": [0.8, 1.2, 1.6, 2.0], "branch": ["semantic", "positional"]},
    {"order": [12, 6]},
)
NUMERIC = ["q", "m", "V", "theta", "test_error", "train_loss"]


def _table(df):
    return df.sort_values("run_id").set_index("run_id")


def test_run_ids_are_canonical_and_distinct():
    assert run_id("theory", {"alpha": 1, "omega": 0.3}) == run_id(
        "theory", {"omega": 0.3, "alpha": 1.0}
    )
    assert run_id("theory", {"alpha": 1.0}) != run_id("simulation", {"alpha": 1.0})
    assert run_id("theory", {"alpha": 1.0}) != run_id("theory", {"alpha": 1.0 + 1e-12})
    assert len({run_id(THEORY.kind, p) for p in THEORY.points()}) == 8


def test_grid_parsing_and_spec_checks():
    assert parse_grid(["alpha=1:2:3", "init=semantic,positional", "seed=0,1"]) == {
        "alpha": [1.0, 1.5, 2.0],
        "init": ["semantic", "positional"],
        "seed": [0, 1],
    }
    with pytest.raises(ValueError, match="name=values"):
        parse_grid(["alpha"])
    with pytest.raises(ValueError, match="kind"):
        SweepSpec("experiment")
    with pytest.raises(ValueError, match="both in grid and base"):
        SweepSpec("theory", {"alpha": [1.0]}, {"alpha": 2.0})


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    path = tmp_path_factory.mktemp("ref") / "ref.sqlite"
    return _table(run_sweep(THEORY, path, backend="serial", progress=False))


def test_sweep_killed_mid_run_resumes_with_nothing_lost_or_duplicated(tmp_path, uninterrupted):
    store = tmp_path / "killed.sqlite"
    script = textwrap.dedent(f"""
        from attnphase.sweep import SweepSpec, run_sweep
        spec = SweepSpec("theory", {THEORY.grid!r}, {THEORY.base!r})
        run_sweep(spec, {str(store)!r}, backend="serial", progress=False)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script])
    deadline = time.time() + 120
    rows = 0
    while time.time() < deadline and proc.poll() is None:
        if store.exists():
            try:
                with sqlite3.connect(store) as db:
                    rows = db.execute("SELECT COUNT(*) FROM results").fetchone()[0]
            except sqlite3.OperationalError:
                rows = 0
        if rows >= 2:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the sweep finished before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    with sqlite3.connect(store) as db:
        killed_rows = db.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    assert 2 <= killed_rows < 8
    resumed = _table(run_sweep(THEORY, store, backend="serial", progress=False))
    assert resumed.index.is_unique and len(resumed) == 8
    pd.testing.assert_frame_equal(resumed[NUMERIC], uninterrupted[NUMERIC])


def test_failing_point_is_recorded_and_the_others_finish(tmp_path):
    spec = SweepSpec("simulation", {"d": [40, 0]}, {"alpha": 1.0, "n_test": 200})
    df = run_sweep(spec, tmp_path / "s.sqlite", backend="serial", progress=False)
    ok = df[df["run_status"] == "ok"]
    bad = df[df["run_status"] == "error"]
    assert len(ok) == 1 and len(bad) == 1
    assert "d must be an integer >= 1" in bad["run_error"].iloc[0]
    assert ok["converged"].iloc[0] and ok["test_error"].iloc[0] > 0


def test_corrupt_store_gives_a_clear_error(tmp_path):
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="not an attnphase results store"):
        ResultStore(bad)
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE results (x INTEGER)")
    with pytest.raises(StoreError, match="columns"):
        ResultStore(other)
    res = CliRunner().invoke(app, ["sweep", "--grid", "alpha=1", "--store", str(bad)])
    assert res.exit_code == 2 and "not an attnphase results store" in res.output


def test_process_and_dask_backends_give_the_same_table(tmp_path, uninterrupted):
    proc = _table(
        run_sweep(THEORY, tmp_path / "p.sqlite", backend="process", workers=2, progress=False)
    )
    pd.testing.assert_frame_equal(proc[NUMERIC], uninterrupted[NUMERIC])
    pytest.importorskip("distributed")
    dask = _table(
        run_sweep(THEORY, tmp_path / "d.sqlite", backend="dask", workers=2, progress=False)
    )
    pd.testing.assert_frame_equal(dask[NUMERIC], uninterrupted[NUMERIC])
