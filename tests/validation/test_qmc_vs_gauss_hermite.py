"""Engine vs engine: the general (QMC) engine of docs/theory.md §7 against the exact L=2
(Gauss-Hermite) engine at L = 2, r = t = 1: the matrix equations, the linear baseline, the
fixed points, the transitions (slow) and the transition lines (slow)."""

from __future__ import annotations

import numpy as np
import pytest

from attnphase import (
    QMC,
    ModelParams,
    find_transitions,
    solve,
)
from attnphase.theory import overlaps as ge
from attnphase.theory.baseline import linear_test_error, linear_test_error_qmc
from attnphase.theory.overlaps import Hats, Overlaps
from attnphase.transitions.lines import transition_lines


def test_matrix_overlap_equations_reduce_to_the_scalar_ones():
    """§7.3 with r = t = K = 1 is §3 exactly (same numbers to rounding): the closed forms
    q = s2 (s2 qhat + mhat^2 + s2 rho thetahat^2)/k^2, m = mhat/k, V = s2/k,
    theta = s2 rho thetahat/k with k = lambda + s2 Vhat (the exact channel uses the matrix
    equations at 1 x 1, so the reference is written out here)."""
    p = ModelParams()
    h = Hats(qhat=0.0123, mhat=-0.0045, Vhat=0.061, thetahat=0.27)
    s2, k = p.sigma**2, p.lam + p.sigma**2 * h.Vhat
    scalar = Overlaps(
        q=s2 * (s2 * h.qhat + h.mhat**2 + s2 * p.rho * h.thetahat**2) / k**2,
        m=h.mhat / k,
        V=s2 / k,
        theta=s2 * p.rho * h.thetahat / k,
    )
    mh = ge.MatrixHats(
        qhat=np.array([[h.qhat]]),
        Mhat=np.array([[h.mhat]]),
        thetahat=np.array([[h.thetahat]]),
        Vhat=np.array([[h.Vhat]]),
    )
    matrix = ge.overlaps(mh, sigma=p.sigma, lam=p.lam, rho=np.array([[p.rho]]))
    for name, value in (("q", scalar.q), ("M", scalar.m), ("theta", scalar.theta), ("V", scalar.V)):
        assert getattr(matrix, name).item() == pytest.approx(value, rel=1e-14)


def test_qmc_linear_baseline_matches_the_quadrature_at_l2():
    value, err = linear_test_error_qmc(ModelParams())
    assert err < 1e-6 * 0.1 * 1e3 * value  # ~3e-5 relative: the estimate is informative
    assert value == pytest.approx(linear_test_error(ModelParams()), abs=4 * err)


@pytest.mark.parametrize(
    "branch,alpha",
    [
        ("semantic", 1.5),
        pytest.param("positional", 1.5, marks=pytest.mark.slow),
        pytest.param("semantic", 2.5, marks=pytest.mark.slow),
        pytest.param("positional", 0.8, marks=pytest.mark.slow),
    ],
)
def test_general_engine_equals_the_l2_engine(branch, alpha):
    """L = 2, r = t = 1 through the general engine: every overlap and observable within 3
    reported standard errors + 1e-3 relative of the exact engine at its default order (whose
    own quadrature error is below 1e-3, README "Quadrature accuracy")."""
    p = ModelParams()
    exact = solve(alpha, p, branch=branch)
    gen = solve(alpha, p, branch=branch, method=QMC(4096, 3))
    assert gen.converged and gen.kind == branch
    pairs = {
        "q": exact.q,
        "M": exact.m,
        "theta": exact.theta,
        "V": exact.V,
        "test_error": exact.test_error,
        "train_loss": exact.train_loss,
    }
    for name, ref in pairs.items():
        value = float(np.ravel(gen.values[name])[0])
        err = float(np.ravel(gen.errors[name])[0])
        assert abs(value - ref) <= 3 * err + 1e-3 * abs(ref), (name, value, err, ref)


@pytest.fixture(scope="module")
def general_l2_transitions():
    """The general engine on the paper's L=2 case, window [1.1, 1.6] (3 grid points)."""
    return find_transitions(
        ModelParams(),
        alpha_min=1.1,
        alpha_max=1.6,
        num=3,
        method=QMC(points=1024, randomisations=3),
    )


@pytest.mark.slow  # 65 s; the general engine's fixed points against the exact engine stay fast
def test_general_engine_transitions_equal_the_l2_engine_at_l2(general_l2_transitions):
    """Engine vs engine: the exact engine's converged roots at omega = 0.3 (64,24 vs 48,16:
    alpha_c 1.2516 +- 0.0001, alpha_l 1.4920 +- 0.0002, studies/transitions_table.py) against
    the general engine's per-scrambling roots, within 3 of its standard errors + 1e-3. A wrong
    branch assignment, sign of the loss gap, eps_lin or switch logic moves a root by >= 0.05."""
    t = general_l2_transitions
    assert t.method == QMC(1024, 3)
    assert 0 < t.alpha_c_err < 0.05 and 0 < t.alpha_l_err < 0.05
    assert abs(t.alpha_c - 1.2516) <= 3 * t.alpha_c_err + 1e-3
    assert abs(t.alpha_l - 1.4920) <= 3 * t.alpha_l_err + 1e-3
    d = t.as_dict()
    assert d["method"] == "qmc" and "n_xi" not in d and d["points"] == 1024


@pytest.mark.slow
def test_general_lines_at_l2_agree_with_the_exact_engines_lines():
    """Engine vs engine over two omegas. Measured (3 x 2048 points): alpha_c 1.2547 +- 0.0072
    and 1.4772 +- 0.0076 against 1.2516 and 1.4725; alpha_l 1.4914 +- 0.0027 and 1.7950 +-
    0.0025 against 1.4920 and 1.7964: at most 0.61 standard errors apart, so a bound of three
    standard errors (plus the exact engine's order error) leaves room for the spread of a
    2-dof error estimate while a bias of 0.02 (a wrong observable or branch) fails."""
    p = ModelParams(omega=0.3)
    omegas, names, window = [0.3, 0.35], ("alpha_c", "alpha_l"), (1.0, 2.0)
    general = transition_lines(
        p,
        omegas,
        method=QMC(2048, 3),
        alpha_min=window[0],
        alpha_max=window[1],
        scan_num=8,
        names=names,
    )
    exact = transition_lines(p, omegas, alpha_min=window[0], alpha_max=window[1], names=names)
    for name in names:
        for g, e in zip(general[name], exact[name], strict=True):
            assert g.status == "converged" and e.status == "converged", (g.status, e.status)
            assert len(g.roots) == 3 and 0 < g.alpha_err < 0.02
            assert abs(g.alpha - e.alpha) <= 3 * g.alpha_err + e.alpha_err, (name, g, e)
