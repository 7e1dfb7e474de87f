"""The general engine (docs/theory.md §7): the training-loss identity and the cold starts. Its
reductions to the L=2 engine: tests/validation/test_qmc_vs_gauss_hermite.py."""

import dataclasses

import numpy as np
import pytest

from attnphase import QMC, ModelParams, solve
from attnphase.theory import overlaps as ge

L3_A = np.full((3, 3), 0.2) + 0.4 * np.eye(3)


@pytest.mark.parametrize(
    "params,branch,alpha",
    [
        (ModelParams(A=L3_A), "semantic", 1.5),
        pytest.param(ModelParams(rank=2), "semantic", 1.5, marks=pytest.mark.slow),
    ],
)
def test_training_loss_identity_at_fixed_points(params, branch, alpha):
    """R/d = alpha E[ell(h_hat)] + lambda tr q/(2 sigma^2) equals -Phi at a fixed point (§7.4).

    r = 1: per scrambling, to the accuracy of the fixed point (solved to 1e-8 relative: the
    identity combines terms ~30x larger than R/d). r = 2: the QMC points break the model's
    rotation symmetry Q -> Q R at the level of the integration error, so the iteration's fixed
    frame (`canonical`) leaves F(x) = R x with R = I + O(error): the identity holds within
    three standard errors of the training loss (measured: 1e-4 relative, 0.04 errors)."""
    gen = solve(alpha, params, branch=branch, method=QMC(2048, 3), tol=1e-8)
    assert gen.converged
    if params.rank == 1:
        for sol in gen.solutions:
            obs = sol.observables
            assert obs["train_loss_identity"] == pytest.approx(obs["train_loss"], rel=1e-5)
    gap = gen.values["train_loss_identity"] - gen.values["train_loss"]
    assert abs(gap) <= 3 * gen.errors["train_loss"]


def test_cold_trivial_start_at_l3_where_the_small_q_start_is_undefined():
    """At L=3, alpha 1.5 the trivial start (q = 0.02) has lambda + sigma^2 Vhat < 0 (measured:
    -0.017); the start's q is doubled until the map is defined, and the fixed point satisfies
    R/d = -Phi (512 points x 2 scramblings: they differ by 1.4e-5 = 0.13%)."""
    r = solve(1.5, ModelParams(A=L3_A), branch="trivial", method=QMC(512, 2))
    assert r.converged and r.kind == "trivial", r.status
    assert r.train_loss == pytest.approx(r.train_loss_identity, rel=5e-3)


def test_positional_start_beyond_the_branch_end_finishes_on_the_trivial_point():
    """L=3, C = (1, 0, -1): the positional branch ends near alpha 1.28 (docs/theory.md §7.6); at
    alpha 2 the start's M decays geometrically, which a relative convergence test never
    accepts (before: 432 iterations, not converged). It is finished on the trivial manifold
    and equals the trivial fixed point on the same points."""
    p = ModelParams(A=L3_A)
    pos = solve(2.0, p, branch="positional", method=QMC(512, 2))
    triv = solve(2.0, p, branch="trivial", method=QMC(512, 2))
    assert pos.converged and pos.kind == "trivial", pos.status
    assert pos.q == pytest.approx(triv.q, rel=1e-4) and pos.V == pytest.approx(triv.V, rel=1e-4)


@pytest.mark.slow
def test_rank2_trivial_start_converges():
    """On the trivial manifold at r = 2 the fixed point is rotation invariant (q, V ~ I): the
    eigenvector frame of q is not used there (it rotated with the noise and the iteration
    diverged, residual 233). q stays isotropic to the integration error (at 512 x 2 points:
    diagonal entries 0.4% apart, off-diagonal 1.3% of the diagonal)."""
    r = solve(1.5, ModelParams(rank=2), branch="trivial", method=QMC(512, 2))
    assert r.converged and r.kind == "trivial", r.status
    q = np.asarray(r.q)
    assert abs(q[0, 0] - q[1, 1]) < 0.02 * q[0, 0] and abs(q[0, 1]) < 0.02 * q[0, 0]
    assert r.train_loss == pytest.approx(r.train_loss_identity, rel=5e-3)


def test_cold_semantic_start_reports_theta_positive_with_matching_hats():
    """On scrambling 6 (L=2, alpha 1.5, 1024 points) the damped cold stage carries theta from
    0.35 through zero to the mirror fixed point (it reported theta = -0.1355). Its columns are
    now signed (theta > 0) when the coarse stage hands over and at the end, with the hats:
    theta = sigma^2 rho thetahat / A_r keeps thetahat's sign, and a run of 4 warm-started
    scramblings agrees in sign (a mixed-sign run would have an error of ~theta/2). The exact
    theta is 0.1346; the single-scrambling spread is 0.83% (docs/general-engine-accuracy.md),
    so 4% is five of those."""
    exact = solve(1.5, ModelParams(), branch="semantic").theta
    one = solve(1.5, ModelParams(), branch="semantic", method=QMC(1024, 1, 6))
    assert one.kind == "semantic" and one.theta == pytest.approx(exact, rel=0.04)
    assert one.thetahat > 0
    run = solve(1.5, ModelParams(), branch="semantic", method=QMC(1024, 4, 6))
    assert run.theta == pytest.approx(exact, rel=0.04) and run.theta_err < 0.02 * exact


@pytest.mark.parametrize(
    ("params", "alpha", "seed", "exact", "rel"),
    [
        # L=2: l2 engine m = 0.2547, single-scrambling spread 1.1%
        (ModelParams(), 1.5, 4, None, 0.06),
        # L=3: 8 x 65536-point reference m = 0.2102, single-scrambling spread 9.7%
        pytest.param(ModelParams(A=L3_A), 0.8, 5, 0.2102, 0.5, marks=pytest.mark.slow),
        pytest.param(ModelParams(A=L3_A), 0.8, 16, 0.2102, 0.5, marks=pytest.mark.slow),
    ],
    ids=["L2-seed4", "L3-seed5", "L3-seed16"],
)
def test_cold_positional_start_finds_the_branch(params, alpha, seed, exact, rel):
    """Cold positional starts ended at the trivial point on 10 of 20 scramblings at L=2,
    alpha 1.5 (damping 0.5 on the coarse points cycled with residual O(1)) and 5 of 20 at L=3,
    alpha 0.8 (the branch is lost on the 128 coarse points): with damping 0.8 and the damped
    stage repeated on the fine points where the coarse ones do not settle, 20 of 20 in both
    cases. Tolerances: five single-scrambling spreads."""
    if exact is None:
        exact = solve(alpha, params, branch="positional").m
    res = solve(alpha, params, branch="positional", method=QMC(1024, 1, seed))
    assert res.kind == "positional", res.status
    assert res.m == pytest.approx(exact, rel=rel)


@pytest.mark.slow
def test_rank2_positional_start_converges_with_one_positional_column():
    """r = 2, L = 2, alpha 1.5: the positional fixed point has one positional column and one
    trivial one (any rank-one M is this up to a rotation of the columns). Left free, the trivial
    column's M oscillated around zero at the noise level and the run never converged (618
    iterations at 1024 x 2 points); it is held at zero, with q and V diagonal, on the manifold
    the single-column reflection keeps invariant (`pinned`). Measured at 1024 x 4 points:
    M = 0.2248 +- 0.0018, q = diag(0.0289, 0.045), R/d = -Phi within one standard error."""
    r = solve(1.5, ModelParams(rank=2), branch="positional", method=QMC(1024, 2))
    assert r.converged and r.kind == "positional", r.status
    M, q = np.asarray(r.m), np.asarray(r.q)
    assert M[0, 1] == 0.0 and q[0, 1] == 0.0 and M[0, 0] > 0.2
    assert abs(r.train_loss - r.train_loss_identity) <= 3 * r.train_loss_err + 1e-4


def test_rank2_mixed_start_finds_the_mixed_fixed_point():
    """r = 2, L = 2, alpha 1.5: the simulations' semantic start ends at the mixed minimum (one
    column semantic, one positional; studies/general_vs_sim.py). The engine's mixed start
    fell to one semantic and one trivial column; on the mixed manifold (`free_overlaps`) it
    finds the point an explicit start near the simulations' minimum gives at 8192 x 4 points:
    M = 0.219, theta = 0.1022. Single scramblings at 1024 points spread by ~1% (seeds 0, 1:
    M 0.2235, 0.2219; theta 0.1012, 0.1020), hence 5%."""
    r = solve(1.5, ModelParams(rank=2), branch="mixed", method=QMC(1024, 2))
    assert r.converged and r.kind == "mixed", r.status
    M, theta = np.asarray(r.m), np.asarray(r.theta)
    assert M[0, 1] == pytest.approx(0.219, rel=0.05) and theta[0, 0] == pytest.approx(
        0.1022, rel=0.05
    )
    assert M[0, 0] == 0.0 and theta[0, 1] == 0.0


def test_the_teacher_frame_diagonalises_theta_and_is_idempotent():
    """Teacher rotations theta -> R^T theta leave the model invariant; `teacher_frame` picks
    the representative with theta theta^T diagonal (singular values kept) and leaves a frame
    it already has (no drift between iterations)."""
    from attnphase.theory.qmc.engine import teacher_frame

    rng = np.random.default_rng(3)
    o = ge.MatrixOverlaps(
        q=np.eye(2), M=np.zeros((2, 2)), theta=rng.normal(size=(3, 2)), V=np.eye(2)
    )
    f = teacher_frame(o)
    gram = f.theta @ f.theta.T
    assert np.allclose(gram, np.diag(np.diag(gram)), atol=1e-14)
    sv = np.linalg.svd(o.theta, compute_uv=False)
    assert np.allclose(np.linalg.svd(f.theta, compute_uv=False), sv, atol=1e-14)
    assert np.allclose(teacher_frame(f).theta, f.theta, atol=1e-14)
    one = dataclasses.replace(o, theta=o.theta[:1])
    assert teacher_frame(one) is one  # t = 1: nothing to fix


def test_a_rank_two_teacher_converges_and_its_scramblings_agree():
    """Teacher rank 2, student rank 1, alpha 3: without the teacher's frame a scrambling's
    theta drifted along the orbit and never met the tolerance (383 iterations, "maximum
    iterations reached" at alpha 1.5, 1024 x 2 points); with it every scrambling converges.
    Measured |theta| per scrambling at 2048 x 4: 0.185-0.191, so 5% holds them together."""
    r = solve(3.0, ModelParams(teacher_rank=2), branch="semantic", method=QMC(2048, 4))
    assert r.converged and r.kind == "semantic"
    norms = [np.linalg.norm(s.overlaps.theta) for s in r.solutions]
    assert max(norms) / min(norms) < 1.05
    assert np.min(np.abs(r.theta)) < 1e-12  # the teacher's frame: theta along one axis


def test_an_unconverged_point_says_how_many_scramblings_failed_and_why():
    """Each scrambling's failure counted (a set of their statuses read "converged; maximum
    iterations reached" where one of four had not converged); the failures themselves, not
    the status strings, are the engine's."""
    import warnings

    from attnphase.theory.qmc.engine import Solution, _scrambling_status

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = solve(1.5, ModelParams(), branch="semantic", method=QMC(64, 2, max_iter=3))
    assert not r.converged and r.status == "maximum iterations reached on 2 of 2 scramblings"
    done = Solution(None, None, {}, True, 10, (), "converged")
    stuck = dataclasses.replace(done, converged=False, status="maximum iterations reached")
    got = _scrambling_status([done, done, stuck], 4)
    assert got == "maximum iterations reached on 1 of 4 scramblings; 1 not solved"


def test_a_strong_ridge_ends_at_the_null_point_within_the_integration_error():
    """lambda 1, alpha 1, the semantic start at L = 2: q decays to zero. The iteration ran on to
    q = 1e-17 in 378 iterations before, where Vhat's q^{-1/2} lost digits to cancellation: V
    0.251674 +- 0.00018, 3.1 standard errors from the closed form 0.252237. It now ends below
    q = 1e-8 and solves the null point with q held at 1e-10: V 0.92 standard errors (2.8e-6)
    from the closed form, eps_g 0.25 (6.6e-7), at the default 4 x 8192 points. (At 4 x 1024
    points eps_g, an integral of the target alone, came out 4.3 of its four-scrambling errors
    away: that error is itself uncertain at four scramblings.)"""
    from tests.theory.gauss_hermite.test_engine import _null_point

    p = ModelParams(lam=1.0)
    r = solve(1.0, p, branch="semantic", method=QMC())
    V, eps = _null_point(1.0, p)
    assert r.converged and r.kind == "trivial" and np.all(np.asarray(r.q) == 0.0)
    assert abs(r.V - V) <= 3 * r.V_err and abs(r.test_error - eps) <= 3 * r.test_error_err


def test_the_null_point_of_correlated_tokens_has_its_mean_multiplier():
    """The mean rows' multiplier is measured at the null point's held q (1e-10 I): measured at q
    = 0 the map ended at once (`Decayed`) and the solve raised. Two clusters, lambda 1, alpha 1
    (512 x 2 points): the null point, and no clustered branch bifurcates from it (0.018)."""
    from attnphase import Mixture

    p = ModelParams(lam=1.0, variant=Mixture(2, 0.5, 1.0))
    r = solve(1.0, p, branch="semantic", method=QMC(512, 2))
    assert r.converged and r.kind == "trivial" and np.all(np.asarray(r.q) == 0.0)
    assert abs(r.values["mean_multiplier"]) < 1.0
