"""Bad input: a clear error naming the parameter (ValueError in Python)."""

import math

import pytest

from attnphase import GaussHermite, ModelParams, learning_curve, solve
from attnphase.theory.gauss_hermite.engine import solve_exact


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"sigma": 0.0}, "sigma"),
        ({"sigma": -1.0}, "sigma"),
        ({"lam": -0.1}, "lam"),
        ({"omega": 1.5}, "omega"),
        ({"omega": -0.1}, "omega"),
        ({"omega": math.nan}, "omega"),
        ({"sigma": math.inf}, "sigma"),
        ({"A": ((0.6, 0.4),)}, "A"),
        ({"A": ((0.6, math.nan), (0.4, 0.6))}, "A"),
        ({"A": "abc"}, "A"),
    ],
)
def test_bad_model_parameters(kwargs, name):
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        ModelParams(**kwargs)


@pytest.mark.parametrize("alpha", [0.0, -1.0, math.nan, math.inf])
def test_bad_alpha(alpha):
    with pytest.raises(ValueError, match="^alpha"):
        solve(alpha)
    with pytest.raises(ValueError, match="^alpha"):
        learning_curve([1.0, alpha])


def test_bad_init_order_and_branch():
    with pytest.raises(ValueError, match="branch"):
        solve(1.0, branch="sideways")
    with pytest.raises(ValueError, match="start"):
        solve(1.0, start=(0.1, 0.0, math.nan, 0.0))
    with pytest.raises(ValueError, match="not admissible"):
        solve(1.0, start=(0.01, 0.0, 10.0, 0.5))  # theta^2 > q rho
    with pytest.raises(ValueError, match="order"):
        solve(1.0, method=GaussHermite((1, 8)))
    with pytest.raises(ValueError, match="branch"):
        learning_curve([1.0], branch="sideways")
    with pytest.raises(ValueError, match="estimator"):
        solve_exact(1.0, ModelParams(), None, "semantic", GaussHermite((8, 4)), estimator="magic")
