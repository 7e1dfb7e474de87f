"""The `attnphase` command line: output formats, exit code 2 on bad input, no partial output."""

import csv
import io
import json
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


@pytest.mark.parametrize(
    "args, name",
    [
        (["--sigma", "-1"], "sigma"),
        (["--sigma", "0"], "sigma"),
        (["--lam", "-0.1"], "lam"),
        (["--omega", "1.2"], "omega"),
        (["--omega", "nan"], "omega"),
        (["--alpha", "0"], "alpha"),
        (["--alpha", "1:x:3"], "alpha"),
        (["--alpha", "1,-2"], "alpha"),
        (["--A", "1,2,3"], "A"),
        (["--A", "1,2,3,inf"], "A"),
        (["--order", "1"], "order"),
        (["--branch", "sideways"], "branch"),
        (["--format", "xml"], "format"),
    ],
)
def test_bad_input_exits_2_naming_the_parameter(args, name, tmp_path):
    plot = tmp_path / "never.png"
    res = runner.invoke(app, ["theory", *args, "--plot", str(plot)])
    assert res.exit_code == 2
    assert f"--{name}" in res.output
    assert res.stdout.strip() == "" or "error" in res.output
    assert not plot.exists()


def test_console_script_runs_and_reports_bad_input():
    out = subprocess.run(
        [sys.executable, "-m", "attnphase", "theory", "--omega", "2"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 2 and "--omega" in out.stderr


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
    "seconds",
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

    from attnphase.plots import simulation_overlay

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


@pytest.mark.parametrize(
    "args, name",
    [
        (["--d", "0"], "d"),
        (["--alpha", "0.001", "--d", "10"], "n"),
        (["--lam", "-1"], "lam"),
        (["--optimizer", "newton"], "optimizer"),
        (["--init", "sideways"], "init"),
        (["--seeds", "0"], "seeds"),
        (["--dtype", "float16"], "dtype"),
    ],
)
def test_simulate_bad_input_exits_2(args, name):
    res = runner.invoke(app, ["simulate", *args])
    assert res.exit_code == 2 and f"--{name}" in res.output
