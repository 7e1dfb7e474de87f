"""Finite-d model: structured risk vs naive risk, gradients, baseline, seeds, maps."""

import numpy as np
import pytest
import torch

from attnphase.params import ModelParams
from attnphase.sim import (
    SimConfig,
    SimulationWarning,
    StructuredRisk,
    attention_maps,
    default_positions,
    fit_linear,
    generator,
    linear_risk,
    naive_risk,
    simulate,
    targets,
    train_linear,
)

DT = torch.float64
CPU = torch.device("cpu")


def _problem(B=2, n=40, L=2, d=30, t=1, seed=0, omega=0.3, sigma=0.5):
    g = torch.Generator().manual_seed(seed)
    x = sigma * torch.randn(B, n, L, d, generator=g, dtype=DT)
    teacher = torch.randn(B, d, t, generator=g, dtype=DT)
    A = torch.full((L, L), 1.0 / L, dtype=DT) + 0.1 * torch.eye(L, dtype=DT)
    y = targets(x, teacher, omega, A)
    return x + default_positions(L, d, DT, CPU), x, y, teacher


@pytest.mark.parametrize("L, r", [(2, 1), (3, 2)])
def test_structured_risk_equals_naive_einsum_risk(L, r):
    x_pos, _, y, _ = _problem(L=L)
    Q = torch.randn(2, x_pos.shape[-1], r, dtype=DT, generator=torch.Generator().manual_seed(1))
    fast = StructuredRisk.build(x_pos, y, lam=0.03)(Q)
    slow = naive_risk(x_pos, y, Q, lam=0.03)
    torch.testing.assert_close(fast, slow, rtol=1e-12, atol=1e-12)


def test_autograd_gradient_matches_finite_differences():
    x_pos, _, y, _ = _problem(B=1, d=12, n=25)
    risk = StructuredRisk.build(x_pos, y, lam=0.01)
    Q = torch.randn(1, 12, 1, dtype=DT, generator=torch.Generator().manual_seed(2))
    Qr = Q.clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(risk(Qr).sum(), Qr)
    eps = 1e-6
    num = torch.zeros_like(Q)
    for i in range(12):
        e = torch.zeros_like(Q)
        e[0, i, 0] = eps
        num[0, i, 0] = (risk(Q + e) - risk(Q - e)).item() / (2 * eps)
    torch.testing.assert_close(grad, num, rtol=1e-6, atol=1e-9)


def test_attention_maps_shape_and_rows():
    x_pos, _, _, _ = _problem(B=2, n=5, L=3)
    maps = attention_maps(x_pos, torch.randn(2, x_pos.shape[-1], 1, dtype=DT))
    assert maps.shape == (10, 1, 3, 3)  # [batch, head, query, key]
    torch.testing.assert_close(maps.sum(-1), torch.ones(10, 1, 3, dtype=DT))


def test_trained_linear_baseline_equals_exact_ridge():
    _, x, y, _ = _problem(B=2, n=200, d=20)
    exact = fit_linear(x, y, lam=0.05)
    trained = train_linear(x, y, lam=0.05, lr=0.02, steps=3000)
    torch.testing.assert_close(trained, exact, rtol=0, atol=1e-5)
    # the exact solution is stationary: any perturbation increases the risk
    for delta in (1e-3, -1e-3):
        assert torch.all(linear_risk(x, y, exact + delta, 0.05) > linear_risk(x, y, exact, 0.05))


def test_generators_are_reproducible_and_independent_across_roles():
    a = torch.randn(5, generator=generator(3, "train", CPU), dtype=DT)
    b = torch.randn(5, generator=generator(3, "train", CPU), dtype=DT)
    c = torch.randn(5, generator=generator(3, "test", CPU), dtype=DT)
    d = torch.randn(5, generator=generator(4, "train", CPU), dtype=DT)
    assert torch.equal(a, b) and not torch.equal(a, c) and not torch.equal(a, d)
    with pytest.raises(ValueError, match="role"):
        generator(0, "validation", CPU)


def test_identical_seeds_give_identical_runs_and_seeds_differ():
    cfg = SimConfig(d=60, alpha=1.0, n_test=500)
    r1 = simulate(cfg, seeds=[7, 8])
    again = simulate(cfg, seeds=[7, 8])
    alone = simulate(cfg, seeds=[7])
    assert [r.as_dict() | {"batch_seconds": 0} for r in r1] == [
        r.as_dict() | {"batch_seconds": 0} for r in again
    ]
    # one wall time per batch, reported as such (not divided among the seeds)
    assert r1[0].batch_seconds == r1[1].batch_seconds > 0
    assert [r.batch_size for r in r1] == [2, 2] and alone[0].batch_size == 1
    # batching changes only the summation order of BLAS kernels
    assert alone[0].theta == pytest.approx(r1[0].theta, rel=1e-10)
    assert alone[0].test_error == pytest.approx(r1[0].test_error, rel=1e-10)
    assert r1[0].test_error != r1[1].test_error


def test_semantic_start_does_not_alias_the_teacher():
    """The start Q = Q* must be a copy: theta is measured against the untouched teacher."""
    cfg = SimConfig(params=ModelParams(lam=0.5), d=80, alpha=1.5, n_test=500)
    res = simulate(cfg, seeds=[0])[0]
    teacher = torch.randn(80, 1, generator=generator(0, "teacher", CPU), dtype=DT)
    # with a strong ridge, |Q| shrinks well below |Q*|: theta < sigma^2 |Q*|^2 / d
    rho_hat = cfg.params.sigma**2 * float(teacher.pow(2).sum()) / 80
    assert 0 < res.theta < 0.9 * rho_hat
    assert res.q < 0.9 * rho_hat


def test_positional_start_sets_m_and_overlap_conventions():
    cfg = SimConfig(
        d=50,
        alpha=1.0,
        init="positional",
        init_m=0.3,
        steps=1,
        optimizer="gd",
        lr=1e-12,
        n_test=100,
    )
    with pytest.warns(SimulationWarning, match="did not converge"):
        res = simulate(cfg, seeds=[0])[0]
    assert res.m == pytest.approx(0.3, abs=1e-3)  # m = 1^T Q/d
    assert res.q == pytest.approx(cfg.params.sigma**2 * 0.3**2 + 0.25 * 0.01**2, rel=0.05)


def test_given_start_matrix_is_used():
    Q0 = np.full((40, 1), 0.1)
    cfg = SimConfig(d=40, alpha=1.0, init=Q0, optimizer="gd", lr=1e-12, steps=1, n_test=100)
    with pytest.warns(SimulationWarning, match="did not converge"):
        res = simulate(cfg, seeds=[0])[0]
    assert res.init == "given" and res.m == pytest.approx(0.1, rel=1e-6)


def test_teacher_weights_reproduce_a_purely_semantic_target_exactly():
    """omega = 0, no positional encodings, Q = Q*, lam = 0: f_Q(x) = T(x) x, so eps_g = 0."""
    d = 50
    cfg = SimConfig(
        params=ModelParams(omega=0.0, lam=0.0),
        d=d,
        alpha=2.0,
        optimizer="gd",
        lr=1e-300,
        steps=1,
        n_test=300,
        positions=np.zeros((2, d)),
    )
    res = simulate(cfg, seeds=[0])[0]
    # the structured risk is a difference of O(1) terms: its rounding floor is ~1e-16
    assert res.test_error < 1e-28 and res.train_loss < 1e-14
    assert res.linear_test_error > 1e-3
