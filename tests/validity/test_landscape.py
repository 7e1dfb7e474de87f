"""The landscape probe (docs/theory.md §9): starts, end points, curvature, V_sim,
and the `attnphase landscape` command."""

import json
import math

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

import attnphase.validity.landscape as landscape_module
from attnphase import GaussHermite, ModelParams, SimConfig, simulate, solve
from attnphase.cli import app
from attnphase.figures.landscape import landscape_figure
from attnphase.validity.landscape import (
    Curvature,
    LandscapePoint,
    LandscapeResult,
    SeedData,
    hutchinson_block_traces,
    inverse_block_traces,
    probe_config,
    probe_landscape,
    start_weights,
)
from tests.conftest import TEST_ORDER

P = ModelParams()  # omega 0.3, sigma 0.5, lam 0.01, standard A
GTOL = 1e-8  # the simulations' RMS-gradient target (SimConfig.gtol)
runner = CliRunner()


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def end_point():
    """The L-BFGS minimum from c = 1 at d = 200, alpha = 2 (seed 0) and its curvature."""
    data = SeedData.draw(probe_config(P, 200, 2.0, n_test=100), 0)
    Q = data.train(1.0, GTOL).Q[0]
    return data, Q, Curvature(data.risk, Q)


@pytest.mark.parametrize("c", [0.0, 0.2, 0.6, 1.0])
def test_start_has_overlap_c_and_the_teachers_norm(c):
    """theta(Q0) = sigma^2 (c |Q*|^2 + sqrt(1-c^2) Q*.g)/d: c rho_d up to sqrt(1-c^2) sigma^2
    Q*.g/d, whose standard deviation is sigma^2 |Q*|/d ~ sigma^2/sqrt(d); |Q0|^2/d = 1 up to
    sd sqrt(2/d). Both within 4 sd at d = 400. g is the same for every c (Q0(0) = g)."""
    data = SeedData.draw(probe_config(P, 400, 1.0, n_test=100), 3)
    Qs, g, d, s2 = data.teacher[0], data.g, 400, P.sigma**2
    Q0 = data.start(c)
    rho_d = s2 * float(Qs.pow(2).sum()) / d
    theta = s2 * float(Qs.T @ Q0) / d
    assert abs(theta - c * rho_d) <= 4 * s2 / math.sqrt(d)
    assert abs(float(Q0.pow(2).sum()) / d - 1.0) <= 4 * math.sqrt(2 / d)
    assert torch.equal(data.start(0.0), g)


def test_extra_student_columns_start_from_g():
    """r > t: the columns beyond t are g's for every c (a zero column would stay zero);
    r < t: only the first r teacher columns are used."""
    gen = torch.Generator().manual_seed(0)
    teacher, g = torch.randn(50, 1, generator=gen), torch.randn(50, 3, generator=gen)
    Q0 = start_weights(teacher, g, 0.6)
    assert torch.allclose(Q0[:, :1], 0.6 * teacher + 0.8 * g[:, :1])
    assert torch.equal(Q0[:, 1:], g[:, 1:])
    Q0 = start_weights(torch.randn(50, 2, generator=gen), g[:, :1], 1.0)
    assert Q0.shape == (50, 1)
    with pytest.raises(ValueError, match="start_overlap"):
        start_weights(teacher, g, 1.2)


def test_c_one_is_the_simulations_semantic_run():
    """At c = 1 the start is Q* itself, simulate's semantic start (r = t = 1): on the same
    data the same L-BFGS must end at the same point (same numbers to rounding). Fails if the
    probe drew a different teacher, data or test set than `simulate`."""
    res = probe_landscape(P, 150, 1.5, [1.0], [4], n_test=500)
    (sim,) = simulate(SimConfig(params=P, d=150, alpha=1.5, n_test=500), seeds=[4])
    (pt,) = res.points
    for key in ("theta", "m", "q", "train_loss", "test_error"):
        assert getattr(pt, key) == pytest.approx(getattr(sim, key), rel=1e-9, abs=1e-12), key


def test_alpha_two_informed_starts_end_in_one_minimum():
    """alpha = 2, d = 300, seeds 0 and 1, c in {0.25, 0.5, 1}: one end point per seed.
    Tolerance: two points with RMS gradients g1, g2 in the same basin are at most
    (|grad1| + |grad2|)/hessian_min apart, so their thetas differ by at most
    sigma sqrt(rho_d) sqrt(r) (g1 + g2)/hessian_min (~4e-7 here; measured spread 1e-8).
    The random start c = 0 of seed 0 ends in another, mixed minimum (theta 0.065, m -0.089)
    with a higher training loss: the spread detects it (0.078, far above the bound)."""
    res = probe_landscape(P, 300, 2.0, [0.0, 0.25, 0.5, 1.0], [0, 1], n_test=200)
    for seed in (0, 1):
        pts = [p for p in res.points if p.seed == seed and p.c > 0]
        assert all(p.converged and p.grad_norm <= GTOL for p in pts)
        hmin = min(p.hessian_min for p in pts)
        assert hmin > 0  # strict minima
        bound = P.sigma**2 * 2 * max(p.grad_norm for p in pts) / hmin
        thetas = [p.theta for p in pts]
        assert max(thetas) - min(thetas) <= bound, (thetas, bound)
        assert thetas[0] / P.sigma**2 > 0.5  # the semantic minimum
    spread = res.theta_spread()
    random0 = next(p for p in res.points if p.seed == 0 and p.c == 0.0)
    informed0 = next(p for p in res.points if p.seed == 0 and p.c == 1.0)
    assert spread[(2.0, 0)] > 0.05
    assert random0.train_loss > informed0.train_loss + 1e-4
    assert spread[(2.0, 1)] < 1e-6


def _point(c, seed, theta, loss):
    return LandscapePoint(alpha=2.0, c=c, seed=seed, theta=theta, m=0.0, q=0.1,
                          train_loss=loss, test_error=0.0, grad_norm=0.0, converged=True,
                          steps=1, hessian_min=0.01, V_sim=12.0, V_sim_err=0.0,
                          V_sim_method="dense")  # fmt: skip


def test_spread_and_figure_treat_q_and_minus_q_as_one_minimum(tmp_path):
    """S(h) = S(-h): an end point at -Q (theta -0.16, found from c = 0 at d = 1000, seed 0)
    is the minimum at Q. theta_spread is 0 for (0.16, -0.16) and 0.1 for (0.16, 0.06); the
    figure plots |theta|/sigma^2 and the loss above the seed's lowest."""
    points = (
        _point(0.0, 0, -0.16, 0.003),
        _point(1.0, 0, 0.16, 0.003),
        _point(0.0, 1, 0.06, 0.002),
        _point(1.0, 1, 0.16, 0.005),
    )
    res = LandscapeResult(
        d=100, omega=0.3, sigma=0.5, lam=0.01, A=P.A, rank=1, teacher_rank=1, gtol=GTOL,
        points=points,
    )  # fmt: skip
    assert res.theta_spread() == {(2.0, 0): 0.0, (2.0, 1): pytest.approx(0.1)}
    summary = landscape_figure(res.rows(), tmp_path / "f.png").set_index("c")
    assert summary.loc[0.0, ("theta_s2", "mean")] == pytest.approx((0.64 + 0.24) / 2)
    assert summary.loc[1.0, ("excess_loss", "mean")] == pytest.approx(0.0015)
    assert (tmp_path / "f.pdf").exists()


def test_structured_curvature_is_the_autodiff_hessian(end_point):
    """The dense H and one HVP (chain rule through the fields, per-sample field Hessians) equal
    torch.autograd.functional.hessian / reverse-over-reverse of the whole risk (not forward
    mode, whose first use makes torch script its decompositions, a deprecated call): measured
    2e-15 relative; asserted 1e-11 (any error in the chain rule or the per-sample loss is
    O(1))."""
    data, Q, curv = end_point
    full = torch.autograd.functional.hessian(lambda W: data.risk(W[None])[0], Q)
    H_ref = full.reshape(curv.size, curv.size).numpy()
    assert np.abs(curv.dense() - H_ref).max() <= 1e-11 * np.abs(H_ref).max()
    v = torch.randn(Q.shape, generator=torch.Generator().manual_seed(1), dtype=Q.dtype)
    W = Q.detach().clone().requires_grad_(True)
    (g,) = torch.autograd.grad(data.risk(W[None])[0], W, create_graph=True)
    (ref,) = torch.autograd.grad((g * v).sum(), W)
    assert float((curv.hvp(v) - ref).norm() / ref.norm()) <= 1e-11


def test_lanczos_smallest_eigenvalue_matches_a_dense_eigensolver(end_point):
    """d = 200: eigsh on the HVP operator against numpy.linalg.eigvalsh of the autograd
    Hessian, to 1e-8 relative (measured 3e-15). The two smallest eigenvalues differ by 17%
    (0.00507 and 0.00592), so a wrong eigenpair cannot pass."""
    data, Q, curv = end_point
    full = torch.autograd.functional.hessian(lambda W: data.risk(W[None])[0], Q)
    ev = np.linalg.eigvalsh(full.reshape(curv.size, curv.size).numpy())
    assert (ev[1] - ev[0]) / ev[0] > 0.1
    assert curv.smallest_eigenvalue() == pytest.approx(ev[0], rel=1e-8)


def test_hutchinson_trace_agrees_with_the_dense_trace_within_three_errors(end_point):
    """30 Rademacher probes, H^-1 z by conjugate gradients: within 3 reported standard errors
    of the exact trace (Cholesky), and the reported error is the Rademacher estimator's own,
    sqrt(2 (|H^-1|_F^2 - sum_i (H^-1)_ii^2)/30), to within 40% (the sample sd of 30 draws has
    a relative sd of 1/sqrt(58) = 13%; 3 sd)."""
    _, _, curv = end_point
    exact = float(inverse_block_traces(curv.dense(), 1)[0, 0])
    est, err = hutchinson_block_traces(curv, 30, np.random.default_rng(0))
    est, err = float(est[0, 0]), float(err[0, 0])
    Hinv = np.linalg.inv(curv.dense())
    predicted = math.sqrt(2 * (np.sum(Hinv**2) - np.sum(np.diag(Hinv) ** 2)) / 30)
    assert abs(est - exact) <= 3 * err, (est, exact, err)
    assert 0.6 <= err / predicted <= 1.4, (err, predicted)
    assert exact == pytest.approx(float(np.trace(Hinv)), rel=1e-10)


def test_rank_two_symmetry_zero_mode_is_projected_out():
    """r = 2, t = 1, d = 80, alpha = 2: R(Q O) = R(Q), so H has an exact zero mode along
    Q [[0, 1], [-1, 0]] at a minimum (measured 2e-10, the gradient tolerance's size; asserted
    below 1e-7 while the next eigenvalue is 4e-3). hessian_min and the trace exclude it:
    Lanczos gives the second eigenvalue of the dense H, and the exact block traces equal
    those of the pseudo-inverse on the other eigenvectors (both to 1e-8 relative)."""
    p = ModelParams(rank=2, teacher_rank=1)
    data = SeedData.draw(probe_config(p, 80, 2.0, n_test=100), 0)
    Q = data.train(1.0, GTOL).Q[0]
    curv = Curvature(data.risk, Q)
    w, U = np.linalg.eigh(curv.dense())
    assert abs(w[0]) < 1e-7 < 1e-3 < w[1]
    gauge = torch.stack([-Q[:, 1], Q[:, 0]], dim=1).reshape(-1).numpy()
    assert abs(gauge @ U[:, 0]) / np.linalg.norm(gauge) > 1 - 1e-6
    assert curv.smallest_eigenvalue() == pytest.approx(w[1], rel=1e-8)
    pinv = (U[:, 1:] / w[1:]) @ U[:, 1:].T
    ref = np.einsum("iaib->ab", pinv.reshape(80, 2, 80, 2))
    assert np.allclose(curv.inverse_block_traces(), ref, rtol=1e-8, atol=0)


def test_probe_reports_the_method_and_error_of_v_sim():
    """The same end point with method dense and hutchinson: dense has error 0, Hutchinson a
    positive error and agrees within 3 of them."""
    kw = dict(n_test=100, probes=20)
    (dense,) = probe_landscape(P, 150, 2.0, [1.0], [0], method="dense", **kw).points
    (hutch,) = probe_landscape(P, 150, 2.0, [1.0], [0], method="hutchinson", **kw).points
    assert (dense.V_sim_method, dense.V_sim_err) == ("dense", 0.0)
    assert hutch.V_sim_method == "hutchinson" and hutch.V_sim_err > 0
    assert hutch.theta == dense.theta
    assert abs(hutch.V_sim - dense.V_sim) <= 3 * hutch.V_sim_err


def test_v_sim_matches_the_theorys_v_at_alpha_one_and_a_half():
    """alpha = 1.5, semantic minimum (c = 1), d = 400, seeds 0-3 against solve() (V = 16.01).
    Tolerance from the seed spread: V_sim's sd over seeds 0-7 at d = 400 is 0.76 (at d = 1000 over 6
    seeds: 0.74, mean 15.93), so the 4-seed mean is within 3 x 0.76/2 = 1.14. docs/theory.md §8.1's
    leave-one-out V (15.8, 1% below the SE's) lies inside it. A wrong normalisation (Hessian of R/d,
    sigma for sigma^2) is off by factors."""
    res = probe_landscape(P, 400, 1.5, [1.0], range(4), n_test=100)
    V = np.array([p.V_sim for p in res.points])
    theory = solve(1.5, P, branch="semantic", method=GaussHermite(TEST_ORDER))
    assert theory.kind == "semantic"
    assert abs(V.mean() - theory.V) <= 3 * 0.76 / 2, (V, theory.V)


KEYS = {"c", "seed", "theta", "m", "q", "train_loss", "hessian_min", "V_sim", "V_sim_err",
        "test_error", "grad_norm", "alpha", "d", "n"}  # fmt: skip


def test_cli_json_records_and_plot(tmp_path):
    path = tmp_path / "figs" / "landscape.png"
    args = ["landscape", "--d", "100", "--alpha", "2", "--start-overlap", "0.5,1"]
    res = runner.invoke(
        app, [*args, "--seeds", "2", "--n-test", "100", "--format", "json", "--plot", str(path)]
    )
    assert res.exit_code == 0, res.output
    recs = [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]
    assert [(r["c"], r["seed"]) for r in recs] == [(0.5, 0), (1.0, 0), (0.5, 1), (1.0, 1)]
    for r in recs:
        assert KEYS <= set(r), KEYS - set(r)
        assert r["n"] == 200 and r["V_sim_method"] == "dense"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert path.with_suffix(".pdf").read_bytes()[:5] == b"%PDF-"


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["--start-overlap", "1.5"], "--start-overlap"),
        (["--start-overlap", "0:2:3"], "--start-overlap"),
        (["--start-overlap", "a,b"], "--start-overlap"),
        (["--d", "1"], "--d"),
        (["--sigma", "-0.5"], "--sigma"),
        (["--omega", "2"], "--omega"),
        (["--alpha", "0"], "--alpha"),
        (["--seeds", "0"], "--seeds"),
        (["--probes", "1"], "--probes"),
        (["--probes", "5"], "auto takes dense at d r = 100"),  # would be ignored
        (["--method", "exact"], "--method"),
        (["--format", "xml"], "--format"),
        (["--plot", "PLOT_UNDER_A_FILE"], "--plot"),
    ],
)
def test_bad_input_exits_2_naming_the_option_before_any_work(args, option, tmp_path, monkeypatch):
    """One line naming the option, exit 2, the probe never called and nothing written."""

    def forbidden(*a, **k):
        raise AssertionError("the probe ran on bad input")

    monkeypatch.setattr(landscape_module, "probe_landscape", forbidden)
    blocker = tmp_path / "file"
    blocker.write_text("")
    args = [str(blocker / "x.png") if a == "PLOT_UNDER_A_FILE" else a for a in args]
    res = runner.invoke(app, ["landscape", "--d", "100", *args])
    assert res.exit_code == 2, res.output
    assert option in res.output and len(res.output.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]
