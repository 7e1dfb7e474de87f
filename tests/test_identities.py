"""Identities and limits of the theory (THEORY.md §4, STYLE.md §2)."""

import numpy as np
import pytest

from attnphase import ModelParams, learning_curve, linear_baseline_matrix, linear_test_error, solve
from attnphase import equations as eq
from attnphase.baseline import uniform_attention_error
from attnphase.channel import ChannelIntegrator

from .conftest import TEST_ORDER


@pytest.mark.parametrize("branch", ["semantic", "positional"])
def test_minus_phi_equals_training_objective_at_fixed_points(reference_curves, branch):
    """-Phi = alpha E[ell(h_hat; h*)] + lambda q/(2 sigma^2) at every converged fixed point."""
    _, results = reference_curves[branch]
    p = ModelParams()
    k = eq.kappa(sigma=p.sigma, omega=p.omega, A=p.A)
    checked = 0
    for r in results:
        if not r.converged:
            continue
        o = eq.Overlaps(r.q, r.m, r.V, r.theta)
        e = ChannelIntegrator(*TEST_ORDER).moments(
            r.q, r.m, r.V, r.theta, rho=p.rho, sigma2=p.sigma**2, omega=p.omega, A=p.A_array
        )
        rhs = eq.train_loss_identity(o, e, alpha=r.alpha, sigma=p.sigma, lam=p.lam, kappa_=k)
        assert r.train_loss == pytest.approx(rhs, rel=2e-5)
        checked += 1
    assert checked >= 15


def test_identity_fails_away_from_a_fixed_point():
    """The identity is a property of fixed points, not of any point (so the test above can fail)."""
    p = ModelParams()
    o = eq.Overlaps(0.1, 0.0, 12.0, 0.15)
    e = ChannelIntegrator(16, 8).moments(
        o.q, o.m, o.V, o.theta, rho=p.rho, sigma2=p.sigma**2, omega=p.omega, A=p.A_array
    )
    h = eq.hats(e, o, alpha=2.0, rho=p.rho)
    k = eq.kappa(sigma=p.sigma, omega=p.omega, A=p.A)
    phi = eq.free_entropy(o, h, e, alpha=2.0, sigma=p.sigma, lam=p.lam, rho=p.rho, kappa_=k)
    rhs = eq.train_loss_identity(o, e, alpha=2.0, sigma=p.sigma, lam=p.lam, kappa_=k)
    assert abs(-phi / rhs - 1) > 1e-3


def test_small_alpha_limit_is_uniform_attention():
    p = ModelParams()
    r = solve(1e-3, p, init="trivial", order=(16, 8), strict=True)
    assert r.q < 1e-4 and abs(r.m) < 1e-12 and abs(r.theta) < 1e-12
    assert r.test_error == pytest.approx(uniform_attention_error(p), rel=1e-3)
    # the reference's alpha=0.01 rows approach the same limit (mse = 2 eps_g)
    assert 2 * uniform_attention_error(p) == pytest.approx(0.00884, rel=2e-3)


def test_realizable_semantic_target_error_decreases_with_alpha():
    """omega = 0: the target is the attention model itself; eps_g falls along the branch."""
    p = ModelParams(omega=0.0)
    res = learning_curve([1.0, 1.5, 2.0, 3.0], p, branch="semantic", order=(24, 10))
    assert all(r.converged and r.kind == "semantic" for r in res)
    errs = [r.test_error for r in res]
    assert all(a > b for a, b in zip(errs, errs[1:], strict=False))
    assert errs[-1] < 0.5 * uniform_attention_error(p)


def test_ibp_and_direct_estimators_agree_at_high_order():
    """The integration-by-parts hats (THEORY.md §6) equal the direct forms of §3."""
    p = ModelParams()
    o = eq.Overlaps(0.0819, 0.0, 17.27, 0.1217)  # near the semantic fixed point at alpha=1.25
    e = ChannelIntegrator(64, 16).moments(
        o.q, o.m, o.V, o.theta, rho=p.rho, sigma2=p.sigma**2, omega=p.omega, A=p.A_array
    )
    ibp = eq.hats(e, o, alpha=1.25, rho=p.rho, estimator="ibp")
    direct = eq.hats(e, o, alpha=1.25, rho=p.rho, estimator="direct")
    assert ibp.thetahat == pytest.approx(direct.thetahat, rel=2e-3)
    assert ibp.Vhat == pytest.approx(direct.Vhat, rel=5e-3)
    assert abs(ibp.mhat) < 1e-12  # exact symmetry on the m = 0 manifold


def test_linear_baseline_closed_form_vs_monte_carlo():
    """eps_lin (Result 5.1) vs the test risk of least-squares B fitted on finite-d samples."""
    rng = np.random.default_rng(0)
    p = ModelParams()
    d, n, n_test = 200, 20000, 20000
    qstar = rng.standard_normal(d)
    qstar *= np.sqrt(d) / np.linalg.norm(qstar)  # rho = sigma^2 |Q*|^2/d = sigma^2 exactly

    def sample(n):
        x = p.sigma * rng.standard_normal((n, 2, d))
        hs = x @ qstar / np.sqrt(d)
        s = np.einsum("nl,nk->nlk", hs, hs)
        S = np.exp(s - s.max(-1, keepdims=True))
        S /= S.sum(-1, keepdims=True)
        T = (1 - p.omega) * S + p.omega * p.A_array
        return x, T @ x

    x, y = sample(n)
    # least squares for B in min sum ||y - B x||^2: B = (sum y x^T)(sum x x^T)^-1
    B = np.einsum("nld,nkd->lk", y, x) @ np.linalg.inv(np.einsum("nld,nkd->lk", x, x))
    xt, yt = sample(n_test)
    risk = np.sum((yt - B @ xt) ** 2, axis=(1, 2)) / (2 * d)
    eps = linear_test_error(p)
    # finite-d corrections are O(1/d) = 0.5%
    assert risk.mean() == pytest.approx(eps, abs=4 * risk.std() / np.sqrt(n_test) + 0.01 * eps)
    np.testing.assert_allclose(B, linear_baseline_matrix(p), atol=0.01)


def test_linear_baseline_vanishes_for_a_purely_positional_target():
    assert linear_test_error(ModelParams(omega=1.0)) == 0.0
    np.testing.assert_allclose(
        linear_baseline_matrix(ModelParams(omega=1.0)), ModelParams().A_array
    )


def test_linear_baseline_is_independent_of_A():
    a = linear_test_error(ModelParams(A=((0.3, 0.7), (0.8, 0.2))))
    assert a == pytest.approx(linear_test_error(ModelParams()), rel=1e-14)
