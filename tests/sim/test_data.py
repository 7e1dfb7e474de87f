"""Gaussian-mixture tokens in the simulations (docs/theory.md §10): x_l =
mu_{c_l} + sigma z_l, labels a Markov chain over positions with neighbour correlation rho.

- Switched off (one cluster) or degenerate (cluster_norm = 0), the data are the tied model's,
  bit for bit: same tokens, so same risk and gradient (checked to 1e-12) and same run id.
- The labels have the requested law: neighbour correlation rho, stay frequency
  rho + (1 - rho)/K, lag-2 correlation rho^2, uniform marginals; the means are a centred
  regular simplex of norm cluster_norm; the tokens' cluster-conditional means are the mu_k.
- Autograd gradients of the risk on mixture data equal central finite differences.
- Bad options exit 2 with one line naming the option, before anything is computed or written.
- End to end: `attnphase simulate --clusters 2 --label-correlation 0.8` prints cluster_m.
"""

import json
import math

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from attnphase.cli import app
from attnphase.params import Mixture, ModelParams
from attnphase.sim import (
    SimConfig,
    StructuredRisk,
    cluster_means,
    generator,
    sample_labels,
    simulate,
)
from attnphase.sim.problem import draw_training_set, mixture_means, position_vectors
from attnphase.sweep.spec import SweepSpec, canonical_point, defaults, run_id, sim_config

DT = torch.float64
CPU = torch.device("cpu")


def _flat(**point) -> SimConfig:
    """The SimConfig of a simulation point with the sweep's flat names (clusters, ...)."""
    return sim_config({**defaults("simulation"), **point})


def _risk_and_grad(cfg: SimConfig, seeds, Q):
    positions, _ = position_vectors(cfg, DT, CPU)
    _, x, y = draw_training_set(cfg, seeds, DT, CPU)
    risk = StructuredRisk.build(x + positions, y, cfg.params.lam, cfg.layout)
    Q = Q.clone().requires_grad_(True)
    R = risk(Q)
    (g,) = torch.autograd.grad(R.sum(), Q)
    return x, R.detach(), g


# ---- switched off: the tied model ----------------------------------------------------------


@pytest.mark.parametrize(
    "mixture",
    [
        dict(clusters=1),
        dict(clusters=1, label_correlation=0.7, cluster_norm=3.0),  # no effect with K = 1
        dict(clusters=3, label_correlation=0.5, cluster_norm=0.0),  # zero means
    ],
)
def test_without_cluster_means_the_data_are_the_tied_model(mixture):
    """Same tokens bit for bit, hence the same risk and gradient (to 1e-12) at a random Q: fails
    if the mixture's labels or means were drawn from the noise's generator (the "train" stream
    would shift) or if K = 1 added a non-zero mean."""
    kw = dict(d=30, alpha=2.0, device="cpu")
    Q = torch.randn(2, 30, 1, dtype=DT, generator=torch.Generator().manual_seed(5))
    x0, R0, g0 = _risk_and_grad(SimConfig(**kw), [0, 3], Q)
    x1, R1, g1 = _risk_and_grad(_flat(**kw, **mixture), [0, 3], Q)
    assert torch.equal(x0, x1)
    torch.testing.assert_close(R1, R0, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(g1, g0, rtol=1e-12, atol=1e-12)


@pytest.mark.filterwarnings("ignore::attnphase.sim.SimulationWarning")  # 20 GD steps
def test_simulate_with_one_cluster_is_unchanged():
    """The whole result (training, overlaps, test set) of clusters = 1 is the default run's,
    with the no-effect options stored as their defaults and no cluster_m."""
    kw = dict(d=20, alpha=1.5, n_test=200, device="cpu", optimizer="gd", steps=20)
    a = simulate(SimConfig(**kw), seeds=[1])[0].as_dict()
    b = simulate(_flat(**kw, clusters=1, label_correlation=0.4), seeds=[1])[0].as_dict()
    a.pop("batch_seconds"), b.pop("batch_seconds")
    assert a == b
    assert b["clusters"] == 1 and b["label_correlation"] == 0.0 and b["cluster_m"] is None


def test_sweep_run_ids_of_the_mixture():
    """One cluster is the tied model's point, with the run id the code had before mixtures
    existed (the literal id of tests/sim/test_extensions.py); two clusters make new points, one per
    value, whatever the spelling."""
    tied = "709c61926c3e58b3740bbfc9df5a1580deee7eb30718e20ff981eebd3064c4fb"
    assert run_id("simulation", {"clusters": 1}) == tied
    assert run_id("simulation", {"clusters": "1", "label_correlation": 0.9}) == tied
    assert run_id("simulation", {"clusters": 1, "cluster_norm": 2}) == tied
    on = canonical_point("simulation", {"clusters": "2", "label_correlation": "0.8"})
    assert (on["clusters"], on["label_correlation"], on["cluster_norm"]) == (2, 0.8, 1.0)
    assert run_id("simulation", on) != tied
    spec = SweepSpec(
        "simulation",
        {"clusters": [1, 2, "2"], "label_correlation": [0, 0.5, "0.5"]},
        {"d": 50},
    )
    points = [(p["clusters"], p["label_correlation"]) for p in spec.points()]
    assert points == [(1, 0.0), (2, 0.0), (2, 0.5)]


# ---- the law of the labels and the means -----------------------------------------------------


def _pearson(a: torch.Tensor, b: torch.Tensor, K: int) -> float:
    """Pearson correlation of the one-hot vectors of two label arrays, pooled over the K
    indicators: sum_k cov_k / sqrt(sum_k var(a_k) sum_k var(b_k))."""
    A = torch.nn.functional.one_hot(a, K).to(DT)
    B = torch.nn.functional.one_hot(b, K).to(DT)
    A, B = A - A.mean(0), B - B.mean(0)
    return float((A * B).sum() / torch.sqrt((A * A).sum() * (B * B).sum()))


def _stay_se(p: float, n: int) -> float:
    return math.sqrt(p * (1 - p) / n)


@pytest.mark.parametrize("K", [2, 3])
@pytest.mark.parametrize("rho", [0.0, 0.5, 0.9])
def test_labels_are_a_markov_chain_with_neighbour_correlation_rho(K, rho):
    """n = 100,000 sentences of L = 3 labels; each pair of positions is independent across
    sentences, so a stay frequency has the binomial standard error sqrt(p(1-p)/n) with
    p = rho + (1 - rho)/K, and the one-hot Pearson correlation, which equals
    (p - 1/K)/(1 - 1/K) when the marginals are uniform, has SE sqrt(p(1-p)/n)/(1 - 1/K)
    (lag 2: the same with rho^2). Measured over 300 repetitions at n = 20,000 for every
    (K, rho) here: the standard deviations are 0.95-1.07 times these formulas. Tolerance 4 SE
    (3.7 measured SDs at worst). Fails for a fresh draw that excludes c_l (correlation
    (rho K - 1)/(K - 1), -0.5 vs 0 at K = 3, rho = 0), for labels copied from c_1 instead of
    the previous one (lag 2 would be rho, not rho^2), or for a non-uniform c_1."""
    n = 100_000
    c = sample_labels(n, 3, K, rho, generator(11, "train_labels", CPU), CPU)
    assert c.shape == (n, 3) and c.dtype == torch.int64
    assert int(c.min()) == 0 and int(c.max()) == K - 1
    p1, p2 = rho + (1 - rho) / K, rho**2 + (1 - rho**2) / K
    for pos in range(3):  # uniform marginals: SE sqrt((1/K)(1 - 1/K)/n)
        freq = torch.bincount(c[:, pos], minlength=K).to(DT) / n
        assert float((freq - 1 / K).abs().max()) < 4 * _stay_se(1 / K, n)
    for a, b in ((0, 1), (1, 2)):
        stay = float((c[:, a] == c[:, b]).to(DT).mean())
        assert abs(stay - p1) < 4 * _stay_se(p1, n)
        assert abs(_pearson(c[:, a], c[:, b], K) - rho) < 4 * _stay_se(p1, n) / (1 - 1 / K)
    assert abs(_pearson(c[:, 0], c[:, 2], K) - rho**2) < 4 * _stay_se(p2, n) / (1 - 1 / K)


@pytest.mark.parametrize("K", [2, 3, 5])
def test_cluster_means_are_a_centred_regular_simplex(K):
    """sum_k mu_k = 0, |mu_k| = cluster_norm and mu_j.mu_k = -norm^2/(K - 1) (j != k), to
    1e-12 (rounding of the QR factor, ~1e-15); different seeds give different directions."""
    d, norm = 40, 1.7
    mu = cluster_means(K, d, norm, generator(2, "clusters", CPU), DT, CPU)
    assert mu.shape == (K, d)
    assert float(mu.sum(0).abs().max()) < 1e-12
    gram = mu @ mu.T
    expected = torch.full((K, K), -(norm**2) / (K - 1), dtype=DT)
    expected.fill_diagonal_(norm**2)
    torch.testing.assert_close(gram, expected, rtol=0, atol=1e-12)
    other = cluster_means(K, d, norm, generator(3, "clusters", CPU), DT, CPU)
    assert float((other - mu).abs().max()) > 0.1
    zero = cluster_means(1, d, norm, generator(2, "clusters", CPU), DT, CPU)
    assert torch.equal(zero, torch.zeros(1, d, dtype=DT))


def test_training_tokens_follow_the_mixture():
    """The simulation's own training tokens (K = 3, rho = 0.9, |mu_k| = 4, sigma = 0.5, d = 20,
    n = 40,000 sentences of L = 2): each token's cluster is read off as the nearest mean
    (x.(mu_k - mu_j) is 24 for its own cluster k against noise of SD sigma |mu_k - mu_j| = 3.5,
    so a misread has probability 2e-12 per token and rival). Then (i) the cluster-conditional
    mean minus mu_k is the mean of N_k noise vectors, so N_k |mean - mu_k|^2/sigma^2 is
    chi-square with d = 20 degrees of freedom: bound d + 6 sqrt(2d) = 57.9 (exceeded with
    probability 1.5e-5); (ii) the neighbour correlation is rho within 4 SE as in the label test;
    (iii) the clusters are used uniformly within 4 binomial SE. Fails if the means were not
    added, added to the wrong tokens or scaled wrongly, or if the pipeline passed another rho."""
    cfg = SimConfig(params=ModelParams(sigma=0.5, variant=Mixture(3, 0.9, 4.0)), d=20, alpha=2000)
    _, x, _ = draw_training_set(cfg, [4], DT, CPU)
    mu = mixture_means(cfg, [4], DT, CPU)[0]
    tokens = x[0].reshape(-1, cfg.d)  # [n L, d]
    labels = (tokens @ mu.T).argmax(dim=1).reshape(cfg.n, cfg.L)
    flat = labels.reshape(-1)
    for k in range(3):
        members = tokens[flat == k]
        chi2 = len(members) * float((members.mean(0) - mu[k]).pow(2).sum()) / cfg.params.sigma**2
        assert chi2 < cfg.d + 6 * math.sqrt(2 * cfg.d)
        assert abs(len(members) / flat.numel() - 1 / 3) < 4 * math.sqrt(2 / 9 / flat.numel())
    p = 0.9 + 0.1 / 3
    se = math.sqrt(p * (1 - p) / cfg.n) / (1 - 1 / 3)
    assert abs(_pearson(labels[:, 0], labels[:, 1], 3) - 0.9) < 4 * se


# ---- gradients ---------------------------------------------------------------------------------


def test_gradients_on_mixture_data_match_central_differences():
    """The risk on mixture tokens (K = 3, rho = 0.8, |mu_k| = 1.5, d = 8, n = 24, L = 2):
    autograd vs central differences in every coordinate, h = 1e-5. Measured max |autograd - FD|
    2.5e-10 (1.3e-9 at h = 1e-4, 2.2e-9 at h = 1e-6) against gradient entries of 3.7e-3 to
    3.6e-2: atol 1e-8 is 40x the error and 370x below the smallest entry."""
    cfg = SimConfig(params=ModelParams(variant=Mixture(3, 0.8, 1.5)), d=8, alpha=3.0)
    positions, _ = position_vectors(cfg, DT, CPU)
    _, x, y = draw_training_set(cfg, [2], DT, CPU)
    Q = 0.7 * torch.randn(1, 8, 1, dtype=DT, generator=torch.Generator().manual_seed(1))
    _, _, grad = _risk_and_grad(cfg, [2], Q)
    h, N = 1e-5, Q.numel()
    E = h * torch.eye(N, dtype=DT).reshape(N, 8, 1)
    batch = StructuredRisk.build(
        (x + positions).expand(N, -1, -1, -1), y.expand(N, -1, -1, -1), cfg.params.lam
    )
    num = ((batch(Q + E) - batch(Q - E)) / (2 * h)).reshape(Q.shape)
    torch.testing.assert_close(grad, num, rtol=0, atol=1e-8)


# ---- bad options -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "params, message",
    [
        ({"clusters": 0}, "clusters must be an integer >= 1, got 0"),
        ({"clusters": 2.5}, "clusters must be an integer"),
        ({"clusters": 2, "label_correlation": 1.5}, "label_correlation must lie in \\[0, 1\\]"),
        ({"clusters": 2, "label_correlation": -0.1}, "label_correlation must lie in \\[0, 1\\]"),
        ({"clusters": 2, "label_correlation": math.nan}, "label_correlation must be finite"),
        ({"clusters": 2, "cluster_norm": -1.0}, "cluster_norm must be >= 0"),
        ({"clusters": 2, "cluster_norm": math.inf}, "cluster_norm must be finite"),
        ({"clusters": 1, "cluster_norm": -1.0}, "cluster_norm must be >= 0"),  # checked anyway
        ({"clusters": 11}, "clusters: K = 11 cluster means need d >= K, got d=10"),
    ],
)
def test_bad_mixture_parameters(params, message):
    with pytest.raises(ValueError, match=message):
        _flat(d=10, **params)
    with pytest.raises(ValueError, match=message):
        canonical_point("simulation", {"d": 10, **params})


runner = CliRunner()
SIM = ["simulate", "--d", "10", "--alpha", "1"]


@pytest.mark.parametrize(
    "args, start",
    [
        ([*SIM, "--clusters", "0"], "--clusters: clusters must be an integer >= 1, got 0"),
        ([*SIM, "--clusters", "11"], "--clusters: K = 11 cluster means need d >= K"),
        (
            [*SIM, "--clusters", "2", "--label-correlation", "1.5"],
            "--label-correlation: label_correlation must lie in [0, 1], got 1.5",
        ),
        (
            [*SIM, "--clusters", "2", "--cluster-norm", "-1"],
            "--cluster-norm: cluster_norm must be >= 0, got -1.0",
        ),
        ([*SIM, "--clusters", "2", "--cluster-norm", "nan"], "--cluster-norm: cluster_norm must"),
        ([*SIM, "--label-correlation", "0.8"], "--label-correlation: acts on Gaussian-mixture"),
        ([*SIM, "--cluster-norm", "2"], "--cluster-norm: acts on Gaussian-mixture tokens only"),
        ([*SIM, "--clusters", "2", "--plot", "o.png"], "--plot: the overlay draws the tied"),
    ],
)
def test_bad_mixture_options_exit_2_before_any_work(rejected, args, start):
    rejected(args, start)


# ---- end to end --------------------------------------------------------------------------------


def test_simulate_command_with_a_mixture(tmp_path, monkeypatch):
    """d = 100, K = 2, rho = 0.8, two seeds, both starts: every row reports the mixture and
    cluster_m = (a, -a) (mu_2 = -mu_1 for two centred means of equal norm) with the value of
    mu_k^T Q/sqrt(d) that a direct `simulate` gives; the table shows the cluster_m column."""
    monkeypatch.chdir(tmp_path)
    args = ["simulate", "--d", "100", "--alpha", "1.5", "--clusters", "2"]
    args += ["--label-correlation", "0.8", "--seeds", "2", "--n-test", "1000"]
    res = runner.invoke(app, [*args, "--format", "json"])
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in res.stdout.splitlines()]
    assert len(rows) == 4
    direct = simulate(
        SimConfig(
            params=ModelParams(variant=Mixture(2, 0.8)),
            d=100,
            alpha=1.5,
            n_test=1000,
            device="cpu",
        ),
        seeds=[0, 1],
    )
    for row in rows:
        assert row["clusters"] == 2 and row["label_correlation"] == 0.8
        a, b = row["cluster_m"]
        assert abs(a + b) < 1e-12 * max(abs(a), 1.0)
    semantic = [r for r in rows if r["init"] == "semantic"]
    for row, res_direct in zip(semantic, direct, strict=True):
        np.testing.assert_allclose(row["cluster_m"], res_direct.cluster_m, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(row["test_error"], res_direct.test_error, rtol=1e-9)
    table = runner.invoke(app, args)
    assert table.exit_code == 0 and "cluster_m" in table.stdout.splitlines()[0]
