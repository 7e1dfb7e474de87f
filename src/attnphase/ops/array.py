"""The operations of `attnphase.ops` in numpy (docs/theory.md §7.1): attention and target for
batches of fields (..., L, r), as the QMC channel evaluates them at its points."""

from __future__ import annotations

import numpy as np

from .form import TIED_FORM, AttentionForm


def attention(h: np.ndarray, form: AttentionForm = TIED_FORM) -> np.ndarray:
    """S(h) = softmax_row(Z), Z = h h^T when tied (key_start 0), h_Q h_K^T otherwise; with a
    causal form, -inf above the diagonal."""
    if form.key_start == 0:
        z = h @ np.swapaxes(h, -1, -2)
    else:
        z = h[..., : form.key_start] @ np.swapaxes(h[..., form.key_start :], -1, -2)
    if form.causal:
        z = np.where(np.triu(np.ones(z.shape[-2:], dtype=bool), 1), -np.inf, z)
    z = np.exp(z - z.max(-1, keepdims=True))
    return z / z.sum(-1, keepdims=True)


def target(hstar: np.ndarray, omega: float, A: np.ndarray, causal: bool = False) -> np.ndarray:
    """T(h*) = (1 - omega) softmax_row(h* h*^T) + omega A (eq. 1/16), h* of shape (..., L, t);
    causal: the teacher's softmax masked (k <= l)."""
    return (1.0 - omega) * attention(hstar, AttentionForm(0, causal)) + omega * A


def sym_sqrt(a: np.ndarray, power: float = 0.5) -> np.ndarray:
    """a^power for a symmetric positive-definite matrix a."""
    lam, U = np.linalg.eigh(0.5 * (a + a.T))
    return (U * lam**power) @ U.T
