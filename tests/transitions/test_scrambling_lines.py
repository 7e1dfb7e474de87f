"""Transition lines with QMC integration by continuation: its branch map against the QMC
channel's own fixed points, lines that end with a reason, and (slow) the lines at L = 3. The
lines at L = 2 against the Gauss-Hermite lines: tests/validation/test_qmc_vs_gauss_hermite.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnphase.params import ModelParams
from attnphase.theory import QMC
from attnphase.theory.overlaps import MatrixOverlaps
from attnphase.theory.qmc.engine import Layout, make_channels, solve_qmc
from attnphase.transitions.continuation import LineFollower, LinePoint
from attnphase.transitions.lines import parameter_path, transition_lines
from attnphase.transitions.newton import OffDomain
from attnphase.transitions.scrambling_lines import (
    LINE_METHOD,
    ScramblingBranchMap,
    ScramblingLines,
    combine,
)

SOLVER_TOL = 1e-5  # solve_one's convergence test: max_i |G_i| / (|x_i| + 1e-8) <= tol
FAST_POINTS = 512


@pytest.fixture(scope="module")
def semantic_fixed_point():
    """The semantic fixed point at L = 2, omega 0.3, alpha 1.5 on one scrambling."""
    p = ModelParams(omega=0.3)
    method = QMC(FAST_POINTS, 1)
    channels = make_channels(p, method)
    near = [[0.08]], [[0.0]], [[0.12]], [[17.0]]  # q, M, theta, V near the fixed point
    start = MatrixOverlaps(*(np.array(v) for v in near))
    res = solve_qmc(1.5, p, start, "semantic", method, channels=channels)
    assert res.converged
    return p, channels[0], Layout(1, 1, 1).pack(res.solutions[0].overlaps), res.solutions[0]


def test_branch_map_residual_vanishes_at_the_engines_fixed_point_and_not_off_it(
    semantic_fixed_point,
):
    p, channel, x, sol = semantic_fixed_point
    bmap = ScramblingBranchMap("semantic", p, channel)
    assert list(bmap.free) == [0, 2, 3]  # q, theta, V free; M pinned at 0
    assert bmap.full(x[bmap.free])[bmap.free[bmap.order_slot]] == x[2]  # theta
    g, loss, err = bmap.evaluate(x[bmap.free], 1.5)
    # solve_one stops at relative residual 1e-5 (its prox warm-started, ours from fixed
    # guesses: the same global minima at this point)
    assert np.all(np.abs(g) <= SOLVER_TOL * np.abs(x[bmap.free]))
    # the engine's observables at its fixed point (measured equal to all 17 digits at alpha 1.3)
    assert loss == pytest.approx(sol.observables["train_loss"], rel=1e-9)
    assert err == pytest.approx(sol.observables["test_error"], rel=1e-9)
    # 1% off the fixed point the residual is >= 1e-3 relative (measured: 1.9e-3 on theta)
    off, _, _ = bmap.evaluate(1.01 * x[bmap.free], 1.5)
    assert np.max(np.abs(off) / np.abs(x[bmap.free])) > 1e-3
    assert bmap.evaluations == 2
    bmap.evaluate(x[bmap.free], 1.5)
    assert bmap.evaluations == 2  # cached


def test_branch_map_is_off_domain_where_collapsed_or_inadmissible(semantic_fixed_point):
    p, channel, x, _ = semantic_fixed_point
    bmap = ScramblingBranchMap("semantic", p, channel)
    collapsed = x.copy()
    collapsed[2] = 1e-6
    with pytest.raises(OffDomain, match="collapsed"):
        bmap.evaluate(collapsed[bmap.free], 1.5)
    negative_q = x.copy()
    negative_q[0] = -0.1
    with pytest.raises(OffDomain, match="admissible"):
        bmap.evaluate(negative_q[bmap.free], 1.5)
    assert ScramblingBranchMap("positional", p, channel).order_slot == 1  # M in (q, M, V)


def test_a_line_ends_with_its_reason_and_the_mean_over_scramblings_says_why():
    p = ModelParams(omega=0.3)
    lines = ScramblingLines(parameter_path(p), QMC(FAST_POINTS, 2, 0), 0)
    # theta held below the collapse threshold: the fold system is off its branch at once
    follower = LineFollower(
        lambda s: lines.fold("semantic", s, 1e-6),
        np.array([0.08, 17.0, 1.0]),
        alpha_window=(0.2, 2.5),
    )
    first = follower.step(0.3)
    assert math.isnan(first.alpha) and "collapsed" in first.status
    assert follower.step(0.35).status == first.status  # stays ended, no new solve
    ok = LinePoint(0.3, 1.25, math.nan, {"semantic": np.ones(4)}, 10, "converged")
    one = combine(0.3, [ok, first])
    assert one.alpha == 1.25 and math.isnan(one.alpha_err) and "1 of 2" in one.status
    none = combine(0.3, [first, first])
    assert math.isnan(none.alpha) and "collapsed" in none.status
    two = combine(
        0.3, [ok, LinePoint(0.3, 1.27, math.nan, {"semantic": np.ones(4)}, 5, "converged")]
    )
    assert two.alpha == pytest.approx(1.26) and two.alpha_err == pytest.approx(0.01)
    assert two.evaluations == 15 and two.status == "converged"


def test_general_lines_reject_unknown_names_and_bad_windows():
    p = ModelParams(omega=0.3)
    with pytest.raises(ValueError, match="names"):
        transition_lines(p, [0.3], method=LINE_METHOD, names=("alpha_x",))
    with pytest.raises(ValueError, match="alpha_min"):
        transition_lines(p, [0.3], method=LINE_METHOD, alpha_min=2.0, alpha_max=1.0)
    with pytest.raises(ValueError, match="scrambling"):
        ScramblingLines(parameter_path(p), QMC(FAST_POINTS, 2), 2)


@pytest.mark.slow
def test_l3_alpha_c_line_continues_from_the_scan_value():
    """The corrector runs at ScramblingLines.newton_tol = 1e-7: at 1e-10 (1 + |z|) it never
    converged on one scrambling's map (the prox warm starts make G repeat only to ~6e-10;
    'maximum iterations reached' after 320 SE map evaluations), at 1e-7 it did in 146.
    L = 3 (A = 0.6 on the diagonal, 0.2 off it, C = (1, 0, -1)): both branches exist at alpha_c
    (docs/theory.md §7.6: the positional one up to alpha ~ 1.28), and the continued alpha_c at
    omega 0.3 agrees with the scan-and-Brent value of the general engine, 0.408 +- 0.003
    (README: `attnphase transition --A $A --alpha-min 0.1 --alpha-max 0.5 --num 3 --points
    2048`, 4 scramblings, the first two the same as here) within three combined errors."""
    A = [[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]]
    p = ModelParams(omega=0.3, A=A)
    line = transition_lines(
        p,
        [0.3, 0.32],
        method=QMC(2048, 2),
        alpha_min=0.3,
        alpha_max=0.5,
        scan_num=3,
        names=("alpha_c",),
    )["alpha_c"]
    for pt in line:
        assert pt.status == "converged", pt.status
        sem, pos = pt.states["semantic"], pt.states["positional"]  # (q, M, theta, V)
        assert sem[1] == 0.0 and sem[2] > 0.01  # M pinned, theta > 0
        assert pos[2] == 0.0 and abs(pos[1]) > 0.01  # theta pinned, M != 0
    assert abs(line[0].alpha - 0.408) <= 3 * math.hypot(line[0].alpha_err, 0.003)
