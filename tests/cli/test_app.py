"""The `attnphase` command line: output formats, exit code 2 on bad input, no partial output."""

import csv
import io
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from typer.testing import CliRunner

from attnphase.cli import app, parse_alphas

runner = CliRunner()
KEYS = {
    "alpha",
    "omega",
    "sigma",
    "lam",
    "branch",
    "q",
    "m",
    "V",
    "theta",
    "qhat",
    "mhat",
    "Vhat",
    "thetahat",
    "test_error",
    "train_loss",
    "linear_test_error",
    "converged",
    "iterations",
}


def test_parse_alphas_forms():
    assert parse_alphas("0.5") == [0.5]
    assert parse_alphas("0.5,1,2") == [0.5, 1.0, 2.0]
    assert parse_alphas("1:2:3") == [1.0, 1.5, 2.0]


def test_theory_json_has_one_object_per_point(tmp_path):
    plot = tmp_path / "fig.png"
    res = runner.invoke(
        app,
        [
            "theory",
            "--alpha",
            "1.5,2",
            "--branch",
            "semantic",
            "--order",
            "16,8",
            "--format",
            "json",
            "--plot",
            str(plot),
        ],
    )
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in res.stdout.strip().splitlines()]
    assert len(rows) == 2 and KEYS <= set(rows[0])
    assert [r["alpha"] for r in rows] == [1.5, 2.0]
    assert all(r["branch"] == "semantic" and r["converged"] for r in rows)
    assert rows[1]["theta"] > rows[0]["theta"] > 0
    assert plot.stat().st_size > 10_000


@pytest.mark.filterwarnings("ignore::attnphase.NonConvergenceWarning")
def test_theory_csv_and_all_branches():
    res = runner.invoke(app, ["theory", "--alpha", "1.5", "--order", "12,6", "--format", "csv"])
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    assert {r["branch"] for r in rows} == {"semantic", "positional", "trivial"}
    by_branch = {r["branch"]: r for r in rows}
    # no trivial point at alpha = 1.5 (lambda + sigma^2 Vhat < 0): reported, without numbers
    assert by_branch["trivial"]["converged"] == "False" and by_branch["trivial"]["q"] == ""
    assert by_branch["semantic"]["converged"] == "True"


SIM_KEYS = {
    "d",
    "alpha",
    "omega",
    "sigma",
    "lam",
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
    "batch_seconds",
    "batch_size",
}


def test_simulate_json_one_object_per_alpha_init_seed(tmp_path):
    plot = tmp_path / "overlay.png"
    res = runner.invoke(
        app,
        [
            "simulate",
            "--d",
            "80",
            "--alpha",
            "1:2:2",
            "--seeds",
            "2",
            "--n-test",
            "500",
            "--format",
            "json",
            "--plot",
            str(plot),
        ],
    )
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in res.stdout.strip().splitlines()]
    assert len(rows) == 2 * 2 * 2 and SIM_KEYS <= set(rows[0])
    assert {(r["alpha"], r["init"], r["seed"]) for r in rows} == {
        (a, i, s) for a in (1.0, 2.0) for i in ("semantic", "positional") for s in (0, 1)
    }
    sem = [r for r in rows if r["init"] == "semantic"]
    pos = [r for r in rows if r["init"] == "positional"]
    assert min(r["theta"] for r in sem) > 0.05 and min(r["m"] for r in pos) > 0.1
    assert plot.stat().st_size > 10_000


def test_simulation_overlay_returns_the_plotted_summary(tmp_path):
    import pandas as pd

    from attnphase.figures.curves import simulation_overlay

    theory = pd.DataFrame(
        [
            {
                "branch": "semantic",
                "kind": "semantic",
                "converged": True,
                "alpha": a,
                "theta": 0.1,
                "sigma": 0.5,
                "m": 0.0,
                "test_error": 0.002,
                "linear_test_error": 0.002,
            }
            for a in (1.0, 2.0)
        ]
    )
    sims = pd.DataFrame(
        [
            {
                "init": "semantic",
                "alpha": a,
                "seed": s,
                "d": 50,
                "converged": True,
                "theta": 0.1 + s,
                "sigma": 0.5,
                "m": 0.0,
                "test_error": 0.001 * (s + 1),
            }
            for a in (1.0, 2.0)
            for s in (0, 1)
        ]
    )
    summary = simulation_overlay(theory, sims, tmp_path / "o.png")
    row = summary[summary["alpha"] == 1.0].iloc[0]
    assert row[("theta_s2", "mean")] == pytest.approx((0.1 + 1.1) / 2 / 0.25)
    assert row[("test_error", "std")] == pytest.approx(np.std([0.001, 0.002], ddof=1))
    assert (tmp_path / "o.png").stat().st_size > 5_000


# ---------------------------------------------------------------------------------------------
# Bad input: exit code 2, one line naming the option on stderr, nothing computed, nothing written

# Every library entry point a command calls; reaching one during a rejected call fails the test.
ENTRY_POINTS = [
    ("attnphase.theory", "learning_curves"),  # theory, simulate: imported when they compute
    ("attnphase.transitions", "find_transitions"),
    ("attnphase.sim", "run_grid"),
    ("attnphase.sim.grid", "simulate"),
    ("attnphase.paper.demo", "run_demo"),
    ("attnphase.histogram", "run_histogram"),
    ("attnphase.transitions.table", "transition_table"),
    ("attnphase.sweep", "run_sweep"),
    ("attnphase.validity.trust", "trust_map"),
    ("attnphase.validity.outcomes", "outcomes"),
]


@pytest.fixture
def rejected(tmp_path, monkeypatch):
    """Run the CLI in an empty working directory holding a file FILE and a directory DIR;
    return a checker asserting the rejection contract."""
    import importlib

    from attnphase.paper.recipes import MAKERS

    def computed(*args, **kwargs):
        raise AssertionError("computation started before the input was rejected")

    for module, name in ENTRY_POINTS:
        monkeypatch.setattr(importlib.import_module(module), name, computed)
    for name in MAKERS:
        monkeypatch.setitem(MAKERS, name, computed)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "FILE").write_text("x")
    (tmp_path / "DIR" / "histogram_attention.png").mkdir(parents=True)  # where a figure goes
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "theory.csv").mkdir()  # a directory where the demo writes a file

    def check(args: list[str], option: str):
        before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
        res = runner.invoke(app, args)
        assert res.exit_code == 2, res.output
        assert res.stdout == ""
        lines = res.stderr.splitlines()
        assert len(lines) == 1, res.stderr
        assert lines[0].startswith(f"error: {option}"), lines[0]
        assert "Traceback" not in res.stderr and "----" not in lines[0]
        assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before
        return lines[0]

    return check


SIM = ["simulate", "--d", "10", "--alpha", "1"]
BAD_INPUT = [
    # theory
    (["theory", "--sigma", "-1"], "--sigma"),
    (["theory", "--sigma", "0"], "--sigma"),
    (["theory", "--lam", "-0.1"], "--lam"),
    (["theory", "--omega", "1.2"], "--omega"),
    (["theory", "--omega", "nan"], "--omega"),
    (["theory", "--alpha", "0"], "--alpha"),
    (["theory", "--alpha", "1:x:3"], "--alpha"),
    (["theory", "--alpha", "1,-2"], "--alpha"),
    (["theory", "--A", "1,2,3"], "--A: must be L*L numbers"),  # was "----A: --A must ..."
    (["theory", "--A", "1,2,3,inf"], "--A: A must have finite entries"),
    (["theory", "--order", "1"], "--order"),
    (["theory", "--branch", "sideways"], "--branch"),
    (["theory", "--format", "xml"], "--format"),
    (["theory", "--plot", "FILE/fig.png"], "--plot: cannot write FILE/fig.png"),
    (["theory", "--plot", "DIR"], "--plot"),
    (["theory", "--plot", "DIR/fig.xyz"], "--plot: cannot tell the image format"),
    # transition
    (["transition", "--omega", "2"], "--omega"),
    (["transition", "--num", "2"], "--num"),
    (["transition", "--alpha-min", "0"], "--alpha-min"),
    (["transition", "--alpha-max", "nan"], "--alpha-min/--alpha-max"),
    (["transition", "--check-order", "1"], "--check-order"),
    (["transition", "--format", "xml"], "--format"),
    # simulate
    ([*SIM, "--optimizer", "gd", "--lr", "-1"], "--lr: lr must be > 0"),
    ([*SIM, "--optimizer", "gd", "--lr", "nan"], "--lr: lr must be finite"),
    ([*SIM, "--steps", "0"], "--steps: steps must be an integer >= 1"),
    ([*SIM, "--d", "0"], "--d: d must be an integer >= 2"),
    ([*SIM, "--alpha", "0.001"], "--alpha/--d: n = round(alpha d) must be >= 1"),
    ([*SIM, "--n-test", "0"], "--n-test: n_test must be an integer >= 1"),
    ([*SIM, "--dtype", "float16"], "--dtype"),
    ([*SIM, "--init", "foo"], "--init"),
    ([*SIM, "--init", ","], "--init: must be a comma-separated list"),
    ([*SIM, "--optimizer", "foo"], "--optimizer"),
    ([*SIM, "--workers", "0"], "--workers: must be >= 1"),
    ([*SIM, "--threads", "0"], "--threads: must be >= 1"),
    ([*SIM, "--threads", "100000"], "--threads: 100000 threads on"),
    ([*SIM, "--seeds", "0"], "--seeds: must be >= 1"),
    ([*SIM, "--lam", "-1"], "--lam"),
    ([*SIM, "--lam-linear", "-1"], "--lam-linear: lam_linear must be >= 0"),
    ([*SIM, "--A", "1,2"], "--A: must be L*L numbers"),
    ([*SIM, "--format", "xml"], "--format"),
    ([*SIM, "--plot", "FILE/overlay.png"], "--plot: cannot write FILE/overlay.png"),
    ([*SIM, "--plot", "overlay"], "--plot: cannot tell the image format"),
    # demo
    (["demo", "--num", "0"], "--num: num must be an integer >= 2"),
    (["demo", "--num", "-3"], "--num"),
    (["demo", "--num", "1"], "--num"),
    (["demo", "--out", "FILE"], "--out: FILE is a file"),
    (["demo", "--out", "FILE/sub"], "--out: cannot write FILE/sub"),
    (["demo"], "--out: results/theory.csv is a directory"),
    # the model beyond L = 2
    (["theory", "--A", "1,2,3,4,5,6,7,8"], "--A: must be L*L numbers"),
    (["theory", "--A", "0.6,0.4,0.4,inf"], "--A: A must have finite entries"),
    (["theory", "--rank", "0"], "--rank: rank must be an integer >= 1"),
    (["theory", "--teacher-rank", "0"], "--teacher-rank: teacher_rank must be an integer >= 1"),
    (["theory", "--encoding", "1,0,-1"], "--encoding: encodings must be L = 2 numbers"),
    (["theory", "--encoding", "1,nan"], "--encoding: encodings must have finite entries"),
    (["theory", "--encoding", "1,x"], "--encoding: must be comma-separated numbers"),
    (["theory", "--engine", "exact"], "--engine: engine must be one of"),
    (
        ["theory", "--rank", "2", "--engine", "gauss-hermite"],
        "--engine: engine gauss-hermite solves",
    ),
    (["theory", "--engine", "l2"], "--engine: 'l2' is now called 'gauss-hermite'"),
    (["transition", "--engine", "general"], "--engine: 'general' is now called 'qmc'"),
    # an external resource is checked with the other options (it failed after the scan's work)
    (["transition", "--scheduler", "foo"], "--scheduler: scheduler address must look like"),
    (["scaling", "--L", "2", "--scheduler", "foo"], "--scheduler: scheduler address must"),
    (["transition", "--scheduler", "tcp://127.0.0.1:1"], "--scheduler: cannot reach the Dask"),
    (["theory", "--branch", "mixed"], "--branch: must be one of"),
    (["theory", "--engine", "qmc", "--points", "1"], "--points/--randomisations: must be"),
    # requests larger than the machine, refused with the estimate before any work
    (["simulate", "--d", "10000000"], "--d: d = 10000000 with n = 5000000 training"),
    (["simulate", "--d", "3000000", "--alpha", "100"], "--d: d = 3000000 with n = 300000000"),
    (["theory", "--order", "2000,2000"], "--order: the grid of order (2000, 2000) needs about"),
    (["theory", "--order", "100000"], "--order: the grid of order (100000, 100000) needs"),
    (["transition", "--order", "3000,40"], "--order: the grid of order (3000, 40) needs"),
    # numbers the state evolution cannot take (NaN rows before)
    (["theory", "--alpha", "1e308"], "--alpha: alpha must be <= 1e+08"),
    (["gamp", "--alpha", "1e300"], "--alpha: alpha must be <= 1e+08"),
    (["theory", "--A", "1e300,0,0,1e300"], "--A: A entries must lie in [-1e+06, 1e+06]"),
    (["sweep", "--grid", "alpha=1e300", "--store", "s.sqlite"], "--grid: alpha must be <="),
    (["sweep", "--grid", "alpha=1", "--set", "omega=3", "--store", "s.sqlite"], "--set: omega"),
    # Sobol points are powers of two
    (["theory", "--engine", "qmc", "--points", "3"], "--points: must be a power of two"),
    (["theory", "--engine", "qmc", "--points", "1000"], "--points: must be a power of two"),
    (["transition", "--engine", "qmc", "--points", "1000"], "--points: must be a power of"),
    (["trust", "--points", "3"], "--points: points must be a power of two"),
    # a branch the model does not have, with what it would need
    (["theory", "--branch", "mixed", "--engine", "qmc"], "--branch: must be one of"),
    (["theory", "--branch", "clustered"], "--branch: must be one of"),
    # a store is an SQLite file
    (["sweep", "--grid", "alpha=1", "--store", "results.csv"], "--store: a store is an SQLite"),
    (["sweep", "--grid", "alpha=1", "--store", "/dev/null"], "--store: /dev/null is not a regula"),
    (["trust", "--store", "runs.json"], "--store: a store is an SQLite file"),
    (["transition", "--store", "lines.txt"], "--store: a store is an SQLite file"),
    (["outcomes", "--store", "runs"], "--store: a store is an SQLite file"),
    # figure
    (["figure", "fig5"], "NAME: must be one of"),
    (["figure", "fig2", "--workers", "0"], "--workers: must be >= 1"),
    (["figure", "fig3", "--out", "FILE"], "--out: FILE is a file"),
    # histogram
    (["histogram", "--runs", "0"], "--runs"),
    (["histogram", "--lr", "-1"], "--lr"),
    (["histogram", "--format", "xml"], "--format"),
    (["histogram", "--device", "tpu"], "--device"),
    (["histogram", "--checkpoint", "FILE"], "--checkpoint: FILE is a file"),
    (["histogram", "--checkpoint", "FILE/ckpt"], "--checkpoint: cannot write FILE/ckpt"),
    (["histogram", "--plot", "FILE"], "--plot: FILE is a file"),
    (["histogram", "--plot", "DIR"], "--plot: DIR/histogram_attention.png is a directory"),
]


@pytest.mark.parametrize("args, option", BAD_INPUT, ids=[" ".join(a) for a, _ in BAD_INPUT])
def test_bad_input_exits_2_with_one_line_before_any_work(rejected, args, option):
    rejected(args, option)


@pytest.mark.parametrize(
    "args, option",
    [
        (["theory", "--plot", "RO/fig.png"], "--plot: cannot write RO/fig.png"),
        ([*SIM, "--plot", "RO/fig.png"], "--plot"),
        (["demo", "--out", "RO"], "--out"),
        (["figure", "fig2", "--out", "RO/sub"], "--out"),
        (["histogram", "--checkpoint", "RO/ckpt"], "--checkpoint"),
    ],
)
def test_unwritable_directory_exits_2(rejected, tmp_path, monkeypatch, args, option):
    ro = tmp_path / "RO"
    ro.mkdir(mode=0o555)
    if os.geteuid() == 0:  # root may write anywhere: make the permission check see mode 555
        import attnphase.io

        real_access = os.access

        def access(path, mode):
            if os.path.abspath(path) == str(ro) and mode & os.W_OK:
                return False
            return real_access(path, mode)

        monkeypatch.setattr(attnphase.io.os, "access", access)
    rejected(args, option)


def test_typer_errors_also_exit_2():
    for args in (["simulate", "--d", "abc"], ["theory", "--no-such-option"]):
        assert runner.invoke(app, args).exit_code == 2


# what click finds before a command runs: a value of the wrong type, a misspelt option or
# command, a missing value or argument, an extra argument; each family in every command
COMMANDS = ["theory", "simulate", "gamp", "transition", "trust", "landscape", "outcomes", "sweep"]
USAGE_ERRORS = [
    *[([c, "--omega", "abc"], "error: --omega") for c in COMMANDS
      if c not in ("sweep", "trust")],
    (["simulate", "--d", "abc"], "error: --d: input should be a valid integer"),
    (["simulate", "--seeds", "1.5"], "error: --seeds: input should be a valid integer"),
    (["gamp", "--d", "1e3"], "error: --d: input should be a valid integer"),
    (["figure", "fig2", "--workers", "two"], "error: --workers: input should be a valid integer"),
    (["theory", "--omgea", "0.3"], "error: --omgea: no such option (did you mean --omega"),
    (["simulate", "--seed", "1"], "error: --seed: no such option (did you mean --seeds"),
    *[([c, "--omega"], "error: --omega: needs a value") for c in ("theory", "simulate", "gamp")],
    (["figure"], "error: NAME: missing (required)"),
    (["thoery"], "error: no such command 'thoery'. Did you mean 'theory'?"),
    (["theory", "extra"], "error: got unexpected extra argument"),
]  # fmt: skip


@pytest.mark.parametrize("args, start", USAGE_ERRORS, ids=[" ".join(a) for a, _ in USAGE_ERRORS])
def test_usage_errors_are_one_line_naming_the_option(tmp_path, monkeypatch, args, start):
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, args)
    assert res.exit_code == 2, res.output
    assert res.stdout == "" and res.stderr.count("\n") == 1, res.stderr
    assert res.stderr.startswith(start), res.stderr
    assert list(tmp_path.iterdir()) == []


def test_version():
    from attnphase import __version__

    res = runner.invoke(app, ["--version"])
    assert res.exit_code == 0 and res.stdout.strip() == f"attnphase {__version__}"


def test_console_script_prints_one_line_without_traceback():
    out = subprocess.run(
        [sys.executable, "-m", "attnphase", "simulate", "--optimizer", "gd", "--lr", "-1"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.strip() == "error: --lr: lr must be > 0, got -1.0"


def test_importing_the_cli_loads_no_heavy_library():
    """`attnphase --help` and `--version` stay fast: the commands import the theory, the
    simulations, tables and figures only when they run."""
    heavy = ("scipy", "numba", "pandas", "torch", "matplotlib", "dask")
    code = f"import attnphase.cli, sys; print(sorted(m for m in {heavy!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_failed_plot_keeps_the_printed_table(tmp_path, monkeypatch):
    import attnphase.figures.curves

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(attnphase.figures.curves, "learning_curves", broken)
    res = runner.invoke(
        app,
        ["theory", "--alpha", "2", "--branch", "semantic", "--order", "16,8", "--format", "csv"]
        + ["--plot", str(tmp_path / "fig.png")],
    )
    assert res.exit_code == 1
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    assert len(rows) == 1 and rows[0]["converged"] == "True"
    assert res.stderr.count("\n") == 1 and "--plot" in res.stderr and "disk full" in res.stderr


def test_simulate_failed_plot_keeps_the_printed_table(tmp_path, monkeypatch):
    import attnphase.figures.curves
    import attnphase.theory

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(attnphase.figures.curves, "simulation_overlay", broken)
    monkeypatch.setattr(attnphase.theory, "learning_curves", lambda *a, **k: [])
    args = [*SIM, "--init", "positional", "--seeds", "2", "--n-test", "50", "--format", "json"]
    res = runner.invoke(app, [*args, "--plot", str(tmp_path / "fig.png")])
    assert res.exit_code == 1
    assert [json.loads(line)["seed"] for line in res.stdout.splitlines()] == [0, 1]
    assert res.stderr.count("\n") == 1 and "disk full" in res.stderr


def test_demo_prints_each_table_as_it_is_written(tmp_path, monkeypatch):
    import pandas as pd

    import attnphase.paper.demo

    def fake_demo(out, full, num, progress, report):
        report("theory", pd.DataFrame([{"branch": "semantic", "alpha": 0.1, "theta": 0.5}]))
        report("transitions", pd.DataFrame([{"omega": 0.3, "alpha_c": 1.1}]))
        raise OSError("no space left")

    monkeypatch.setattr(attnphase.paper.demo, "run_demo", fake_demo)
    res = runner.invoke(app, ["demo", "--out", str(tmp_path), "--num", "3"])
    assert res.exit_code == 1
    assert "semantic" in res.stdout and "1.1" in res.stdout
    assert res.stderr.count("\n") == 1 and "no space left" in res.stderr


def test_run_demo_writes_each_table_before_its_figure(tmp_path, monkeypatch):
    """A failing figure never loses a computed table: theory.csv is complete and reported."""
    from types import SimpleNamespace

    import pandas as pd

    import attnphase.figures.curves
    import attnphase.theory
    from attnphase.paper.demo import run_demo

    rows = [{"branch": "semantic", "alpha": a, "theta": 0.1 * a} for a in (0.1, 1.05, 2.0)]
    fake = [SimpleNamespace(as_dict=lambda r=r: r) for r in rows]
    monkeypatch.setattr(attnphase.theory, "learning_curves", lambda alphas, *a, **k: fake)

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(attnphase.figures.curves, "learning_curves", broken)
    reported = []
    with pytest.raises(OSError, match="disk full"):
        run_demo(tmp_path, num=3, report=lambda name, table: reported.append(name))
    assert reported == ["theory"]
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "theory.csv"), pd.DataFrame(rows))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["theory.csv"]


@pytest.mark.parametrize("num", [0, 1, -2, 2.5])
def test_check_demo_rejects_bad_num(tmp_path, num):
    from attnphase.paper.demo import check_demo

    with pytest.raises(ValueError, match="^num must be an integer >= 2"):
        check_demo(tmp_path, num)
    assert list(tmp_path.iterdir()) == []


def test_figure_with_a_foreign_store_in_out_exits_2(tmp_path):
    """A file in --out where the figure keeps its sweep store, but not an attnphase store (e.g.
    from an older version): one line naming the file, exit 2, the file untouched."""
    import sqlite3

    store = tmp_path / "finite_size.sqlite"
    with sqlite3.connect(store) as db:
        db.execute("CREATE TABLE people (name TEXT)")
    before = store.read_bytes()
    res = runner.invoke(app, ["figure", "finite-size", "--out", str(tmp_path), "--workers", "1"])
    assert res.exit_code == 2, res.output
    assert "finite_size.sqlite" in res.output and "Traceback" not in res.output
    assert store.read_bytes() == before


def test_an_interrupted_theory_prints_the_branches_it_finished(monkeypatch):
    """Ctrl-C while the positional branch is solved: the semantic rows are printed, then one
    line saying what was kept (exit 130)."""
    import attnphase.theory

    real = attnphase.theory.learning_curves

    def curves(alphas, p, branches, **kw):
        if branches == ["positional"]:
            raise KeyboardInterrupt
        return real(alphas, p, branches, **kw)

    monkeypatch.setattr(attnphase.theory, "learning_curves", curves)
    args = ["--quiet", "theory", "--alpha", "1.5", "--branch", "all", "--order", "16,8"]
    args += ["--format", "csv"]
    res = runner.invoke(app, args)
    assert res.exit_code == 130
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    assert [r["branch"] for r in rows] == ["semantic"]
    assert res.stderr.strip() == "interrupted: 1 of 3 fixed points finished (printed above)"


def test_an_interrupt_inside_a_branch_keeps_its_finished_alphas(monkeypatch):
    """Ctrl-C at the third alpha of the first branch: the two finished fixed points are printed
    (the continuation loop hands them up with the interrupt), not dropped."""
    import attnphase.theory.gauss_hermite.engine as gh

    real, calls = gh._solve_with, []

    def solve_with(alpha, *args, **kw):
        calls.append(alpha)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(alpha, *args, **kw)

    monkeypatch.setattr(gh, "_solve_with", solve_with)
    args = ["--quiet", "theory", "--alpha", "1,1.2,1.4,1.6", "--branch", "positional"]
    res = runner.invoke(app, [*args, "--order", "16,8", "--format", "csv"])
    assert res.exit_code == 130
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    assert [float(r["alpha"]) for r in rows] == [1.0, 1.2]
    assert res.stderr.strip() == "interrupted: 2 of 4 fixed points finished (printed above)"


def test_an_interrupted_simulate_prints_the_points_it_finished(monkeypatch):
    """Ctrl-C while the second (alpha, init) point trains: the first point's rows (one per seed)
    are printed, then one line saying what was kept (exit 130)."""
    import attnphase.sim.grid

    real = attnphase.sim.grid.simulate

    def simulate(cfg, seeds):
        if cfg.init == "positional":
            raise KeyboardInterrupt
        return real(cfg, seeds)

    monkeypatch.setattr(attnphase.sim.grid, "simulate", simulate)
    args = ["--quiet", "simulate", "--d", "40", "--alpha", "1", "--seeds", "2", "--n-test", "200"]
    res = runner.invoke(app, [*args, "--steps", "20", "--format", "csv"])
    assert res.exit_code == 130
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    assert [(r["init"], r["seed"]) for r in rows] == [("semantic", "0"), ("semantic", "1")]
    last = res.stderr.strip().splitlines()[-1]
    assert last == "interrupted: 1 of 2 (alpha, init) points finished (printed above)"


@pytest.mark.parametrize(
    "args, message",
    [
        (["theory", "--alpha", "1,1,1"], "--alpha: 1.0 is given twice"),
        (["theory", "--alpha", "1,1.0"], "--alpha: 1.0 is given twice"),
        (["theory", "--alpha", "1:1:3"], "--alpha: 1.0 is given twice"),
        (["theory", "--alpha", "1:2:1"], "--alpha: '1:2:1' is one point between two ends"),
        (["simulate", "--init", "semantic,semantic"], "--init: 'semantic' is given twice"),
        (["simulate", "--init", "semantic,,positional"], "--init: must be a comma-separated"),
        (["gamp", "--init", "random,random"], "--init: 'random' is given twice"),
        (["transition", "--omega", "0.1,0.2,0.1"], "--omega: 0.1 is given twice"),
        (["transition", "--lines", "alpha_c,alpha_c"], "--lines: 'alpha_c' is given twice"),
        (["scaling", "--L", "3,3"], "--L: 3 is given twice"),
        (["scaling", "--encodings", "linear,linear"], "--encodings: 'linear' is given twice"),
    ],
)
def test_every_list_option_means_each_value_once(args, message):
    """One parser decides what a repeated value means for every list option: it is refused
    (exit 2, one line naming the option) before any work, instead of computed twice or
    crashing after the work (the warm-start predictor divided by the zero step)."""
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2, res.output
    assert message in res.output and len(res.output.strip().splitlines()) == 1, res.output


def test_a_curve_with_a_repeated_alpha_is_refused_before_any_work():
    """A repeated alpha once divided the warm-start predictor by a zero step after the work; it
    means the same point twice, refused as the CLI refuses it."""
    from attnphase import GaussHermite, learning_curve

    with pytest.raises(ValueError, match=r"^alphas: 1\.0 is given twice"):
        learning_curve([1.0, 1.0, 1.2], branch="semantic", method=GaussHermite((16, 8)))


@pytest.mark.parametrize(
    "args",
    [
        ["theory", "--alpha", "-1"],
        ["simulate", "--init", "semantic,semantic"],
        ["gamp", "--d", "0"],
        ["outcomes", "--d", "0"],
        ["sweep", "--grid", "alpha=-1"],
        ["transition", "--omega", "2"],
        ["scaling", "--L", "1"],
        ["trust", "--d", "0"],
    ],
)
def test_a_refusal_loads_no_heavy_library(args):
    """Input that needs no computation to be refused is refused before torch, numba, scipy,
    pandas, matplotlib or dask is imported (a refusal in well under a second, also under load)."""
    heavy = ("scipy", "numba", "pandas", "torch", "matplotlib", "dask")
    code = (
        "import sys\nfrom attnphase.cli import app\n"
        f"try:\n    app({args!r}, prog_name='attnphase')\nexcept SystemExit as e:\n"
        "    print(e.code, sorted(m for m in " + repr(heavy) + " if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stderr.startswith("error: --"), out.stderr
    assert out.stdout.strip() == "2 []"


@pytest.mark.parametrize(
    "args,message",
    [
        (["theory", "--sigma", "1e300"], "--sigma: sigma must be <= 1e+06"),
        (["gamp", "--sigma", "1e200"], "--sigma: sigma must be <= 1e+06"),
        (["scaling", "--sigma", "1e300"], "--sigma: sigma must be <= 1e+06"),
        (["simulate", "--sigma", "1e7"], "--sigma: sigma must be <= 1e+06"),
        (["theory", "--encoding", "1e300,-1e300"], "--encoding: encodings entries must lie in"),
        (["scaling", "--time-limit", "inf"], "--time-limit: must be a finite number > 0"),
    ],
)
def test_scales_that_overflow_are_refused_naming_the_option(args, message):
    """Every model scale has a bound below overflow (ModelParams holds it, so every command and
    the library share it), and every limit must be finite."""
    res = runner.invoke(app, args)
    assert res.exit_code == 2
    assert res.output.strip().startswith("error: " + message), res.output


@pytest.mark.parametrize(
    "args,option",
    [
        (["theory", "--alpha", "0.1:2:100000"], "--alpha"),
        (["transition", "--method", "scan", "--num", "1000000"], "--num"),
        (["transition", "--engine", "qmc", "--num", "100000"], "--num"),
    ],
)
def test_requests_of_many_hours_are_refused_with_their_estimate(args, option):
    """The estimate is the fixed points asked for times a measured curve point's cost
    (`cli.theory.request_seconds`); over REFUSE_SECONDS (3 h) the request is refused before any
    work, naming the option that sized it."""
    res = runner.invoke(app, args)
    assert res.exit_code == 2
    assert re.match(rf"error: {option}: \d+ fixed points take roughly [\d.e+]+ h", res.output)


def test_a_scaling_scan_of_many_hours_is_refused_and_a_long_one_announced(monkeypatch):
    """A scaling point costs about POINT_FIXED_POINTS cold fixed points of its first rung
    (`ScanSettings.point_seconds`): 2^20 points at L = 3 come to about 190 h and are refused
    before any work, naming --points (it ran for hours before saying anything); the default
    L = 2:8 table is announced on stderr before the table starts (stubbed here)."""
    res = runner.invoke(app, ["scaling", "--L", "3", "--omega", "0.3", "--points", "1048576"])
    assert res.exit_code == 2
    assert re.match(
        r"error: --points: the scan at L = 3 with 1048576 QMC points .* take roughly "
        r"[\d.e+]+ h; ask for fewer",
        res.output,
    ), res.output

    class Started(Exception):
        pass

    def started(*args, **kwargs):
        raise Started

    import attnphase.scaling.table

    monkeypatch.setattr(attnphase.scaling.table, "scaling_table", started)
    res = runner.invoke(app, ["scaling", "--omega", "0.3"])
    assert isinstance(res.exception, Started)
    assert re.search(r"warning: 7 scaling points .* take up to roughly [\d.]+ (min|h)", res.output)


@pytest.mark.parametrize(
    "args,message",
    [
        (
            ["theory", "--points", "1024"],
            "--points: applies to --engine qmc; this run uses gauss-hermite (--engine auto: the "
            "exact L = 2 model)",
        ),
        (["theory", "--device", "cpu"], "--device: applies to --engine qmc; this run uses"),
        (
            ["theory", "--order", "24,8", "--A", "0.6,0.2,0.2,0.2,0.6,0.2,0.2,0.2,0.6"],
            "--order: applies to --engine gauss-hermite; this run uses qmc (--engine auto: not "
            "the L = 2 model)",
        ),
        (["theory", "--engine", "qmc", "--order", "32,12"], "--order: applies to --engine"),
        (["transition", "--engine", "qmc", "--check-order", "24,8"], "--check-order: applies"),
        (["transition", "--method", "scan", "--store", "s.sqlite"], "--store: applies to the"),
        (["transition", "--engine", "qmc", "--lines", "alpha_c"], "--lines: applies to the"),
        (["transition", "--num", "30"], "--num: applies to a scan; this run follows the lines"),
        (["landscape", "--method", "dense", "--probes", "10"], "--probes: applies to --method"),
    ],
)
def test_an_option_the_run_would_ignore_is_refused(args, message, tmp_path, monkeypatch):
    """An option given on the command line that the chosen engine or approach does not use is
    refused (exit 2, nothing written), whatever its value: the check asks click whether the
    option was given, not whether it differs from its default."""
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, args)
    assert res.exit_code == 2
    assert res.output.strip().startswith("error: " + message), res.output
    assert list(tmp_path.iterdir()) == []


def test_the_help_lists_every_command_once_in_order_with_one_line_each():
    from attnphase.cli.help import COMMANDS

    res = runner.invoke(app, ["--help"], env={"COLUMNS": "120"})
    listed = [
        line.split()[1]
        for line in res.output.splitlines()
        if line.startswith("│ ") and len(line.split()) > 2 and line.split()[1] in COMMANDS
    ]
    assert listed == list(COMMANDS)


@pytest.mark.parametrize("columns", ["60", "72"])
def test_help_on_a_narrow_terminal_shows_every_option_whole(columns):
    """Below 80 columns rich's option table cut names, defaults and paths with an ellipsis
    (--teacher-ra…, the default A, docs/theory-untied.m…); there the help is click's plain text,
    which wraps them. Every option of every command appears in full."""
    import typer.main

    from attnphase.cli.help import COMMANDS

    group = typer.main.get_command(app)
    for name in COMMANDS:
        res = runner.invoke(app, [name, "--help"], env={"COLUMNS": columns})
        assert res.exit_code == 0 and "…" not in res.output, res.output
        for param in group.commands[name].params:
            for option in param.opts:
                assert option in res.output, (name, option)


@pytest.mark.parametrize(
    "name",
    ["theory", "transition", "scaling", "simulate", "gamp", "sweep", "trust", "landscape"]
    + ["outcomes", "histogram", "figure", "demo"],
)
def test_every_help_example_parses(name):
    """Each example of a command's --help names options that exist, with values of their type
    (click parses them without running the command)."""
    import shlex

    import typer.main

    from attnphase.cli.help import COMMANDS

    group = typer.main.get_command(app)
    command = group.commands[name]
    for example in COMMANDS[name][1]:
        argv = shlex.split(example)[2:]
        command.make_context(name, argv)
    res = runner.invoke(app, [name, "--help"], env={"COLUMNS": "200"})
    assert "Examples:" in res.output and COMMANDS[name][1][0] in res.output


@pytest.mark.parametrize(
    "module,function,args,kept",
    [
        ("attnphase.histogram", "run_histogram", ["histogram", "--quick"], "checkpointed in"),
        ("attnphase.paper.demo", "run_demo", ["demo"], "stored point are kept in"),
    ],
)
def test_an_interrupt_names_what_was_kept(module, function, args, kept, tmp_path, monkeypatch):
    """Ctrl-C in a long command: exit 130 and one line saying where the finished work is and
    that the same command resumes (not a bare "interrupted")."""
    import importlib

    def interrupted(*a, **kw):
        (tmp_path / "results").mkdir()  # the demo's first stage has begun writing
        raise KeyboardInterrupt

    monkeypatch.setattr(importlib.import_module(module), function, interrupted)
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["--quiet", *args])
    assert res.exit_code == 130
    line = res.stderr.strip().splitlines()[-1]
    assert line.startswith("interrupted: ") and kept in line and "resume" in line


def test_an_interrupt_closes_the_bars_it_left_open_before_its_line(tmp_path, monkeypatch):
    """A bar whose loop the interrupt passed through is still open; it is closed (its last line
    written, its heartbeat stopped) before the interrupt's line, which stays the last one."""
    import attnphase.histogram
    from attnphase._core.progress import progress_bar

    left_open = []

    def interrupted(*a, **kw):
        bar = progress_bar(range(3), enabled=True, desc="stage", unit="epoch")
        loop = iter(bar)  # a loop's frame, kept alive by the traceback while the line prints
        left_open.extend([bar, loop])
        next(loop)
        raise KeyboardInterrupt

    monkeypatch.setattr(attnphase.histogram, "run_histogram", interrupted)
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["histogram", "--quick"])
    assert res.exit_code == 130
    assert left_open[0].disable  # tqdm's mark of a closed bar
    assert res.stderr.strip().splitlines()[-1].startswith("interrupted: ")


def test_a_demo_interrupted_before_writing_says_nothing_was_kept(tmp_path, monkeypatch):
    import attnphase.paper.demo

    def interrupted(*a, **kw):
        raise KeyboardInterrupt

    monkeypatch.setattr(attnphase.paper.demo, "run_demo", interrupted)
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["--quiet", "demo"])
    assert res.exit_code == 130
    assert (
        res.stderr.strip().splitlines()[-1]
        == "interrupted: nothing was kept: no stage had finished"
    )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", ["gamp", "trust", "simulate"])
def test_data_beyond_the_memory_is_refused_before_any_work(command):
    """The data set's size is checked with the options (SimConfig's memory estimate at the
    largest alpha), so a huge --d is one line naming it, not a traceback or an error row."""
    res = runner.invoke(app, [command, "--d", "5000000"])
    assert res.exit_code == 2
    assert re.match(r"error: --d: d = 5000000 with n = \d+ training .* needs about", res.output)


@pytest.mark.parametrize("command", ["simulate", "trust", "landscape"])
def test_a_test_set_beyond_the_memory_names_the_test_set(command):
    """Where the test set holds more sequences than the training set, it is the option that
    sized the data (`_core.memory.data_option`): 10^12 test sequences named --d before."""
    res = runner.invoke(app, [command, "--d", "50", "--n-test", "1000000000000"])
    assert res.exit_code == 2
    assert re.match(
        r"error: --n-test: d = 50 with n = \d+ training and 1000000000000 test", res.output
    )


def test_a_global_option_after_the_command_says_where_it_goes():
    res = runner.invoke(app, ["theory", "-q"])
    assert res.exit_code == 2
    assert res.output.strip() == (
        "error: -q: an option of attnphase itself, given before the command "
        "(attnphase -q COMMAND ...)"
    )


def test_results_that_cannot_be_written_exit_1_with_one_line():
    """Standard output on a full disk: not exit 0 with the results lost, nor a traceback."""
    if not os.path.exists("/dev/full"):
        pytest.skip("needs /dev/full")
    args = ["-q", "theory", "--alpha", "1", "--branch", "positional", "--order", "16,8"]
    with open("/dev/full", "w") as full:
        out = subprocess.run(
            [sys.executable, "-m", "attnphase", *args], stdout=full, stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
    assert out.returncode == 1
    assert out.stderr.strip().startswith("error: the results could not be written")
    assert "Traceback" not in out.stderr


@pytest.mark.parametrize(
    "args,option",
    [
        (["sweep", "--dask-workers", "1000", "--grid", "alpha=1"], "--dask-workers"),
        (["simulate", "--workers", "9"], "--workers"),
        (["transition", "--workers", "9"], "--workers"),
        (["scaling", "--workers", "9"], "--workers"),
        (["outcomes", "--workers", "9"], "--workers"),
    ],
)
def test_more_local_workers_than_the_cores_can_carry_are_refused(args, option, monkeypatch):
    """At most 4 local worker processes a usable core (2 here, through ATTNPHASE_THREADS): a
    thousand Dask workers on 2 cores is one line, not a hang."""
    monkeypatch.setenv("ATTNPHASE_THREADS", "2")
    res = runner.invoke(app, args)
    assert res.exit_code == 2
    assert res.output.startswith(f"error: {option}: ") and "at most 8" in res.output


def test_histogram_plot_is_a_folder_not_a_file_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = runner.invoke(app, ["histogram", "--plot", "h.png"])
    assert res.exit_code == 2
    assert res.output.startswith("error: --plot: a folder for the task's two figures")
    assert list(tmp_path.iterdir()) == []


def test_a_paper_sized_run_says_what_it_costs_before_it_starts(tmp_path, monkeypatch):
    """`demo --full` and `figure ... --full` run for up to hours: one warning line with the
    measured reference (the full Fig. 3, 19 min to 1 h 54 min) and how to stop, on stderr,
    before any work."""
    import attnphase.paper.demo as demo_module
    import attnphase.paper.recipes as recipes

    started = []
    monkeypatch.setattr(demo_module, "run_demo", lambda *a, **k: started.append("demo"))
    monkeypatch.setitem(recipes.MAKERS, "fig2", lambda *a, **k: started.append("fig2"))
    for args in (["demo", "--full"], ["figure", "fig2", "--full"]):
        res = CliRunner().invoke(app, [*args, "--out", str(tmp_path / args[0])])
        assert res.exit_code == 0, res.output
        assert res.stderr.startswith("warning: --full runs the paper's sizes: up to hours")
        assert "19 min" in res.stderr and "1 h 54 min" in res.stderr
        assert "the same command resumes" in res.stderr
    assert started == ["demo", "fig2"]
    quick = CliRunner().invoke(app, ["figure", "fig2", "--out", str(tmp_path / "q")])
    assert quick.exit_code == 0 and "warning" not in quick.stderr


def test_a_simulation_request_of_days_is_refused_and_one_of_minutes_announced(capsys):
    """gd at d = 10^4, alpha 2, 10^5 steps: about 3.6e-9 s per token entry and step, some 80 h
    for the two starts, refused before anything is drawn; 3 min is announced in one line."""
    from attnphase.cli.common import warn_long

    args = ["simulate", "--d", "10000", "--alpha", "2", "--seeds", "1", "--optimizer", "gd"]
    args += ["--steps", "100000", "--n-test", "1000"]
    res = runner.invoke(app, args)
    assert res.exit_code == 2
    assert res.stderr.startswith("error: --d: 2 runs take roughly 8") and " h;" in res.stderr
    warn_long(180.0, "2 runs")
    warn_long(100.0, "1 run")  # under two minutes: nothing
    assert capsys.readouterr().err == "warning: 2 runs take up to roughly 3 min\n"
