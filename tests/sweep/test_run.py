"""Sweeps in one process: parameters, validation, canonical run ids, the store's format checks,
leases, resume, retries, backends. Subprocess tests (SIGKILL, concurrent runs, workers dying
with their parent) are in test_run_processes.py, the command line in tests/cli/test_sweep.py."""

import dataclasses
import os
import sqlite3
import subprocess
import sys

import numpy as np
import pandas as pd
import psutil
import pytest

from attnphase import QMC, GaussHermite, Mixture, ModelParams
from attnphase.sim import SimConfig, simulate
from attnphase.sweep import (
    PARAMETERS,
    ResultStore,
    StoreError,
    SweepSpec,
    canonical_point,
    check_store,
    evaluate,
    parse_grid,
    parse_set,
    run_id,
    run_sweep,
    write_table,
)
from attnphase.sweep.spec import SIM_MODEL_NAMES
from attnphase.sweep.store import BUSY, CLAIMED, DONE, Owner
from attnphase.theory.gauss_hermite.engine import solve_exact
from attnphase.theory.qmc.engine import solve_qmc
from tests.sweep_points import counted, markers, torch_threads

ALPHAS = [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0]
COUNTED = SweepSpec("theory", {"alpha": ALPHAS})


@pytest.fixture
def marker_dir(tmp_path, monkeypatch):
    path = tmp_path / "markers"
    path.mkdir()
    monkeypatch.setenv("SWEEP_MARKERS", str(path))
    return path


# ---- parameters, canonical run ids ----------------------------------------------------------


def test_parameter_tables_are_those_of_the_models():
    """A parameter added to ModelParams, its variants, the methods (their settings and solver
    options) or SimConfig must be added to the sweep table (the variant is given as in the
    simulations: untied, clusters, label_correlation, cluster_norm, mask, target_mask, heads,
    rotary; the method
    by its name, the Gauss-Hermite order and solver options, the QMC settings and device; the
    precision asked of `solve`)."""
    # a sweep point's errors come from the check order's default (it is not a parameter)
    exact = {f.name for f in dataclasses.fields(GaussHermite)} - {"check_order"}
    theory = {f.name for f in dataclasses.fields(ModelParams)} - {"variant"} | {"alpha", "branch"}
    variant = {"untied", "mask", "target_mask", "heads", "rotary"}
    variant |= {f.name for f in dataclasses.fields(Mixture)}
    method = {"method", "points", "randomisations", "qmc_seed", "device"}
    assert set(PARAMETERS["theory"]) == theory | exact | variant | method | {"precision"}
    model = {SIM_MODEL_NAMES.get(f.name, f.name) for f in dataclasses.fields(ModelParams)}
    model = model - {"variant"} | variant
    sim = {f.name for f in dataclasses.fields(SimConfig)} - {"positions", "params"} | model
    assert set(PARAMETERS["simulation"]) == sim | {"seed"}


def test_explicit_defaults_and_number_spellings_give_one_run_id():
    plain = run_id("theory", {"alpha": 1})
    explicit = {
        "alpha": 1.0,
        "lam": 0.01,
        "omega": 0.3,
        "sigma": 0.5,
        "A": [0.6, 0.4, 0.4, 0.6],
        "rank": 1,
        "teacher_rank": 1,
        "encodings": "1,-1",
        "branch": "semantic",
        "order": [64, 24],
        "tol": 1e-6,
        "damping": 0.8,
        "anderson": 5,
        "max_iter": 300,
        "estimator": "ibp",
    }
    assert run_id("theory", explicit) == plain
    assert run_id("theory", {"alpha": "1", "A": ((0.6, 0.4), (0.4, 0.6))}) == plain
    assert run_id("theory", {"alpha": 1, "order": 24}) == run_id(
        "theory", {"alpha": 1, "order": "24,24"}
    )
    assert run_id("simulation", {}) == run_id(
        "simulation", {"d": 1000.0, "seed": 0, "lr": "none", "n_test": "1e4"}
    )
    assert run_id("simulation", {"encodings": "1,-1"}) == run_id("simulation", {})
    assert run_id("simulation", {"encodings": "1,-0.5"}) != run_id("simulation", {})
    assert run_id("theory", {"alpha": 1.0}) != run_id("simulation", {"alpha": 1.0})
    assert run_id("theory", {"alpha": 1.0}) != run_id("theory", {"alpha": 1.0 + 1e-12})
    assert run_id("theory", {"alpha": 1, "order": [24, 8]}) != run_id(
        "theory", {"alpha": 1, "order": [24, 24]}
    )
    spec_ids = [SweepSpec("theory", {}, base).runs()[0][0] for base in (explicit, {"alpha": 1})]
    assert spec_ids == [plain, plain]
    assert len(COUNTED.points()) == 8
    assert len(SweepSpec("theory", {"alpha": [1, 1.0, "1"]}).points()) == 1


def test_multi_valued_parameters_survive_set_and_grid():
    fixed = parse_set(["order=24,8", "A=0.3,0.7,0.8,0.2", "alpha=1"], "theory")
    (point,) = SweepSpec("theory", {}, fixed).points()
    assert point["order"] == [24, 8]
    assert point["A"] == [[0.3, 0.7], [0.8, 0.2]]
    grid = parse_grid(["order=24,8;32,12;16", "A=0.6,0.4,0.4,0.6;0.3,0.7,0.8,0.2"], "theory")
    points = SweepSpec("theory", grid, {"alpha": 1.0}).points()
    assert (
        sorted(tuple(p["order"]) for p in points) == [(16, 16)] * 2 + [(24, 8)] * 2 + [(32, 12)] * 2
    )
    assert {tuple(map(tuple, p["A"])) for p in points} == {
        ((0.6, 0.4), (0.4, 0.6)),
        ((0.3, 0.7), (0.8, 0.2)),
    }
    (sim,) = SweepSpec("simulation", {}, parse_set(["A=1,0,0,0,1,0,0,0,1"], "simulation")).points()
    assert sim["A"] == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]


def test_grid_and_set_text():
    assert parse_grid(["alpha=0.1:0.3:3", "branch=semantic,positional"], "theory") == {
        "alpha": [0.1, 0.2, 0.3],  # rounded to 12 digits: not 0.30000000000000004
        "branch": ["semantic", "positional"],
    }
    assert parse_grid(["seed=0,1", "device=cuda:0"], "simulation") == {
        "seed": ["0", "1"],
        "device": ["cuda:0"],
    }
    cases = [
        (parse_grid, ["alpha"], "expected name=value"),
        (parse_grid, ["alpha=1", "alpha=2"], "alpha given twice"),
        (parse_grid, ["alpha=1,,2"], "empty value"),
        (parse_grid, ["alpha=1:2:0"], "num >= 1"),
        (parse_grid, ["seed=1"], "unknown theory parameter 'seed'; valid: alpha, omega"),
        (parse_set, ["alpha=1,2"], "alpha takes one value here"),
        (parse_set, ["foo=1"], "unknown theory parameter 'foo'"),
    ]
    for parse, items, message in cases:
        with pytest.raises(ValueError, match=message):
            parse(items, "theory")


BAD_POINTS = [
    ("theory", {"foo": [1, 2]}, {"alpha": 1}, "unknown theory parameter 'foo'; valid: alpha"),
    ("theory", {"alpha": ["nan"]}, {}, "alpha must be finite"),
    ("theory", {"alpha": [1.0, -1.0]}, {}, "alpha must be > 0"),
    ("theory", {}, {"alpha": 1, "omega": 1.5}, r"omega must lie in \[0, 1\], got 1.5"),
    ("theory", {}, {"alpha": 1, "sigma": 0}, "sigma must be > 0"),
    ("theory", {}, {"alpha": 1, "A": "1,2,3"}, "A must be a square matrix"),
    ("theory", {}, {"alpha": 1, "A": "1,2,3,inf"}, "A must have finite entries"),
    ("theory", {}, {"alpha": 1, "encodings": "1,2,3"}, "encodings must be L = 2 numbers"),
    ("theory", {}, {"alpha": 1, "rank": 2}, "the exact L=2 engine needs L = 2, rank = "),
    ("theory", {}, {"alpha": 1, "order": "24,8,4"}, "order must be n or n_xi,n_y"),
    ("theory", {}, {"alpha": 1, "order": "1"}, "order must be n or n_xi,n_y"),
    ("theory", {}, {"alpha": 1, "branch": "mixed"}, "branch must be one of"),
    ("theory", {}, {"alpha": 1, "damping": 1}, r"damping must be in \[0, 1\)"),
    ("theory", {}, {"alpha": 1, "estimator": "mc"}, "estimator must be one of"),
    ("theory", {}, {"alpha": 1, "max_iter": 0}, "max_iter must be an integer >= 1"),
    ("theory", {}, {}, "alpha must be given in a theory sweep"),
    ("theory", {}, {"alpha": 1, "method": "mc"}, "method must be one of"),
    ("theory", {}, {"alpha": 1, "points": 512}, "points: applies to another method than gauss"),
    ("theory", {}, {"alpha": 1, "method": "qmc", "order": "12,6"}, "order: applies to another"),
    ("theory", {}, {"alpha": 1, "untied": True}, "the exact L=2 engine needs"),
    ("theory", {}, {"alpha": 1, "method": "qmc", "points": 1}, "points must be >= 64"),
    ("theory", {}, {"alpha": 1, "method": "qmc", "randomisations": 0}, "randomisations must"),
    ("theory", {}, {"alpha": 1, "method": "qmc", "untied": 1, "rank": 2}, "untied: the untied"),
    ("theory", {}, {"alpha": 1, "method": "qmc", "untied": 1, "clusters": 2}, "clusters: corr"),
    ("theory", {}, {"alpha": 1, "method": "qmc", "clusters": 9}, r"clusters: K\^L = 9\^2"),
    ("simulation", {}, {"d": "abc"}, "d must be an integer, got 'abc'"),
    ("simulation", {}, {"d": 0}, "d must be an integer >= 2, got 0"),
    ("simulation", {}, {"d": 1.5}, "d must be an integer, got 1.5"),
    ("simulation", {"seed": [0, -1]}, {}, "seed must be an integer >= 0"),
    ("simulation", {}, {"init": "zero"}, "init must be one of"),
    ("simulation", {}, {"optimizer": "sgd2"}, "optimizer must be one of"),
    ("simulation", {"alpha": [1.0, 0.001]}, {"d": 10}, r"n = round\(alpha d\) must be >= 1"),
]


@pytest.mark.parametrize("kind, grid, base, message", BAD_POINTS)
def test_every_point_is_validated(kind, grid, base, message):
    with pytest.raises(ValueError, match=message) as err:
        SweepSpec(kind, grid, base)
    assert "\n" not in str(err.value)


def test_validators_are_those_of_the_models():
    """The sweep's messages are the models' own (the same validators, not a copy)."""
    with pytest.raises(ValueError) as sweep_err:
        canonical_point("theory", {"alpha": 1, "lam": -1})
    with pytest.raises(ValueError) as model_err:
        ModelParams(lam=-1.0)
    assert str(sweep_err.value) == str(model_err.value)
    with pytest.raises(ValueError) as sweep_err:
        canonical_point("simulation", {"n_test": 0})
    with pytest.raises(ValueError) as model_err:
        SimConfig(n_test=0)
    assert str(sweep_err.value) == str(model_err.value)


# ---- the store's format checks ----------------------------------------------------------------


def _stored(path, n=40):
    spec = SweepSpec("theory", {"alpha": [0.1 * i for i in range(1, n + 1)]})
    run_sweep(spec, path, backend="serial", progress=False, evaluate_point=counted)


def test_foreign_legacy_and_damaged_files_are_refused(tmp_path):
    foreign = tmp_path / "foreign.sqlite"
    with sqlite3.connect(foreign) as db:
        db.execute("CREATE TABLE people (name TEXT)")
    legacy = tmp_path / "legacy.sqlite"
    with sqlite3.connect(legacy) as db:
        db.execute(
            "CREATE TABLE results (run_id TEXT PRIMARY KEY, kind TEXT, params TEXT, "
            "result TEXT, status TEXT, error TEXT)"
        )
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"this is not a database" * 100)
    tiny = tmp_path / "tiny.sqlite"  # shorter than SQLite's header: sqlite3 opened it as empty
    tiny.write_bytes(b"x")
    inside = tmp_path / "inside.sqlite"
    _stored(inside)
    data = bytearray(inside.read_bytes())
    assert len(data) >= 8 * 4096  # 40 points span several pages: damage one in the middle
    data[len(data) // 2 : len(data) // 2 + 2048] = np.random.default_rng(0).bytes(2048)
    inside.write_bytes(bytes(data))
    newer = tmp_path / "newer.sqlite"
    ResultStore(newer).close()
    with sqlite3.connect(newer) as db:
        db.execute("UPDATE meta SET value = '3' WHERE key = 'version'")
    cases = {
        foreign: "not an attnphase sweep store \\(it holds the tables people\\)",
        legacy: "older attnphase \\(format 1",
        garbage: "file is not a database",
        tiny: "file is not a database",
        # SQLite's own error, or the integrity check's report, by where the damage falls
        inside: "database disk image is malformed|is damaged: ",
        newer: "format version 3; this attnphase reads version 2",
    }
    for path, message in cases.items():
        before = path.read_bytes()
        with pytest.raises(StoreError, match=message):
            check_store(path)
        with pytest.raises(StoreError, match=message):
            run_sweep(COUNTED, path, backend="serial", progress=False, evaluate_point=counted)
        assert path.read_bytes() == before, f"{path.name} was changed"


def test_a_new_or_empty_file_becomes_a_marked_store(tmp_path):
    check_store(tmp_path / "missing.sqlite")
    assert not (tmp_path / "missing.sqlite").exists()
    empty = tmp_path / "empty.sqlite"
    empty.touch()
    ResultStore(empty).close()
    with sqlite3.connect(empty) as db:
        meta = dict(db.execute("SELECT key, value FROM meta"))
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert meta == {"format": "attnphase sweep store", "version": "2"}
    assert tables == {"meta", "results", "claims", "attempts"}


# ---- leases ------------------------------------------------------------------------------------


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_claims_of_live_owners_are_respected_and_dead_or_expired_ones_taken_over(tmp_path):
    db = ResultStore(tmp_path / "s.sqlite")
    me = Owner.current()
    parent = Owner("parent", me.host, os.getppid(), psutil.Process(os.getppid()).create_time())
    remote = Owner("remote", "another-host", 12345, 1.0)
    dead = Owner("dead", me.host, _dead_pid(), 1.0)
    reused = dataclasses.replace(parent, token="reused", born=parent.born - 100.0)  # pid reuse
    t0 = 1000.0
    cases = [  # (holder, now relative to the claim, expected state for `me`)
        (parent, 10.0, BUSY),  # same host, process alive, lease valid
        (remote, 10.0, BUSY),  # other host: trusted until the lease expires
        (remote, 130.0, CLAIMED),  # lease (120 s) expired
        (dead, 10.0, CLAIMED),  # same host, process gone
        (reused, 10.0, CLAIMED),  # same host, pid now belongs to another process
    ]
    for i, (holder, later, expected) in enumerate(cases):
        rid = f"point{i}"
        assert db.claim(rid, holder, retry=True, lease=120.0, now=t0)[0] == CLAIMED
        state, _ = db.claim(rid, me, retry=True, lease=120.0, now=t0 + later)
        assert state == expected, (holder, later)
    attempts = db.attempts()
    taken = attempts[(attempts["owner"] != me.token) & (attempts["status"] == "abandoned")]
    assert sorted(taken["run_id"]) == ["point2", "point3", "point4"]
    mine = attempts[(attempts["owner"] == me.token) & (attempts["run_id"] == "point3")]
    (attempt,) = mine["attempt"]
    db.finish("point3", "theory", {"alpha": 1.0}, attempt, me, ("ok", {"value": 1.0}, None))
    assert db.claim("point3", remote, retry=True, lease=120.0) == (DONE, None)
    db.close()


# ---- resume and retries ----------------------------------------------------------------------


def test_a_finished_sweep_computes_nothing_on_rerun(tmp_path, marker_dir):
    store = tmp_path / "s.sqlite"
    first = run_sweep(COUNTED, store, backend="serial", progress=False, evaluate_point=counted)
    assert first.attrs["summary"] == {"computed": 8, "stored": 0, "failed": 0}
    assert markers(marker_dir) == dict.fromkeys(ALPHAS, 1)
    again = run_sweep(COUNTED, store, backend="serial", progress=False, evaluate_point=counted)
    assert again.attrs["summary"] == {"computed": 0, "stored": 8, "failed": 0}
    assert markers(marker_dir) == dict.fromkeys(ALPHAS, 1)  # no evaluation at all
    pd.testing.assert_frame_equal(again, first)
    assert list(first["value"]) == [2 * a for a in ALPHAS]


def test_failed_points_are_retried_with_their_history_kept(
    tmp_path, marker_dir, monkeypatch, capsys
):
    store = tmp_path / "s.sqlite"
    kw = dict(backend="serial", progress=False, evaluate_point=counted)
    monkeypatch.setenv("SWEEP_FAIL", "1.5,3.0")
    first = run_sweep(COUNTED, store, **kw)
    assert capsys.readouterr().err.strip().endswith("6 computed, 0 already stored, 2 failed")
    failed = first[first["run_status"] == "error"]
    assert sorted(failed["alpha"]) == [1.5, 3.0]
    assert failed["run_error"].str.startswith("ValueError: injected failure").all()
    assert run_sweep(COUNTED, store, retry=False, **kw).attrs["summary"]["stored"] == 8
    monkeypatch.delenv("SWEEP_FAIL")
    second = run_sweep(COUNTED, store, **kw)
    assert second.attrs["summary"] == {"computed": 2, "stored": 6, "failed": 0}
    assert (second["run_status"] == "ok").all()
    assert markers(marker_dir) == dict.fromkeys(ALPHAS, 1)  # the failed ones wrote no marker
    attempts = ResultStore(store).attempts()
    history = attempts.groupby("run_id")["status"].apply(list)
    retried = second.set_index("alpha").loc[[1.5, 3.0], "run_id"]
    assert [history[r] for r in retried] == [["error", "ok"], ["error", "ok"]]
    assert list(second.set_index("alpha").loc[[1.5, 3.0], "run_attempts"]) == [2, 2]
    assert len(attempts) == 10


# ---- the point functions and the backends ------------------------------------------------------


@pytest.mark.filterwarnings("ignore::attnphase.NonConvergenceWarning")
def test_theory_and_simulation_points_equal_direct_calls():
    """evaluate() passes every parameter through: order=(12,6), A and max_iter=3 (hence not
    converged) reach solve; seed, d and omega reach simulate."""
    a = [[0.3, 0.7], [0.8, 0.2]]
    point = canonical_point("theory", {"alpha": 1.6, "order": "12,6", "A": a, "max_iter": 3})
    got = evaluate("theory", point)
    ref = solve_exact(1.6, ModelParams(A=a), None, "semantic", GaussHermite((12, 6), max_iter=3))
    assert (got["n_xi"], got["n_y"], got["a12"]) == (12, 6, 0.7)
    assert got["q"] == ref.q and got["theta"] == ref.theta
    assert got["iterations"] == ref.iterations and got["status"] == "maximum iterations reached"
    qmc = canonical_point(
        "theory", {"alpha": 1.2, "method": "qmc", "points": 128, "randomisations": 2, "qmc_seed": 5,
                   "clusters": 2, "label_correlation": 0.5, "branch": "positional"},
    )  # fmt: skip
    got = evaluate("theory", qmc)
    model = ModelParams(variant=Mixture(2, 0.5, 1.0))
    ref = solve_qmc(1.2, model, None, "positional", QMC(128, 2, 5))
    assert got["q"] == ref.q and got["m"] == ref.as_dict()["m"]
    assert got["iterations"] == ref.iterations
    assert got["converged"] == ref.converged and got["kind"] == ref.kind
    sim = canonical_point("simulation", {"d": 20, "n_test": 200, "seed": 3, "omega": 0.5})
    got = evaluate("simulation", sim)
    (ref,) = simulate(SimConfig(params=ModelParams(omega=0.5), d=20, n_test=200), seeds=[3])
    assert got["test_error"] == ref.test_error and got["q"] == ref.q


def test_serial_sweeps_leave_torch_threads_alone_and_workers_use_one(tmp_path):
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(3)
    try:
        spec = SweepSpec("simulation", {}, {"d": 20, "n_test": 200})
        df = run_sweep(spec, tmp_path / "serial.sqlite", backend="serial", progress=False)
        assert df["run_status"].tolist() == ["ok"]
        assert torch.get_num_threads() == 3
        spec = SweepSpec("simulation", {"seed": [0, 1]}, {"d": 20})
        df = run_sweep(
            spec,
            tmp_path / "process.sqlite",
            backend="process",
            workers=2,
            progress=False,
            evaluate_point=torch_threads,
        )
        assert df["threads"].tolist() == [1, 1] and os.getpid() not in set(df["pid"])
        assert torch.get_num_threads() == 3
    finally:
        torch.set_num_threads(before)


def test_process_and_dask_backends_give_the_serial_table(tmp_path, marker_dir):
    cols = ["run_id", "alpha", "value", "run_status"]
    kw = dict(progress=False, evaluate_point=counted)
    serial = run_sweep(COUNTED, tmp_path / "s.sqlite", backend="serial", **kw)[cols]
    proc = run_sweep(COUNTED, tmp_path / "p.sqlite", backend="process", workers=2, **kw)
    assert set(proc["pid"]) - {os.getpid()} == set(proc["pid"])  # computed in workers
    pd.testing.assert_frame_equal(
        proc[cols].sort_values("run_id", ignore_index=True),
        serial.sort_values("run_id", ignore_index=True),
    )
    dask = run_sweep(COUNTED, tmp_path / "d.sqlite", backend="dask", workers=2, **kw)
    pd.testing.assert_frame_equal(
        dask[cols].sort_values("run_id", ignore_index=True),
        serial.sort_values("run_id", ignore_index=True),
    )
    assert markers(marker_dir) == dict.fromkeys(ALPHAS, 3)


def test_an_existing_scheduler_passes_the_handshake_check(tmp_path, marker_dir):
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=1, processes=False, protocol="tcp", host="127.0.0.1", dashboard_address=None
    ) as cluster:
        df = run_sweep(
            COUNTED,
            tmp_path / "s.sqlite",
            backend="dask",
            scheduler=cluster.scheduler_address,
            progress=False,
            evaluate_point=counted,
        )
    assert df.attrs["summary"] == {"computed": 8, "stored": 0, "failed": 0}
    assert sorted(df["value"]) == [2 * a for a in ALPHAS]


def test_a_dying_worker_fails_its_point_and_the_sweep_goes_on(tmp_path, monkeypatch):
    monkeypatch.setenv("SWEEP_EXIT", "2.0")
    kw = dict(backend="process", workers=2, progress=False, evaluate_point=counted)
    df = run_sweep(COUNTED, tmp_path / "s.sqlite", **kw).set_index("alpha")
    assert sorted(df.index) == ALPHAS
    assert df.loc[2.0, "run_error"].startswith("BrokenProcessPool: a worker process died")
    # only the points in flight when the pool broke (at most the 2 workers' points) fail
    failed = df[df["run_status"] == "error"].index
    assert 1 <= len(failed) <= 2 and (df.loc[df.index.difference(failed), "value"] > 0).all()


def test_export_keeps_multi_valued_columns(tmp_path):
    """order and the matrix A stay arrays in Parquet (A nested: one list per row of A)."""
    fixed = {"order": [24, 8], "A": [[0.6, 0.4], [0.4, 0.6]]}
    spec = SweepSpec("theory", {"alpha": [1.0, 2.0]}, fixed)
    df = run_sweep(
        spec, tmp_path / "s.sqlite", backend="serial", progress=False, evaluate_point=counted
    )
    write_table(df, tmp_path / "t.parquet")
    write_table(df, tmp_path / "t.csv")
    back = pd.read_parquet(tmp_path / "t.parquet")
    assert [list(o) for o in back["order"]] == [[24, 8], [24, 8]]
    assert [[list(r) for r in a] for a in back["A"]] == [[[0.6, 0.4], [0.4, 0.6]]] * 2
    assert list(pd.read_csv(tmp_path / "t.csv")["order"]) == ["[24, 8]", "[24, 8]"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.sqlite", "t.csv", "t.parquet"]


def test_a_diverged_simulation_is_a_failed_point_not_a_nan_result(tmp_path):
    """A run whose loss went non-finite (gradient descent with a step of 1e10) is stored as a
    failed point with the run's status as its error, never as a row of NaN."""
    spec = SweepSpec("simulation", {}, {"d": 20, "n_test": 200, "optimizer": "gd", "lr": 1e10})
    df = run_sweep(spec, tmp_path / "s.sqlite", backend="serial", progress=False)
    assert df["run_status"].tolist() == ["error"]
    assert df["run_error"].iloc[0].startswith("RuntimeError: the run diverged")
