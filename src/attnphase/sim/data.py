"""Data of the finite-d model (THEORY.md §1): tokens, positional encodings, teacher, targets.

Every random draw comes from its own seeded generator (teacher, training data, test data,
initialisation), derived from a base seed and the role, so identical seeds give identical
numbers and changing one role's seed leaves the others unchanged.
"""

from __future__ import annotations

import hashlib
import math

import torch

from .models import target_matrix

ROLES = ("teacher", "train", "test", "init")


def generator(seed: int, role: str, device: torch.device) -> torch.Generator:
    """A torch generator for (seed, role), independent across roles."""
    if role not in ROLES:
        raise ValueError(f"role must be one of {ROLES}, got {role!r}")
    digest = hashlib.sha256(f"attnphase:{role}:{int(seed)}".encode()).digest()
    g = torch.Generator(device=device)
    g.manual_seed(int.from_bytes(digest[:8], "little") & ((1 << 63) - 1))
    return g


def default_positions(L: int, d: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """p_l = c_l 1_d / sqrt(d), c evenly spaced from +1 to -1 (L=2: p_1 = -p_2 = 1_d/sqrt d)."""
    c = torch.linspace(1.0, -1.0, L, dtype=dtype, device=device) if L > 1 else torch.ones(1)
    return (
        c[:, None].to(dtype=dtype, device=device)
        * torch.ones(L, d, dtype=dtype, device=device)
        / math.sqrt(d)
    )


def sample_tokens(
    n: int, L: int, d: int, sigma: float, gen: torch.Generator, dtype, device
) -> torch.Tensor:
    """n samples of L tokens with i.i.d. N(0, sigma^2) entries, [n, L, d]."""
    return sigma * torch.randn(n, L, d, generator=gen, dtype=dtype, device=device)


def targets(x: torch.Tensor, teacher: torch.Tensor, omega: float, A: torch.Tensor) -> torch.Tensor:
    """y = T(x Q*/sqrt d) x for tokens x [B, n, L, d] and teachers [B, d, t]."""
    d = x.shape[-1]
    hstar = torch.einsum("bnld,bdt->bnlt", x, teacher) / math.sqrt(d)
    return target_matrix(hstar, omega, A) @ x
