"""The operations of `attnphase.ops` in numpy (docs/theory.md §7.1): attention and target for
batches of fields (..., L, r), as the QMC channel evaluates them at its points."""

from __future__ import annotations

import numpy as np

from .form import TIED_FORM, AttentionForm


def attention(h: np.ndarray, form: AttentionForm = TIED_FORM) -> np.ndarray:
    """S(h) = softmax_row(Z), Z = h h^T when tied (key_start 0), h_Q h_K^T otherwise; with a
    causal form, -inf above the diagonal; h_i^T G_ik h_k with rotary frequencies
    (`attnphase.ops.rotary`); with H heads the mean of the heads' softmaxes, head a
    on columns a R/H .. (a + 1) R/H - 1."""
    if form.heads > 1:
        one = form._replace(heads=1)
        parts = [attention(part, one) for part in np.split(h, form.heads, axis=-1)]
        return np.mean(parts, axis=0)
    if form.rotary.shape[0] > 0:
        z = _rotary_logits(h, form.rotary)
    elif form.key_start == 0:
        z = h @ np.swapaxes(h, -1, -2)
    else:
        z = h[..., : form.key_start] @ np.swapaxes(h[..., form.key_start :], -1, -2)
    if form.causal:
        z = np.where(np.triu(np.ones(z.shape[-2:], dtype=bool), 1), -np.inf, z)
    z = np.exp(z - z.max(-1, keepdims=True))
    return z / z.sum(-1, keepdims=True)


def _rotary_logits(h: np.ndarray, freqs: np.ndarray) -> np.ndarray:
    """Z_ik = sum_j h_i,j^T R((k - i) phi_j) h_k,j for pairs j of columns (2j, 2j + 1)."""
    L = h.shape[-2]
    pos = np.arange(L)
    t = (pos[None, :] - pos[:, None])[..., None] * freqs  # (i, k, j)
    a1, a2 = h[..., 0::2], h[..., 1::2]  # (..., L, pairs)
    same = a1[..., :, None, :] * a1[..., None, :, :] + a2[..., :, None, :] * a2[..., None, :, :]
    cross = a2[..., :, None, :] * a1[..., None, :, :] - a1[..., :, None, :] * a2[..., None, :, :]
    return (np.cos(t) * same + np.sin(t) * cross).sum(-1)


def target(hstar: np.ndarray, omega: float, A: np.ndarray, causal: bool = False) -> np.ndarray:
    """T(h*) = (1 - omega) softmax_row(h* h*^T) + omega A (eq. 1/16), h* of shape (..., L, t);
    causal: the teacher's softmax masked (k <= l)."""
    return (1.0 - omega) * attention(hstar, AttentionForm(0, causal)) + omega * A


def sym_sqrt(a: np.ndarray, power: float = 0.5) -> np.ndarray:
    """a^power for a symmetric positive-definite matrix a."""
    lam, U = np.linalg.eigh(0.5 * (a + a.T))
    return (U * lam**power) @ U.T
