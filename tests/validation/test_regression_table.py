"""The pinned regression table (tests/regression_points.py): today's numbers at about 30
representative points (both channels, every branch, L = 2 and 3, rank 2, untied, a mixture,
transitions at two omegas, a GAMP run and its state-evolution trace) equal the table to 1e-10
relative (values at the rounding-noise level, which vanish at the fixed point, to 1e-12
absolute: regression_points.ATOL). The points are deterministic (fixed Gauss-Hermite orders,
seeded QMC scramblings and GAMP data), so any difference is a change of the computation, not
noise: a refactoring that moves a cold start or changes an iteration count fails here."""

import json

import numpy as np
import pytest

from tests.regression_points import ATOL, REGRESSION_POINTS, RTOL, SLOW, TABLE, compute

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
        np.testing.assert_allclose(got[key], value, rtol=RTOL, atol=ATOL, err_msg=f"{name}: {key}")
