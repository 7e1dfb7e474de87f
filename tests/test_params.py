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


def test_api_lists_are_non_empty_and_distinct():
    """Every list a function of the API takes means each value once (a repeat computes the same
    thing again) and at least one (an empty table is no answer): one ValueError naming it,
    before any work, as the CLI does."""
    from attnphase import learning_curve, scaling_table, simulate, trust_map
    from attnphase.sim import SimConfig

    p = ModelParams()
    with pytest.raises(ValueError, match=r"^alphas: 1\.0 is given twice"):
        learning_curve([1.0, 1.0], p)
    with pytest.raises(ValueError, match="^seeds: 0 is given twice"):
        simulate(SimConfig(d=20, alpha=1.0), seeds=(0, 0))
    with pytest.raises(ValueError, match="^alphas must not be empty"):
        trust_map(p, [], [0.3])
    with pytest.raises(ValueError, match="^lengths must not be empty"):
        scaling_table([], [0.3])
    with pytest.raises(ValueError, match="^omegas: 0.3 is given twice"):
        scaling_table([2], [0.3, 0.3])


def test_negative_zero_is_zero():
    """`--omega -0` printed `omega = -0.0` in its row (the stores already took it as 0)."""
    p = ModelParams(omega=-0.0, lam=-0.0)
    assert math.copysign(1.0, p.omega) == 1.0 and math.copysign(1.0, p.lam) == 1.0
