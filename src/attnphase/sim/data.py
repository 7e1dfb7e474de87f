"""Data of the finite-d model (THEORY.md §1): tokens, positional encodings, teacher, targets.

Every random draw comes from its own seeded generator (teacher, training data, test data,
initialisation), derived from a base seed and the role, so identical seeds give identical
numbers and changing one role's seed leaves the others unchanged.
"""

from __future__ import annotations

import hashlib
import math

import numpy as np
import torch

from ..params import default_encodings
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


def encoding_basis(d: int, K: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """The orthonormal directions u_1..u_K of the positional encodings (THEORY.md §7), as the
    columns of a d x K matrix U: u_1 = 1_d/sqrt(d) and, for k >= 2, the DCT-II cosines
    u_k[i] = sqrt(2/d) cos(pi (k - 1)(i + 1/2)/d), i = 0..d-1 (orthonormal and orthogonal to
    1_d). The choice is deterministic and draws nothing from any seed; any other orthonormal
    completion of u_1 gives the same law of every result, since tokens, teacher and random
    starts are isotropic and the positional start lies along u_1."""
    if not 1 <= K <= d:
        raise ValueError(f"encodings: need 1 <= K <= d directions, got K = {K}, d = {d}")
    i = torch.arange(d, dtype=torch.float64)
    k = torch.arange(K, dtype=torch.float64)
    U = math.sqrt(2.0 / d) * torch.cos(math.pi * (i[:, None] + 0.5) * k[None, :] / d)
    U[:, 0] = 1.0 / math.sqrt(d)
    return U.to(dtype=dtype, device=device)


def encoded_positions(C, d: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """p_l = sum_k C_lk u_k for coefficients C (L x K), rows of an L x d matrix (THEORY.md §7;
    u_k from `encoding_basis`). The u_1 part is computed as C_l1 1_d/sqrt(d)."""
    C = torch.as_tensor(np.asarray(C, dtype=float), dtype=dtype, device=device)
    L, K = C.shape
    P = C[:, :1] * torch.ones(L, d, dtype=dtype, device=device) / math.sqrt(d)
    if K > 1:
        P = P + C[:, 1:] @ encoding_basis(d, K, dtype, device)[:, 1:].T
    return P


def default_positions(L: int, d: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """p_l = c_l 1_d / sqrt(d), c evenly spaced from +1 to -1 (L=2: p_1 = -p_2 = 1_d/sqrt d):
    the positions of `attnphase.params.default_encodings(L)`."""
    return encoded_positions(default_encodings(L), d, dtype, device)


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
