"""The torch operations of `attnphase.ops.tensor`: the loss's derivatives against autograd,
tied and untied, and the fields against their adjoint (docs/theory.md §7.1, §8)."""

import pytest
import torch

from attnphase.ops import tensor
from attnphase.ops.form import AttentionForm
from attnphase.ops.tensor import loss, loss_derivatives

DT = torch.float64


@pytest.mark.parametrize("L,r", [(2, 1), (3, 1), (2, 2), (3, 2), (4, 3)])
def test_loss_derivatives_match_autograd(L, r):
    g = torch.Generator().manual_seed(L * 10 + r)
    h = torch.randn(4, L, r, generator=g, dtype=DT)
    X = torch.randn(4, L, 7, generator=g, dtype=DT)
    K = X @ X.transpose(-1, -2) / 7
    Cm = torch.randn(4, L, L, generator=g, dtype=DT)
    c = torch.rand(4, generator=g, dtype=DT)
    value, grad, H = loss_derivatives(h, K, Cm, c)
    assert torch.equal(value, loss(h, K, Cm, c))
    for b in range(4):

        def f(x, b=b):
            return loss(x.reshape(L, r), K[b], Cm[b], c[b])

        flat = h[b].reshape(-1)
        assert torch.allclose(
            torch.autograd.functional.jacobian(f, flat), grad[b].reshape(-1), atol=1e-12
        )
        assert torch.allclose(torch.autograd.functional.hessian(f, flat), H[b], atol=1e-11)


@pytest.mark.parametrize(
    "L,width,form",
    [
        (2, 2, AttentionForm(1)),
        (3, 4, AttentionForm(2)),
        (3, 2, AttentionForm(0, causal=True)),
        (4, 1, AttentionForm(0, causal=True)),
    ],
)
def test_untied_and_causal_torch_derivatives_match_autograd(L, width, form):
    """The untied branch of `ops.tensor.loss_derivatives` (P h Pi^T + P^T h Pi and the
    curvature P_ab Pi_cd + P_ba Pi_dc), and the tied formulas on a causal mask (which hold there
    unchanged: S and P vanish above the diagonal), against autograd through `ops.tensor.loss`."""
    g = torch.Generator().manual_seed(L)
    h = torch.randn(3, L, width, generator=g, dtype=DT)
    X = torch.randn(3, L, 5, generator=g, dtype=DT)
    K, Cm = X @ X.transpose(-1, -2) / 5, torch.randn(3, L, L, generator=g, dtype=DT)
    c = torch.rand(3, generator=g, dtype=DT)
    _, grad, H = tensor.loss_derivatives(h, K, Cm, c, form=form)
    for b in range(3):

        def f(x, b=b):
            return tensor.loss(x.reshape(L, width), K[b], Cm[b], c[b], form)

        flat = h[b].reshape(-1)
        jac = torch.autograd.functional.jacobian(f, flat)
        assert torch.allclose(jac, grad[b].reshape(-1), atol=1e-12)
        assert torch.allclose(torch.autograd.functional.hessian(f, flat), H[b], atol=1e-11)


def test_a_causal_mask_zeroes_the_attention_above_the_diagonal():
    """S_ik = 0 for k > i; row i is the softmax of Z_i1..Z_ii alone (row 1 attends to token 1)."""
    h = torch.randn(5, 4, 2, dtype=DT, generator=torch.Generator().manual_seed(3))
    S = tensor.attention(h, AttentionForm(0, causal=True))
    z = h @ h.transpose(-1, -2)
    for i in range(4):
        assert torch.equal(S[:, i, i + 1 :], torch.zeros_like(S[:, i, i + 1 :]))
        want = torch.softmax(z[:, i, : i + 1], -1)
        assert torch.allclose(S[:, i, : i + 1], want, rtol=0, atol=1e-15)


def test_fields_and_back_project_are_adjoint():
    """<fields(x, Q), G> = <Q, back_project(x, G)>, batched and not, and autograd's gradient of
    the fields is back_project."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 7, 3, 11, generator=g, dtype=DT)
    Q = torch.randn(2, 11, 2, generator=g, dtype=DT, requires_grad=True)
    G = torch.randn(2, 7, 3, 2, generator=g, dtype=DT)
    h = tensor.fields(x, Q)
    assert torch.allclose(h, torch.einsum("bnld,bdr->bnlr", x, Q) / 11**0.5, atol=1e-14)
    (grad,) = torch.autograd.grad((h * G).sum(), Q)
    assert torch.allclose(grad, tensor.back_project(x, G), atol=1e-13)
    assert torch.allclose(tensor.back_project(x[0], G[0]), grad[0], atol=1e-13)
