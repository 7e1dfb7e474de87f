"""Correlated tokens in the state evolution (docs/theory-mixtures.md §2; docs/theory.md §10, Result
C.2).

Tokens x_l = mu_{c_l} + sigma z_l with K cluster means of norm N = O(1) (a centred regular
simplex in a random subspace, as `attnphase.sim.data.cluster_means`) and labels c_1..c_L a
Markov chain (c_1 uniform; c_{l+1} = c_l with probability rho, else a fresh uniform label, as
`attnphase.sim.data.sample_labels`). In the high-dimensional limit the means are K - 1 further
orthonormal directions next to the positional ones, and a label sequence c enters the channel
only through the encodings

    C(c) = [C, N B_{c_1}; ...; C, N B_{c_L}]      (L x (K_pos + K - 1); theory-mixtures §2)

with B (K x (K - 1)) the unit-norm simplex vertices in an orthonormal basis of their span.
Every expectation of docs/theory.md §7.2-§7.4 becomes an average over c with its chain probability;
the mean rows of M are m_mu = U_mu^T Q / sqrt(d), and mu_k^T Q / sqrt(d) = N B_k m_mu.
"""

from __future__ import annotations

import itertools

import numpy as np

from ...params import Mixture


def simplex_vertices(K: int) -> np.ndarray:
    """K x (K - 1): the unit-norm vertices of a regular simplex centred at 0, in the Helmert
    basis of the plane sum = 0 (B B^T = K/(K-1) (I - 1 1^T / K); K = 2 gives (+1, -1))."""
    H = np.zeros((K, K - 1))
    for j in range(1, K):
        H[:j, j - 1] = 1.0 / np.sqrt(j * (j + 1))
        H[j, j - 1] = -j / np.sqrt(j * (j + 1))
    return H * np.sqrt(K / (K - 1))


def label_law(K: int, L: int, rho: float) -> tuple[np.ndarray, np.ndarray]:
    """All K^L label sequences (rows) and their probabilities under the chain: c_1 uniform,
    P(c_{l+1} = b | c_l = a) = rho [a = b] + (1 - rho)/K."""
    seqs = np.array(list(itertools.product(range(K), repeat=L)), dtype=int)
    step = rho * np.eye(K) + (1.0 - rho) / K
    prob = np.full(len(seqs), 1.0 / K)
    for pos in range(1, L):
        prob = prob * step[seqs[:, pos - 1], seqs[:, pos]]
    return seqs, prob


def mixture_encodings(C: np.ndarray, mixture: Mixture) -> tuple[np.ndarray, np.ndarray]:
    """The encodings C(c) of every label sequence, (K^L, L, K_pos + K - 1), and the
    sequences' probabilities (docs/theory-mixtures.md §2)."""
    L = C.shape[0]
    seqs, prob = label_law(mixture.clusters, L, mixture.label_correlation)
    means = mixture.cluster_norm * simplex_vertices(mixture.clusters)[seqs]
    return np.concatenate([np.broadcast_to(C, (len(seqs), *C.shape)), means], axis=-1), prob


def cluster_overlaps(M: np.ndarray, mixture: Mixture) -> np.ndarray:
    """mu_k^T Q / sqrt(d) = N B_k m_mu for every cluster k (K x r), from the full M whose
    last K - 1 rows are m_mu (the simulations' `cluster_m`)."""
    m_mu = np.asarray(M)[-mixture.directions :]
    return mixture.cluster_norm * simplex_vertices(mixture.clusters) @ m_mu
