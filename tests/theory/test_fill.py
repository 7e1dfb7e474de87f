"""Unconverged points of a curve or map re-solved before they are drawn (`fill_unconverged`):
warm from the nearest converged point of their branch, then at a finer integration; a point
nothing converges stays marked."""

from __future__ import annotations

import dataclasses

import pytest

from attnphase import GaussHermite, ModelParams, NonConvergenceWarning, learning_curves
from attnphase.theory import fill_unconverged

COARSE = GaussHermite((24, 8), (16, 8))


def test_a_hole_is_solved_warm_from_its_neighbour_to_the_same_fixed_point():
    """The middle point marked unconverged comes back at the fixed point the curve had found
    (theta equal to 5e-8 measured; the solver's tolerance is 1e-6 relative)."""
    p = ModelParams()
    curve = learning_curves([1.4, 1.5, 1.6], p, ("semantic",), method=COARSE)
    holed = list(curve)
    holed[1] = dataclasses.replace(curve[1], converged=False)
    filled = fill_unconverged(holed, p, COARSE)
    assert filled[1].converged and filled[1].kind == "semantic"
    assert filled[1].theta == pytest.approx(curve[1].theta, rel=1e-5)
    assert filled[0] is holed[0] and filled[2] is holed[2]  # converged points are kept as such


def test_a_point_nothing_converges_stays_marked():
    p = ModelParams()
    hopeless = dataclasses.replace(COARSE, max_iter=1)
    with pytest.warns(NonConvergenceWarning):
        curve = learning_curves([1.5], p, ("semantic",), method=hopeless)
    assert not curve[0].converged
    assert not fill_unconverged(curve, p, hopeless)[0].converged
