"""Bad model parameters: a clear error naming the parameter (ValueError in Python)."""

import math

import pytest

from attnphase import ModelParams


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
        ({"sigma": 1e-300}, "sigma"),  # sigma^2 underflows to rho = 0
        ({"A": ((0.6, 0.4),)}, "A"),
        ({"A": ((0.6, math.nan), (0.4, 0.6))}, "A"),
        ({"A": "abc"}, "A"),
    ],
)
def test_bad_model_parameters(kwargs, name):
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        ModelParams(**kwargs)
