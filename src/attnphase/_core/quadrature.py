"""Gauss-Hermite nodes for expectations over standard normal variables (docs/theory.md §6)."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numpy.polynomial.hermite_e import hermegauss


@lru_cache(maxsize=64)
def gauss_hermite(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights with sum_i w_i g(x_i) ~ E[g(X)], X ~ N(0, 1).

    The nodes are symmetrised exactly (x_i = -x_{n-1-i}) so that the odd symmetries of the
    state-evolution integrands (docs/theory.md §6) hold to the last bit on the product grid.
    """
    if n < 1:
        raise ValueError(f"quadrature order must be >= 1, got {n}")
    x, w = hermegauss(n)
    x = 0.5 * (x - x[::-1])
    w = 0.5 * (w + w[::-1])
    w = w / w.sum()
    x.setflags(write=False)
    w.setflags(write=False)
    return x, w
