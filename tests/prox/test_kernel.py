"""The prox kernel of untied query and key fields (docs/theory-untied.md): objective, gradient
and Hessian of F(h) = 1/2 sum_l (h_l - w_l)^T V^{-1} (h_l - w_l) + g(h) with logits
Z = h_Q h_K^T, against finite differences, the tied kernel, and a brute-force global search.

Tolerances: central differences with step 1e-5 on O(1) inputs have truncation error
~ step^2 |F'''| ~ 1e-10 and rounding ~ 1e-16/1e-5 = 1e-11; measured deviations are below
3e-9 (gradient) and 2e-8 (Hessian, differences of the analytic gradient), so 1e-6 relative
leaves room while a wrong index (query for key, P for P^T) moves entries by O(1).
"""

import numpy as np
import pytest
import torch
from scipy.optimize import minimize

from attnphase.ops.array import attention
from attnphase.params import TIED, Untied
from attnphase.prox import attention_form, global_prox
from attnphase.prox.kernel import derivatives, objective

STEP = 1e-5
UNTIED = Untied()


def problem(L: int, r: int, seed: int):
    rng = np.random.default_rng(seed)
    B = rng.normal(size=(L, L))
    K = B @ B.T / L + 0.1 * np.eye(L)
    Cm = rng.normal(size=(L, L)) * 0.3
    A = rng.normal(size=(r, r))
    Vinv = A @ A.T / r + 0.5 * np.eye(r)
    w = rng.normal(size=(L, r))
    h = rng.normal(size=(L, r))
    return h, w, Vinv, K, Cm, 0.7


def value(h, w, Vinv, K, Cm, c, variant):
    key_start = attention_form(variant, h.shape[1])
    return objective(h, w, Vinv, K, Cm, c, np.empty((len(K), len(K))), key_start)


def analytic(h, w, Vinv, K, Cm, variant):
    L, r = h.shape
    grad, H = np.empty(L * r), np.empty((L * r, L * r))
    key_start = attention_form(variant, r)
    derivatives(h, w, Vinv, K, Cm, np.empty((L, L)), np.empty((L, L)), grad, H, key_start)
    return grad, H


@pytest.mark.parametrize("L,r", [(2, 2), (3, 2), (3, 4)])
def test_untied_gradient_and_hessian_match_finite_differences(L, r):
    h, w, Vinv, K, Cm, c = problem(L, r, seed=L + 10 * r)
    grad, H = analytic(h, w, Vinv, K, Cm, UNTIED)
    args = (w, Vinv, K, Cm, UNTIED)
    fd_grad, fd_H = np.empty(L * r), np.empty((L * r, L * r))
    for x in range(L * r):
        e = np.zeros(L * r)
        e[x] = STEP
        up, down = h + e.reshape(L, r), h - e.reshape(L, r)
        fd_grad[x] = (
            value(up, w, Vinv, K, Cm, c, UNTIED) - value(down, w, Vinv, K, Cm, c, UNTIED)
        ) / (2 * STEP)
        fd_H[:, x] = (analytic(up, w, Vinv, K, Cm, UNTIED)[0] - analytic(down, *args)[0]) / (
            2 * STEP
        )
    assert np.abs(grad - fd_grad).max() < 1e-6 * max(1.0, np.abs(grad).max())
    assert np.abs(H - fd_H).max() < 1e-6 * max(1.0, np.abs(H).max())
    assert np.abs(H - H.T).max() < 1e-12


def test_untied_loss_at_equal_query_and_key_is_the_tied_loss():
    """g_untied(h, h) = g_tied(h), and the tied gradient is the sum of the query and key parts
    there (chain rule along h_Q = h_K = h)."""
    L, r = 3, 2
    h, w, Vinv, K, Cm, c = problem(L, r, seed=5)
    zero = np.zeros((r, r))
    hh = np.hstack([h, h])
    assert value(
        hh, np.zeros_like(hh), np.zeros((2 * r, 2 * r)), K, Cm, c, UNTIED
    ) == pytest.approx(value(h, np.zeros_like(h), zero, K, Cm, c, TIED), abs=1e-14)
    g_untied, _ = analytic(hh, np.zeros_like(hh), np.zeros((2 * r, 2 * r)), K, Cm, UNTIED)
    g_tied, _ = analytic(h, np.zeros_like(h), zero, K, Cm, TIED)
    g_untied = g_untied.reshape(L, 2 * r)
    assert np.abs(g_untied[:, :r] + g_untied[:, r:] - g_tied.reshape(L, r)).max() < 1e-13


def test_untied_attention_is_softmax_of_query_key_logits():
    rng = np.random.default_rng(0)
    h = rng.normal(size=(4, 3, 2))
    z = h[..., :1] @ np.swapaxes(h[..., 1:], -1, -2)
    S = np.exp(z) / np.exp(z).sum(-1, keepdims=True)
    untied = attention_form(UNTIED, 2)
    assert np.abs(attention(h, untied) - S).max() < 1e-15
    assert np.abs(attention(h, untied) - attention(h)).max() > 0.01


def test_untied_global_prox_finds_the_lowest_of_many_local_searches():
    """The kernel's minimiser (its starts plus the coarse probe) is no higher than the best of
    200 BFGS runs from random points; the same problems with the channel's sizes (V ~ 5)."""
    L, r, N = 2, 2, 12
    rng = np.random.default_rng(3)
    K = 0.25 * np.eye(L)
    Vinv = np.linalg.inv(np.array([[5.0, 1.0], [1.0, 3.0]]))
    w = rng.normal(size=(N, L, r)) * 0.6
    T = rng.dirichlet(np.ones(L), size=(N, L))
    Cm = 0.25 * T
    c = 0.125 * (T * T).sum((-1, -2))
    starts = np.stack([w, np.zeros_like(w)], 1)
    res = global_prox(
        *(
            torch.from_numpy(x)
            for x in (w, Vinv, np.broadcast_to(K, (N, L, L)).copy(), Cm, c, starts)
        ),
        probe=64,
        variant=UNTIED,
    )
    for i in range(N):

        def f(x, i=i):
            return value(x.reshape(L, r), w[i], Vinv, K, Cm[i], c[i], UNTIED)

        best = min(
            minimize(f, w[i].ravel() + rng.normal(size=L * r) * s, method="BFGS").fun
            for s in np.repeat([0.5, 2.0, 5.0, 10.0], 50)
        )
        assert float(res.envelope[i]) <= best + 1e-10


def test_untied_prox_refuses_an_odd_field_width():
    w = torch.zeros(1, 2, 3, dtype=torch.float64)
    with pytest.raises(ValueError, match="untied"):
        global_prox(
            w,
            torch.eye(3, dtype=torch.float64),
            torch.eye(2)[None],
            torch.zeros(1, 2, 2),
            torch.zeros(1),
            w[:, None],
            variant=UNTIED,
        )


def test_the_kernel_called_per_slice_gives_every_bit_of_one_call(monkeypatch):
    """global_prox_numba calls the kernel on slices of the problems (so that Ctrl-C is seen
    between calls): slices of 7 give exactly the numbers of one call over all 40, with K, Cm,
    c per problem and shared."""
    import torch

    from attnphase.prox import kernel

    g = torch.Generator().manual_seed(5)
    N, L, r = 40, 3, 1
    w = torch.randn(N, L, r, generator=g, dtype=torch.float64)
    Vinv = torch.eye(r, dtype=torch.float64) / 2
    Cm = 0.25 * torch.softmax(torch.randn(N, L, L, generator=g, dtype=torch.float64), -1)
    c = torch.rand(N, generator=g, dtype=torch.float64)
    starts = torch.stack([w, torch.zeros_like(w)], 1)
    for K in (0.25 * torch.eye(L, dtype=torch.float64), 0.25 * torch.eye(L).expand(N, L, L)):
        args = (w, Vinv, K.double(), Cm, c, starts)
        kw = dict(probe=16, n_best=2, gtol=1e-10, max_iter=100, form=attention_form(TIED, r))
        whole = kernel.global_prox_numba(*args, **kw)
        monkeypatch.setattr(kernel, "CALL_WORK", 7 * (L * r) ** 2)
        monkeypatch.setattr(kernel, "CALL_MIN", 1)
        sliced = kernel.global_prox_numba(*args, **kw)
        monkeypatch.undo()
        for name in ("h", "envelope", "start", "stationary"):
            assert torch.equal(getattr(whole, name), getattr(sliced, name)), name
