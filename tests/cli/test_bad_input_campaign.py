"""A campaign of bad inputs across every command, beyond the ones the other tests name: each
exits 2 with one line `error: ...` on stderr, nothing on stdout, nothing computed, nothing
written (the working directory stays empty). The computations are replaced by a function that
fails the test if it is reached."""

import importlib
import re

import pytest
from typer.testing import CliRunner

from attnphase.cli import app

COMPUTATIONS = [
    ("attnphase.theory", "learning_curves"),
    ("attnphase.validity.stability", "learning_curves_with_stability"),
    ("attnphase.transitions.table", "transition_table"),
    ("attnphase.sim", "run_grid"),
    ("attnphase.sweep", "run_sweep"),
    ("attnphase.gamp", "gamp_runs"),
    ("attnphase.validity.landscape", "probe_landscape"),
    ("attnphase.validity.trust", "trust_map"),
    ("attnphase.validity.outcomes", "outcomes"),
    ("attnphase.histogram", "run_histogram"),
    ("attnphase.paper.demo", "run_demo"),
]
CASES = [
    "theory --sigma 0",
    "theory --sigma -1",
    "theory --sigma nan",
    "theory --sigma inf",
    "theory --lam -1",
    "theory --lam nan",
    "theory --omega -0.1",
    "theory --omega 1.5",
    "theory --omega nan",
    "theory --alpha 0",
    "theory --alpha -1",
    "theory --alpha nan",
    "theory --alpha inf",
    "theory --alpha 1:2:0",
    "theory --alpha 1:2",
    "theory --alpha ,",
    "theory --alpha 1,,2",
    "theory --rank 0",
    "theory --rank -1",
    "theory --teacher-rank 0",
    "theory --A 1,2,3",
    "theory --A a,b,c,d",
    "theory --A nan,0,0,1",
    "theory --order 1",
    "theory --order a",
    "theory --order 2,3,4",
    "theory --format yaml",
    "theory --plot out.xyz",
    "theory --clusters 0",
    "theory --clusters 2 --label-correlation 2",
    "theory --clusters 2 --cluster-norm -1",
    "theory --engine qmc --randomisations 0",
    "theory --engine qmc --points 0",
    "theory --engine foo",
    "simulate --d 1",
    "simulate --d 0",
    "simulate --d -5",
    "simulate --seeds 0",
    "simulate --seeds -1",
    "simulate --optimizer gd --lr 0",
    "simulate --optimizer gd --lr nan",
    "simulate --steps 0",
    "simulate --n-test 0",
    "simulate --init foo",
    "simulate --optimizer x",
    "simulate --workers 0",
    "simulate --alpha 0.001 --d 10",
    "simulate --format yaml",
    "transition --omega 0.1:0.5:0",
    "transition --omega nan",
    "transition --alpha-min 2 --alpha-max 1",
    "transition --lines foo",
    "transition --workers 0",
    "transition --omega 2",
    "sweep --kind foo --grid alpha=1 --store s.sqlite",
    "sweep --grid alpha --store s.sqlite",
    "sweep --grid =1 --store s.sqlite",
    "sweep --grid alpha= --store s.sqlite",
    "sweep --kind simulation --grid alpha=1 --set d=abc --store s.sqlite",
    "sweep --grid alpha=1 --workers 0 --store s.sqlite",
    "sweep --grid alpha=1 --export out.xyz --store s.sqlite",
    "sweep --grid alpha=1,nan --store s.sqlite",
    "gamp --d 1",
    "gamp --alpha 0",
    "gamp --init foo",
    "gamp --max-iter 0",
    "landscape --start-overlap 2",
    "landscape --seeds 0",
    "landscape --d 1",
    "trust --omega 2",
    "trust --seeds 0",
    "trust --seeds 2 --gamp-seeds 5",
    "trust --d 1",
    "histogram --epochs 0",
    "histogram --runs 100000",
    "histogram --runs 400 --epochs 500 --batch-size 8",
    "histogram --batch-size 0",
    "histogram --schedule foo",
    "histogram --noise -1",
    "histogram --noise 1e300",
    "histogram --retrain-lr 0",
    "histogram --target-accuracy 2",
    "histogram --target-accuracy -0.5",
    "outcomes --runs 0",
    "outcomes --alpha 0",
    "figure fig2 --workers -1",
    "scaling --L x",
    "figure fig5",
    "gamp --alpha 1,2 --plot g.png",
    "sweep --grid alpha=1 --set alpha=2 --store s.sqlite",
    "sweep --grid alpha=1 --workers 2 --dask-workers 2 --store s.sqlite",
    "transition --omega 0.1,0.2 --sigma 0.5,1",
    "demo --num 1",
    "demo --num 0",
    "gamp --d 1",
]


@pytest.mark.parametrize("case", CASES)
def test_bad_input_is_one_line_before_any_work(tmp_path, monkeypatch, case):
    from attnphase.paper.recipes import MAKERS

    def computed(*args, **kwargs):
        raise AssertionError("computation started before the input was rejected")

    for module, name in COMPUTATIONS:
        monkeypatch.setattr(importlib.import_module(module), name, computed)
    for name in MAKERS:
        monkeypatch.setitem(MAKERS, name, computed)
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(app, case.split())
    assert res.exit_code == 2, res.output
    assert res.stdout == "" and res.stderr.count("\n") == 1, res.stderr
    option = r"(--[A-Za-z][a-z0-9-]*|NAME)"
    assert re.match(rf"error: {option}(/{option})*: ", res.stderr), res.stderr
    assert list(tmp_path.iterdir()) == []


NAMED = [
    ("theory --engine qmc --rank 2 --heads 2 --rope 0.5", "--rope"),
    ("theory --alpha 0.1:2:10000000", "--alpha"),
    ("outcomes --gtol 10", "--gtol"),
    ("outcomes --runs 100000000", "--runs"),
    ("simulate --d 50 --seeds 100000000", "--seeds"),
    ("simulate --d 1000 --rank 100000", "--rank"),
    ("transition --order 48,16 --check-order 48,16", "--check-order"),
    ("transition --omega 0:1:100000", "--omega"),
    ("trust --no-gamp --gamp-seeds 1", "--gamp-seeds"),
    ("scaling --L 2 --points 64", "--points"),
    ("theory --engine qmc --points 1099511627776", "--points"),  # it named --rank
    ("theory --engine qmc --randomisations 100000000", "--randomisations"),
    ("theory --engine qmc --rank 30 --randomisations 8", "--rank"),  # 4 h at 4 scramblings too
    ("scaling --L 8:2", "--L"),
    ("histogram --retrain-epochs 0 --retrain-lr 5", "--retrain-lr"),
    ("demo --num 100000", "--num"),
    # hours-long finite-d requests, refused with their estimate (one cost model a command)
    ("gamp --seeds 100000000", "--seeds"),
    ("landscape --seeds 100000000", "--seeds"),
    ("trust --seeds 100000000", "--seeds"),
    ("trust --no-gamp --seeds 1000000", "--seeds"),
    ("gamp --d 10000 --seeds 1000", "--seeds"),
    # more threads or processes than the cores allow
    ("simulate --threads 1000", "--threads"),
    ("outcomes --workers 1000", "--workers"),
]


@pytest.mark.parametrize(("case", "option"), NAMED)
def test_bad_input_names_the_option(tmp_path, monkeypatch, case, option):
    for module, name in COMPUTATIONS:
        monkeypatch.setattr(importlib.import_module(module), name, _never)
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(app, case.split())
    assert res.exit_code == 2, res.output
    assert res.stderr.startswith(f"error: {option}"), res.stderr
    assert res.stderr.count("\n") == 1, res.stderr
    assert list(tmp_path.iterdir()) == []


def _never(*args, **kwargs):
    raise AssertionError("computation started before the input was rejected")


def test_a_table_without_one_converged_fixed_point_exits_1(monkeypatch):
    """sigma 0.3 at omega 0.3: the semantic branch's start is not an admissible overlap (q rho <
    theta^2), so the only row is kind none; the table is printed, then one error line, exit 1."""
    res = CliRunner().invoke(app, "theory --sigma 0.3 --alpha 1 --branch semantic".split())
    assert res.exit_code == 1, res.output
    assert "none" in res.stdout and "False" in res.stdout
    assert res.stderr.splitlines()[-1] == (
        "error: none of the 1 fixed points converged (kind none above; the warnings say why)"
    )


def test_a_simulation_whose_every_run_diverged_exits_1():
    """GD with lr = 1e300 diverges at its first step: NaN rows, a warning each, then one error
    line and exit 1 (a table of failures is not a success)."""
    args = "simulate --d 20 --alpha 1 --seeds 1 --optimizer gd --lr 1e300 --n-test 10"
    res = CliRunner().invoke(app, args.split())
    assert res.exit_code == 1, res.output
    assert res.stdout.count("False") == 2  # the two starts, neither converged
    assert res.stderr.splitlines()[-1] == (
        "error: all 2 runs diverged (NaN rows above; the warnings say why)"
    )
