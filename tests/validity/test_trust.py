"""The trust map (docs/theory.md §9, `attnphase.validity.trust`): the verdict logic on constructed
rows,
the agreement tolerance, one small real grid point, resuming from the store, and the CLI's bad
input."""

from __future__ import annotations

import math

import pytest
from typer.testing import CliRunner

import attnphase.validity.trust as trust_module
from attnphase import ModelParams, trust_map
from attnphase.cli import app
from attnphase.validity.trust import JUMP_MASS_MAX, SEED_SD, agrees, judge, tolerance

runner = CliRunner()


def _row(**changes) -> dict:
    """A row every criterion passes: the theory converged, L-BFGS and GAMP agree with it,
    rs_stability 0.27 and jump mass 0 (alpha 1.5, omega 0.3, docs/theory.md §9)."""
    row = dict(
        sem_converged=True,
        sim_agree=True,
        gamp_agree=True,
        gamp_converged=True,
        sem_rs_stability=0.27,
        sem_jump_mass=0.0,
    )
    return row | changes


def test_all_criteria_pass_is_trustworthy():
    assert judge(_row()) == ("trustworthy", "")


@pytest.mark.parametrize(
    "change, reason",
    [
        ({"sem_converged": False}, "theory"),
        ({"sim_agree": False}, "simulation"),
        ({"gamp_agree": False}, "gamp"),
        ({"gamp_converged": False}, "gamp_converged"),
        ({"sem_rs_stability": 1.0}, "rs_stability"),
        ({"sem_rs_stability": math.nan}, "rs_stability"),
        ({"sem_jump_mass": JUMP_MASS_MAX}, "jump_mass"),
        ({"sem_jump_mass": math.nan}, "jump_mass"),
    ],
)
def test_each_criterion_alone_makes_the_point_rugged(change, reason):
    # the boundary values fail (rs_stability < 1 and jump mass < 1% are required), and an
    # unmeasured (NaN) stability is not a pass
    assert judge(_row(**change)) == ("rugged", reason)


def test_reasons_list_every_failed_criterion_and_gamp_not_run_is_not_a_failure():
    row = _row(sim_agree=False, gamp_agree=False, gamp_converged=False, sem_jump_mass=0.0146)
    assert judge(row) == ("rugged", "simulation+gamp+gamp_converged+jump_mass")
    assert judge(_row(gamp_agree=math.nan, gamp_converged=math.nan)) == ("trustworthy", "")
    assert judge(_row(gamp_agree=None, gamp_converged=None)) == ("trustworthy", "")


def test_tolerance_is_three_standard_errors_plus_five_percent():
    # 3 SD/sqrt(S) with the seed SD measured at d = 1000, scaled as 1/sqrt(d), + 5% |target|
    assert tolerance(0.06, 0.0073, 1000, 2) == pytest.approx(3 * 0.0073 / 2**0.5 + 0.003)
    assert tolerance(0.0, 0.0073, 250, 1) == pytest.approx(3 * 0.0073 * 2)
    assert tolerance(0.2, 0.0, 1000, 4) == pytest.approx(0.01)


def test_agreement_ignores_the_sign_of_q_and_flags_each_overlap():
    tol = tolerance(0.06, SEED_SD["theta"], 1000, 2)
    assert agrees(-0.06, 0.01, 0.06, 0.0, 1000, 2)  # Q -> -Q flips theta and m
    assert agrees(0.06 + 0.99 * tol, 0.0, 0.06, 0.0, 1000, 2)
    assert not agrees(0.06 + 1.01 * tol, 0.0, 0.06, 0.0, 1000, 2)
    assert not agrees(0.06, 0.24, 0.06, 0.0, 1000, 2)  # theta fine, m off
    assert not agrees(math.nan, 0.0, 0.06, 0.0, 1000, 2)


def test_a_small_real_point_gives_a_complete_row_and_resumes(tmp_path, monkeypatch):
    # alpha 1.5, omega 0.3: above alpha_c = 1.25, so the semantic branch is the global
    # minimum; its jump mass is 0 and rs_stability 0.269 +- 0.0003
    # (tests/validity/test_stability.py)
    store = tmp_path / "trust.sqlite"
    kw = dict(d=200, seeds=1, gamp_max_iter=5, points=512, randomisations=2, n_test=500)
    (row,) = trust_map(ModelParams(), [1.5], [0.3], store=store, **kw)
    for key in (
        "sem_kind pos_kind sem_theta sem_m pos_theta pos_m sem_train_loss pos_train_loss "
        "global_min sem_rs_stability pos_rs_stability sem_jump_mass pos_jump_mass "
        "sim_sem_theta sim_sem_m sim_pos_theta sim_pos_m sim_sem_train_loss gamp_status "
        "gamp_theta gamp_dtheta sim_agree gamp_agree verdict reasons seconds"
    ).split():
        assert key in row, key
    assert (row["sem_kind"], row["pos_kind"], row["global_min"]) == (
        "semantic",
        "positional",
        "semantic",
    )
    assert row["sem_jump_mass"] == 0.0
    # 512 x 2 points: measured 0.2709 +- 0.0049 (0.2662 +- 0.0017 at 4096 x 4); +-6 SE
    assert 0.24 < row["sem_rs_stability"] < 0.30
    # 5 GAMP iterations cannot converge: the verdict says so rather than passing, and calls it
    # unfinished rather than rugged (the runs stopped at max_iter, they did not cycle)
    assert row["gamp_converged"] is False and row["gamp_status"] == "maximum iterations reached"
    assert (row["verdict"], row["reasons"]) == ("inconclusive", "gamp_unfinished")

    # a rerun on the store computes nothing and returns the same row
    def forbidden(*a, **k):
        raise AssertionError("a stored point was computed again")

    monkeypatch.setattr(trust_module, "trust_point", forbidden)
    (again,) = trust_map(ModelParams(), [1.5], [0.3], store=store, **kw)
    for key, value in row.items():
        if isinstance(value, float) and math.isnan(value):
            assert math.isnan(again[key]), key
        else:
            assert again[key] == value, key


@pytest.mark.parametrize(
    "args, option",
    [
        (["--alpha", "0"], "--alpha"),
        (["--omega", "1.5"], "--omega"),
        (["--omega", "a:b"], "--omega"),
        (["--d", "1"], "--d"),
        (["--seeds", "0"], "--seeds"),
        (["--gamp-seeds", "0"], "--gamp-seeds"),
        (["--seeds", "2", "--gamp-seeds", "3"], "--gamp-seeds"),
        (["--points", "1"], "--points"),
        (["--sigma", "-1"], "--sigma"),
        (["--A", "1,0,0,1,0,0,0,0,1"], "--A"),
        (["--format", "xml"], "--format"),
        (["--plot", "PLOT_UNDER_A_FILE"], "--plot"),
        (["--store", "NOT_A_STORE"], "--store"),
    ],
)
def test_bad_input_exits_2_naming_the_option_before_any_work(args, option, tmp_path, monkeypatch):
    def forbidden(*a, **k):
        raise AssertionError("the map ran on bad input")

    monkeypatch.setattr(trust_module, "trust_map", forbidden)
    blocker = tmp_path / "file"
    blocker.write_text("not a store")
    swap = {"PLOT_UNDER_A_FILE": str(blocker / "x.png"), "NOT_A_STORE": str(blocker)}
    res = runner.invoke(app, ["trust", *[swap.get(a, a) for a in args]])
    assert res.exit_code == 2, res.output
    assert option in res.output and len(res.output.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]
    assert blocker.read_text() == "not a store"


def test_a_failing_point_is_reported_and_retried_not_fatal(tmp_path, monkeypatch):
    calls = []

    def broken(p, alpha, **kw):
        calls.append(alpha)
        raise FloatingPointError("boom")

    monkeypatch.setattr(trust_module, "trust_point", broken)
    store = tmp_path / "trust.sqlite"
    with pytest.warns(UserWarning, match="boom"):
        rows = trust_map(ModelParams(), [0.5, 1.0], [0.3], d=100, seeds=1, store=store)
    assert [(r["alpha"], r["verdict"]) for r in rows] == [(0.5, "error"), (1.0, "error")]
    assert "FloatingPointError: boom" in rows[0]["reasons"]
    with pytest.warns(UserWarning):
        trust_map(ModelParams(), [0.5], [0.3], d=100, seeds=1, store=store)
    assert calls == [0.5, 1.0, 0.5]  # the failed point is computed again by a rerun


def test_cli_without_gamp_prints_the_table_and_passes_the_options(monkeypatch):
    seen = {}

    def fake(p, alphas, omegas, d, seeds, **kw):
        seen.update(alphas=alphas, omegas=omegas, d=d, seeds=seeds, **kw)
        row = _row(gamp_agree=math.nan, gamp_converged=math.nan)
        return [row | {"alpha": 1.5, "omega": 0.3, "verdict": "trustworthy", "reasons": ""}]

    monkeypatch.setattr(trust_module, "trust_map", fake)
    res = runner.invoke(
        app, ["trust", "--alpha", "1:2:3", "--omega", "0.3", "--d", "300", "--no-gamp"]
    )
    assert res.exit_code == 0, res.output
    assert "trustworthy" in res.output and "gamp_status" not in res.output
    assert seen["alphas"] == [1.0, 1.5, 2.0] and seen["omegas"] == [0.3]
    assert (seen["d"], seen["seeds"], seen["gamp"]) == (300, 2, False)


def test_gamp_cut_short_by_max_iter_is_inconclusive_not_rugged():
    """Runs stopped by their max_iter before converging, cycling or stalling are no evidence of
    a rugged landscape (`trust --gamp-max-iter 1` said "rugged" before); beside another failure
    the point stays rugged for that one, and a cycling run is still evidence."""
    unfinished = _row(gamp_converged=False, gamp_status="maximum iterations reached")
    assert judge(unfinished) == ("inconclusive", "gamp_unfinished")
    both = "converged; maximum iterations reached"  # one run converged, one was cut short
    assert judge(unfinished | {"gamp_status": both}) == ("inconclusive", "gamp_unfinished")
    assert judge(unfinished | {"sim_agree": False}) == ("rugged", "simulation")
    mixed = "converged; cycling: 2 samples switch prox minima (2 of 3000)"
    assert judge(_row(gamp_converged=False, gamp_status=mixed)) == ("rugged", "gamp_converged")
