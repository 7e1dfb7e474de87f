"""The one algorithm every backend of `attnphase.prox` runs (docs/theory.md §7.1, §8, §8.1): its
settings, the probe points of the coarse search and the result record.

Safeguarded Newton on F: the Hessian's eigenvalues replaced by max(|lambda|, FLOOR
lambda_min(V^{-1})) (saddle-free), Armijo backtracking (ARMIJO, at most BACKTRACKS halvings),
the pure Newton step near a non-degenerate minimum (step below NEWTON_ZONE (1 + |h|): Armijo
cannot resolve the last digits of F there), from every start; the lowest F wins.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import torch

ARMIJO = 1e-4
BACKTRACKS = 30
NEWTON_ZONE = 1e-4
XTOL = 1e-13  # a step below XTOL (1 + |h|) ends the run
FLOOR = 1e-2
# coarse-search points of the state evolution and GAMP (§8.1; tests/prox/test_algorithm.py)
PROBE = 64


@dataclass(frozen=True)
class ProxResult:
    """h: (N, L, r) global minimisers among the starts; envelope: (N,) F(h); start: (N,) index
    of the winning start (S + k for the k-th start a backend adds to the S given ones: probe
    points, or the closed form's analytic starts as S); stationary: (N,) whether the winner's
    gradient met the tolerance."""

    h: torch.Tensor
    envelope: torch.Tensor
    start: torch.Tensor
    stationary: torch.Tensor


def ball_points(n: int, L: int, r: int) -> np.ndarray:
    """n fixed points spread over the unit ball of R^{L x r} (scrambled Sobol, seed 0, mapped
    to the ball by radius u^(1/(L r)) along normalised Gaussian directions); shape (n, L, r)."""
    dim = L * r
    if n == 0:
        return np.zeros((0, L, r))
    from scipy.stats import norm, qmc

    u = qmc.Sobol(dim + 1, scramble=True, seed=0).random(n)
    u = np.clip(u, 1e-12, 1 - 1e-12)
    g = norm.ppf(u[:, :dim])
    g /= np.linalg.norm(g, axis=1, keepdims=True)
    return (g * u[:, dim:] ** (1.0 / dim)).reshape(n, L, r)
