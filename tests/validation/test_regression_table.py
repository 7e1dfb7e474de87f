"""The pinned regression table (tests/regression_points.py): today's numbers at about 30
representative points (both channels, every branch, L = 2 and 3, rank 2, untied, a mixture,
transitions at two omegas, a GAMP run and its state-evolution trace) equal the table to 1e-10
relative (values at the rounding-noise level, which vanish at the fixed point, to 1e-12
absolute: regression_points.ATOL; the QMC points to a measured CPU-portability floor,
regression_points.PORTABLE). The points are deterministic (fixed Gauss-Hermite orders, seeded
QMC scramblings and GAMP data), so any difference is a change of the computation, not noise: a
refactoring that moves a cold start or changes an iteration count fails here."""

import json

import numpy as np
import pytest

from tests.regression_points import REGRESSION_POINTS, SLOW, TABLE, compute, tolerance

TABLE_VALUES = json.loads(TABLE.read_text())


def _params():
    for name in REGRESSION_POINTS:
        marks = [pytest.mark.slow] if name in SLOW else []
        yield pytest.param(name, marks=marks, id=name)


def test_table_covers_every_point():
    assert sorted(TABLE_VALUES) == sorted(REGRESSION_POINTS)


@pytest.mark.parametrize("name", list(_params()))
def test_point_matches_the_table(name):
    got, want = compute(name), TABLE_VALUES[name]
    assert sorted(got) == sorted(want)
    for key, value in want.items():
        rtol, atol = tolerance(name, key, want)
        np.testing.assert_allclose(got[key], value, rtol=rtol, atol=atol, err_msg=f"{name}: {key}")


def test_the_portable_floor_scales_with_the_matrix_not_the_entry():
    """An off-diagonal conjugate of 7.8e-4 in a matrix whose largest entry is 1.2e-2 gets
    PORTABLE x 1.2e-2; its error likewise; a Gauss-Hermite point keeps 1e-10 and ATOL."""
    from tests.regression_points import ATOL, PORTABLE, RTOL

    table = {"Vhat[0]": 5.1e-3, "Vhat[1]": 7.8e-4, "Vhat[3]": -1.2e-2, "Vhat_err[1]": 1e-3}
    assert tolerance("qmc/x", "Vhat[1]", table) == (RTOL, PORTABLE * 1.2e-2)
    assert tolerance("qmc/x", "Vhat_err[1]", table) == (RTOL, PORTABLE * 1.2e-2)
    assert tolerance("exact/x", "Vhat[1]", table) == (RTOL, ATOL)
