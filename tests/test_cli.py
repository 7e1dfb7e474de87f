"""The `attnphase` command line: output formats, exit code 2 on bad input, no partial output."""

import csv
import io
import json
import subprocess
import sys

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
