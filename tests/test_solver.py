"""Solver behaviour: status, warnings, strict mode, warm starts, result record."""

import json
import math
import warnings

import pytest

from attnphase import ConvergenceError, GaussHermite, ModelParams, NonConvergenceWarning, solve
from attnphase.theory.gauss_hermite.engine import solve_exact

from .test_cli import KEYS as JSON_KEYS


def test_non_convergence_warns_and_strict_raises():
    with pytest.warns(NonConvergenceWarning, match="maximum iterations"):
        r = solve_exact(1.5, ModelParams(), None, "semantic", GaussHermite((8, 4)), max_iter=2)
    assert not r.converged and r.status == "maximum iterations reached"
    with pytest.raises(ConvergenceError):
        solve_exact(
            1.5, ModelParams(), None, "semantic", GaussHermite((8, 4)), max_iter=2, strict=True
        )


def test_negative_prior_denominator_is_detected_not_returned():
    """Vhat < 0 near the trivial point (non-convex loss): at alpha=2, lambda + sigma^2 Vhat < 0."""
    with pytest.warns(NonConvergenceWarning, match=r"lambda \+ sigma\^2 Vhat"):
        r = solve(2.0, start=(0.02, 0.0, 14.5, 0.0), method=GaussHermite((12, 6)))
    assert not r.converged and "undefined" in r.status
    assert math.isnan(r.q) and math.isnan(r.test_error) and math.isnan(r.train_loss)


def test_warm_start_converges_in_few_iterations(reference_curves):
    _, results = reference_curves["semantic"]
    warm = [r.iterations for r in results[1:10]]
    assert max(warm) <= 15


def test_result_record_is_frozen_and_serialisable():
    r = solve(2.0, start=(0.114, 0.0, 12.6, 0.158), method=GaussHermite((12, 6)), strict=True)
    with pytest.raises(AttributeError):
        r.q = 1.0  # type: ignore[misc]
    d = r.as_dict()
    for key in JSON_KEYS:
        assert key in d
    json.dumps(d)
    assert r.mse == 2 * r.test_error and r.phi == -r.train_loss
    assert r.kind == "semantic" and d["branch"] == "custom"


def test_trivial_branch_stays_exactly_trivial():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = solve(0.5, ModelParams(), branch="trivial", method=GaussHermite((16, 8)))
    assert r.converged and abs(r.m) < 1e-14 and abs(r.theta) < 1e-14
