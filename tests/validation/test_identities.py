"""Identities and limits of the theory (docs/theory.md §4, STYLE.md §2)."""

import math

import numpy as np
import pytest
from numpy.polynomial.hermite_e import hermegauss
from scipy.optimize import minimize

from attnphase import (
    GaussHermite,
    ModelParams,
    learning_curve,
    linear_test_error,
    solve,
)
from attnphase.prox.closed_form import prox
from attnphase.theory.baseline import linear_baseline_matrix, uniform_attention_error
from attnphase.theory.gauss_hermite.channel import (
    ChannelIntegrator,
    hats,
    kappa,
    train_loss_identity,
)
from attnphase.theory.overlaps import Overlaps, scalar_free_entropy
from tests.conftest import TEST_ORDER


@pytest.mark.parametrize("branch", ["semantic", "positional"])
def test_minus_phi_equals_training_objective_at_fixed_points(reference_curves, branch):
    """-Phi = alpha E[ell(h_hat; h*)] + lambda q/(2 sigma^2) at every converged fixed point."""
    _, results = reference_curves[branch]
    p = ModelParams()
    k = kappa(sigma=p.sigma, omega=p.omega, A=p.A)
    checked = 0
    for r in results:
        if not r.converged:
            continue
        o = Overlaps(r.q, r.m, r.V, r.theta)
        e = ChannelIntegrator(*TEST_ORDER).moments(
            r.q, r.m, r.V, r.theta, rho=p.rho, sigma2=p.sigma**2, omega=p.omega, A=p.A_array
        )
        rhs = train_loss_identity(o, e, alpha=r.alpha, sigma=p.sigma, lam=p.lam, kappa_=k)
        assert r.train_loss == pytest.approx(rhs, rel=2e-5)
        checked += 1
    assert checked >= 15


def test_identity_fails_away_from_a_fixed_point():
    """The identity is a property of fixed points, not of any point (so the test above can fail)."""
    p = ModelParams()
    o = Overlaps(0.1, 0.0, 12.0, 0.15)
    e = ChannelIntegrator(16, 8).moments(
        o.q, o.m, o.V, o.theta, rho=p.rho, sigma2=p.sigma**2, omega=p.omega, A=p.A_array
    )
    h = hats(e, o, alpha=2.0, rho=p.rho)
    k = kappa(sigma=p.sigma, omega=p.omega, A=p.A)
    phi = scalar_free_entropy(o, h, e.M + k, alpha=2.0, sigma=p.sigma, lam=p.lam, rho=p.rho)
    rhs = train_loss_identity(o, e, alpha=2.0, sigma=p.sigma, lam=p.lam, kappa_=k)
    assert abs(-phi / rhs - 1) > 1e-3


def test_small_alpha_limit_is_uniform_attention():
    p = ModelParams()
    r = solve(1e-3, p, branch="trivial", method=GaussHermite((16, 8)), strict=True)
    assert r.q < 1e-4 and abs(r.m) < 1e-12 and abs(r.theta) < 1e-12
    assert r.test_error == pytest.approx(uniform_attention_error(p), rel=1e-3)
    # the reference's alpha=0.01 rows approach the same limit (mse = 2 eps_g)
    assert 2 * uniform_attention_error(p) == pytest.approx(0.00884, rel=2e-3)


def test_realizable_semantic_target_error_decreases_with_alpha():
    """omega = 0: the target is the attention model itself; eps_g falls along the branch."""
    p = ModelParams(omega=0.0)
    res = learning_curve([1.0, 1.5, 2.0, 3.0], p, branch="semantic", method=GaussHermite((24, 10)))
    assert all(r.converged and r.kind == "semantic" for r in res)
    errs = [r.test_error for r in res]
    assert all(a > b for a, b in zip(errs, errs[1:], strict=False))
    assert errs[-1] < 0.5 * uniform_attention_error(p)


def test_ibp_and_direct_estimators_agree_at_high_order():
    """The integration-by-parts hats (docs/theory.md §6) equal the direct forms of §3."""
    p = ModelParams()
    o = Overlaps(0.0819, 0.0, 17.27, 0.1217)  # near the semantic fixed point at alpha=1.25
    e = ChannelIntegrator(64, 16).moments(
        o.q, o.m, o.V, o.theta, rho=p.rho, sigma2=p.sigma**2, omega=p.omega, A=p.A_array
    )
    ibp = hats(e, o, alpha=1.25, rho=p.rho, estimator="ibp")
    direct = hats(e, o, alpha=1.25, rho=p.rho, estimator="direct")
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


def _softmax_rows(h: np.ndarray) -> np.ndarray:
    """Row-softmax of h h^T for a batch of token fields h [n, 2] -> [n, 2, 2] (matrix form)."""
    s = h[:, :, None] * h[:, None, :]
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


# rows summing to 1.4 and 0.4 (columns to 1.0 and 0.8): kappa = sigma^2 omega^2 (0.16 + 0.36)/4
NON_STOCHASTIC_A = ((0.9, 0.5), (0.1, 0.3))


def test_teacher_constant_kappa_against_monte_carlo_for_a_non_stochastic_A():
    """kappa (the h-independent part of ell) is 0 for every row-stochastic A, so only a
    non-stochastic A tests it: at the positional fixed point (alpha 1.5, omega 0.6, A above;
    kappa = 0.0117) eps_g (eq. 10) and the training objective -Phi (eq. 14, where kappa enters
    through M) must equal Monte-Carlo estimates that use the full matrix loss
    sigma^2/2 ||S - T||_F^2 and no kappa: eps_g = E ell(w; h*) and, at a fixed point,
    -Phi = alpha E ell(h_hat; h*) + lambda q/(2 sigma^2) (h_hat from the global prox).
    Tolerance: 4 Monte-Carlo standard errors (2e5 samples: ~8e-6 on eps_g, ~1e-5 on -Phi,
    against kappa = 1.2e-2 and alpha kappa = 1.8e-2) plus the quadrature error of order (24, 10),
    measured against (64, 24) at the same overlaps: 7e-9 on eps_g, 2.4e-7 on -Phi."""
    p = ModelParams(omega=0.6, A=NON_STOCHASTIC_A)
    s2 = p.sigma**2
    r = solve(
        1.5,
        p,
        start=(0.053, 0.36, 9.25, 0.0),
        branch="positional",
        method=GaussHermite((24, 10)),
        strict=True,
    )
    assert r.kind == "positional"
    rng = np.random.default_rng(11)
    n = 200_000
    xi, y = rng.standard_normal((n, 2)), rng.standard_normal((n, 2))
    w = math.sqrt(r.q) * xi + np.array([r.m, -r.m])
    hs = r.theta / math.sqrt(r.q) * xi + math.sqrt(p.rho - r.theta**2 / r.q) * y
    T = (1 - p.omega) * _softmax_rows(hs) + p.omega * p.A_array
    ell_w = s2 / 2 * ((_softmax_rows(w) - T) ** 2).sum((1, 2))
    c = np.stack([(1 + T[:, 0, 0] - T[:, 0, 1]) / 2, (1 + T[:, 1, 1] - T[:, 1, 0]) / 2], axis=1)
    h_hat, _ = prox(w, c, r.V, s2)
    ell_h = s2 / 2 * ((_softmax_rows(h_hat) - T) ** 2).sum((1, 2))
    se_w, se_h = ell_w.std() / math.sqrt(n), ell_h.std() / math.sqrt(n)
    assert r.test_error == pytest.approx(ell_w.mean(), abs=4 * se_w + 1e-8)
    objective = r.alpha * ell_h.mean() + p.lam * r.q / (2 * s2)
    assert r.train_loss == pytest.approx(objective, abs=4 * r.alpha * se_h + 3e-7)
    # the check has the power to see kappa: both kappa terms are > 1000 standard errors
    k = kappa(sigma=p.sigma, omega=p.omega, A=p.A)
    assert k == pytest.approx(0.0117, rel=1e-12) and k > 1000 * max(se_w, r.alpha * se_h)


def _positional_population_risk(p: ModelParams, n: int = 200):
    """omega = 1: the test error of any Q is e(q, m) = E ell(sqrt(q) xi + s m) with
    ell = sigma^2/2 ||S(w) - A||_F^2, over the region q >= sigma^2 m^2 (Cauchy-Schwarz: the
    tokens' own projection on Q has variance q >= sigma^2 m^2). Returns e and its minimiser
    (q_pop, m_pop) by Gauss-Hermite (n^2 nodes, matrix softmax) and Nelder-Mead over
    (m, t), q = sigma^2 m^2 + t^2."""
    x, wx = hermegauss(n)
    wx = wx / wx.sum()
    X1, X2 = np.meshgrid(x, x, indexing="ij")
    W = np.outer(wx, wx).ravel()

    def ell(h1, h2):
        S = _softmax_rows(np.stack([h1.ravel(), h2.ravel()], 1))
        return p.sigma**2 / 2 * ((S - p.A_array) ** 2).sum((1, 2))

    def e(q, m):
        return float(W @ ell(math.sqrt(q) * X1 + m, math.sqrt(q) * X2 - m))

    s2 = p.sigma**2
    fit = minimize(
        lambda z: e(s2 * z[0] ** 2 + z[1] ** 2, z[0]),
        x0=[0.3, 0.05],
        method="Nelder-Mead",
        options=dict(xatol=1e-10, fatol=1e-16, maxiter=2000),
    )
    m, t = fit.x
    return e, ell, (X1, X2, W), s2 * m * m + t * t, abs(m), abs(t)


def test_purely_positional_target_attention_stays_above_the_linear_baseline():
    """omega = 1 (STYLE.md §2): the target A is purely positional and the linear baseline B = A
    is exact (eps_lin = 0), while attention cannot express a constant map: its fields carry
    token noise of variance q >= sigma^2 m^2, so its test error is at least the population
    minimum eps_pop = min e(q, m) > 0 (`_positional_population_risk`). Hence, exactly:
    - eps_g(alpha) > eps_pop > eps_lin = 0 for every alpha (alpha_l does not exist);
    - R/d = -Phi <= alpha eps_pop + lambda q_pop/(2 sigma^2), the risk of the population
      minimiser (the risk's minimum can only be lower);
    and, to leading order in 1/alpha (classical M-estimation with d noise directions of
    curvature 2 sigma^2 e_q/d and gradient variance sigma^2 E|grad_w ell|^2/d),
    alpha (eps_g - eps_pop) -> C = E|grad_w ell|^2 / (4 de/dq) at the population minimiser, and
    alpha (eps_pop - eps_train) -> C as well. The theory's learning curve is checked against
    these by Richardson extrapolation in 1/alpha; tolerance: the change between the
    extrapolations from (16, 32) and (32, 64) (the O(1/alpha^2) remainder; measured 1.0e-6 and
    3.9e-7 against |R(32, 64) - C| = 4.6e-7 and 1.3e-7). Order (32, 2): at omega = 1 nothing
    depends on the teacher field, and (32, 2) equals (64, 2) to 2e-14."""
    p = ModelParams(omega=1.0)
    s2 = p.sigma**2
    e, ell, (X1, X2, W), q_pop, m_pop, t_pop = _positional_population_risk(p)
    eps_pop = e(q_pop, m_pop)
    assert t_pop < 1e-6  # the minimiser puts no weight outside the positional direction
    assert 1e-3 < eps_pop < uniform_attention_error(p)
    assert linear_test_error(p) == 0.0

    alphas = [2.0, 4.0, 8.0, 16.0, 32.0, 64.0]
    curve = learning_curve(alphas, p, branch="positional", method=GaussHermite((32, 2)))
    assert all(r.converged and r.kind == "positional" and r.theta == 0.0 for r in curve)
    test_gap, train_gap = [], []
    for r in curve:
        assert r.test_error > eps_pop > r.linear_test_error == 0.0
        assert r.train_loss < r.alpha * eps_pop + p.lam * q_pop / (2 * s2)
        test_gap.append(r.alpha * (r.test_error - eps_pop))
        eps_train = (r.train_loss - p.lam * r.q / (2 * s2)) / r.alpha
        train_gap.append(r.alpha * (eps_pop - eps_train))

    # the constant C: e_q by central differences, grad_w ell by central differences per node
    dq, dw = 1e-6, 1e-6
    e_q = (e(q_pop + dq, m_pop) - e(q_pop - dq, m_pop)) / (2 * dq)
    w1, w2 = math.sqrt(q_pop) * X1 + m_pop, math.sqrt(q_pop) * X2 - m_pop
    g1 = (ell(w1 + dw, w2) - ell(w1 - dw, w2)) / (2 * dw)
    g2 = (ell(w1, w2 + dw) - ell(w1, w2 - dw)) / (2 * dw)
    C = float(W @ (g1**2 + g2**2)) / (4 * e_q)
    for gap in (test_gap, train_gap):
        r_early, r_late = 2 * gap[4] - gap[3], 2 * gap[5] - gap[4]
        assert r_late == pytest.approx(C, abs=abs(r_late - r_early)), (gap, C)
