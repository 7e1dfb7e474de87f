"""The batch axis: many fixed points (and the scramblings of one) iterated together, every
round's prox problems in one call (`solve_batch`, `iterate.gather`, `moments_many`).

The numba prox solves every problem alone, so a fixed point solved in a batch must be the one
solved alone to the bit: any mix-up between the batch's members (a point answered with another's
moments, a warm start or V^{-1} taken from a neighbour, a finished point stepped again) moves
its numbers far above rounding.
"""

import numpy as np
import pytest

from attnphase import QMC, GaussHermite, ModelParams, solve, solve_batch
from attnphase.theory.iterate import gather, run
from attnphase.theory.qmc.channel import MomentsRequest, QMCChannel, moments_many

L3 = ModelParams(A=((0.6, 0.2, 0.2), (0.2, 0.6, 0.2), (0.2, 0.2, 0.6)))
SMALL = QMC(128, 3)


def _numbers(r):
    return np.concatenate([np.ravel(r.values[k]) for k in ("q", "M", "theta", "V")])


def test_a_batch_of_points_gives_each_points_fixed_point_to_the_bit():
    """Three points that differ in alpha, branch and model (omega), solved together: each is
    the point `solve` gives alone, and the errors over scramblings too."""
    points = [
        (2.0, L3, "semantic"),
        (1.0, ModelParams(), "positional"),
        (1.5, ModelParams(omega=0.5), "semantic"),
    ]
    together = solve_batch(points, method=SMALL)
    for (alpha, p, branch), res in zip(points, together, strict=True):
        alone = solve(alpha, p, branch=branch, method=SMALL)
        assert res.converged and alone.converged
        assert np.array_equal(_numbers(res), _numbers(alone))
        assert res.test_error_err == alone.test_error_err
        assert res.kind == branch


def test_exact_points_in_a_batch_are_solved_one_by_one():
    gh = GaussHermite((24, 8), (16, 6))
    alone = solve(1.5, ModelParams(), branch="positional", method=gh)
    (res,) = solve_batch([(1.5, None, "positional")], method=gh)
    assert isinstance(res.method, GaussHermite) and res.m == alone.m and res.V == alone.V


def test_a_channel_twice_in_one_batch_is_refused():
    """A channel's warm starts are its own: two requests on one channel in a round would
    overwrite each other's."""
    ch = QMCChannel(2, 1, 1, 64, 0)
    o = solve(1.5, ModelParams(), method=QMC(64, 2)).solutions[0].overlaps
    p = ModelParams()
    req = MomentsRequest(ch, o, p.C_array, p.sigma, p.omega, p.A_array)
    with pytest.raises(ValueError, match="a channel appears twice"):
        moments_many([req, req])


def test_gather_hands_each_computation_its_own_answers():
    """Computations of different lengths: each receives the answers to its own requests and
    returns in place, the short ones dropping out of later rounds."""

    def echo(name, rounds):
        got = []
        for k in range(rounds):
            (a,) = yield [f"{name}{k}"]
            got.append(a)
        return got

    rounds = []

    def answer(requests):
        rounds.append(len(requests))
        return [r.upper() for r in requests]

    out = run(gather([echo("a", 2), echo("b", 0), echo("c", 3)]), answer)
    assert out == [["A0", "A1"], [], ["C0", "C1", "C2"]]
    assert rounds == [2, 2, 1]


def test_bad_points_are_refused_before_any_work():
    with pytest.raises(ValueError, match="alpha"):
        solve_batch([(1.0, L3, "semantic"), (-1.0, L3, "semantic")], method=SMALL)
    with pytest.raises(ValueError, match="branch"):
        solve_batch([(1.0, L3, "nonsense")], method=SMALL)
