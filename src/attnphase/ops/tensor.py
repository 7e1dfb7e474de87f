"""The operations of `attnphase.ops` in torch (docs/theory.md §1, §8): batched over any leading
dimensions, on any device, differentiable; with the fields h = x~ Q/sqrt(d) and their adjoint.
"""

from __future__ import annotations

import math
from typing import Literal, overload

import torch

from .form import TIED_FORM, AttentionForm


def fields(x: torch.Tensor, Q: torch.Tensor) -> torch.Tensor:
    """h = x~ Q/sqrt(d) (§1) for tokens x~ (..., n, L, d) and weights Q (..., d, r): (..., n, L, r).

    Computed as (Q^T X^T)^T with X the (n L) x d token rows, so that autograd's backward is
    `back_project`'s product: the simulations' risk and gradient 2.5-8x faster on the CPU than
    with X Q and its backward X^T G (r = 2 or a batch of seeds; as fast for one r = 1 run)."""
    *batch, n, L, d = x.shape
    X = x.reshape(*batch, n * L, d)
    h = (Q.transpose(-1, -2) @ X.transpose(-1, -2)).transpose(-1, -2)
    return h.reshape(*batch, n, L, -1) / math.sqrt(d)


def back_project(x: torch.Tensor, G: torch.Tensor) -> torch.Tensor:
    """sum_{mu,l} x~_{mu,l}^T G_{mu,l}/sqrt(d), the adjoint of `fields`, (..., d, r) for
    G (..., n, L, r). Computed as (G^T X)^T: one pass over the data (X^T G, or an einsum, is
    10-30x slower on the CPU for r > 1)."""
    *batch, n, L, d = x.shape
    X = x.reshape(*batch, n * L, d)
    Gt = G.reshape(*batch, n * L, -1).transpose(-1, -2)
    return (Gt @ X).transpose(-1, -2) / math.sqrt(d)


def rotations(L: int, freqs, like: torch.Tensor) -> torch.Tensor:
    """G (L, L, r, r), G_ik = blockdiag_j R((k - i) phi_j) (`attnphase.ops.rotary`), r twice
    the frequencies' number, on `like`'s device and dtype."""
    phi = torch.as_tensor(freqs, dtype=like.dtype, device=like.device)
    pos = torch.arange(L, dtype=like.dtype, device=like.device)
    t = (pos[None, :] - pos[:, None])[..., None] * phi  # (i, k, j)
    c, s = torch.cos(t), torch.sin(t)
    block = torch.stack([torch.stack([c, -s], -1), torch.stack([s, c], -1)], -2)  # (i, k, j, 2, 2)
    eye = torch.eye(phi.shape[0], dtype=like.dtype, device=like.device)
    G = torch.einsum("ikjxy,jl->ikjxly", block, eye)
    return G.reshape(L, L, 2 * phi.shape[0], 2 * phi.shape[0])


def rotated_keys(h: torch.Tensor, G: torch.Tensor) -> torch.Tensor:
    """(G_ik h_k)_c for every query i and key k: (..., L, L, r)."""
    return torch.einsum("ikcd,...kd->...ikc", G, h)


def logits(h: torch.Tensor, form: AttentionForm = TIED_FORM) -> torch.Tensor:
    """Z = h Pi h^T (..., L, L): h h^T when tied (key_start 0), h_Q h_K^T otherwise, h_i^T G_ik
    h_k with rotary frequencies; with a causal form -inf above the diagonal."""
    if form.rotary.shape[0] > 0:
        G = rotations(h.shape[-2], form.rotary, h)
        z = torch.einsum("...ic,...ikc->...ik", h, rotated_keys(h, G))
    elif form.key_start == 0:
        z = h @ h.transpose(-1, -2)
    else:
        z = h[..., : form.key_start] @ h[..., form.key_start :].transpose(-1, -2)
    if form.causal:
        L = z.shape[-1]
        above = torch.ones(L, L, dtype=torch.bool, device=z.device).triu(1)
        z = z.masked_fill(above, -torch.inf)
    return z


def head_fields(h: torch.Tensor, heads: int) -> torch.Tensor:
    """The fields (..., L, H r) split by head: (..., H, L, r), head a on columns a r to
    a r + r - 1."""
    return h.unflatten(-1, (heads, -1)).movedim(-2, -3)


def attention(h: torch.Tensor, form: AttentionForm = TIED_FORM) -> torch.Tensor:
    """S(h) = softmax_row(Z) (eq. 2) for fields h of shape (..., L, r); with several heads the
    mean of the heads' softmaxes (`attnphase.ops.heads`)."""
    if form.heads > 1:
        one = form._replace(heads=1)
        return torch.softmax(logits(head_fields(h, form.heads), one), dim=-1).mean(-3)
    return torch.softmax(logits(h, form), dim=-1)


def target(
    hstar: torch.Tensor, omega: float, A: torch.Tensor, causal: bool = False
) -> torch.Tensor:
    """T(h*) = (1 - omega) softmax_row(h* h*^T) + omega A (eq. 1/16), h* of shape (..., L, t);
    causal: the teacher's softmax masked (k <= l)."""
    return (1.0 - omega) * attention(hstar, AttentionForm(0, causal)) + omega * A


def loss(
    h: torch.Tensor,
    K: torch.Tensor,
    Cm: torch.Tensor,
    c: torch.Tensor,
    form: AttentionForm = TIED_FORM,
) -> torch.Tensor:
    """g(h) = c - tr(S Cm^T) + 1/2 tr(S K S^T) (§8), shape (...)."""
    S = attention(h, form)
    return c - (S * Cm).sum((-1, -2)) + 0.5 * ((S @ K) * S).sum((-1, -2))


def _value_and_slope(
    S: torch.Tensor, K: torch.Tensor, Cm: torch.Tensor, c: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """g = c - tr(S Cm^T) + 1/2 tr(S K S^T) and P = dg/dZ = S (U - rowsum(S U)), U = S K - Cm,
    at the attention S (§8)."""
    SK = S @ K
    value = c - (S * Cm).sum((-1, -2)) + 0.5 * (SK * S).sum((-1, -2))
    U = SK - Cm
    return value, S * (U - (S * U).sum(-1, keepdim=True))


def _row_curvature(S: torch.Tensor, P: torch.Tensor, K: torch.Tensor) -> torch.Tensor:
    """d2g/dz_i^2 = J_i K J_i + diag(p_i) - s_i p_i^T - p_i s_i^T for every row i, (..., i, k, k'),
    J_i = diag(s_i) - s_i s_i^T (§8)."""
    J = torch.diag_embed(S) - S.unsqueeze(-1) * S.unsqueeze(-2)
    Hz = J @ K.unsqueeze(-3) @ J
    Hz = Hz + torch.diag_embed(P) - S.unsqueeze(-1) * P.unsqueeze(-2)
    return Hz - P.unsqueeze(-1) * S.unsqueeze(-2)


def _paired(h: torch.Tensor, key_start: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(h Pi^T, h Pi): (h_K, 0) and (0, h_Q) for untied fields, dZ_ik/dh_ic = (h Pi^T)_kc for
    the row i and dZ_ik/dh_kc = (h Pi)_ic for the column k."""
    hq, hk = h[..., :key_start], h[..., key_start:]
    return torch.cat([hk, torch.zeros_like(hq)], -1), torch.cat([torch.zeros_like(hk), hq], -1)


@overload
def loss_derivatives(
    h: torch.Tensor,
    K: torch.Tensor,
    Cm: torch.Tensor,
    c: torch.Tensor,
    hessian: Literal[True] = ...,
    form: AttentionForm = ...,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]: ...


@overload
def loss_derivatives(
    h: torch.Tensor,
    K: torch.Tensor,
    Cm: torch.Tensor,
    c: torch.Tensor,
    hessian: Literal[False],
    form: AttentionForm = ...,
) -> tuple[torch.Tensor, torch.Tensor, None]: ...


@overload
def loss_derivatives(
    h: torch.Tensor,
    K: torch.Tensor,
    Cm: torch.Tensor,
    c: torch.Tensor,
    hessian: bool = ...,
    form: AttentionForm = ...,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]: ...


def loss_derivatives(
    h: torch.Tensor,
    K: torch.Tensor,
    Cm: torch.Tensor,
    c: torch.Tensor,
    hessian: bool = True,
    form: AttentionForm = TIED_FORM,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """g(h), its gradient (..., L, r) and Hessian (..., L r, L r) (row-major flattening of h),
    by the formulas of `attnphase.ops` (§8); several heads by those of `attnphase.ops.heads`."""
    if form.heads > 1:
        return _heads_loss_derivatives(h, K, Cm, c, hessian, form)
    if form.rotary.shape[0] > 0:
        return _rotary_loss_derivatives(h, K, Cm, c, hessian, form)
    key_start = form.key_start
    S = attention(h, form)
    value, P = _value_and_slope(S, K, Cm, c)
    Pt = P.transpose(-1, -2)
    if key_start == 0:
        sym = P + Pt
        grad = sym @ h  # (P + P^T) h
        row, col = h, h
    else:
        row, col = _paired(h, key_start)
        grad = P @ row + Pt @ col  # P h Pi^T + P^T h Pi
    if not hessian:
        return value, grad, None
    L, r = h.shape[-2], h.shape[-1]
    eye = torch.eye(L, dtype=h.dtype, device=h.device)
    Hz = _row_curvature(S, P, K)
    # E[i, k, a, c] = dZ_ik/dh_ac = delta_ia (h Pi^T)_kc + delta_ka (h Pi)_ic
    E = eye[:, None, :, None] * row.unsqueeze(-2).unsqueeze(-4)
    E = E + eye[None, :, :, None] * col.unsqueeze(-2).unsqueeze(-2)
    H = torch.einsum("...ikac,...ikj,...ijbd->...acbd", E, Hz, E)
    eye_r = torch.eye(r, dtype=h.dtype, device=h.device)
    if key_start == 0:
        H = H + torch.einsum("...ab,cd->...acbd", sym, eye_r)  # (P + P^T)_ab delta_cd
    else:
        Pi = eye_r.roll(key_start, dims=1).triu()  # Pi_cd = 1 for d = c + key_start
        H = H + torch.einsum("...ab,cd->...acbd", P, Pi) + torch.einsum("...ab,dc->...acbd", Pt, Pi)
    return value, grad, H.reshape(*H.shape[:-4], L * r, L * r)


def _heads_loss_derivatives(
    h: torch.Tensor,
    K: torch.Tensor,
    Cm: torch.Tensor,
    c: torch.Tensor,
    hessian: bool,
    form: AttentionForm,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """`loss_derivatives` for H tied heads, the formulas of `attnphase.ops.heads`."""
    H = form.heads
    hh = head_fields(h, H)  # (..., H, L, r)
    Sa = torch.softmax(logits(hh, form._replace(heads=1)), dim=-1)  # (..., H, L, L)
    S = Sa.mean(-3)
    SK = S @ K
    value = c - (S * Cm).sum((-1, -2)) + 0.5 * (SK * S).sum((-1, -2))
    U = (SK - Cm).unsqueeze(-3)
    Pa = Sa * (U - (Sa * U).sum(-1, keepdim=True))  # H dg/dZ_a
    grad = ((Pa + Pa.transpose(-1, -2)) @ hh / H).movedim(-3, -2).flatten(-2)
    if not hessian:
        return value, grad, None
    L, R = h.shape[-2], h.shape[-1]
    r = R // H
    eye = torch.eye(L, dtype=h.dtype, device=h.device)
    # D[a, i, k, x, c] = dZ_a,ik/dh_x(a r + c) = delta_ix h_a,kc + delta_kx h_a,ic
    D = eye[:, None, :, None] * hh.unsqueeze(-2).unsqueeze(-4)
    D = D + eye[None, :, :, None] * hh.unsqueeze(-2).unsqueeze(-2)
    J = torch.diag_embed(Sa) - Sa.unsqueeze(-1) * Sa.unsqueeze(-2)  # (..., H, i, k, j)
    C = (
        torch.diag_embed(Pa)
        - Sa.unsqueeze(-1) * Pa.unsqueeze(-2)
        - Pa.unsqueeze(-1) * Sa.unsqueeze(-2)
    )
    Y = torch.einsum("...aikj,...aijxc->...ikxac", J, D).flatten(-3)  # (..., i, k, L R)
    cross = (Y.transpose(-1, -2) @ (K.unsqueeze(-3) @ Y)).sum(-3) / H**2
    own = torch.einsum("...aikxc,...aikj,...aijyd->...xacyd", D, C, D) / H
    eye_h = torch.eye(H, dtype=h.dtype, device=h.device)
    eye_r = torch.eye(r, dtype=h.dtype, device=h.device)
    own = own + torch.einsum("...axy,cd->...xacyd", Pa + Pa.transpose(-1, -2), eye_r) / H
    block = torch.einsum("...xacyd,ab->...xacybd", own, eye_h)
    return value, grad, cross + block.reshape(*block.shape[:-6], L * R, L * R)


def _rotary_loss_derivatives(
    h: torch.Tensor,
    K: torch.Tensor,
    Cm: torch.Tensor,
    c: torch.Tensor,
    hessian: bool,
    form: AttentionForm,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """`loss_derivatives` with rotary positions, the formulas of `attnphase.ops.rotary`."""
    L, r = h.shape[-2], h.shape[-1]
    G = rotations(L, form.rotary, h)
    Rh = rotated_keys(h, G)  # (..., i, k, c) = (G_ik h_k)_c
    S = torch.softmax(logits(h, form), dim=-1)
    value, P = _value_and_slope(S, K, Cm, c)
    sym = P + P.transpose(-1, -2)
    grad = torch.einsum("...ak,...akc->...ac", sym, Rh)
    if not hessian:
        return value, grad, None
    eye = torch.eye(L, dtype=h.dtype, device=h.device)
    Hz = _row_curvature(S, P, K)
    # E[i, k, a, c] = dZ_ik/dh_ac = delta_ia (G_ik h_k)_c + delta_ka (G_ki h_i)_c
    E = eye[:, None, :, None] * Rh.unsqueeze(-2)
    E = E + eye[None, :, :, None] * Rh.transpose(-2, -3).unsqueeze(-2)
    H = torch.einsum("...ikac,...ikj,...ijbd->...acbd", E, Hz, E)
    H = H + torch.einsum("...ab,abcd->...acbd", sym, G)
    return value, grad, H.reshape(*H.shape[:-4], L * r, L * r)
