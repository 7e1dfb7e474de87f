"""Outcome study (App. E.4, Fig. 15): the classifier on planted end points, the study on planted
stored runs (each run against its own problem's informed runs; where its store goes; gtol), a
tiny end-to-end run through the sweep store in every output format, and the CLI's rejection of
bad options."""

from __future__ import annotations

import io
import json
import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import attnphase.sweep
import attnphase.validity.outcomes as outcomes_module
from attnphase.cli import app
from attnphase.sweep import SweepSpec
from attnphase.validity.outcomes import (
    LOSS_RTOL,
    OVERLAP_ATOL,
    classify,
    outcome_specs,
    outcomes,
    summarise,
)

runner = CliRunner()
SIGMA = 0.5


def overlaps(Q, teacher, sigma=SIGMA):
    """(theta, m) of a d-vector Q: sigma^2 Q*^T Q/d and 1^T Q/d (docs/theory.md §1)."""
    d = len(Q)
    return sigma**2 * teacher @ Q / d, Q.sum() / d


@pytest.fixture
def planted():
    """End points planted at d = 500: Q = Q* (semantic), Q = 0.25 * 1 (positional), and the
    informed runs' (theta, m, loss) with losses 0.0045 and 0.0075 (the ratio measured at
    alpha = 3)."""
    rng = np.random.default_rng(0)
    d = 500
    teacher = rng.standard_normal(d)
    sem = (*overlaps(teacher, teacher), 0.0045)
    pos = (*overlaps(np.full(d, 0.25), teacher), 0.0075)
    return rng, teacher, sem, pos


def test_planted_semantic_and_positional_points_are_recognised(planted):
    rng, teacher, sem, pos = planted
    assert abs(sem[0] / SIGMA**2 - 1) < 0.1 and abs(sem[1]) < 0.1  # Q* is semantic
    assert abs(pos[0]) / SIGMA**2 < 0.05 and pos[1] == pytest.approx(0.25)
    # the point itself, its sign flip (S(h) = S(-h)) and a slightly perturbed copy
    Q = teacher + 0.02 * rng.standard_normal(len(teacher))
    for theta, m in (sem[:2], (-sem[0], -sem[1]), overlaps(Q, teacher)):
        assert classify(theta, m, 0.0045 * 1.001, sem, pos, sigma=SIGMA) == "semantic"
    for theta, m in (pos[:2], (-pos[0], -pos[1])):
        assert classify(theta, m, 0.0075, sem, pos, sigma=SIGMA) == "positional"


def test_other_end_points(planted):
    rng, teacher, sem, pos = planted
    small = 0.01 * rng.standard_normal(len(teacher))  # a random Q: overlaps ~ 1e-3
    theta, m = overlaps(small, teacher)
    assert classify(theta, m, 0.009, sem, pos, sigma=SIGMA) == "other"
    # a random Q that happens to have the semantic loss still has the wrong overlaps
    assert classify(theta, m, 0.0045, sem, pos, sigma=SIGMA) == "other"
    # semantic overlaps but a much higher loss: another minimum
    assert classify(*sem[:2], 0.006, sem, pos, sigma=SIGMA) == "other"
    # positional overlaps with the semantic loss (a mix-up of the two) is not semantic
    assert classify(*pos[:2], 0.0045, sem, pos, sigma=SIGMA) == "other"
    nan = float("nan")
    assert classify(nan, nan, nan, sem, pos, sigma=SIGMA) == "other"
    # a failed informed run: nothing to compare with
    assert classify(*sem, (nan, nan, nan), pos, sigma=SIGMA) == "other"


def test_edges_of_the_tolerances(planted):
    _, _, sem, pos = planted
    theta, m, loss = sem
    inside, outside = 1 - 1e-9, 1 + 1e-9
    for factor, want in ((inside, "semantic"), (outside, "other")):
        assert classify(theta, m, loss * (1 + LOSS_RTOL * factor), sem, pos, sigma=SIGMA) == want
        assert classify(theta, m, loss * (1 - LOSS_RTOL * factor), sem, pos, sigma=SIGMA) == want
        # overlap distance along |m|, then along |theta|/sigma^2
        shifted_m = m + math.copysign(OVERLAP_ATOL * factor, m)
        assert classify(theta, shifted_m, loss, sem, pos, sigma=SIGMA) == want
        shifted_theta = theta + SIGMA**2 * OVERLAP_ATOL * factor
        assert classify(shifted_theta, m, loss, sem, pos, sigma=SIGMA) == want


def test_both_informed_runs_in_one_minimum_overlaps_decide(planted):
    """At small alpha the semantic start may end in the positional minimum (seen at d = 500,
    alpha = 0.5): a run reaching it matches both informed runs and is positional by its
    overlaps; a semantic-looking minimum reached by both is semantic."""
    _, _, sem, pos = planted
    assert classify(*pos, pos, pos, sigma=SIGMA) == "positional"
    assert classify(*sem, sem, sem, sigma=SIGMA) == "semantic"


def test_bad_classifier_parameters(planted):
    _, _, sem, pos = planted
    for kwargs, name in (
        ({"sigma": 0.0}, "sigma"),
        ({"sigma": SIGMA, "overlap_atol": -1.0}, "overlap_atol"),
        ({"sigma": SIGMA, "loss_rtol": -0.1}, "loss_rtol"),
    ):
        with pytest.raises(ValueError, match=name):
            classify(*sem, sem, pos, **kwargs)


def test_summary_counts_and_fractions():
    runs = [
        {"alpha": 1.0, "outcome": o, "converged": c}
        for o, c in (("semantic", True), ("positional", True), ("positional", False))
    ] + [{"alpha": 2.0, "outcome": "other", "converged": True}]
    one, two = summarise(runs, [1.0, 2.0])
    assert (one["n_semantic"], one["n_positional"], one["n_other"]) == (1, 2, 0)
    assert one["fraction_positional"] == pytest.approx(2 / 3)
    assert one["se_positional"] == pytest.approx(math.sqrt(2 / 9 / 3))
    assert one["not_converged"] == 1
    assert two["runs"] == 1 and two["fraction_other"] == 1.0


def planted_end_point(alpha: float, init: str, seed: int):
    """(status, theta, m, train_loss) planted for one stored run. The informed runs' losses
    depend on alpha and seed (>= 10% apart: pairing a run with another problem's informed runs
    would make it "other"); trained seed 0 failed, 1 ends in the semantic minimum (sign
    flipped), 2 in the positional one, 3 in a third minimum."""
    scale = alpha * (1 + seed / 10)
    informed = {
        "semantic": (0.2, 0.01, 0.0045 * scale),
        "positional": (0.005, 0.25, 0.0075 * scale),
    }
    if init in informed:
        return ("ok", *informed[init])
    if seed == 0:
        return ("error", float("nan"), float("nan"), float("nan"))
    theta, m, loss = [informed["semantic"], informed["positional"], (0.0, 0.0, 0.009 * scale)][
        seed - 1
    ]
    return ("ok", -theta, -m, loss) if seed == 1 else ("ok", theta, m, loss)


@pytest.fixture
def planted_sweeps(tmp_path, monkeypatch):
    """run_sweep replaced by the planted end points; the in-memory directory moved to tmp."""
    seen = []

    def fake_run_sweep(spec, store, **kwargs):
        seen.append((Path(store), spec))
        rows = []
        for rid, p in spec.runs():
            status, theta, m, loss = planted_end_point(p["alpha"], p["init"], p["seed"])
            rows.append(
                {"run_id": rid, "alpha": p["alpha"], "init": p["init"], "seed": p["seed"]}
                | {"run_status": status, "theta": theta, "m": m, "train_loss": loss}
                | {"converged": status == "ok"}
            )
        return pd.DataFrame(rows[::-1])  # the store's order is not the spec's

    monkeypatch.setattr(attnphase.sweep, "run_sweep", fake_run_sweep)
    shm = tmp_path / "shm"
    shm.mkdir()
    monkeypatch.setattr(outcomes_module, "_SHM", shm)
    return seen, shm


def test_study_classifies_planted_end_points_against_their_own_problem(planted_sweeps):
    seen, shm = planted_sweeps
    study = outcomes([1.0, 2.0], 4, sigma=SIGMA)
    for rec in study.fractions:
        assert (rec["runs"], rec["n_semantic"], rec["n_positional"], rec["n_other"]) == (4, 1, 1, 2)
        assert rec["fraction_other"] == 0.5 and rec["not_converged"] == 1
    by_seed = {(r["alpha"], r["seed"]): r["outcome"] for r in study.runs}
    for a in (1.0, 2.0):
        got = [by_seed[(a, s)] for s in range(4)]
        assert got == ["other", "semantic", "positional", "other"]
    order = [(r["alpha"], r["seed"]) for r in study.runs]
    assert order == [(a, s) for a in (1.0, 2.0) for s in range(4)]
    # a temporary store lives in the in-memory directory; both sweeps share it
    stores = {store for store, _ in seen}
    assert len(stores) == 1 and shm in stores.pop().parents


def test_temporary_store_falls_back_without_the_memory_directory(planted_sweeps, monkeypatch):
    seen, shm = planted_sweeps
    monkeypatch.setattr(outcomes_module, "_SHM", shm / "missing")
    outcomes([1.0], 1, sigma=SIGMA)
    assert shm not in seen[0][0].parents


def test_gtol_applies_to_the_trained_runs_only(planted_sweeps):
    seen, _ = planted_sweeps
    outcomes([1.0], 2, sigma=SIGMA, gtol=1e-6)
    gtols = {spec.base.get("init", "informed"): {p["gtol"] for p in spec.points()}
             for _, spec in seen}  # fmt: skip
    assert gtols == {"informed": {1e-8}, "random": {1e-6}}


def test_default_protocol_keeps_the_run_ids_of_stores_written_before_gtol_was_an_option():
    trained, _ = outcome_specs([0.5, 3.0], 2)
    before = SweepSpec(
        "simulation",
        {"alpha": [0.5, 3.0], "seed": [0, 1]},
        {"d": 500, "omega": 0.3, "sigma": 0.5, "lam": 0.01, "n_test": 1000}
        | {"init": "random", "optimizer": "adam", "lr": None, "steps": None},
    )
    assert [rid for rid, _ in trained.runs()] == [rid for rid, _ in before.runs()]


TINY = ["outcomes", "--alpha", "0.5,2", "--runs", "3", "--d", "50", "--steps", "300"]
TINY += ["--n-test", "100"]


@pytest.mark.filterwarnings("ignore::attnphase.sim.SimulationWarning")  # 300 Adam steps
def test_tiny_study_end_to_end_resumes_from_the_store(tmp_path):
    """d = 50, 2 alphas, 3 runs, Adam for at most 300 steps: one object per alpha, fractions
    adding up to 1; a rerun on the same store computes nothing."""
    store = tmp_path / "runs.sqlite"
    plot = tmp_path / "fractions.png"
    args = [*TINY, "--store", str(store), "--format", "json"]
    res = runner.invoke(app, [*args, "--plot", str(plot)])
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]
    assert [r["alpha"] for r in rows] == [0.5, 2.0]
    for r in rows:
        assert r["runs"] == 3
        assert r["n_semantic"] + r["n_positional"] + r["n_other"] == 3
        total = r["fraction_semantic"] + r["fraction_positional"] + r["fraction_other"]
        assert total == pytest.approx(1.0, abs=1e-12)
        assert r["fraction_positional"] == r["n_positional"] / 3
        assert {"se_semantic", "se_positional", "se_other", "not_converged"} <= set(r)
    assert plot.stat().st_size > 0 and plot.with_suffix(".pdf").stat().st_size > 0
    again = runner.invoke(app, args)
    assert again.exit_code == 0
    assert "0 computed, 6 already stored" in again.stderr  # the trained runs
    assert "0 computed, 12 already stored" in again.stderr  # the informed runs
    assert [json.loads(line) for line in again.stdout.splitlines() if line.startswith("{")] == rows
    # the same rows as CSV (every field) and as a table (the documented columns at least)
    wanted = ["alpha", "runs", "fraction_semantic", "fraction_positional", "fraction_other"]
    for fmt, sep in (("csv", ","), ("table", r"\s+")):
        res = runner.invoke(app, [*TINY, "--store", str(store), "--format", fmt])
        assert res.exit_code == 0, res.output
        frame = pd.read_csv(io.StringIO(res.stdout), sep=sep)
        assert set(wanted) <= set(frame.columns)
        for col in wanted:
            assert frame[col].tolist() == pytest.approx([r[col] for r in rows], abs=1e-6)


@pytest.fixture
def rejected(tmp_path, monkeypatch):
    """Run the CLI in an empty directory holding a file FILE, with the computation replaced by
    a failure; check exit 2, one line naming the option, nothing written."""
    import attnphase.validity.outcomes

    def computed(*args, **kwargs):
        raise AssertionError("computation started before the input was rejected")

    monkeypatch.setattr(attnphase.validity.outcomes, "outcomes", computed)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "FILE").write_text("not a results store\n" * 40)

    def check(args, option):
        before = sorted(p.name for p in tmp_path.rglob("*"))
        res = runner.invoke(app, ["outcomes", *args])
        assert res.exit_code == 2, res.output
        assert res.stdout == ""
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and option in lines[0]
        assert sorted(p.name for p in tmp_path.rglob("*")) == before

    return check


@pytest.mark.parametrize(
    "args, option",
    [
        (["--runs", "0"], "--runs"),
        (["--alpha", "-1"], "--alpha"),
        (["--optimizer", "sgd"], "--optimizer"),
        (["--init", "foo"], "--init"),
        (["--format", "xml"], "--format"),
        (["--d", "0"], "--d"),
        (["--lr", "-1"], "--lr"),
        (["--gtol", "0"], "--gtol"),
        (["--gtol", "10"], "--gtol"),
        (["--overlap-atol", "1e300"], "--overlap-atol: overlap_atol must be at most 1"),
        (["--loss-rtol", "2"], "--loss-rtol: loss_rtol must be at most 1"),
        (["--omega", "1.5"], "--omega"),
        (["--overlap-atol", "0"], "--overlap-atol"),
        (["--loss-rtol", "-1"], "--loss-rtol"),
        (["--workers", "0"], "--workers"),
        (["--plot", "FILE/fractions.png"], "--plot"),
        (["--plot", "fractions.xyz"], "--plot"),
        (["--store", "FILE"], "--store"),  # not a store
        (["--store", "FILE/runs.sqlite"], "--store"),
    ],
)
def test_bad_options_exit_2_before_any_work(rejected, args, option):
    rejected(args, option)


def test_unwritable_plot_directory_exits_2(rejected, tmp_path, monkeypatch):
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
    rejected(["--plot", "RO/fractions.png"], "--plot")
