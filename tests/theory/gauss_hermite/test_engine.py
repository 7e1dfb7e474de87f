"""Solver behaviour: status, warnings, strict mode, warm starts, result record."""

import json
import math
import warnings

import numpy as np
import pytest

from attnphase import ConvergenceError, GaussHermite, ModelParams, NonConvergenceWarning, solve
from attnphase.theory.gauss_hermite.engine import solve_exact
from tests.cli.test_app import KEYS as JSON_KEYS


def test_non_convergence_warns_and_strict_raises():
    with pytest.warns(NonConvergenceWarning, match="maximum iterations"):
        r = solve_exact(1.5, ModelParams(), None, "semantic", GaussHermite((8, 4), max_iter=2))
    assert not r.converged and r.status == "maximum iterations reached"
    with pytest.raises(ConvergenceError):
        solve_exact(
            1.5, ModelParams(), None, "semantic", GaussHermite((8, 4), max_iter=2), strict=True
        )


def test_negative_prior_denominator_is_detected_not_returned():
    """Vhat < 0 near the trivial point (non-convex loss): at alpha=2, lambda + sigma^2 Vhat < 0."""
    with pytest.warns(NonConvergenceWarning, match=r"lambda \+ sigma\^2 Vhat"):
        r = solve(2.0, start=(0.02, 0.0, 14.5, 0.0), method=GaussHermite((12, 6)))
    assert not r.converged and "undefined" in r.status
    assert math.isnan(r.q) and math.isnan(r.test_error) and math.isnan(r.train_loss)


def test_warm_start_converges_in_few_iterations(reference_curves):
    _, results = reference_curves["semantic"]
    warm = [r.iterations for r in results[1:10]]
    assert max(warm) <= 15


def test_result_record_is_frozen_and_serialisable():
    r = solve(2.0, start=(0.114, 0.0, 12.6, 0.158), method=GaussHermite((12, 6)), strict=True)
    with pytest.raises(AttributeError):
        r.q = 1.0  # type: ignore[misc]
    d = r.as_dict()
    for key in JSON_KEYS:
        assert key in d
    json.dumps(d)
    assert r.mse == 2 * r.test_error and r.phi == -r.train_loss
    assert r.kind == "semantic" and d["branch"] == "custom"


def test_trivial_branch_stays_exactly_trivial():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = solve(0.5, ModelParams(), branch="trivial", method=GaussHermite((16, 8)))
    assert r.converged and abs(r.m) < 1e-14 and abs(r.theta) < 1e-14


def test_gauss_hermite_errors_are_the_change_to_an_independent_solve_at_the_check_order():
    """Every number's `_err` is its change between the method's order (64, 24) and its check
    order (48, 16). Against a cold solve at (48, 16) on its own (positional branch, alpha 1.5,
    where the errors are largest: q_err 1.09e-4, V_err 0.018, eps_g_err 2.0e-6): measured
    | err - |value - value_check| | / |value| <= 9.2e-7, the two solvers' relative tolerance
    (1e-6 each), hence the bound 2e-6. A check at the wrong order, errors of another number,
    or the check's numbers reported instead of the main ones would fail by 1e-4 and more;
    errors=False gives the same numbers with NaN errors."""
    p = ModelParams()
    res = solve(1.5, p, branch="positional")
    chk = solve(1.5, p, branch="positional", method=GaussHermite((48, 16)), errors=False)
    bare = solve(1.5, p, branch="positional", errors=False)
    assert res.q_err > 1e-5 and res.V_err > 1e-3  # a real difference, not rounding
    for k in ("q", "m", "V", "theta", "qhat", "mhat", "Vhat", "test_error", "train_loss"):
        v, err = getattr(res, k), getattr(res, f"{k}_err")
        assert abs(err - abs(v - getattr(chk, k))) <= 2e-6 * max(abs(v), 1e-12), k
        assert getattr(bare, k) == v and math.isnan(getattr(bare, f"{k}_err")), k


def test_a_positional_start_that_collapses_at_a_small_sigma_ends_at_the_null_point():
    """sigma 0.2, alpha 0.2, positional at (16, 8): q decays to zero, and the mid-order stage
    ended where lambda + sigma^2 Vhat < 0, the map undefined at the Jacobian's base point (an
    InadmissibleStep that escaped the curve once, and `attnphase transition --sigma 0.2` ended
    in a traceback; later an unconverged point). The point is the null point: V within 1.0e-6
    of its closed form (measured)."""
    from attnphase import learning_curve

    p = ModelParams(sigma=0.2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (r,) = learning_curve(
            [0.2], p, branch="positional", method=GaussHermite((16, 8)), errors=False
        )
    assert r.converged and r.kind == "trivial" and r.q == 0.0
    assert r.V == pytest.approx(_null_point(0.2, p)[0], rel=2e-6)


def test_the_semantic_start_below_its_sigma_says_so():
    """The authors' semantic start (q 0.9068, theta 0.3472) needs q sigma^2 > theta^2, so
    sigma >= 0.365: below, the refusal (one point) and the warning (a curve) name the bound."""
    from attnphase import learning_curve

    p, method = ModelParams(sigma=0.2), GaussHermite((16, 8))
    with pytest.raises(ValueError, match="semantic start needs sigma >= 0.365"):
        solve(1.0, p, branch="semantic", method=method)
    with pytest.warns(NonConvergenceWarning, match="semantic start needs sigma >= 0.365"):
        (r,) = learning_curve([1.0], p, branch="semantic", method=method, errors=False)
    assert not r.converged


def _null_point(alpha: float, p: ModelParams, nodes: int = 48) -> tuple[float, float]:
    """V and eps_g of the null point W = 0 in closed form: at zero fields the loss is
    stationary with Hessian H(y) = sigma^2/2 sum_i (1/2 - T_ii) d^2 u_i, u_1 = h_1(h_1 - h_2),
    u_2 = h_2(h_2 - h_1); the prox is linear there, so Vhat = alpha E_y tr[(1 + V H)^-1 H] and
    V = sigma^2 / (lambda + sigma^2 Vhat); eps_g = sigma^2 E_y[(1/2 - T_11)^2 + (1/2 - T_22)^2]."""
    from numpy.polynomial.hermite_e import hermegauss
    from scipy.optimize import brentq
    from scipy.special import expit

    y, w = hermegauss(nodes)
    w = w / w.sum()
    y1, y2 = np.meshgrid(p.sigma * y, p.sigma * y, indexing="ij")
    weight = np.outer(w, w)
    a = 0.5 - (1 - p.omega) * expit(y1 * (y1 - y2)) - p.omega * p.A[0][0]
    b = 0.5 - (1 - p.omega) * expit(y2 * (y2 - y1)) - p.omega * p.A[1][1]
    H = (
        0.5
        * p.sigma**2
        * np.stack([np.stack([2 * a, -a - b], -1), np.stack([-a - b, 2 * b], -1)], -2)
    )

    def vhat(V: float) -> float:
        B = np.linalg.solve(np.eye(2) + V * H, H)
        return alpha * float(np.sum(weight * np.trace(B, axis1=-2, axis2=-1)))

    V = brentq(lambda v: v - p.sigma**2 / (p.lam + p.sigma**2 * vhat(v)), 1e-6, 100.0)
    return V, p.sigma**2 * float(np.sum(weight * (a**2 + b**2)))


@pytest.mark.parametrize(
    ("alpha", "lam", "branch"),
    [(1.0, 0.3, "semantic"), (1.0, 10.0, "positional"), (2.0, 1.0, "trivial")],
)
def test_a_strong_ridge_ends_every_branch_at_the_null_point_of_its_closed_form(alpha, lam, branch):
    """Where the ridge wins, the weights decay to zero (q falls ~1e-4-fold a step at lambda 1):
    no branch converged before (q stuck near 1e-13, the conjugates lost to cancellation). Each
    now ends converged at q = m = theta = 0, with V and eps_g of the closed form: measured
    |V / V_closed - 1| = 8.7e-7 to 9.8e-7 (the solver's tolerance is 1e-6 relative; a finish
    with the integration-by-parts conjugates is off by 7e-4) and eps_g within 2.1e-10, the
    training loss alpha eps_g (its ridge term is zero)."""
    p = ModelParams(lam=lam)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = solve(alpha, p, branch=branch)
    V, eps = _null_point(alpha, p)
    assert r.converged and r.kind == "trivial" and r.q == r.m == r.theta == 0.0
    assert r.V == pytest.approx(V, rel=2e-6) and r.V_err >= 1e-6 * r.V
    assert r.test_error == pytest.approx(eps, rel=1e-8)
    assert r.train_loss == pytest.approx(alpha * eps, rel=1e-8)


def test_without_a_ridge_below_interpolation_the_warning_says_v_diverges():
    """lambda 0, semantic: V is 37.6 at alpha 1.5, 73 at 1.2, 148 (unconverged) at 1.1, and at
    alpha 1 the iteration stalls with V near 470-490: the warning says why, not only "stalled"."""
    with pytest.warns(NonConvergenceWarning, match="without a ridge V diverges"):
        r = solve(1.0, ModelParams(lam=0.0), branch="semantic", method=GaussHermite((16, 8)))
    assert not r.converged and r.V > 100
