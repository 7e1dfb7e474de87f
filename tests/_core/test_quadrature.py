"""Gauss-Hermite nodes (`attnphase._core.quadrature`): normal moments, symmetry, bad order."""

import numpy as np
import pytest

from attnphase._core.quadrature import gauss_hermite


def test_gauss_hermite_integrates_normal_moments_and_is_symmetric():
    x, w = gauss_hermite(9)
    np.testing.assert_array_equal(x, -x[::-1])
    for k, moment in [(0, 1), (2, 1), (4, 3), (6, 15), (8, 105)]:
        assert np.sum(w * x**k) == pytest.approx(moment, rel=1e-12)
    with pytest.raises(ValueError, match="order"):
        gauss_hermite(0)
