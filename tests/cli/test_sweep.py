"""`attnphase sweep`: every bad input exits 2 with one line naming the parameter or option,
before any store or export file exists; good input runs, resumes and keeps multi-valued
parameters."""

import contextlib
import re
import socket
import sqlite3
import threading

import pandas as pd
import pytest
from typer.testing import CliRunner

from attnphase.cli import app
from attnphase.sweep import PARAMETERS, SweepSpec, run_sweep
from tests.sweep_points import counted

runner = CliRunner()

BAD = [
    (["--workers", "0", "--grid", "alpha=1"], "--workers: must be >= 1, got 0"),
    (["--dask-workers", "-1", "--grid", "alpha=1"], "--dask-workers: must be >= 0"),
    (["--kind", "experiment"], "--kind: must be one of"),
    (["--format", "xml", "--grid", "alpha=1"], "--format: must be one of"),
    (["--grid", "foo=1,2"], "--grid: unknown theory parameter 'foo'; valid: alpha, omega, sigma"),
    (["--grid", "alpha=1", "--grid", "alpha=2"], "--grid: alpha given twice"),
    # a value twice, also in another spelling: the same points again
    (["--grid", "alpha=1,1.0"], "--grid: alpha: '1.0' is given twice; give each value once"),
    (["--grid", "alpha=1", "--grid", "order=32,12;32,12"], "--grid: order: '32,12' is given twice"),
    (["--grid", "alpha"], "--grid: expected name=value"),
    (["--kind", "simulation", "--set", "d=abc"], "d must be an integer, got 'abc'"),
    (["--kind", "simulation", "--set", "d=0"], "d must be an integer >= 2, got 0"),
    (
        ["--kind", "simulation", "--set", "d=20", "--set", "device=cuda"],
        "--set: device='cuda': CUDA is not available on this machine",
    ),
    (
        ["--kind", "simulation", "--set", "d=20", "--set", "device=mps"],
        "--set: device must be 'cpu', 'cuda', 'cuda:N' or 'auto', got 'mps'",
    ),
    (
        ["--kind", "simulation", "--set", "d=20", "--set", "device=meta"],
        "--set: device must be 'cpu', 'cuda', 'cuda:N' or 'auto', got 'meta'",
    ),
    (["--grid", "alpha=nan"], "alpha must be finite, got 'nan'"),
    (["--grid", "alpha=1", "--set", "omega=1.5"], r"omega must lie in [0, 1], got 1.5"),
    (["--set", "alpha=1,2"], "--set: alpha takes one value here, got '1,2'"),
    (["--set", "alpha=1", "--set", "order=24,8,4"], "order must be n or n_xi,n_y"),
    (["--grid", "alpha=1", "--set", "A=1,2,3"], "A must be a square matrix"),
    (["--kind", "theory"], "alpha must be given in a theory sweep"),
    (["--grid", "alpha=1", "--seeds", "2"], "--seeds: theory points have no seed"),
    (["--kind", "simulation", "--seeds", "0"], "--seeds: must be >= 1, got 0"),
    (["--kind", "simulation", "--seeds", "2", "--grid", "seed=4"], "--seeds: give either"),
    (["--grid", "alpha=1", "--export", "{tmp}/out.txt"], "--export: must end in .csv or .parquet"),
    (["--grid", "alpha=1", "--export", "{tmp}/file/out.csv"], "--export: cannot write"),
    (["--grid", "alpha=1", "--store", "{tmp}/file/s.sqlite"], "--store: cannot write"),
    (["--grid", "alpha=1", "--store", "{tmp}"], "--store: {tmp} is a directory"),
    (
        ["--grid", "alpha=1", "--scheduler", "tcp://127.0.0.1:1"],
        "cannot reach the Dask scheduler at tcp://127.0.0.1:1",
    ),
    (["--grid", "alpha=1", "--scheduler", "tcp://127.0.0.1:x"], "must look like tcp://host:port"),
    # one parameter in both, and two places to run: one would be ignored
    (["--grid", "alpha=1", "--set", "alpha=2"], "--grid/--set: alpha given in both"),
    (
        ["--grid", "alpha=1", "--workers", "2", "--dask-workers", "1"],
        "--workers/--dask-workers: give one (where the points run)",
    ),
    (
        ["--grid", "alpha=1", "--dask-workers", "1", "--scheduler", "tcp://127.0.0.1:1"],
        "--scheduler/--dask-workers: give one",
    ),
]


def _invoke(args, tmp_path):
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    if "--store" not in args:
        args += ["--store", str(tmp_path / "s.sqlite")]
    return runner.invoke(app, ["sweep", *args])


@pytest.mark.parametrize("args, message", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input_exits_2_with_one_line_and_writes_nothing(tmp_path, args, message):
    (tmp_path / "file").write_text("a file, not a directory\n")
    res = _invoke(args, tmp_path)
    assert res.exit_code == 2, res.output
    assert res.stderr.startswith("error: ") and res.stderr.count("\n") == 1, res.stderr
    assert message.replace("{tmp}", str(tmp_path)) in res.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]  # no store, no export


def test_unusable_store_files_exit_2_unchanged(tmp_path):
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"\x00garbage" * 1000)
    foreign = tmp_path / "foreign.sqlite"
    with sqlite3.connect(foreign) as db:
        db.execute("CREATE TABLE people (name TEXT)")
    for path, message in (
        (garbage, "file is not a database"),
        (foreign, "is not an attnphase sweep store (it holds the tables people)"),
    ):
        before = path.read_bytes()
        res = _invoke(["--grid", "alpha=1", "--store", str(path)], tmp_path)
        assert res.exit_code == 2 and message in res.stderr and res.stderr.count("\n") == 1
        assert path.read_bytes() == before


@pytest.mark.parametrize(
    "greeting, message",
    [
        (None, "sent no Dask handshake within 3 s"),
        (b"HTTP/1.1 400 Bad Request\r\n\r\n", "does not speak the Dask protocol"),
    ],
)
def test_a_port_that_is_not_a_dask_scheduler_exits_2(tmp_path, greeting, message):
    """The port accepts connections (a silent one would hang the Dask client forever)."""
    server = socket.create_server(("127.0.0.1", 0))

    def answer():
        conn, _ = server.accept()
        with conn, contextlib.suppress(OSError):
            if greeting:
                conn.sendall(greeting)
            conn.recv(1024)  # until the sweep gives up and closes

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    address = f"tcp://127.0.0.1:{server.getsockname()[1]}"
    res = _invoke(["--grid", "alpha=1", "--scheduler", address], tmp_path)
    thread.join(timeout=10)
    server.close()
    assert res.exit_code == 2 and res.stderr.count("\n") == 1, res.output
    assert f"error: --scheduler: {address} {message}" in res.stderr
    assert list(tmp_path.iterdir()) == []


def test_help_lists_the_parameters_of_each_kind():
    res = runner.invoke(app, ["sweep", "--help"], env={"COLUMNS": "200"})
    text = " ".join(re.sub(r"[│╭╮╰╯─]", " ", res.output).split())
    for kind in PARAMETERS:
        names = ", ".join(PARAMETERS[kind])
        assert f"{kind.capitalize()} parameters: {names}" in text
    assert "--seeds" in text and "a count, as in `simulate`" in text
    assert '--grid "order=32,12;64,24"' in text and "--no-retry" in text


def test_simulation_sweep_runs_resumes_and_exports(tmp_path):
    store, out = tmp_path / "s.sqlite", tmp_path / "t.csv"
    args = ["--kind", "simulation", "--set", "d=20", "--set", "n_test=200", "--seeds", "2"]
    args += ["--workers", "1", "--store", str(store), "--export", str(out), "--format", "csv"]
    first = runner.invoke(app, ["sweep", *args])
    assert first.exit_code == 0, first.output
    assert first.stderr.strip().splitlines()[-1] == "2 computed, 0 already stored, 0 failed"
    table = pd.read_csv(out)
    assert sorted(table["seed"]) == [0, 1] and (table["d"] == 20).all()
    assert (table["run_status"] == "ok").all() and (table["test_error"] > 0).all()
    again = runner.invoke(app, ["sweep", *args])
    assert again.stderr.strip().splitlines()[-1] == "0 computed, 2 already stored, 0 failed"
    pd.testing.assert_frame_equal(pd.read_csv(out), table)


@pytest.mark.filterwarnings("ignore::attnphase.NonConvergenceWarning")
def test_order_given_by_set_reaches_the_solver(tmp_path):
    """--set order=12,6 once became order=12 (n_y = 12): the solver reports the order it used."""
    out = tmp_path / "t.csv"
    args = ["--grid", "alpha=1.6", "--set", "order=12,6", "--set", "max_iter=2", "--workers"]
    args += ["1", "--store", str(tmp_path / "s.sqlite"), "--export", str(out)]
    res = runner.invoke(app, ["sweep", *args])
    assert res.exit_code == 1, res.output  # max_iter=2: unconverged, exported, then exit 1
    row = pd.read_csv(out).iloc[0]
    assert (row["n_xi"], row["n_y"], row["order"]) == (12, 6, "[12, 6]")


def test_no_retry_keeps_stored_failures(tmp_path, monkeypatch):
    store = tmp_path / "s.sqlite"
    monkeypatch.setenv("SWEEP_FAIL", "0.5,1.0")
    spec = SweepSpec("theory", {"alpha": [0.5, 1.0]})
    run_sweep(spec, store, backend="serial", progress=False, evaluate_point=counted)
    args = ["--grid", "alpha=0.5,1", "--no-retry", "--workers", "1", "--store", str(store)]
    res = runner.invoke(app, ["sweep", *args, "--format", "json"])
    assert res.exit_code == 1, res.output  # every point of the grid failed
    lines = res.stderr.strip().splitlines()
    assert lines[-2] == "0 computed, 2 already stored, 0 failed"
    assert lines[-1].startswith("error: every point of this grid failed (2); the first:")
    assert res.stdout.count('"run_status": "error"') == 2
    assert res.stdout.count('"A": [[0.6, 0.4], [0.4, 0.6]]') == 2  # A a JSON array, not a string


def test_the_table_is_this_grids_points_and_a_grid_that_fails_everywhere_exits_1(
    tmp_path, monkeypatch
):
    """The store's other points (an earlier grid) and the columns only they have stay out of
    the table (a failed grid has no result columns); the command line ends such a grid with
    one line and exit 1 (`test_no_retry_keeps_stored_failures`)."""
    store = tmp_path / "s.sqlite"
    run_sweep(
        SweepSpec("theory", {"alpha": [0.5]}), store, backend="serial", progress=False,
        evaluate_point=counted,
    )  # fmt: skip
    table = run_sweep(
        SweepSpec("theory", {"alpha": [1.0, 1.5]}), store, backend="serial", progress=False,
        evaluate_point=counted,
    )  # fmt: skip
    assert list(table["alpha"]) == [1.0, 1.5] and list(table["value"]) == [2.0, 3.0]
    monkeypatch.setenv("SWEEP_FAIL", "2.0")
    failed = run_sweep(
        SweepSpec("theory", {"alpha": [2.0]}), store, backend="serial", progress=False,
        evaluate_point=counted,
    )  # fmt: skip
    assert list(failed["run_status"]) == ["error"] and "value" not in failed


def test_a_theory_grid_without_one_converged_point_exits_1(tmp_path):
    """A point that did not converge is a result (stored, not retried), but a grid of nothing
    else ends as `attnphase theory` ends such a table: printed, then one line, exit 1 (it
    exited 0 with "1 computed, 0 failed")."""
    store = tmp_path / "s.sqlite"
    args = ["-q", "sweep", "--grid", "alpha=1", "--set", "max_iter=1", "--set", "anderson=0"]
    res = runner.invoke(app, [*args, "--store", str(store)])
    assert res.exit_code == 1, res.output
    assert "False" in res.stdout
    assert res.stderr.splitlines()[-1] == (
        "error: none of the 1 fixed points of this grid converged (their status column says why)"
    )
