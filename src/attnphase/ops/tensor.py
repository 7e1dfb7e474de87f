"""The per-sample loss of tied dot-product attention as a function of the fields (THEORY.md §8).

For a sample with student fields h in R^{L x r} and S(h) = softmax_row(h h^T),
    g(h) = c - tr(S Cm^T) + 1/2 tr(S K S^T),
with L x L matrices K (symmetric), Cm and a constant c. The finite-d loss has K = x~ x~^T/d,
Cm = y x~^T/d, c = |y|^2/(2d); the high-dimensional channel (§7.1) has K = sigma^2 I,
Cm = sigma^2 T(h*), c = sigma^2/2 |T|^2, where g = ell(h; h*) = sigma^2/2 |S(h) - T(h*)|^2.

Pure torch functions, batched over any leading dimensions, with analytic derivatives:
g separates over the rows i of S, g = sum_i phi_i(s_i) + c with phi_i(s) = -Cm_i.s + s K s/2,
and the row logits are z_i = h h_i, so
    dg/dZ = P,        P_ik = S_ik (U_ik - sum_j S_ij U_ij),   U = S K - Cm,
    grad_h g = (P + P^T) h,
    d2g/dz_i^2 = J_i K J_i + diag(p_i) - s_i p_i^T - p_i s_i^T,   J_i = diag(s_i) - s_i s_i^T,
and the Hessian in h adds the curvature of z = h h^T, delta_cd (P + P^T)_ab.
"""

from __future__ import annotations

import torch


def attention(h: torch.Tensor) -> torch.Tensor:
    """S(h) = softmax_row(h h^T) for fields h of shape (..., L, r)."""
    return torch.softmax(h @ h.transpose(-1, -2), dim=-1)


def target(hstar: torch.Tensor, omega: float, A: torch.Tensor) -> torch.Tensor:
    """T(h*) = (1 - omega) softmax_row(h* h*^T) + omega A (eq. 1/16), h* of shape (..., L, t)."""
    return (1.0 - omega) * attention(hstar) + omega * A


def loss(h: torch.Tensor, K: torch.Tensor, Cm: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    """g(h) = c - tr(S Cm^T) + 1/2 tr(S K S^T), shape (...)."""
    S = attention(h)
    return c - (S * Cm).sum((-1, -2)) + 0.5 * ((S @ K) * S).sum((-1, -2))


def loss_derivatives(
    h: torch.Tensor, K: torch.Tensor, Cm: torch.Tensor, c: torch.Tensor, hessian: bool = True
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """g(h), its gradient (..., L, r) and Hessian (..., L r, L r) (row-major flattening of h)."""
    S = attention(h)
    SK = S @ K
    value = c - (S * Cm).sum((-1, -2)) + 0.5 * (SK * S).sum((-1, -2))
    U = SK - Cm
    P = S * (U - (S * U).sum(-1, keepdim=True))
    sym = P + P.transpose(-1, -2)
    grad = sym @ h
    if not hessian:
        return value, grad, None
    L, r = h.shape[-2], h.shape[-1]
    eye = torch.eye(L, dtype=h.dtype, device=h.device)
    J = torch.diag_embed(S) - S.unsqueeze(-1) * S.unsqueeze(-2)  # (..., i, k, k')
    Hz = J @ K.unsqueeze(-3) @ J
    Hz = Hz + torch.diag_embed(P) - S.unsqueeze(-1) * P.unsqueeze(-2)
    Hz = Hz - P.unsqueeze(-1) * S.unsqueeze(-2)
    # E[i, k, a, c] = dz_ik / dh_ac = delta_ia h_kc + delta_ka h_ic
    E = eye[:, None, :, None] * h.unsqueeze(-2).unsqueeze(-4)
    E = E + eye[None, :, :, None] * h.unsqueeze(-2).unsqueeze(-2)
    H = torch.einsum("...ikac,...ikj,...ijbd->...acbd", E, Hz, E)
    H = H + torch.einsum("...ab,cd->...acbd", sym, torch.eye(r, dtype=h.dtype, device=h.device))
    return value, grad, H.reshape(*H.shape[:-4], L * r, L * r)
