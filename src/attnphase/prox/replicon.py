"""The replicon factor of the resolvent (docs/theory.md §9): how the prox's Jacobian dh_hat/dw,
whitened by the width V, deviates from the identity, per node."""

from __future__ import annotations

import numpy as np

from ..ops.array import sym_sqrt


def whitened_jacobian(jac: np.ndarray, V: np.ndarray, L: int) -> np.ndarray:
    """Jt = W^{-1} J W with W = I_L (x) V^{1/2}, for J of shape (N, L r, L r)."""
    W = np.kron(np.eye(L), sym_sqrt(V))
    Wi = np.kron(np.eye(L), sym_sqrt(V, -0.5))
    return Wi @ jac @ W


def replicon_terms(jac: np.ndarray, V: np.ndarray, L: int) -> np.ndarray:
    """||Jt - I||_F^2 / r per node (docs/theory.md §9), shape (N,)."""
    r = V.shape[0]
    E = whitened_jacobian(jac, V, L) - np.eye(L * r)
    return (E * E).sum((-1, -2)) / r
