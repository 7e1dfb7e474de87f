"""GAMP on data (docs/theory.md §8) and the state evolution of the same run (§7). The trace
against GAMP's iterates, and GAMP's fixed point at d = 4000 against `solve`:
tests/validation/test_gamp_vs_state_evolution.py."""

import math

import numpy as np
import pytest
import torch

from attnphase import ModelParams, SimConfig, simulate, solve
from attnphase.gamp import equations as eq
from attnphase.gamp import run_gamp, state_evolution_trace, trace_of_run, trace_start
from attnphase.gamp.problem import build_problem
from attnphase.ops.tensor import fields
from attnphase.prox import global_prox, prox_jacobian
from attnphase.sim import minimise
from attnphase.theory.overlaps import MatrixOverlaps

CPU = torch.device("cpu")
DT = torch.float64
P = ModelParams()  # omega 0.3, sigma 0.5, lambda 0.01, the paper's A, L = 2, r = t = 1


pytestmark = pytest.mark.usefixtures("one_thread")


def uniform_A(L: int) -> np.ndarray:
    """0.6 on the diagonal, the rest of each row spread evenly (docs/theory.md §7.6)."""
    return np.full((L, L), 0.4 / (L - 1)) + np.eye(L) * (0.6 - 0.4 / (L - 1))


def risk_gradient(prob, Q: torch.Tensor) -> torch.Tensor:
    """grad R by autograd through the simulations' StructuredRisk (independent of GAMP's
    closed form)."""
    Qr = Q[None].clone().requires_grad_(True)
    (g,) = torch.autograd.grad(prob.risk(Qr).sum(), Qr)
    return g[0]


# ---------------------------------------------------------------- D (§8 step 3)


@pytest.mark.parametrize("L,r", [(2, 1), (3, 1), (2, 2), (3, 2)])
def test_output_jacobian_matches_finite_differences_of_the_prox(L, r):
    """D_mu,l = -df_mu,l/dw_mu,l from the implicit-function theorem equals central differences
    of f = V^{-1}(prox(w) - w) on data samples (per-sample K, Cm, c), with a non-diagonal V
    for r = 2. Measured: max relative deviation 1.0e-10 to 2.6e-10 (eps 1e-5, prox to 1e-14);
    a transposed block (V^{-1} [J]_ll vs [J]_ll V^{-1}), a wrong flattening or sign fails."""
    P_ = ModelParams(A=uniform_A(L), rank=r)
    prob = build_problem(P_, 60, 0.2, "semantic", 0, CPU)
    K, Cm, c = prob.K[:6], prob.Cm[:6], prob.c[:6]
    g = torch.Generator().manual_seed(1)
    Q = torch.randn(60, r, generator=g, dtype=DT)
    w = fields(prob.x_pos[:6], Q) + 0.3 * torch.randn(6, L, r, generator=g, dtype=DT)
    V = torch.tensor([[12.0, 3.0], [3.0, 8.0]], dtype=DT)[:r, :r]
    Vinv = torch.linalg.inv(V).contiguous()
    starts = torch.stack([w, torch.zeros_like(w)], 1)
    h = global_prox(w, Vinv, K, Cm, c, starts, probe=64, gtol=1e-13).h
    D = eq.output_jacobian_blocks(prox_jacobian(h, Vinv, K, Cm, c), Vinv)
    eps = 1e-5
    D_fd = torch.zeros_like(D)
    for tok in range(L):
        for b in range(r):
            out = []
            for sign in (1.0, -1.0):
                wp = w.clone()
                wp[:, tok, b] += sign * eps
                hp = global_prox(wp, Vinv, K, Cm, c, h[:, None], gtol=1e-14).h
                out.append(eq.outputs(hp, wp, Vinv)[:, tok, :])
            D_fd[:, tok, :, b] = -(out[0] - out[1]) / (2 * eps)
    assert float((D - D_fd).abs().max() / D.abs().max()) < 1e-8
    assert torch.allclose(D, D.transpose(-1, -2), atol=1e-15)


def test_risk_gradient_closed_form_matches_autograd():
    """The closed-form R and grad R used for GAMP's stopping rule equal StructuredRisk and its
    autograd gradient (L=3, r=2, t=2, two encoding directions) to rounding."""
    P_ = ModelParams(A=uniform_A(3), rank=2, teacher_rank=2, encodings=((1, 0), (0, 1), (-1, 0)))
    prob = build_problem(P_, 80, 1.0, "random", 3, CPU)
    Q = torch.randn(80, 2, generator=torch.Generator().manual_seed(0), dtype=DT)
    R, grad = (x[0] for x in prob.risk.value_and_gradient(Q[None]))
    R = float(R)
    with torch.no_grad():
        assert R == pytest.approx(float(prob.risk(Q[None])[0]), rel=1e-12)
    assert torch.allclose(grad, risk_gradient(prob, Q), rtol=1e-10, atol=1e-13)


# ---------------------------------------------------------------- the data set


def test_problem_is_the_simulations_data_set():
    """build_problem draws what `simulate` draws for the same config and seed: L-BFGS on its
    risk from its start gives simulate's q, m, theta, training loss and test error to
    rounding (a different teacher, token or position draw changes them at O(1/sqrt(d)))."""
    d, alpha, seed = 200, 1.5, 7
    prob = build_problem(P, d, alpha, "positional", seed, CPU)
    rep = minimise(prob.risk, prob.Q0[None].clone(), "lbfgs")
    q, M, theta = prob.overlaps(rep.Q[0])
    with torch.no_grad():
        R = float(prob.risk(rep.Q)[0])
    cfg = SimConfig(params=P, d=d, alpha=alpha, init="positional", device="cpu")
    (sim,) = simulate(cfg, seeds=[seed])
    assert sim.q == pytest.approx(float(q[0, 0]), rel=1e-9)
    assert sim.m == pytest.approx(float(M[0, 0]), rel=1e-9)
    assert sim.theta == pytest.approx(float(theta[0, 0]), rel=1e-7)
    assert sim.train_loss == pytest.approx(R / d, rel=1e-12)
    assert sim.test_error == pytest.approx(prob.test_error(rep.Q[0]), rel=1e-10)


# ---------------------------------------------------------------- fixed points (§8, §8.1)

SEEDS = (0, 1, 2, 3)  # converge at d = 500 (seed 7 cycles: test_cycling_is_reported)


@pytest.fixture(scope="module")
def semantic_runs():
    """GAMP from the semantic start at alpha 1.5, d = 500 (default damping), four seeds."""
    return [run_gamp(P, 500, 1.5, seed=s, n_test=20_000, device="cpu") for s in SEEDS]


def test_fixed_point_is_a_critical_point(semantic_runs):
    """Every run converges, and |grad R| at GAMP's estimate (by autograd through the
    simulations' risk, not GAMP's own formula) is below 1e-6 of |lambda Qh|, the size of
    either half of grad R = -sum x~^T f/sqrt(d) + lambda Qh that cancel at a fixed point.
    Measured: 1.5e-7 relative (|grad R|/sqrt(d) ~ 1e-9, gtol). Damping only Qh, not F and Vhat,
    breaks the Onsager cancellation and stalls at |grad R|/sqrt(d) ~ 2e-5 to 1e-4 (fails)."""
    for res in semantic_runs:
        assert res.converged, res.status
        prob = build_problem(P, res.d, res.alpha, "semantic", res.seed, CPU)
        Q = torch.as_tensor(res.Q)
        grad = risk_gradient(prob, Q)
        assert float(grad.norm() / (P.lam * Q.norm())) < 1e-6
        assert float(grad.norm()) / math.sqrt(res.d) == pytest.approx(res.grad_norm, rel=1e-3)


def test_fixed_point_is_the_lbfgs_minimiser(semantic_runs):
    """L-BFGS from the same start on the same data ends at GAMP's fixed point: the distance is
    within the first-order bound (|grad R(Q_gamp)| + |grad R(Q_lbfgs)|)/mu, mu the smallest
    eigenvalue of the dense Hessian of R there (a strict minimum, mu > 0). Measured (seed 0):
    mu 3.4e-3, bound 1.8e-5, distance 7.4e-6 (5e-7 of |Q|); a different critical point
    (another basin) is O(1) away."""
    res = semantic_runs[0]
    prob = build_problem(P, res.d, res.alpha, "semantic", res.seed, CPU)
    rep = minimise(prob.risk, prob.Q0[None].clone(), "lbfgs", gtol=1e-9)
    Q_lbfgs, Q_gamp = rep.Q[0], torch.as_tensor(res.Q)
    H = torch.autograd.functional.hessian(lambda x: prob.risk(x[None, :, None])[0], Q_lbfgs[:, 0])
    mu = float(torch.linalg.eigvalsh(H)[0])
    assert mu > 0
    bound = float(risk_gradient(prob, Q_gamp).norm() + risk_gradient(prob, Q_lbfgs).norm()) / mu
    dist = float((Q_gamp - Q_lbfgs).norm())
    assert dist <= bound
    assert dist / float(Q_lbfgs.norm()) < 1e-4


# alpha 1.5, semantic branch: the standard deviation over 10 seeds at d = 500 of GAMP's fixed
# point (seeds 0-9, n_test 1e5; the 1e5-sample test error's own noise is 10x smaller)
SD_500 = {"q": 0.0048, "m": 0.011, "theta": 0.0072, "V": 0.43, "test_error": 1.9e-4}


def test_fixed_point_matches_the_state_evolution_at_d500(semantic_runs):
    """The mean over four seeds of GAMP's fixed point equals `solve(1.5)` (semantic) within
    5 standard errors of the mean (sd of 10 seeds, SD_500; measured deviations of the
    10-seed mean: q -2.1%, theta -1.9%, eps_g +0.4%, V +0.9%, i.e. 0.1-1.3 standard errors).
    V: GAMP's is the smooth part of the susceptibility (docs/theory.md §8.1), 16.16 +- 0.14 vs
    the state evolution's 16.02 at d = 500; the bound is the same 5 standard errors."""
    ref = solve(1.5, P, branch="semantic")
    for name in ("q", "m", "theta", "V", "test_error"):
        mean = np.mean([getattr(r, name) for r in semantic_runs])
        assert abs(mean - getattr(ref, name)) <= 5 * SD_500[name] / math.sqrt(len(SEEDS)), name


def test_replicon_factor_on_data_matches_the_state_evolution(semantic_runs):
    """docs/theory.md §9's smooth factor at GAMP's fixed point, measured on the data, against the
    state evolution's at its fixed point: 0.26898 +- 0.0003 (`attnphase theory --alpha 1.5
    --branch semantic --stability`, 8192 x 4 points). Seeds 0-3 at d = 500 measured 0.2626,
    0.2577, 0.3187, 0.2577 (sd 0.030; at d = 2000 mean 0.267, sd 0.018): 3 standard errors
    of the four-seed mean. A missing alpha fails it (the whitening cancels at r = 1: it is
    checked at r = 2 in tests/validity/test_stability.py)."""
    values = [r.rs_stability for r in semantic_runs]
    assert abs(np.mean(values) - 0.26898) <= 3 * 0.030 / math.sqrt(len(values))
    assert semantic_runs[0].as_dict()["rs_stability"] == values[0]


def test_cycling_is_reported():
    """Seed 7 at d = 500 has no exact GAMP fixed point: one sample's prox minimiser jumps
    between two basins every iteration (0.36 apart), |grad R|/sqrt(d) stays at 9e-6. The run
    stops with a status that says so; the L-BFGS polish from its end point is a critical point
    with a training loss no higher than GAMP's."""
    res = run_gamp(P, 500, 1.5, seed=7, n_test=100, polish=True, device="cpu")
    assert not res.converged
    assert res.status.startswith("cycling: 1 sample switches prox minima"), res.status
    assert 5e-6 < res.grad_norm < 5e-5
    assert res.history[-1].switched == 1
    assert res.polish["label"] == "L-BFGS polish from GAMP's end point"
    assert res.polish["grad_norm"] < 1e-8
    assert res.polish["train_loss"] <= res.train_loss


def _monitor_with(thetas, grads, patience=5):
    """A monitor fed a synthetic history: theta per iteration, one switching sample each."""
    from attnphase.gamp.algorithm import _Monitor
    from attnphase.gamp.result import GampStep

    mon = _Monitor(None, tol=1e-6, gtol=1e-9, patience=patience)
    for k, (th, g) in enumerate(zip(thetas, grads, strict=True)):
        o = MatrixOverlaps(*(np.array([[x]]) for x in (0.05, 0.0, th, 20.0)))
        mon.steps.append(GampStep(k, o, g, 1e-3, 1e-3, 1))
        mon.switches.append(torch.tensor([True, False]))
        del mon.switches[:-patience]
    return mon


def test_a_drifting_estimate_is_not_declared_cycling():
    """Below alpha ~ 1 the gradient flattens at ~1e-4 while theta still drifts ~1e-3 per
    iteration to another minimum (alpha 0.5, d 2000, seed 2 ended at the positional minimum,
    m = -0.229, only once this was required); a flat gradient with frozen overlaps is a cycle."""
    flat = [1e-4] * 20
    drifting = _monitor_with([0.04 - 1e-3 * k for k in range(20)], flat)
    assert drifting.status() is None
    frozen = _monitor_with([0.04] * 20, flat)
    assert frozen.status().startswith("cycling: 1 sample switches")


def test_iteration_limit_is_a_status():
    res = run_gamp(P, 100, 1.5, init="random", max_iter=2, n_test=100, device="cpu")
    assert not res.converged and res.status == "maximum iterations reached"
    assert res.iterations == 2 and len(res.history) == 3
    assert [s.iteration for s in res.history] == [0, 1, 2]


@pytest.mark.slow
def test_any_rank_and_length_reaches_a_critical_point():
    """L = 3, student rank 2, teacher rank 1 (alpha 2, d = 150, semantic start): GAMP converges
    to a critical point (autograd gradient 1e-6 of |lambda Qh|; measured 208 iterations)."""
    P3 = ModelParams(A=uniform_A(3), rank=2)
    res = run_gamp(P3, 150, 2.0, seed=0, n_test=100, device="cpu")
    assert res.converged, res.status
    prob = build_problem(P3, 150, 2.0, "semantic", 0, CPU)
    Q = torch.as_tensor(res.Q)
    assert float(risk_gradient(prob, Q).norm() / (P3.lam * Q.norm())) < 1e-6
    assert np.shape(res.q) == (2, 2) and np.shape(res.theta) == (1, 2)


# ---------------------------------------------------------------- state evolution (§7, §8)


def test_trace_start_skips_an_informed_start(semantic_runs):
    """Qh = Q* has Gamma = rho_d - theta^2/q = 0: the trace starts later (iterate 1 undamped,
    test_state_evolution_tracks_undamped_gamp_at_d1000; with damping 0.75 Gamma grows over a
    few iterates); a start with Gamma = 0 is refused with a message naming it."""
    res = semantic_runs[0]
    k, o = trace_start(res)
    assert k >= 1 and o is res.history[k].overlaps
    o0 = res.history[0].overlaps
    assert res.rho - o0.theta[0, 0] ** 2 / o0.q[0, 0] == pytest.approx(0.0, abs=1e-12)
    informed = MatrixOverlaps(*(np.array([[x]]) for x in (0.25, 0.0, 0.25, 14.0)))
    with pytest.raises(ValueError, match="start: overlaps not admissible"):
        state_evolution_trace(P, 1.5, informed, 3)


def test_trace_of_run_lines_up_with_the_run():
    """The trace beside a run starts at trace_start's iterate with exactly its overlaps, carries
    the run's damping and labels its rows with the run's iteration numbers."""
    res = run_gamp(P, 300, 1.5, damping=0.0, max_iter=4, n_test=100, device="cpu")
    tr = trace_of_run(res, points=256, randomisations=2)
    k, start = trace_start(res)
    assert tr.damping == 0.0 and tr.status == "ok"
    assert [row["iteration"] for row in tr.rows()] == list(range(k, 5))
    assert tr.rows()[0]["q"] == pytest.approx(float(start.q[0, 0]), rel=1e-14)
    assert tr.rows()[0]["V"] == pytest.approx(float(start.V[0, 0]), rel=1e-14)


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"d": 0}, "d must be an integer >= 2"),
        ({"d": 2.5}, "d must be an integer"),
        ({"alpha": 0.0}, "alpha must be > 0"),
        ({"alpha": -1.0}, "alpha must be > 0"),
        ({"alpha": float("nan")}, "alpha must be finite"),
        ({"init": "teacher"}, "init must be one of"),
        ({"init": np.zeros((49, 1))}, r"init: a start matrix must have shape \(d, r\)"),
        ({"init": np.full((50, 1), np.nan)}, "init: the start matrix must be finite"),
        ({"damping": 1.0}, r"damping must be in \[0, 1\)"),
        ({"damping": -0.1}, r"damping must be in \[0, 1\)"),
        ({"max_iter": 0}, "max_iter must be an integer >= 1"),
        ({"tol": 0.0}, "tol must be > 0"),
        ({"gtol": -1.0}, "gtol must be > 0"),
        # tolerances that would call the first iterate converged
        ({"tol": 1e10}, "tol must be at most 0.001"),
        ({"gtol": 1e10}, "gtol must be at most 0.0001"),
        ({"V0": -1.0}, "V0 must be positive definite"),
        ({"seed": -1}, "seed must be an integer >= 0"),
    ],
)
def test_bad_input_names_the_parameter(kwargs, match):
    args = {"d": 50, "alpha": 1.0} | kwargs
    d, alpha = args.pop("d"), args.pop("alpha")
    with pytest.raises(ValueError, match=match):
        run_gamp(P, d, alpha, **args)


GOOD_START = MatrixOverlaps(*(np.array([[x]]) for x in (0.09, 0.0, 0.13, 16.0)))


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"alpha": 0.0}, "alpha must be > 0"),
        ({"iterations": -1}, "iterations must be an integer >= 0"),
        ({"damping": 1.0}, r"damping must be in \[0, 1\)"),
        ({"points": 1}, "points must be an integer >= 2"),
        (
            {"start": MatrixOverlaps(np.eye(2), np.zeros((1, 2)), np.zeros((1, 2)), np.eye(2))},
            r"start.q must have shape \(1, 1\)",
        ),
    ],
)
def test_trace_bad_input_names_the_parameter(kwargs, match):
    args = {"alpha": 1.5, "start": GOOD_START, "iterations": 2} | kwargs
    with pytest.raises(ValueError, match=match):
        state_evolution_trace(
            P, args.pop("alpha"), args.pop("start"), args.pop("iterations"), **args
        )
