"""Accuracy of the default quadrature order against a much finer one (docs/theory.md §6)."""

import pytest

from attnphase import GaussHermite, ModelParams, solve
from attnphase.theory import DEFAULT_ORDER


@pytest.mark.parametrize(
    "branch, alpha",
    [
        ("semantic", 1.25),
        pytest.param("positional", 0.5, marks=pytest.mark.slow),
        ("positional", 2.0),
    ],
)
def test_default_order_meets_the_accuracy_targets(branch, alpha):
    p = ModelParams()
    coarse = solve(
        alpha, p, branch=branch, method=GaussHermite(DEFAULT_ORDER), tol=1e-8, strict=True
    )
    fine = solve(alpha, p, branch=branch, method=GaussHermite((128, 32)), tol=1e-8, strict=True)
    for key in ("q", "V", "test_error"):
        assert getattr(coarse, key) == pytest.approx(getattr(fine, key), rel=1e-3), key
    if branch == "semantic":
        assert coarse.theta == pytest.approx(fine.theta, rel=1e-3)
    else:
        assert coarse.m == pytest.approx(fine.m, rel=1e-3)
    assert coarse.train_loss == pytest.approx(fine.train_loss, rel=1e-4)
