"""Training: optimisers agree on the minimum, divergence is reported, inputs are checked."""

import math

import numpy as np
import pytest

from attnphase.params import ModelParams
from attnphase.sim import SimConfig, SimulationWarning, simulate


def test_lbfgs_and_long_gd_reach_the_same_minimum():
    base = dict(d=60, alpha=2.0, init="positional", n_test=200)
    fast = simulate(SimConfig(**base, optimizer="lbfgs"), seeds=[0])
    gd = simulate(SimConfig(**base, optimizer="gd", lr=0.15, steps=20000), seeds=[0])
    for f, g in zip(fast, gd, strict=True):
        assert f.converged and g.converged
        assert g.train_loss == pytest.approx(f.train_loss, rel=1e-9)
        for key in ("q", "m", "theta"):
            assert getattr(g, key) == pytest.approx(getattr(f, key), rel=1e-5), key
        assert f.steps < g.steps


def test_adam_reaches_the_lbfgs_minimum():
    base = dict(d=60, alpha=1.5, init="positional", n_test=300)
    fast = simulate(SimConfig(**base), seeds=[0])[0]
    adam = simulate(
        SimConfig(**base, optimizer="adam", lr=0.003, steps=6000, gtol=1e-7), seeds=[0]
    )[0]
    assert adam.train_loss == pytest.approx(fast.train_loss, rel=1e-6)
    assert adam.m == pytest.approx(fast.m, rel=1e-3)


def test_authors_gd_protocol_runs_with_its_fixed_steps():
    with pytest.warns(SimulationWarning, match="did not converge"):
        res = simulate(SimConfig(d=50, alpha=1.0, optimizer="gd", steps=50, n_test=100), seeds=[0])
    assert res[0].steps == 50 and res[0].status.startswith("not converged")


def test_diverging_run_is_reported_not_returned():
    cfg = SimConfig(d=50, alpha=2.0, optimizer="gd", lr=1e6, steps=200, n_test=100)
    with pytest.warns(SimulationWarning, match="non-finite|grew past"):
        res = simulate(cfg, seeds=[0, 1])
    for r in res:
        assert not r.converged and r.status.startswith("diverged")
        assert math.isnan(r.test_error) and math.isnan(r.theta)
    # the linear baseline does not train: the same as beside a run that converged (it was NaN)
    ok = simulate(SimConfig(d=50, alpha=2.0, n_test=100), seeds=[0, 1])
    assert [r.linear_test_error for r in res] == [r.linear_test_error for r in ok]


@pytest.mark.parametrize("optimizer", ["adam", "gd"])
def test_a_run_whose_risk_explodes_but_stays_finite_has_diverged(optimizer):
    """Adam at lr 1e9 keeps the risk finite (the softmax saturates) while it grows ~1e15-fold:
    a blow-up, reported as diverged like a non-finite one, not a converged-looking row."""
    cfg = SimConfig(d=50, alpha=1.0, optimizer=optimizer, lr=1e9, steps=50, n_test=100)
    with pytest.warns(SimulationWarning, match="grew past 1e\\+06 times its start"):
        (res,) = simulate(cfg, seeds=[0])
    assert res.status.startswith("diverged") and not res.converged


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"d": 10_000_000}, "^d: d = 10000000 with n = 10000000 training .* needs about"),
        ({"d": 10_000, "alpha": 1e6}, "^d: d = 10000 with n = 10000000000 training"),
        ({"d": 10, "alpha": 0.01}, "n = round"),
        ({"alpha": -1.0}, "^alpha"),
        ({"params": {"lam": -0.1}}, "^lam"),
        ({"lam_linear": -1.0}, "^lam_linear"),
        ({"params": {"sigma": 0.0}}, "^sigma"),
        ({"params": {"omega": 2.0}}, "^omega"),
        ({"optimizer": "sgdm"}, "^optimizer"),
        ({"init": "sideways"}, "^init"),
        ({"d": 3, "init": np.array([[0.0], [np.nan], [1.0]])}, "finite"),
        ({"d": 3, "init": np.zeros((4, 1))}, "shape"),
        ({"dtype": "float16"}, "^dtype"),
        ({"params": {"A": ((1.0, 0.0),)}}, "^A"),
        ({"lr": -1.0}, "^lr must be > 0"),
        ({"lr": 0.0}, "^lr must be > 0"),
        ({"lr": math.nan}, "^lr must be finite"),
        ({"lr": math.inf}, "^lr must be finite"),
        ({"steps": 0}, "^steps must be an integer >= 1"),
        ({"steps": 2.5}, "^steps must be an integer"),
        ({"n_test": 0}, "^n_test"),
        ({"d": 10.5}, "^d must be an integer"),
        ({"params": {"rank": 0}}, "^rank must"),
        ({"init_m": math.nan}, "^init_m"),
        ({"gtol": 0.0}, "^gtol"),
        ({"gtol": 1e-2}, "^gtol must be at most"),
        ({"d": 10, "params": {"rank": 11}}, "^rank must be <= d"),
        ({"device": "gpu"}, "^device"),
    ],
)
def test_bad_simulation_inputs(kwargs, match):
    """The model's fields are checked by ModelParams, the experiment's by SimConfig."""
    with pytest.raises(ValueError, match=match):
        model = kwargs.get("params", {})
        SimConfig(**{**kwargs, "params": ModelParams(**model)})


@pytest.mark.parametrize("seeds", [[], [-1], [0.5], ["a"]])
def test_bad_seeds(seeds):
    with pytest.raises(ValueError, match="^seeds"):
        simulate(SimConfig(d=10), seeds=seeds)
