"""RS stability at a fixed point (docs/theory.md §9): the smooth replicon factor, GAMP's smooth
Vhat and the jump mass, on synthetic convex channels and on the softmax channel."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from attnphase import QMC, GaussHermite, ModelParams, solve, with_stability
from attnphase.cli import app
from attnphase.prox.replicon import replicon_terms, whitened_jacobian
from attnphase.theory.gauss_hermite.engine import solve_exact
from attnphase.validity.stability import jump_distances


def _spd(rng, r: int) -> np.ndarray:
    a = rng.normal(size=(r, r))
    return a @ a.T + 0.5 * np.eye(r)


def _convex_fixed_point(H: np.ndarray, alpha: float, sigma: float, lam: float, L: int, r: int):
    """The prior side's V = sigma^2 (lam + sigma^2 Vhat)^{-1} solved with Vhat = alpha E[D] for
    the per-node loss Hessians H >= 0 (N, L r, L r) of a convex channel; returns (V, J)."""
    V = np.eye(r)
    for _ in range(2000):
        B = np.kron(np.eye(L), np.linalg.inv(V))
        J = np.linalg.solve(H + B, np.broadcast_to(B, H.shape))
        blocks = J.reshape(-1, L, r, L, r)
        diag = np.einsum("nlalb->nab", blocks)
        Vhat = alpha * (np.linalg.inv(V) @ (L * np.eye(r) - diag)).mean(0)
        Vhat = 0.5 * (Vhat + Vhat.T)
        new = sigma**2 * np.linalg.inv(lam * np.eye(r) + sigma**2 * Vhat)
        if np.abs(new - V).max() < 1e-13:
            return new, J
        V = 0.5 * V + 0.5 * new
    raise AssertionError("the convex channel's V did not converge")


@pytest.mark.parametrize("alpha", [0.3, 1.0, 3.0])
def test_quadratic_channel_closed_form_and_below_one(alpha):
    # ell(h) = 1/2 |h - h*|^2 (H = I): J = V^{-1}/(1 + V^{-1}) = 1/(1 + V), so
    # lambda_rep = alpha L (V/(1 + V))^2 exactly, and <= V Vhat <= 1 (docs/theory.md §9)
    L, r, sigma, lam = 2, 1, 0.5, 0.01
    H = np.broadcast_to(np.eye(L * r), (4, L * r, L * r)).copy()
    V, J = _convex_fixed_point(H, alpha, sigma, lam, L, r)
    factor = alpha * replicon_terms(J, V, L).mean()
    v = V[0, 0]
    assert factor == pytest.approx(alpha * L * (v / (1 + v)) ** 2, rel=1e-12)
    assert factor < 1.0


def test_random_convex_channel_rank2_is_stable_and_bounded():
    # random PSD loss Hessians at r = 2 with a non-isotropic V: the factor obeys the bound
    # lambda_rep <= tr(V Vhat)/r < 1 of docs/theory.md §9 at every alpha (a wrong whitening
    # breaks it)
    rng = np.random.default_rng(0)
    L, r, sigma, lam = 3, 2, 0.7, 0.05
    for alpha in (0.2, 1.0, 5.0):
        H = np.stack([_spd(rng, L * r) * rng.exponential() for _ in range(300)])
        V, J = _convex_fixed_point(H, alpha, sigma, lam, L, r)
        factor = alpha * replicon_terms(J, V, L).mean()
        Jt = whitened_jacobian(J, V, L)
        np.testing.assert_allclose(Jt, np.swapaxes(Jt, -1, -2), atol=1e-12)
        eig = np.linalg.eigvalsh(Jt)
        assert eig.min() > 0 and eig.max() <= 1 + 1e-12
        trace_bound = alpha * np.trace(np.eye(L * r) - Jt, axis1=1, axis2=2).mean() / r
        assert 0 < factor <= trace_bound + 1e-12
        assert trace_bound < 1.0


def test_jump_distance_first_order():
    # two minima, gap 0.3, gradient of the gap along xi: (h_best - h') V^{-1} q^{1/2}
    h_best = np.array([[[1.0], [0.0]]])
    h_other = np.array([[[[-1.0], [0.0]], [[1.0], [0.0]]]])
    Vinv, q = np.array([[0.5]]), np.array([[0.04]])
    dist = jump_distances(
        h_best,
        np.array([0.1]),
        h_other,
        np.array([[0.4, 0.1]]),
        np.array([[True, True]]),
        Vinv,
        q,
    )
    assert dist[0] == pytest.approx(0.3 / (2.0 * 0.5 * 0.2))
    none = jump_distances(
        h_best,
        np.array([0.1]),
        h_other,
        np.array([[0.4, 0.1]]),
        np.array([[False, True]]),
        Vinv,
        q,
    )
    assert np.isinf(none[0])


@pytest.fixture(scope="module")
def semantic_high_alpha():
    return with_stability(solve(3.0, ModelParams(), branch="semantic"), points=8192)


def test_smooth_vhat_equals_stein_vhat_without_jumps(semantic_high_alpha):
    # alpha = 3, semantic: no node within 0.1 (nor 1.0) of a jump, so GAMP's smooth Vhat is the
    # state evolution's Stein Vhat (measured: 0.0766156 +- 1.0e-6 at 65536 x 4 points vs the
    # exact engine's 0.0766152); 4 standard errors (3 dof t-quantile ~5 at 1%) + 1e-6
    r = semantic_high_alpha
    assert r.jump_mass == 0.0
    assert abs(r.vhat_smooth - r.Vhat) < 5 * r.vhat_smooth_err + 1e-6
    # far from RS instability: 0.2325 +- 4e-5 measured (4096 x 4), and GAMP on data agrees with
    # the factor at alpha 1.5 (tests/gamp/test_algorithm.py)
    assert 0.2 < r.rs_stability < 0.3


def test_jumps_separate_smooth_and_stein_vhat_below_alpha_one():
    # docs/theory.md §8.1 (independent prototype at GAMP end points, L = 2, alpha 0.8 semantic):
    # Vhat_Stein = -0.0022, Vhat_smooth = +0.0064; measured here 0.0061-0.0063 with a jump
    # mass of 1.4-1.5 %. A missing V^{-1} in D or a wrong sign fails this.
    r = with_stability(solve(0.8, ModelParams(), branch="semantic"), points=2048)
    assert r.Vhat == pytest.approx(-0.0022, abs=1e-4)
    assert 0.0055 < r.vhat_smooth < 0.0070
    assert 0.005 < r.jump_mass < 0.03


def test_positional_alpha_1p5_smooth_v_matches_gamp_side():
    # docs/theory.md §8.1: at alpha 1.5 positional GAMP's V is 12.3-12.5 and leave-one-out 12.8,
    # against the SE's 13.6; V from the smooth Vhat lands there (measured 12.9)
    p = ModelParams()
    r = with_stability(solve(1.5, p, branch="positional"), points=2048)
    V_smooth = p.sigma**2 / (p.lam + p.sigma**2 * r.vhat_smooth)
    assert r.V == pytest.approx(13.59, abs=0.01)
    assert 12.2 < V_smooth < 13.2
    assert r.jump_mass > 0


def test_unconverged_result_is_left_nan():
    r = solve_exact(1.5, ModelParams(), None, "semantic", GaussHermite(max_iter=1))
    assert not r.converged
    assert np.isnan(with_stability(r).rs_stability)


def test_general_result_carries_stability():
    g = with_stability(solve(1.5, ModelParams(), branch="semantic", method=QMC(1024)))
    d = g.as_dict()
    # same fixed point as the exact engine's (0.2690 +- 0.0003 at 8192 x 4 points): the
    # general result is measured on its own scramblings at its own overlaps
    assert d["rs_stability"] == pytest.approx(0.269, abs=0.01)
    assert d["jump_mass"] == 0.0
    assert np.isfinite(d["rs_stability_err"])


def test_cli_theory_stability_json():
    res = CliRunner().invoke(
        app,
        ["theory", "--alpha", "3", "--branch", "semantic", "--stability", "--format", "json"]
        + ["--engine", "qmc", "--points", "256", "--randomisations", "2"],
    )
    assert res.exit_code == 0, res.output
    rec = json.loads(res.stdout)
    rec = rec[0] if isinstance(rec, list) else rec
    for key in ("rs_stability", "rs_stability_err", "jump_mass", "vhat_smooth"):
        assert np.isfinite(rec[key]), key
    plain = CliRunner().invoke(
        app,
        ["theory", "--alpha", "3", "--branch", "semantic", "--format", "json"]
        + ["--engine", "qmc", "--points", "256", "--randomisations", "2"],
    )
    rec = json.loads(plain.stdout)
    assert (rec[0] if isinstance(rec, list) else rec)["rs_stability"] is None  # NaN -> null


def test_the_attention_maps_are_measured_through_their_form():
    """A causal student on a causal target (alpha 1.5, 1024 x 2 points) measured 0.518 +- 0.009
    against the unmasked model's 0.260 +- 0.014 and a jump mass of 0.0073 against 0: a prox or
    Jacobian that ignored the mask would give the unmasked numbers. Untied query and key and
    correlated tokens are refused with the option named."""
    from attnphase import Causal, Mixture, Untied

    method = QMC(1024, 2)
    causal = ModelParams(A=((1.0, 0.0), (0.4, 0.6)), variant=Causal(True))
    masked = with_stability(solve(1.5, causal, branch="semantic", method=method))
    free = with_stability(solve(1.5, ModelParams(), branch="semantic", method=method))
    gap = masked.rs_stability - free.rs_stability
    assert gap > 5 * np.hypot(masked.rs_stability_err, free.rs_stability_err)
    for variant in (Untied(), Mixture(2)):
        r = solve(1.5, ModelParams(variant=variant), branch="semantic", method=QMC(64, 2))
        with pytest.raises(ValueError, match="stability: measured for tied query and key"):
            with_stability(r)
