"""`attnphase simulate` with the model options of `attnphase theory`: --rank,
--teacher-rank, --encoding; bad input exits 2 with one line before any work."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from attnphase.cli import app
from attnphase.params import ModelParams
from attnphase.sim import SimConfig, simulate

runner = CliRunner()
SIM = ["simulate", "--d", "10", "--alpha", "1"]
A3_TEXT = "0.6,0.2,0.2,0.2,0.6,0.2,0.2,0.2,0.6"


BAD = [
    ([*SIM, "--rank", "0"], "--rank: rank must be an integer >= 1"),
    ([*SIM, "--teacher-rank", "0"], "--teacher-rank: teacher_rank must be an integer >= 1"),
    ([*SIM, "--encoding", "1,0,-1"], "--encoding: encodings must be L = 2 numbers"),
    ([*SIM, "--A", A3_TEXT, "--encoding", "1,-1"], "--encoding: encodings must be L = 3 numbers"),
    ([*SIM, "--encoding", "1,nan"], "--encoding: encodings must have finite entries"),
    ([*SIM, "--encoding", "1,inf"], "--encoding: encodings must have finite entries"),
    ([*SIM, "--encoding", "1,x"], "--encoding: must be comma-separated numbers"),
    ([*SIM, "--A", "0.6,0.2,0.2,0.2,0.6,0.2,0.2,0.2"], "--A: must be L*L numbers"),
    ([*SIM, "--rank", "2", "--plot", "o.png"], "--plot: the overlay draws scalar theta and m"),
    ([*SIM, "--teacher-rank", "2", "--plot", "o.png"], "--plot: the overlay draws scalar"),
]


@pytest.mark.parametrize("args, start", BAD, ids=[" ".join(a[4:]) for a, _ in BAD])
def test_bad_model_options_exit_2_before_any_work(rejected, args, start):
    rejected(args, start)


def test_model_options_reach_the_simulations_unchanged():
    """--A (L = 3), --rank 2, --encoding: the rows are those of SimConfig(params=...) of the
    same ModelParams; overlaps are nested lists (q r x r, m = M K x r, theta t x r)."""
    args = [*SIM, "--A", A3_TEXT, "--rank", "2", "--encoding", "1,0.5,-1", "--seeds", "2"]
    res = runner.invoke(app, [*args, "--init", "semantic", "--n-test", "200", "--format", "json"])
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in res.stdout.splitlines()]
    p = ModelParams(A=[float(v) for v in A3_TEXT.split(",")], rank=2, encodings=(1, 0.5, -1))
    lib = simulate(SimConfig(params=p, d=10, alpha=1.0, init="semantic", n_test=200), [0, 1])
    for row, r in zip(rows, lib, strict=True):
        for key in ("test_error", "train_loss", "q", "m", "theta", "linear_test_error"):
            assert row[key] == getattr(r, key), key
    assert np.shape(rows[0]["q"]) == (2, 2) and np.shape(rows[0]["m"]) == (1, 2)
    assert np.shape(rows[0]["theta"]) == (1, 2)


def test_negative_first_encoding_is_a_value():
    args = [*SIM, "--encoding", "-1,1", "--init", "positional", "--seeds", "1"]
    res = runner.invoke(app, [*args, "--n-test", "50", "--format", "json"])
    assert res.exit_code == 0, res.output
    # p_1 = -1_d/sqrt(d): the positional start Q = 0.2 1_d has M = 1_d^T Q/d > 0
    assert json.loads(res.stdout)["m"] > 0


def test_plot_beyond_the_paper_case_draws_the_general_theory(tmp_path, monkeypatch):
    """An L = 3 model: the overlay's theory comes from the general engine, for that model."""
    import attnphase.figures.curves
    import attnphase.theory
    from attnphase.theory import QMC, GaussHermite, resolve_method

    calls = {}

    def learning_curves(alphas, p, branches, **kw):
        method = resolve_method(kw.pop("method", "auto"), p)
        if isinstance(method, GaussHermite):
            raise AssertionError("the L = 2 engine was asked for an L = 3 model")
        engine = "general" if isinstance(method, QMC) else None
        calls.update(alphas=alphas, p=p, branches=branches, engine=engine, **kw)
        return []

    def overlay(theory, sims, path):
        calls["sims"] = len(sims)

    monkeypatch.setattr(attnphase.theory, "learning_curves", learning_curves)
    monkeypatch.setattr(attnphase.figures.curves, "simulation_overlay", overlay)
    args = [*SIM, "--A", A3_TEXT, "--encoding", "1,0.5,-1", "--seeds", "1", "--n-test", "50"]
    res = runner.invoke(app, [*args, "--plot", str(tmp_path / "o.png")])
    assert res.exit_code == 0, res.output
    assert calls["engine"] == "general" and calls["alphas"] == [1.0]
    assert calls["branches"] == ["semantic", "positional"]
    assert calls["p"].L == 3 and calls["p"].encodings == ((1.0,), (0.5,), (-1.0,))
    assert calls["sims"] == 2  # one row per start
