"""One prox with three backends (docs/theory.md §7.1, §8).

The operations of `attnphase.ops` across array libraries are tested in tests/ops/; the prox
backends ("numba", "torch", "closed-form") agree on the same channel nodes and
refuse what they cannot serve. Tolerances: the same formulas summed in another order agree to
~1e-15; two Newton runs stopped at gradient 1e-10 leave ~1e-9 in h at minima of curvature
~0.1, and F is flat there to second order (1e-13).
"""

import numpy as np
import pytest
import torch

from attnphase.params import Untied
from attnphase.prox import BACKENDS, global_prox, prox_jacobian
from attnphase.prox.batched import moreau_objective, smallest_eigenvalue
from tests.prox.test_algorithm import channel_nodes

DT = torch.float64
UNTIED = Untied()


def untied_nodes(n, L, r_q, V, seed=0):
    """Channel nodes for untied fields of width 2 r_Q (the query fields, then the key fields)."""
    w, Vinv, K, Cm, c, _ = channel_nodes(n, L, 2 * r_q, 1, V=V, seed=seed)
    starts = torch.stack([w, torch.zeros_like(w), 0.5 * w], 1)
    return w, Vinv, K, Cm, c, starts


@pytest.mark.parametrize("L,r_q", [(2, 1), (3, 1), (2, 2)])
def test_untied_numba_and_torch_backends_agree(L, r_q):
    w, Vinv, K, Cm, c, starts = untied_nodes(200, L, r_q, V=8.0, seed=2)
    kw = dict(probe=32, variant=UNTIED)
    numba_ = global_prox(w, Vinv, K, Cm, c, starts, backend="numba", **kw)
    torch_ = global_prox(w, Vinv, K, Cm, c, starts, backend="torch", **kw)
    assert torch.allclose(numba_.envelope, torch_.envelope, rtol=0, atol=1e-13)
    assert torch.allclose(numba_.h, torch_.h, rtol=0, atol=1e-7)
    assert bool(numba_.stationary.all()) and bool(torch_.stationary.all())


def test_untied_prox_jacobian_matches_finite_differences():
    w, Vinv, K, Cm, c, starts = untied_nodes(50, 2, 1, V=8.0, seed=3)
    res = global_prox(w, Vinv, K, Cm, c, starts, probe=32, variant=UNTIED)
    J = prox_jacobian(res.h, Vinv, K, Cm, c, variant=UNTIED)
    eps = 1e-6
    for k in range(4):
        dw = torch.zeros(4, dtype=DT)
        dw[k] = eps
        dw = dw.reshape(2, 2)
        ends = [
            global_prox(w + s * dw, Vinv, K, Cm, c, res.h[:, None], gtol=1e-13, variant=UNTIED).h
            for s in (1.0, -1.0)
        ]
        fd = ((ends[0] - ends[1]) / (2 * eps)).reshape(50, -1)
        assert torch.allclose(fd, J[:, :, k], atol=1e-5), k


@pytest.mark.parametrize("V", [3.0, 15.0])
def test_the_three_backends_agree_on_the_exact_channel(V):
    """L = 2, r = 1 channel nodes: the closed form (its analytic starts) and the numba and torch
    backends (the named starts and the probe) find the same global minimum. Measured: the
    envelopes agree to 4e-16 at all 400 nodes of each case."""
    w, Vinv, K, Cm, c, starts = channel_nodes(400, 2, 1, 1, V=V, seed=7)  # K: shared sigma^2 I
    results = {
        b: global_prox(w, Vinv, K, Cm, c, starts, probe=0 if b == "closed-form" else 64, backend=b)
        for b in BACKENDS
    }
    ref = results["closed-form"]
    for name, res in results.items():
        assert torch.allclose(res.envelope, ref.envelope, rtol=0, atol=1e-12), name
        assert torch.allclose(res.h, ref.h, rtol=0, atol=1e-6), name
        assert bool(res.stationary.all()), name
    # the envelope is F at the minimiser, with the loss's constant
    F = moreau_objective(ref.h, w, Vinv, K, Cm, c)
    assert torch.allclose(ref.envelope, F, rtol=0, atol=1e-14)


def test_closed_form_serves_the_exact_channels_nodes_as_before():
    """Through `global_prox` the closed form returns the minimisers and envelopes of the exact
    channel's `prox` (the same kernel), up to the teacher-only constant."""
    from attnphase.ops.softmax2 import target_centres, target_entries
    from attnphase.prox.closed_form import GTOL, MAX_NEWTON, prox

    rng = np.random.default_rng(1)
    w = rng.normal(scale=0.6, size=(100, 2))
    hs = rng.normal(scale=0.5, size=(100, 2))
    A = np.array([[0.6, 0.4], [0.4, 0.6]])
    s2, omega, V = 0.25, 0.3, 10.0
    centres = np.array([target_centres(*x, omega, *A.ravel()) for x in hs])
    h_ref, M = prox(w, centres, V, s2)
    T = np.array([target_entries(*x, omega, *A.ravel()) for x in hs]).reshape(-1, 2, 2)
    t = torch.from_numpy
    res = global_prox(
        t(w[..., None]),
        t(np.array([[1 / V]])),
        t(s2 * np.eye(2)),
        t(s2 * T),
        t(0.5 * s2 * (T * T).sum((1, 2))),
        t(np.zeros((100, 0, 2, 1))),
        gtol=GTOL,
        max_iter=MAX_NEWTON,
        backend="closed-form",
    )
    kappa = 0.25 * s2 * ((1 - T.sum(-1)) ** 2).sum(-1)
    assert np.array_equal(res.h.numpy()[..., 0], h_ref)
    assert np.abs(res.envelope.numpy() - (M + kappa)).max() < 1e-15


def test_backends_refuse_what_they_cannot_serve():
    w, Vinv, K, Cm, c, starts = channel_nodes(4, 3, 2, 1, V=5.0)
    two = channel_nodes(4, 2, 1, 1, V=5.0)
    untied = untied_nodes(4, 2, 1, V=5.0)
    cases = [
        (dict(backend="cuda"), (w, Vinv, K, Cm, c, starts), "backend must be"),
        (dict(backend="closed-form"), (w, Vinv, K, Cm, c, starts), "L = 2, r = 1 only"),
        (dict(backend="closed-form", variant=UNTIED), untied, "untied"),
        (dict(backend="closed-form", probe=8), two, "probe"),
        (dict(backend="closed-form"), (*two[:2], two[2] + 0.01, *two[3:]), "K = sigma"),
        (dict(variant=UNTIED), (w[..., :1], Vinv[:1, :1], K, Cm, c, starts[..., :1]), "even"),
        (dict(backend="numba"), (w.to("meta"), Vinv, K, Cm, c, starts.to("meta")), "CPU"),
    ]
    for kw, args, message in cases:
        with pytest.raises(ValueError, match=message):
            global_prox(*args, **kw)


@pytest.mark.parametrize("backend", ["numba", "torch"])
def test_per_problem_metrics_solve_each_set_as_alone(backend):
    """The batch axis: two sets of nodes with their own V (two fixed points' fields) in one call
    give each set's minimisers as two calls do. numba runs every problem alone, so the numbers
    are the same bits; torch's batched eigendecompositions may round differently (measured:
    equal to the bit on this CPU), and 1e-13 in F is the backends' own agreement."""
    a = channel_nodes(120, 3, 2, 1, V=3.0, seed=4)
    b = channel_nodes(80, 3, 2, 1, V=12.0, seed=5)
    alone = [global_prox(*x[:5], x[5], probe=32, backend=backend) for x in (a, b)]
    w, Cm, c, starts = (torch.cat([a[i], b[i]]) for i in (0, 3, 4, 5))
    K = a[2]  # sigma^2 I, shared
    Vinv = torch.cat([a[1].expand(120, 2, 2), b[1].expand(80, 2, 2)])
    together = global_prox(w, Vinv, K, Cm, c, starts, probe=32, backend=backend)
    env = torch.cat([r.envelope for r in alone])
    h = torch.cat([r.h for r in alone])
    if backend == "numba":
        assert torch.equal(together.envelope, env) and torch.equal(together.h, h)
    else:
        assert torch.allclose(together.envelope, env, rtol=0, atol=1e-13)
        assert torch.allclose(together.h, h, rtol=0, atol=1e-7)


def test_per_problem_metrics_are_refused_in_another_shape():
    w, Vinv, K, Cm, c, starts = channel_nodes(10, 2, 1, 1, V=3.0, seed=1)
    with pytest.raises(ValueError, match="Vinv must have shape"):
        global_prox(w, Vinv.expand(9, 1, 1), K, Cm, c, starts)


def test_smallest_eigenvalue_per_problem_decomposes_each_distinct_matrix():
    """Per-problem V^{-1} (a few fixed points' matrices, each repeated over its nodes) gives
    every problem its own matrix's smallest eigenvalue, in the problems' order, to the bit."""
    gen = torch.Generator().manual_seed(3)
    X = torch.randn(3, 2, 2, generator=gen, dtype=DT)
    mats = X @ X.transpose(-1, -2) + 0.1 * torch.eye(2, dtype=DT)
    order = torch.tensor([2, 0, 0, 1, 2, 2, 1])
    got = smallest_eigenvalue(mats[order])
    assert torch.equal(got, torch.stack([torch.linalg.eigvalsh(m)[0] for m in mats[order]]))
    assert smallest_eigenvalue(mats[1]).dim() == 0
