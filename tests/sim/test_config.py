"""Simulations described by ModelParams: SimConfig(params=...), positional
encodings p_l = sum_k C_lk u_k (docs/theory.md §7) and the reported M = U^T Q/sqrt(d)."""

import math

import numpy as np
import pytest
import torch

from attnphase.params import ModelParams
from attnphase.sim import (
    SimConfig,
    SimulationWarning,
    encoded_positions,
    encoding_basis,
    simulate,
)

DT = torch.float64
CPU = torch.device("cpu")
A3 = ((0.6, 0.2, 0.2), (0.2, 0.6, 0.2), (0.2, 0.2, 0.6))
C3 = ((1.0, 0.0), (0.5, 0.5), (-1.0, 0.2))


def _record(res):
    return res.as_dict() | {"batch_seconds": 0.0}


def test_params_round_trip():
    p = ModelParams(
        omega=0.2, sigma=0.7, lam=0.05, A=A3, rank=2, teacher_rank=3, encodings=np.array(C3)
    )
    cfg = SimConfig(params=p, d=50, alpha=1.2, init="random", n_test=100)
    assert cfg.params == p
    got = (cfg.d, cfg.alpha, cfg.params.rank, cfg.params.teacher_rank, cfg.K, cfg.init)
    assert got == (50, 1.2, 2, 3, 2, "random")
    # the defaults describe the paper's model, which the exact L = 2 engine solves
    assert SimConfig().params == ModelParams() and SimConfig().params.is_l2
    assert SimConfig(params=ModelParams(A=A3)).params.encodings == ((1.0,), (0.0,), (-1.0,))


def test_params_must_be_model_params_and_explicit_positions_replace_encodings():
    with pytest.raises(ValueError, match="^params must be a ModelParams"):
        SimConfig(params={"omega": 0.5}, d=10)
    with pytest.raises(TypeError):
        SimConfig(d=10, alpha=1.0, omega=0.5)  # type: ignore[call-arg]  # params holds it
    # explicit positions replace the encodings: K is then undefined, params unchanged
    p = ModelParams(encodings=(1.0, -1.0))
    cfg = SimConfig(params=p, d=10, positions=np.zeros((2, 10)))
    assert cfg.K is None and cfg.params == p


@pytest.mark.parametrize(
    "encodings, message",
    [
        ((1.0, 0.0, -1.0), "encodings must be L = 2 numbers"),
        ((1.0, math.nan), "encodings must have finite entries"),
        (((1.0, 0.0, 0.0), (0.0, 1.0, 0.0)), "encodings must be L = 2 numbers"),  # K > L
        ("1,-1", "encodings must be L = 2 numbers"),
    ],
)
def test_bad_encodings_name_the_parameter(encodings, message):
    with pytest.raises(ValueError, match=f"^{message}"):
        SimConfig(params=ModelParams(encodings=encodings), d=10)


def test_more_directions_than_dimensions_is_an_error():
    """d >= 2 everywhere, so more directions than dimensions needs L = 3 (K = 3 > d = 2)."""
    A = ((0.6, 0.2, 0.2), (0.2, 0.6, 0.2), (0.2, 0.2, 0.6))
    C = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))
    with pytest.raises(ValueError, match="^encodings: K = 3 directions need d >= K"):
        SimConfig(params=ModelParams(A=A, encodings=C), d=2, alpha=2.0)


@pytest.mark.parametrize("d, K", [(37, 4), (200, 3), (5, 5)])
def test_encoding_directions_are_orthonormal_and_positions_combine_them(d, K):
    U = encoding_basis(d, K, DT, CPU).numpy()
    assert U.shape == (d, K)
    np.testing.assert_allclose(U.T @ U, np.eye(K), rtol=0, atol=1e-12)
    assert np.all(U[:, 0] == 1.0 / math.sqrt(d))
    C = np.random.default_rng(K).standard_normal((K + 1, K))
    P = encoded_positions(C, d, DT, CPU).numpy()
    np.testing.assert_allclose(P, C @ U.T, rtol=0, atol=1e-15)
    np.testing.assert_allclose(P @ P.T, C @ C.T, rtol=0, atol=1e-12)  # p_l . p_j = (C C^T)_lj


def test_planted_weights_give_back_their_positional_overlaps():
    """Q = sqrt(d) U M0 + (a part orthogonal to every u_k): simulate reports m = M0 (K x r)."""
    d, r = 64, 2
    M0 = np.array([[0.3, -0.1], [0.05, 0.2]])
    U = encoding_basis(d, 2, DT, CPU).numpy()
    Z = np.random.default_rng(0).standard_normal((d, r))
    Q = math.sqrt(d) * U @ M0 + Z - U @ (U.T @ Z)
    cfg = SimConfig(
        params=ModelParams(A=A3, rank=r, encodings=C3),
        d=d,
        alpha=1.0,
        init=Q,
        optimizer="gd",
        lr=1e-300,
        steps=1,
        n_test=100,
    )
    with pytest.warns(SimulationWarning, match="did not converge"):
        (res,) = simulate(cfg, seeds=[0])
    np.testing.assert_allclose(res.m, M0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(res.q, cfg.params.sigma**2 * Q.T @ Q / d, rtol=1e-12)


@pytest.mark.parametrize("init", ["semantic", "positional"])
def test_default_encodings_reproduce_the_paper_positions_bit_for_bit(init):
    """The default (c_l from +1 to -1, K = 1) gives exactly p_l = c_l 1_d/sqrt(d), the positions
    the simulations always used: every reported number is identical (m = M = p_1^T Q/sqrt d)."""
    d = 60
    for A, c in [(((0.6, 0.4), (0.4, 0.6)), (1.0, -1.0)), (A3, (1.0, 0.0, -1.0))]:
        paper = np.array(c)[:, None] * np.ones((len(c), d)) / math.sqrt(d)
        kw = dict(params=ModelParams(A=A), d=d, alpha=1.5, init=init, n_test=500)
        new = simulate(SimConfig(**kw), seeds=[0, 1])
        old = simulate(SimConfig(**kw, positions=paper), seeds=[0, 1])
        assert [_record(r) for r in new] == [_record(r) for r in old]


def test_encodings_and_the_same_explicit_positions_train_identically():
    """A K = 2 encoding is the positions C U^T: the same run as those positions given
    explicitly (m differs by definition: M = U^T Q/sqrt d against p_1^T Q/sqrt d)."""
    d = 40
    kw = dict(d=d, alpha=1.5, init="positional", n_test=300)
    enc = simulate(SimConfig(params=ModelParams(A=A3, rank=2, encodings=C3), **kw), seeds=[3])[0]
    P = encoded_positions(C3, d, DT, CPU).numpy()
    exp = simulate(SimConfig(params=ModelParams(A=A3, rank=2), **kw, positions=P), seeds=[3])[0]
    for key in ("test_error", "train_loss", "q", "theta", "linear_test_error", "steps"):
        assert getattr(enc, key) == getattr(exp, key), key
    # p_1 = C_1 U^T, so p_1^T Q/sqrt d = C_1 M
    np.testing.assert_allclose(exp.m, np.array(C3[0]) @ np.array(enc.m), rtol=1e-12)
