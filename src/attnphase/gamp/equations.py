"""The equations of GAMP on data (docs/theory.md §8, the paper's Appendix B, Algorithm 1).

Pure torch functions, one per step. Shapes: n samples, L tokens, ranks r (student); fields
and outputs are (n, L, r) with rows h_l, f_l; V, Vhat are r x r; the estimate Qh is d x r.
"""

from __future__ import annotations

import torch


def onsager_fields(h: torch.Tensor, F: torch.Tensor, V: torch.Tensor) -> torch.Tensor:
    """w_mu = x~_mu Qh/sqrt(d) - F_mu V (§8 step 1), given h = x~ Qh/sqrt(d)."""
    return h - F @ V  # w_l = h_l - V f_l, as rows (V symmetric)


def outputs(h_hat: torch.Tensor, w: torch.Tensor, Vinv: torch.Tensor) -> torch.Tensor:
    """f_mu,l = V^{-1}(h_hat_mu,l - w_mu,l) (§8 step 3)."""
    return (h_hat - w) @ Vinv


def output_jacobian_blocks(jac: torch.Tensor, Vinv: torch.Tensor) -> torch.Tensor:
    """D_mu,l = -d f_mu,l/d w_mu,l = V^{-1} - V^{-1} [dh_hat/dw]_{ll} (§8 step 3), (n, L, r, r).

    jac = dh_hat/dw = (B + H)^{-1} B with B = I_L (x) V^{-1} (`attnphase.prox.prox_jacobian`,
    row-major flattening), so -df/dw = B - B (B + H)^{-1} B, whose diagonal blocks are the
    equation of §8: V^{-1} - V^{-1} [(B + H)^{-1}]_{ll} V^{-1}."""
    r = Vinv.shape[0]
    n, Lr, _ = jac.shape
    L = Lr // r
    blocks = jac.reshape(n, L, r, L, r).diagonal(dim1=1, dim2=3).permute(0, 3, 1, 2)
    return Vinv - Vinv @ blocks  # [dh_hat/dw]_ll = [(B + H)^{-1}]_ll V^{-1}


def conjugate_variance(D: torch.Tensor, d: int) -> torch.Tensor:
    """Vhat = (1/d) sum_{mu,l} D_mu,l (§8 step 4), symmetrised."""
    Vhat = D.sum((0, 1)) / d
    return 0.5 * (Vhat + Vhat.T)


def prior_matrix(Vhat: torch.Tensor, *, s2: float, lam: float) -> torch.Tensor:
    """lambda I + s2 Vhat, the matrix inverted in §8 steps 5-6."""
    return lam * torch.eye(Vhat.shape[0], dtype=Vhat.dtype, device=Vhat.device) + s2 * Vhat


def estimate_update(
    Qh: torch.Tensor, back: torch.Tensor, Vhat: torch.Tensor, *, s2: float, lam: float
) -> torch.Tensor:
    """Qh <- (s2 Qh Vhat + sum x~^T f^T/sqrt(d)) (lambda I + s2 Vhat)^{-1} (§8 step 5);
    back = sum_{mu,l} x~_mu,l^T f_mu,l^T/sqrt(d)."""
    A = prior_matrix(Vhat, s2=s2, lam=lam)
    return torch.linalg.solve(A, (s2 * Qh @ Vhat + back).T).T  # A symmetric


def variance_update(Vhat: torch.Tensor, *, s2: float, lam: float) -> torch.Tensor:
    """V <- s2 (lambda I + s2 Vhat)^{-1} (§8 step 6)."""
    V = s2 * torch.linalg.inv(prior_matrix(Vhat, s2=s2, lam=lam))
    return 0.5 * (V + V.T)


def start_conjugate(V: torch.Tensor, *, s2: float, lam: float) -> torch.Tensor:
    """The Vhat that step 6 maps to V: Vhat = V^{-1} - (lambda/s2) I (the state before the
    first iteration, which damping mixes with the first output)."""
    eye = torch.eye(V.shape[0], dtype=V.dtype, device=V.device)
    return torch.linalg.inv(V) - (lam / s2) * eye
