"""The one runner (`attnphase.sweep.runner`): the run ids stores were written with stay valid,
points without a store, and one point computed in this process (a table computed once per
parameter set, as the paper's recipes cache theirs). The store's claims, resume and concurrent
runs are tested through the sweep (test_run.py, test_run_processes.py), the transition lines
(tests/transitions/test_line_table.py) and the trust map (tests/validity/test_trust.py)."""

import math

import pandas as pd
import pytest

from attnphase import ModelParams
from attnphase.sweep import ResultStore, StoreError, compute_once, point_id, run_id, run_points
from attnphase.theory import QMC, GaussHermite
from attnphase.transitions.line_table import SCAN_KIND, LineSetup, _model_dict
from attnphase.validity import trust
from tests.sweep_points import counted


def test_run_ids_of_stored_points_are_those_they_were_written_with():
    """Ids computed before the runner existed (sweep.spec.point_hash, the line table's and the
    trust map's own hashing), for points of every kind."""
    assert run_id("theory", {"alpha": 1.5}) == (
        "1b5a7f8d2b5b653b886a3bb67a1c4ca86dd3b6f1ec61b5f6627d00f25eb6654d"
    )
    assert run_id("theory", {"alpha": 1.2, "method": "qmc", "points": 128}) == (
        "508e679e77d5fdd7d222e28b0dc90b7c22f992741fa562f2faa3fb45c2578943"
    )
    assert run_id("simulation", {"d": 100, "alpha": 1.5, "seed": 3}) == (
        "d7ebfae5da147f3aa691566c02f95abc2213a749dfcbde450b45a41b7ca80ddb"
    )
    assert run_id("simulation", {"d": 100, "untied": True}) == (
        "75e5628ddfb7105e3f1ee1845a027afc1442a25d5869c581924e61ab42d3c6a3"
    )
    exact = LineSetup(_model_dict(ModelParams()), "omega", None, 0.2, 2.5, GaussHermite((32, 12)))
    assert point_id(SCAN_KIND, exact.scan_params(0.3)) == (
        "1f76f5079c7cc3ecb586b46cfb15ed6be76cdbf39eee37da83f4eb04bc46fe18"
    )
    assert exact.point_id("alpha_c", 0.3) == (
        "2a05c87036b4777de711f6abfa3cf838dc6302980803b2856bdac67b8e1fddf6"
    )
    qmc = LineSetup(_model_dict(ModelParams()), "omega", None, 0.2, 2.5, QMC(256, 2), 1)
    assert point_id(SCAN_KIND, qmc.scan_params(0.3)) == (
        "039df299111000a8a71e3fd26b7a540762f23f4649b965e100a877f13341dfca"
    )
    assert qmc.point_id("alpha_l", 0.4) == (
        "3fd99fc01bb3d854270e8f999b9934d7aa10937b7fae942d7ff4b0bf87b8c69f"
    )
    point = {"alpha": 1.5, "omega": 0.3, "sigma": 0.5, "lam": 0.01, "A": [[0.6, 0.4], [0.4, 0.6]],
             "d": 1000, "seeds": [0, 1], "gamp": True, "gamp_seeds": None, "gamp_max_iter": 400,
             "points": 4096, "randomisations": 4, "n_test": 2000}  # fmt: skip
    assert point_id(trust.KIND, {"version": trust.VERSION, **point}) == (
        "2b8491c12c6d36a8944eaf2c4117f9845c20c3d9ca03a16487713b9f91cf5763"
    )


def test_without_a_store_every_point_is_computed_and_failures_recorded(monkeypatch):
    monkeypatch.setenv("SWEEP_FAIL", "2.0")
    points = [(f"p{a}", "theory", {"alpha": a}) for a in (1.0, 2.0, 3.0)]
    run = run_points(points, counted, store=None)
    assert (run.computed, run.stored, run.failed) == (2, 0, 1)
    assert run.outcomes["p1.0"][:2] == ("ok", {"value": 2.0, "pid": run.outcomes["p1.0"][1]["pid"]})
    status, result, error = run.outcomes["p2.0"]
    assert status == "error" and result is None and "injected failure at alpha=2.0" in error


def test_a_table_is_computed_once_per_parameter_set(tmp_path):
    """compute_once as a cache of a table: the stored table reads back identical (floats, NaN,
    integers, booleans, text); other parameters are another point; a failure is recorded,
    raised, and computed again by a rerun."""
    store = tmp_path / "tables.sqlite"
    table = pd.DataFrame(
        {"alpha": [0.1, 1 / 3, 2.5], "theta": [math.nan, 1e-17, -0.25], "iterations": [3, 40, 7]}
        | {"converged": [False, True, True], "kind": ["trivial", "semantic", "semantic"]}
    )
    calls = []

    def compute():
        calls.append(1)
        return {"table": table.to_dict("list")}

    key = {"omega": 0.3, "alphas": [0.1, 1 / 3, 2.5], "order": [32, 12]}
    first = pd.DataFrame(compute_once(store, "theory_table", key, compute)["table"])
    again = pd.DataFrame(compute_once(store, "theory_table", key, compute)["table"])
    assert len(calls) == 1
    pd.testing.assert_frame_equal(first, table)
    pd.testing.assert_frame_equal(again, table)
    compute_once(store, "theory_table", {**key, "omega": 0.4}, compute)
    assert len(calls) == 2

    def broken():
        raise FloatingPointError("boom")

    with pytest.raises(StoreError, match="theory_table point failed: FloatingPointError: boom"):
        compute_once(store, "theory_table", {**key, "omega": 0.5}, broken)
    retried = compute_once(store, "theory_table", {**key, "omega": 0.5}, compute)
    pd.testing.assert_frame_equal(pd.DataFrame(retried["table"]), table)
    with ResultStore(store) as db:
        attempts = db.attempts()
    assert list(attempts["status"]) == ["ok", "ok", "error", "ok"] and len(calls) == 3


def test_an_interrupted_run_says_how_many_points_it_stored_and_keeps_them(tmp_path):
    """Ctrl-C (or SIGTERM, turned into it by the CLI) at the third point: the two finished
    points are stored, no claim is left behind, and the message says how to go on."""
    from attnphase._core.interrupt import Interrupted

    def fn(kind, params):
        if params["x"] == 2:
            raise KeyboardInterrupt
        return {"y": params["x"]}

    points = [(point_id("toy", {"x": x}), "toy", {"x": x}) for x in range(5)]
    store = tmp_path / "s.sqlite"
    with pytest.raises(Interrupted, match="^2 of 5 points .* stored in .*s.sqlite; rerun"):
        run_points(points, fn, store=store)
    with ResultStore(store) as db:
        assert len(db.frame()) == 2
        assert db._query("SELECT COUNT(*) FROM claims") == [(0,)]


@pytest.mark.parametrize(
    "backend, workers, match",
    [
        ("process", 1000, "^workers: 1000 local processes on"),  # a few a core at most
        ("process", 0, "^workers: must be >= 1"),
        ("serial", 0, "^workers: must be an integer >= 1"),
        ("thread", 1, "^backend must be one of"),
    ],
)
def test_a_bad_backend_is_refused_before_any_point_runs(backend, workers, match):
    with pytest.raises(ValueError, match=match):
        run_points(
            [("theory", {"alpha": 1.0})], counted, store=None, backend=backend, workers=workers
        )


def test_an_interrupt_while_the_backend_starts_says_nothing_was_computed(monkeypatch):
    """A Dask LocalCluster takes seconds to start; a Ctrl-C then escaped as click's bare
    "interrupted". It is the runner's `Interrupted`, which says that no point was computed."""
    import attnphase.sweep.runner as runner
    from attnphase._core.interrupt import Interrupted

    def starting(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "open_backend", starting)
    with pytest.raises(Interrupted, match="none of the 2 points .* computed: stopped while"):
        run_points([("theory", {"alpha": a}) for a in (1.0, 2.0)], counted, store=None)
