"""Data of the finite-d model (docs/theory.md §1): tokens, positional encodings, teacher, targets.

Every random draw comes from its own seeded generator (teacher, training data, test data,
initialisation, and for Gaussian-mixture tokens the cluster means and the training and test
labels), derived from a base seed and the role, so identical seeds give identical numbers and
changing one role's seed leaves the others unchanged.
"""

from __future__ import annotations

import hashlib
import math

import numpy as np
import torch

from ..ops.tensor import target
from ..params import default_encodings

ROLES = ("teacher", "train", "test", "init", "clusters", "train_labels", "test_labels")


def generator(seed: int, role: str, device: torch.device) -> torch.Generator:
    """A torch generator for (seed, role), independent across roles."""
    if role not in ROLES:
        raise ValueError(f"role must be one of {ROLES}, got {role!r}")
    digest = hashlib.sha256(f"attnphase:{role}:{int(seed)}".encode()).digest()
    g = torch.Generator(device=device)
    g.manual_seed(int.from_bytes(digest[:8], "little") & ((1 << 63) - 1))
    return g


def encoding_basis(d: int, K: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """The orthonormal directions u_1..u_K of the positional encodings (docs/theory.md §7), as the
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
    """p_l = sum_k C_lk u_k for coefficients C (L x K), rows of an L x d matrix (docs/theory.md §7;
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


def cluster_means(K: int, d: int, norm: float, gen: torch.Generator, dtype, device) -> torch.Tensor:
    """The K cluster means of Gaussian-mixture tokens (docs/theory.md §10), [K, d]: the vertices
    of a regular simplex centred at 0 in a random (K-1)-dimensional subspace,
    mu_k = norm sqrt(K/(K-1)) (o_k - mean_j o_j) with o_1..o_K the orthonormal columns of the QR
    factor of a d x K N(0, 1) matrix. So sum_k mu_k = 0 (with uniform labels E[x] = 0, as in
    the tied model: the positions stay the only mean) and |mu_k| = norm for every k (for
    K >= 3 independently drawn vectors, centred, would not have equal norms). K = 1: the zero
    mean, and nothing is drawn. Computed in float64, then cast to dtype."""
    if K == 1:
        return torch.zeros(1, d, dtype=dtype, device=device)
    if not 2 <= K <= d:
        raise ValueError(f"clusters: need 1 <= K <= d clusters, got K = {K}, d = {d}")
    G = torch.randn(d, K, generator=gen, dtype=torch.float64, device=device)
    basis, _ = torch.linalg.qr(G)  # d x K, orthonormal columns o_k
    mu = norm * math.sqrt(K / (K - 1)) * (basis - basis.mean(dim=1, keepdim=True)).T
    return mu.to(dtype)


def sample_labels(n: int, L: int, K: int, rho: float, gen: torch.Generator, device) -> torch.Tensor:
    """Cluster labels (0..K-1) of n sentences, [n, L]: a Markov chain over positions, c_1
    uniform and c_{l+1} = c_l with probability rho, otherwise a fresh uniform label (which may
    equal c_l). Every c_l is uniform and P(c_l = a, c_{l+1} = b) = (rho [a = b] + (1 - rho)/K)/K,
    so P(c_{l+1} = c_l) = rho + (1 - rho)/K and the cross-covariance of the one-hot vectors
    e_{c_l}, e_{c_{l+1}} is rho times their covariance diag(1/K) - 1/K^2: the Pearson
    correlation of neighbouring labels (of each indicator [c = a], and pooled over a) is rho,
    rho^j at lag j."""
    c = torch.randint(K, (n, L), generator=gen, device=device)
    stay = torch.rand(n, max(L - 1, 0), generator=gen, dtype=torch.float64, device=device) < rho
    for pos in range(1, L):
        c[:, pos] = torch.where(stay[:, pos - 1], c[:, pos - 1], c[:, pos])
    return c


def targets(
    x: torch.Tensor, teacher: torch.Tensor, omega: float, A: torch.Tensor, causal: bool = False
) -> torch.Tensor:
    """y = T(x Q*/sqrt d) x for tokens x [B, n, L, d] and teachers [B, d, t]; causal: the
    teacher's softmax masked (`Causal(target=True)`)."""
    d = x.shape[-1]
    hstar = torch.einsum("bnld,bdt->bnlt", x, teacher) / math.sqrt(d)
    return target(hstar, omega, A, causal) @ x
