"""The histogram (counting) task of the paper's Appendix A: sequences of length 10 over an
alphabet of 15 tokens; the label at each position is how often that position's token occurs."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
import torch

SEQ_LEN = 10
VOCAB = 15
N_CLASSES = SEQ_LEN + 1  # counts 0..10 (0 never occurs: a token counts itself)
N_SEQUENCES = 50_000
TRAIN_FRACTION = 0.7
LETTERS = "abcdefghijklmnopqrstuvwxyz"
EXAMPLES = (
    (1, 1, 2, 2, 3, 3, 1, 1, 1, 1),
    (11, 12, 3, 12, 12, 12, 0, 7, 7, 1),
    (14, 13, 12, 11, 10, 9, 8, 7, 6, 5),
)


def seed_for(*parts: object) -> int:
    """A 63-bit seed derived from the parts (sha256), independent across different parts."""
    digest = hashlib.sha256(":".join(["attnphase-histogram", *map(str, parts)]).encode()).digest()
    return int.from_bytes(digest[:8], "little") & ((1 << 63) - 1)


def histogram_labels(tokens: torch.Tensor) -> torch.Tensor:
    """Count of each position's token within its sequence: [..., T] -> [..., T] (int64)."""
    if tokens.dim() < 1:
        raise ValueError("tokens must have a sequence axis")
    return (tokens[..., :, None] == tokens[..., None, :]).sum(-1)


def letters(tokens) -> list[str]:
    """Tokens 0, 1, ... as letters a, b, ... (tick labels)."""
    return [LETTERS[int(t)] for t in tokens]


@dataclass(frozen=True)
class HistogramData:
    """Train/validation split of deduplicated random sequences (CPU tensors, int64)."""

    train_x: torch.Tensor  # [n_train, T]
    train_y: torch.Tensor  # [n_train, T]
    val_x: torch.Tensor
    val_y: torch.Tensor
    seed: int

    @property
    def n_train(self) -> int:
        return self.train_x.shape[0]


def make_dataset(
    seed: int = 0,
    n_sequences: int = N_SEQUENCES,
    train_fraction: float = TRAIN_FRACTION,
    seq_len: int = SEQ_LEN,
    vocab: int = VOCAB,
) -> HistogramData:
    """Sample `n_sequences` uniform sequences, drop duplicates, shuffle and split (seeded)."""
    if n_sequences < 2:
        raise ValueError(f"n_sequences must be >= 2, got {n_sequences}")
    if not 0.0 < train_fraction < 1.0:
        raise ValueError(f"train_fraction must lie in (0, 1), got {train_fraction}")
    if seq_len < 1 or vocab < 1 or vocab > len(LETTERS):
        raise ValueError(f"seq_len must be >= 1 and vocab in [1, {len(LETTERS)}]")
    rng = np.random.default_rng(seed_for("data", seed))
    seqs = rng.integers(0, vocab, size=(n_sequences, seq_len))
    _, first = np.unique(seqs, axis=0, return_index=True)
    seqs = seqs[np.sort(first)]
    seqs = seqs[rng.permutation(len(seqs))]
    x = torch.from_numpy(seqs).long()
    y = histogram_labels(x)
    n_train = int(round(train_fraction * len(x)))
    if not 0 < n_train < len(x):
        raise ValueError(
            f"n_sequences must leave both splits non-empty ({len(x)} distinct sequences)"
        )
    return HistogramData(x[:n_train], y[:n_train], x[n_train:], y[n_train:], seed)
