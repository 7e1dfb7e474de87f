"""Mechanism score of attention maps: how much of a map is positional, how much semantic.

For maps P[batch, head, query, key] over token sequences s[batch, key], only the off-diagonal
cells k != q are used (attending to oneself is both positional and same-token) and each row is
centred, D = P - mean_{k != q} P. Two templates are fitted to D:

- positional: a map that depends only on (head, query, key): the batch mean of D, taken
  leave-one-out so a token-dependent map does not explain itself;
- same-token: a row that depends only on whether s_k = s_q (and, through the softmax
  normalisation, on how many keys share the query's token): the mean of D over all cells of
  the other sequences with the same count and the same same/other label (leave-one-out).

Each fraction is 1 - |D - template|^2 / |D|^2 (summed over batch, query, key, clipped to
[0, 1]); the score is semantic - positional, in [-1, 1]: -1 a purely positional head, +1 a
purely same-token head; both templates are fitted out of sample, so a map without the
structure scores about 0 on it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class MechanismScores:
    """Per-head explained fractions and score = semantic - positional (NaN: no structure)."""

    positional: np.ndarray  # [head]
    semantic: np.ndarray  # [head]

    @property
    def score(self) -> np.ndarray:
        return self.semantic - self.positional

    def as_dict(self) -> dict[str, list[float]]:
        return {
            "positional": self.positional.tolist(),
            "semantic": self.semantic.tolist(),
            "score": self.score.tolist(),
        }


def _as_array(x, name: str) -> np.ndarray:
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    try:
        return np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a numeric array") from None


def _check(attention: np.ndarray, tokens: np.ndarray) -> None:
    if attention.ndim != 4:
        raise ValueError(
            f"attention must have shape [batch, head, query, key], got {attention.shape}"
        )
    B, _, Tq, Tk = attention.shape
    if Tq != Tk or Tq < 3:
        raise ValueError(f"attention must be square over >= 3 positions, got {Tq} x {Tk}")
    if tokens.shape != (B, Tk):
        raise ValueError(f"tokens must have shape [batch, key] = {(B, Tk)}, got {tokens.shape}")
    if B < 2:
        raise ValueError("attention must hold at least 2 sequences (batch >= 2)")
    if not np.all(np.isfinite(attention)):
        raise ValueError("attention must be finite")
    if attention.min() < 0:
        raise ValueError("attention must be non-negative")
    if np.abs(attention.sum(-1) - 1.0).max() > 1e-3:
        raise ValueError("attention rows must sum to 1 (softmax over keys)")
    if not np.array_equal(tokens, np.round(tokens)):
        raise ValueError("tokens must be integers")


def mechanism_scores(attention, tokens) -> MechanismScores:
    """Positional / same-token explained fractions of attention maps (see module docstring)."""
    P = _as_array(attention, "attention")
    s = _as_array(tokens, "tokens")
    _check(P, s)
    B, H, T, _ = P.shape
    off = ~np.eye(T, dtype=bool)
    D = P[:, :, off].reshape(B, H, T, T - 1)
    D = D - D.mean(-1, keepdims=True)
    same = (s[:, :, None] == s[:, None, :])[:, off].reshape(B, 1, T, T - 1)

    positional_template = (D.sum(0, keepdims=True) - D) / (B - 1)
    same_token_template = _same_token_template(D, same[:, 0])

    total = (D**2).sum((0, 2, 3))
    with np.errstate(invalid="ignore", divide="ignore"):
        pos = 1.0 - ((D - positional_template) ** 2).sum((0, 2, 3)) / total
        sem = 1.0 - ((D - same_token_template) ** 2).sum((0, 2, 3)) / total
    empty = total <= 1e-12 * B * T * (T - 1)
    pos, sem = np.clip(pos, 0.0, 1.0), np.clip(sem, 0.0, 1.0)
    return MechanismScores(np.where(empty, np.nan, pos), np.where(empty, np.nan, sem))


def _same_token_template(D: np.ndarray, same: np.ndarray) -> np.ndarray:
    """Leave-one-out same-token template: the mean of D over the other sequences' cells with
    the same (head, number of same-token keys in the row, key has the query's token)."""
    B, H, T, K = D.shape
    groups = np.eye(K, dtype=float)[same.sum(-1)]  # [B, T, K]: one-hot of the row's count
    cells = np.stack([~same, same], -1).astype(float)  # [B, T, K, 2]
    per_seq = np.einsum("bhqk,bqg,bqks->bhgs", D, groups, cells)
    counts = np.einsum("bqg,bqks->bgs", groups, cells)[:, None]
    sums, n = per_seq.sum(0, keepdims=True) - per_seq, counts.sum(0, keepdims=True) - counts
    means = np.divide(sums, n, where=n > 0, out=np.zeros_like(sums))  # [B, H, G, 2]
    return np.einsum("bhgs,bqg,bqks->bhqk", means, groups, cells)
