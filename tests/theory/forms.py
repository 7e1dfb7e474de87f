"""Checks every attention variant's tests share: the loss's derivatives in torch and numba
against autograd, the attention in the three array libraries, and the prox's numba and torch
backends on the channel's loss (tests/theory/test_causal.py, test_heads.py, test_rotary.py)."""

from __future__ import annotations

import numpy as np
import torch

from attnphase.ops import array, compiled, tensor
from attnphase.ops.form import AttentionForm
from attnphase.params import Variant
from attnphase.prox import PROBE, ProxResult, global_prox


def assert_derivatives_match_autograd(h: torch.Tensor, form: AttentionForm, seed: int) -> None:
    """At fields h (L x R) and a random symmetric K, Cm, c: the gradient and Hessian of torch
    and numba against autograd through `tensor.loss` (1e-12), and numba's and numpy's S against
    torch's (1e-15)."""
    L, R = h.shape
    g = torch.Generator().manual_seed(seed)
    B = torch.randn(L, L, generator=g, dtype=torch.float64)
    K, Cm, c = B @ B.T, torch.randn(L, L, generator=g, dtype=torch.float64), torch.tensor(0.7)
    c = c.double()

    def loss(x):
        return tensor.loss(x.reshape(L, R), K, Cm, c, form)

    grad = torch.autograd.functional.jacobian(loss, h.reshape(-1))
    hess = torch.autograd.functional.hessian(loss, h.reshape(-1))
    _, tg, tH = tensor.loss_derivatives(h, K, Cm, c, form=form)
    assert torch.allclose(tg.reshape(-1), grad, rtol=0, atol=1e-12)
    assert torch.allclose(tH, hess, rtol=0, atol=1e-12)
    S, P = np.empty((L, L)), np.empty((L, L))
    ng, nH = np.empty(L * R), np.empty((L * R, L * R))
    hn, Kn = h.numpy(), K.numpy()
    compiled.attention(hn, S, form)
    np.testing.assert_allclose(S, tensor.attention(h, form).numpy(), rtol=0, atol=1e-15)
    np.testing.assert_allclose(array.attention(hn, form), S, rtol=0, atol=1e-15)
    compiled.loss_derivatives(hn, Kn, Cm.numpy(), S, P, ng, nH, form)
    np.testing.assert_allclose(ng, grad.numpy(), rtol=0, atol=1e-12)
    np.testing.assert_allclose(nH, hess.numpy(), rtol=0, atol=1e-12)


def channel_problems(N: int, L: int, R: int, seed: int) -> tuple:
    """N prox problems of the channel's loss (sigma^2 = 0.25, random row-stochastic targets):
    (w, Vinv, K, Cm, c, starts), the starts w and 0."""
    g = torch.Generator().manual_seed(seed)
    w = 1.5 * torch.randn(N, L, R, generator=g, dtype=torch.float64)
    Vinv = torch.eye(R, dtype=torch.float64) / 3.0
    T = torch.softmax(torch.randn(N, L, L, generator=g, dtype=torch.float64), -1)
    s2 = 0.25
    K, Cm, c = s2 * torch.eye(L, dtype=torch.float64), s2 * T, 0.5 * s2 * (T * T).sum((-1, -2))
    return w, Vinv, K, Cm, c, torch.stack([w, torch.zeros_like(w)], 1)


def assert_prox_backends_agree(problems: tuple, variant: Variant) -> ProxResult:
    """numba and torch on `problems`, the probe on: the same envelope (1e-12) and minimiser
    (1e-8), every minimiser stationary; returns numba's."""
    runs = {
        b: global_prox(*problems, probe=PROBE, variant=variant, backend=b)
        for b in ("numba", "torch")
    }
    assert torch.allclose(runs["numba"].envelope, runs["torch"].envelope, rtol=0, atol=1e-12)
    assert torch.allclose(runs["numba"].h, runs["torch"].h, rtol=0, atol=1e-8)
    assert bool(runs["numba"].stationary.all())
    return runs["numba"]
