"""Correlated tokens in the state evolution (docs/theory-mixtures.md; `Mixture`).

- The label law and the simplex are the simulations' (`sample_labels`, `cluster_means`): the
  channel averages over exactly the data the simulations draw.
- The mixture channel is the label-averaged channel of theory-mixtures §2: its moments equal
  the probability-weighted moments of one tied channel per label sequence with the encodings
  C(c) (a mix-up of the points' copies and the sequences' encodings fails this), and at zero
  norm they are the tied channel's.
- m_mu = 0 is invariant exactly (the centred simplex, uniform marginals); the solver gives
  the tied model's fixed point there, with the multiplier of m_mu (its stability).
- Bad cluster options: exit 2 with one line naming the option.
"""

import json

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from attnphase import QMC, ModelParams, solve
from attnphase.cli import app
from attnphase.params import Mixture, Untied
from attnphase.sim.data import cluster_means, sample_labels
from attnphase.theory import overlaps as ge
from attnphase.theory.qmc.channel import QMCChannel
from attnphase.theory.qmc.engine import MIXTURE_BRANCH
from attnphase.theory.qmc.mixture import (
    cluster_overlaps,
    label_law,
    mixture_encodings,
    simplex_vertices,
)

P = ModelParams()
KW = dict(C=P.C_array, sigma=P.sigma, omega=P.omega, A=P.A_array)
MOMENTS = ("ff", "Ma", "yf", "fxi", "M", "ell_prox", "ell_free")


def overlaps(means: np.ndarray) -> ge.MatrixOverlaps:
    """Generic overlaps (every block non-zero) with the given mean rows of M."""
    M = np.vstack([[[0.12]], np.asarray(means, dtype=float).reshape(-1, 1)])
    return ge.MatrixOverlaps(
        q=np.array([[0.15]]), M=M, theta=np.array([[0.1]]), V=np.array([[6.0]])
    )


def positional_part(o: ge.MatrixOverlaps) -> ge.MatrixOverlaps:
    """The overlaps without the mean rows: the tied model's."""
    return ge.MatrixOverlaps(q=o.q, M=o.M[:1], theta=o.theta, V=o.V)


@pytest.mark.parametrize("K", [2, 3, 5])
def test_simplex_is_the_simulations_cluster_geometry(K):
    """Unit rows, centred, Gram K/(K-1) (I - 1 1^T/K): the simulations' means divided by their
    norm have this Gram matrix (to float64 rounding), so the theory's mean directions are the
    data's up to a rotation, which the isotropic ridge does not see."""
    B = simplex_vertices(K)
    gram = K / (K - 1) * (np.eye(K) - 1.0 / K)
    assert np.allclose(B @ B.T, gram, atol=1e-14)
    mu = cluster_means(K, 40, 2.5, torch.Generator().manual_seed(0), torch.float64, "cpu")
    mu = mu.numpy() / 2.5
    assert np.allclose(mu @ mu.T, gram, atol=1e-12)


def test_label_law_is_the_simulations_markov_chain():
    """The K^L sequence probabilities against 400,000 sequences of `sample_labels` (K = 3,
    L = 3, rho = 0.5): every frequency within 4 binomial standard errors (a law that uses
    rho as the stay probability instead of rho + (1 - rho)/K is off by ~20 SE at (0, 0, 0))."""
    K, L, rho, n = 3, 3, 0.5, 400_000
    seqs, prob = label_law(K, L, rho)
    assert prob.sum() == pytest.approx(1.0, abs=1e-14)
    c = sample_labels(n, L, K, rho, torch.Generator().manual_seed(1), "cpu").numpy()
    code = (c * K ** np.arange(L)[::-1]).sum(1)
    freq = np.bincount(code, minlength=K**L) / n
    se = np.sqrt(prob * (1 - prob) / n)
    assert np.all(np.abs(freq - prob) < 4 * se), np.abs(freq - prob) / se


def per_sequence_moments(mix: Mixture, o: ge.MatrixOverlaps, points: int, seed: int) -> dict:
    """theory-mixtures §2 written out: one tied channel per label sequence c on the same
    points with the encodings C(c), averaged with the chain's probabilities."""
    enc, prob = mixture_encodings(P.C_array, mix)
    out = dict.fromkeys(MOMENTS, 0.0)
    for Cc, w in zip(enc, prob, strict=True):
        m = QMCChannel(P.L, 1, 1, points, seed).moments(o, **{**KW, "C": Cc})
        for k in MOMENTS:
            out[k] = out[k] + w * np.asarray(getattr(m, k))
    return out


@pytest.mark.parametrize(
    "mix, means",
    [(Mixture(2, 0.8, 1.3), [0.2]), (Mixture(3, 0.4, 0.9), [0.15, -0.1])],
    ids=["K=2", "K=3"],
)
def test_mixture_channel_is_the_label_average(mix, means):
    """Equal to 1e-12 relative (float64 rounding of the same sums in another order)."""
    o = overlaps(means)
    got = QMCChannel(P.L, 1, 1, 256, 3, variant=mix).moments(o, **KW)
    want = per_sequence_moments(mix, o, 256, 3)
    for k in MOMENTS:
        assert np.allclose(getattr(got, k), want[k], rtol=1e-12, atol=1e-15), k


@pytest.mark.parametrize("rho", [0.0, 0.7, 1.0])
def test_zero_norm_is_the_tied_channel(rho):
    """Means of norm 0: whatever m_mu, the moments are the tied channel's (the positional
    rows of Ma included; the mean rows vanish), to 1e-12."""
    o = overlaps([0.4, -0.3])
    got = QMCChannel(P.L, 1, 1, 256, 5, variant=Mixture(3, rho, 0.0)).moments(o, **KW)
    tied = QMCChannel(P.L, 1, 1, 256, 5).moments(positional_part(o), **KW)
    for k in ("ff", "yf", "fxi", "M", "ell_prox", "ell_free"):
        assert np.allclose(getattr(got, k), getattr(tied, k), rtol=1e-12, atol=1e-15), k
    assert np.allclose(got.Ma[:1], tied.Ma, rtol=1e-12)
    assert np.abs(got.Ma[1:]).max() < 1e-15


@pytest.mark.parametrize("K", [2, 3])
def test_mean_rows_vanish_exactly_at_zero_mean_overlap(K):
    """At m_mu = 0 (N = 1.2, rho = 0.6) the mean rows of the Stein Mhat vanish to rounding
    (the simplex is centred and every label is uniform; uncentred means, as sum B_k != 0,
    give O(1e-2)), and the rest is the tied channel's: m_mu = 0 is an invariant manifold."""
    mix = Mixture(K, 0.6, 1.2)
    o = overlaps(np.zeros(K - 1))
    got = QMCChannel(P.L, 1, 1, 256, 7, variant=mix).moments(o, **KW)
    tied = QMCChannel(P.L, 1, 1, 256, 7).moments(positional_part(o), **KW)
    assert np.abs(got.Ma[1:]).max() < 1e-15 * max(1.0, np.abs(got.Ma).max())
    for k in ("ff", "yf", "fxi", "M"):
        assert np.allclose(getattr(got, k), getattr(tied, k), rtol=1e-12), k


@pytest.mark.parametrize("branch", [pytest.param("semantic", marks=pytest.mark.slow), "positional"])
def test_solver_gives_the_tied_fixed_point_and_its_mean_multiplier(branch):
    """K = 2, rho = 0.8, alpha 1.5, 512 points, tol 1e-8:
    - the cold start (m_mu = 0) ends at the tied general engine's fixed point on the same
      points: (q, m, theta, V, train loss) to 1e-6 relative, m_mu = 0 to rounding;
    - mean_multiplier scales as N^2 (the map's m_mu-derivative is N^2 times a function of
      the other overlaps, which N does not change on m_mu = 0): N = 2 gives 4 times N = 1's
      within 1e-3 relative (finite-difference error O(MEAN_STEP^2 N^2) ~ 1e-5); a multiplier
      read from a positional row, or not scaled by the step, fails;
    - semantic: a start off the manifold (m_mu = 0.05 added to the fixed point, N = 1, m_mu
      free on the clustered branch; the multiplier is ~ -1.3, so the damped map contracts
      m_mu) returns to m_mu = 0."""
    kw = dict(branch=branch, method=QMC(512, 1), tol=1e-8)
    tied = solve(1.5, P, **kw)
    mult = {}
    for norm in (1.0, 2.0):
        mix = Mixture(2, 0.8, norm)
        res = solve(1.5, ModelParams(variant=mix), **kw)
        d = res.as_dict()
        assert res.converged and res.kind == branch and abs(d["m_mean"]) < 1e-14
        for k in ("q", "V", "theta", "train_loss"):
            assert d[k] == pytest.approx(getattr(tied, k), rel=1e-6, abs=1e-12), k
        assert d["m"] == pytest.approx(tied.m, rel=1e-6, abs=1e-12)
        assert (d["clusters"], d["label_correlation"], d["cluster_norm"]) == (2, 0.8, norm)
        mult[norm] = d["mean_multiplier"]
    assert mult[1.0] < 0.0
    assert mult[2.0] == pytest.approx(4.0 * mult[1.0], rel=1e-3)
    if branch == "semantic":  # the clustered branch frees m_mu next to the semantic overlaps
        mix = Mixture(2, 0.8, 1.0)
        o = res.solutions[0].overlaps
        off = ge.MatrixOverlaps(q=o.q, M=o.M + np.array([[0.0], [0.05]]), theta=o.theta, V=o.V)
        back = solve(
            1.5,
            ModelParams(variant=mix),
            start=off,
            branch=MIXTURE_BRANCH,
            method=QMC(512),
            tol=1e-8,
        )
        d = back.as_dict()
        assert back.converged and back.kind == "semantic" and abs(d["m_mean"]) < 1e-12
        M = np.asarray(back.values["M"])
        assert np.allclose(d["cluster_m"], cluster_overlaps(M, mix)[:, 0])


def test_cli_prints_the_mean_overlaps():
    res = CliRunner().invoke(
        app,
        [
            "theory",
            "--alpha",
            "1.5",
            "--branch",
            "semantic",
            "--clusters",
            "2",
            "--label-correlation",
            "0.8",
            "--points",
            "128",
            "--randomisations",
            "2",
            "--format",
            "json",
        ],
    )
    assert res.exit_code == 0, res.output
    (row,) = [json.loads(line) for line in res.stdout.splitlines()]
    assert row["kind"] == "semantic" and abs(row["m_mean"]) < 1e-14 and row["mean_multiplier"] < 0
    assert len(row["cluster_m"]) == 2 and row["clusters"] == 2


def test_library_refuses_what_it_does_not_solve():
    # a mixture with untied query and key: no variant expresses it
    with pytest.raises(ValueError, match="^variant must be Tied\\(\\), Untied\\(\\), a Mixture"):
        ModelParams(variant=(Mixture(2), Untied()))
    with pytest.raises(ValueError, match="^clusters: K\\^L = 9\\^2"):
        solve(1.0, ModelParams(variant=Mixture(9)), method=QMC())
    with pytest.raises(ValueError, match="^branch 'clustered' needs correlated tokens"):
        solve(1.0, P, branch=MIXTURE_BRANCH, method=QMC())
    for kw, name in (
        (dict(clusters=1), "clusters"),
        (dict(label_correlation=-0.1), "label_correlation"),
        (dict(cluster_norm=float("nan")), "cluster_norm"),
    ):
        with pytest.raises(ValueError, match=f"^{name}"):
            Mixture(**kw)


@pytest.mark.parametrize(
    "args, start",
    [
        (["--clusters", "0"], "--clusters: must be an integer >= 1"),
        (["--clusters", "9"], "--clusters: K^L = 9^2"),
        (["--clusters", "2", "--label-correlation", "1.5"], "--label-correlation"),
        (["--clusters", "2", "--cluster-norm", "-1"], "--cluster-norm"),
        (["--cluster-norm", "2"], "--cluster-norm: acts on Gaussian-mixture tokens only"),
        (["--clusters", "2", "--untied"], "--clusters: correlated tokens"),
        (["--clusters", "2", "--stability"], "--stability"),
        (["--clusters", "2", "--engine", "gauss-hermite"], "--engine"),
        (["--branch", "clustered"], "--branch: must be one of"),
    ],
)
def test_cli_rejects_bad_cluster_options(rejected, args, start):
    rejected(["theory", "--alpha", "1", *args], start)
