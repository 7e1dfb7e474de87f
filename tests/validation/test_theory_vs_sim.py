"""Simulations at finite d against the state-evolution theory (docs/theory.md §2-§4).

Tolerance for a mean over k seeds: 3 standard errors (the spread of one teacher/data draw,
measured) plus a finite-d allowance: relative `bias` on quantities that are non-zero in the
theory, absolute `zero_tol` ~ 1/sqrt(d) on those the branch sets to zero (m on the semantic
branch, theta on the positional one), whose finite-d values fluctuate around zero.
"""

import numpy as np
import pytest

from attnphase import GaussHermite, ModelParams, learning_curve
from attnphase.sim import SimConfig, simulate
from tests.conftest import TEST_ORDER


def _theory(alpha, branch):
    (res,) = learning_curve([alpha], ModelParams(), branch=branch, method=GaussHermite(TEST_ORDER))
    assert res.converged and res.kind == branch
    return res


def _check(sims, theory, keys, bias, zero_tol):
    for key in keys:
        vals = np.array([getattr(s, key) for s in sims])
        target = getattr(theory, key)
        se = vals.std(ddof=1) / np.sqrt(len(vals))
        if abs(target) < 1e-8:
            assert abs(vals.mean()) <= 3 * se + zero_tol, (key, vals, target)
        else:
            assert abs(vals.mean() - target) <= 3 * se + bias * abs(target), (key, vals, target)


@pytest.mark.parametrize("init", ["semantic", "positional"])
def test_small_d_minima_follow_the_theory_branches(init):
    sims = simulate(SimConfig(d=300, alpha=1.5, init=init, n_test=3000), seeds=range(4))
    assert all(s.converged for s in sims)
    _check(sims, _theory(1.5, init), ("theta", "m", "q", "test_error"), bias=0.05, zero_tol=0.06)


@pytest.mark.slow
@pytest.mark.parametrize(
    "alpha, init", [(1.5, "semantic"), (1.5, "positional"), (0.5, "positional")]
)
def test_d1000_minima_follow_the_theory_branches(alpha, init):
    sims = simulate(SimConfig(d=1000, alpha=alpha, init=init, n_test=10000), seeds=range(5))
    assert all(s.converged for s in sims)
    _check(
        sims,
        _theory(alpha, init),
        ("theta", "m", "q", "test_error", "train_loss"),
        bias=0.03,
        zero_tol=0.04,
    )


@pytest.mark.slow
@pytest.mark.xfail(
    strict=True,
    reason="open: below alpha ~ 1 the semantic-start minima keep "
    "theta ~ 0.05 (d = 500..4000) where the converged theory has theta = 0",
)
def test_d1000_semantic_start_at_alpha_half_matches_the_theory():
    sims = simulate(SimConfig(d=1000, alpha=0.5, init="semantic", n_test=10000), seeds=range(5))
    (res,) = learning_curve(
        [0.5], ModelParams(), branch="semantic", method=GaussHermite(TEST_ORDER)
    )
    assert res.kind == "trivial"
    _check(sims, res, ("theta",), bias=0.03, zero_tol=0.02)
