"""The integration method as a strategy (`theory.method.Method`): what the layers above the
theory ask of it, for both methods, by value."""

import math

import numpy as np
import pytest

from attnphase.theory.method import QMC, GaussHermite, pop_method


@pytest.mark.parametrize("method", [GaussHermite((32, 12), (24, 8)), QMC(1024, 3, 5)])
def test_settings_round_trip_through_a_store_key(method):
    key = {"model": "m", **method.settings()}
    assert pop_method(key) == method and key == {"model": "m"}


def test_columns_name_the_method_and_its_settings():
    assert GaussHermite((32, 12), (24, 8)).columns() == {
        "method": "gauss-hermite", "n_xi": 32, "n_y": 12, "check_n_xi": 24, "check_n_y": 8
    }  # fmt: skip
    assert QMC(1024, 3, 5).columns() == {
        "method": "qmc", "points": 1024, "randomisations": 3, "seed": 5
    }  # fmt: skip


def test_gauss_hermite_combines_the_main_order_with_its_change_at_the_check_order():
    assert GaussHermite().combine([1.30, 1.31]) == (1.30, pytest.approx(0.01), 2)
    value, err, found = GaussHermite().combine([1.30, math.nan])
    assert value == 1.30 and math.isnan(err) and found == 1
    value, err, found = GaussHermite().combine([math.nan, 1.31])
    assert math.isnan(value) and math.isnan(err) and found == 1


def test_qmc_combines_the_scramblings_into_a_mean_and_its_standard_error():
    value, err, found = QMC().combine([1.0, 1.2, math.nan, 1.4])
    assert value == pytest.approx(1.2) and found == 3
    assert err == pytest.approx(np.std([1.0, 1.2, 1.4], ddof=1) / math.sqrt(3))
    value, err, found = QMC().combine([1.0, math.nan])
    assert value == 1.0 and math.isnan(err) and found == 1
    assert all(math.isnan(x) for x in QMC().combine([math.nan, math.nan])[:2])


def test_the_on_branch_test_uses_the_error_bar_only_for_qmc():
    # 2e-4 is above QMC's floor (1e-4) but not above three standard errors of 1e-4 on top of it
    assert QMC().significant(np.array([[2e-4]])) and not QMC().significant(2e-4, 1e-4)
    assert QMC().significant(np.array([0.0, 5e-4]), np.array([0.0, 1e-4]))
    assert GaussHermite().significant(2e-6, 1.0) and not GaussHermite().significant(5e-7)


def test_a_cost_estimate_grows_with_the_points_and_the_rank():
    from attnphase import ModelParams

    p1, p2 = ModelParams(), ModelParams(rank=2)
    assert QMC(2048).seconds(p1) == pytest.approx(2 * QMC(1024).seconds(p1))
    assert QMC().seconds(p2) == pytest.approx(4 * QMC().seconds(p1))
    assert GaussHermite((64, 24)).seconds(p1) > GaussHermite((32, 12)).seconds(p1)


@pytest.mark.parametrize("make", [GaussHermite, QMC])
def test_a_tolerance_that_certifies_nothing_is_refused(make):
    """The convergence test is vacuous above MAX_TOL (a sweep with tol=10 stored its start as a
    converged fixed point); every solver option is checked where the method is made."""
    from attnphase.theory.method import MAX_TOL

    assert make(tol=MAX_TOL).tol == MAX_TOL
    for bad, match in (
        ({"tol": 10 * MAX_TOL}, "tol must be at most"),
        ({"tol": 0.0}, "tol"),
        ({"damping": 1.0}, "damping"),
        ({"anderson": -1}, "anderson"),
        ({"max_iter": 0}, "max_iter"),
    ):
        with pytest.raises(ValueError, match=match):
            make(**bad)


def test_a_sweep_refuses_a_vacuous_tolerance_before_any_work(tmp_path):
    from typer.testing import CliRunner

    from attnphase.cli import app

    store = tmp_path / "s.sqlite"
    res = CliRunner().invoke(
        app, ["sweep", "--grid", "alpha=1", "--set", "tol=10", "--store", str(store)]
    )
    assert res.exit_code == 2 and "tol must be at most" in res.output
    assert not store.exists()


def test_equal_orders_give_no_error_estimate_rather_than_zero():
    """The error is the change between the two orders: with check_order = order it would be 0
    whatever the quadrature's error, so it is NaN (unknown)."""
    from attnphase import solve

    same = GaussHermite((16, 8), (16, 8))
    assert not same.estimates_errors and GaussHermite().estimates_errors
    value, err, n = same.combine([0.5, 0.5])
    assert value == 0.5 and math.isnan(err) and n == 2
    r = solve(1.5, branch="positional", method=same)
    assert r.converged and math.isnan(r.test_error_err) and math.isnan(float(r.q_err))
