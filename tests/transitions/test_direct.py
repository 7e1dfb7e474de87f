"""The transitions solved directly (`attnphase.transitions.direct`): where the coarse start
scan cannot be trusted, the scan answers; the start scan's lost points are solved again. The
roots against the scan's are in tests/transitions/test_scan.py."""

from __future__ import annotations

import dataclasses
import math
import warnings

import pytest

from attnphase import QMC, GaussHermite, ModelParams, find_transitions
from attnphase.transitions import direct, scan
from attnphase.transitions.gauss_hermite_lines import first_point


@pytest.fixture
def doubted(monkeypatch):
    """The start scan with a doubt, and the scan replaced by a marker."""
    real = first_point

    def with_doubt(*args, **kwargs):
        return dataclasses.replace(real(*args, **kwargs), doubts=("a doubt",))

    marker = object()
    monkeypatch.setattr(direct, "first_point", with_doubt)
    monkeypatch.setattr(scan, "scan_alphas", lambda *args, **kwargs: marker)
    return marker


WINDOW = dict(alpha_min=1.0, alpha_max=1.6, num=3, method=GaussHermite((16, 8), (12, 6)))


def test_a_doubted_start_scan_hands_over_to_the_scan(doubted):
    with pytest.warns(UserWarning, match="approach 'direct': on the start scan, a doubt; scanned"):
        assert find_transitions(ModelParams(), approach="direct", **WINDOW) is doubted
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # auto hands over without a word
        assert find_transitions(ModelParams(), **WINDOW) is doubted


def test_the_approach_is_checked():
    with pytest.raises(ValueError, match="approach must be one of"):
        find_transitions(ModelParams(), approach="newton")
    with pytest.raises(ValueError, match="approach: 'direct' solves with the Gauss-Hermite"):
        find_transitions(ModelParams(), approach="direct", method=QMC(256, 2))


def test_a_lost_point_between_two_found_is_solved_again_from_the_one_before():
    """The mechanism on a cheap curve (omega 0.3, order (16, 8)): the middle point marked lost
    is solved again, warm from the first, to the curve's own fixed point (its training loss
    within the solver's tolerance, 1e-6 relative, of the curve's); a lost point at the curve's
    end is a branch's end, not a hole, and stays lost."""
    from attnphase import learning_curve
    from attnphase.transitions.gauss_hermite_lines import _fill_holes

    p, order = ModelParams(), (16, 8)
    curve = learning_curve([1.0, 1.2, 1.4], p, branch="positional", method=GaussHermite(order))
    truth = curve[1].train_loss
    lost = [curve[0], dataclasses.replace(curve[1], converged=False), curve[2]]
    assert _fill_holes(p, "positional", lost, order) == [True, True, True]
    assert lost[1].train_loss == pytest.approx(truth, rel=1e-6)
    end = [curve[0], curve[1], dataclasses.replace(curve[2], converged=False)]
    assert _fill_holes(p, "positional", end, order) == [True, True, False]


@pytest.mark.slow  # 27 s: a non-converging point of 447 iterations
def test_a_point_lost_by_the_start_scan_is_solved_again():
    """omega 0.1 at order (16, 8): the positional branch's solver stops at 447 iterations at
    alpha 0.66, between grid alphas where it converges; solved again at (24, 8) from the point
    before, the hole closes and the losses' crossing is bracketed (the converged alpha_c is
    0.7510 +- 0.0006; the start scan's linear interpolation, at the coarse order, lies within
    0.02 of it). Without the second solve, the doubt is reported."""
    p = ModelParams(omega=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        holed = first_point(p, 0.2, 2.5, (16, 8))
        filled = first_point(p, 0.2, 2.5, (16, 8), (24, 8))
    assert holed.doubts == (
        "the positional branch is not found at alpha 0.66, between grid alphas where it is",
    )
    assert filled.doubts == () and abs(filled.alpha_c - 0.751) < 0.02
    assert math.isfinite(filled.spinodal_positional)
