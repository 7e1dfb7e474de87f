"""A result's short repr (one line, with errors), its HTML repr and its tables (`to_frame`,
`frame`): the same numbers as the attributes and `as_dict`."""

import math

import pytest

from attnphase import QMC, GaussHermite, ModelParams, TheoryResult, solve
from attnphase.gamp.result import GampResult
from attnphase.sim.result import SimResult

GH = GaussHermite((24, 8), (16, 6))


@pytest.fixture(scope="module")
def exact():
    return solve(1.5, ModelParams(), branch="semantic", method=GH)


def test_the_repr_is_one_line_with_the_verdict_and_errors(exact):
    text = repr(exact)
    assert "\n" not in text and len(text) < 300
    assert "kind=semantic" in text and "converged=True" in text
    assert f"test_error={exact.test_error:.6g} ± {exact.test_error_err:.2g}" in text
    assert "m=0," in text  # a pinned overlap: no error of exactly zero shown
    assert "gauss-hermite(order=[24, 8], check_order=[16, 6])" in text


def test_matrices_are_named_by_their_shape_and_html_escapes():
    r = solve(1.5, ModelParams(rank=2), method=QMC(128, 2))
    assert "q=<2x2 matrix>" in repr(r) and "theta=<1x2 matrix>" in repr(r)
    page = r._repr_html_()
    assert page.startswith("<table>") and "&lt;2x2 matrix&gt;" in page


def test_frames_hold_the_records_columns_in_order(exact):
    row = exact.to_frame()
    assert row.shape == (1, len(exact.as_dict()))
    assert row.loc[0, "theta"] == exact.theta and row.loc[0, "kind"] == "semantic"
    other = solve(1.0, ModelParams(), branch="positional", method=GH)
    table = TheoryResult.frame([exact, other])
    assert list(table["alpha"]) == [1.5, 1.0] and list(table["kind"]) == ["semantic", "positional"]
    assert math.isclose(table.loc[1, "m"], other.m)


def test_simulation_records_are_tables_too():
    from attnphase import SimConfig, simulate

    runs = simulate(SimConfig(d=40, alpha=1.0, n_test=50), seeds=[0, 1])
    table = SimResult.frame(runs)
    assert table.shape == (2, len(runs[0].as_dict()))
    assert list(table["test_error"]) == [r.test_error for r in runs]
    assert issubclass(GampResult, TheoryResult.__mro__[1])  # the same tables for GAMP's
