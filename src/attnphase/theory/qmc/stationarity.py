"""Stationarity of Phi in the overlaps (docs/theory.md §7.5): the real test of the hats.

At fixed hats, Phi of §7.4 is stationary in (q, M, theta, V) exactly when
    Vhat = 2 alpha dE[M]/dq,   qhat = -2 alpha dE[M]/dV,
    Mhat = -alpha dE[M]/dM,    thetahat = -alpha dE[M]/dtheta,
with E[M] the channel's mean Moreau envelope (§7.1) as a function of the overlaps. The hats of
§7.2 (direct forms, Stein Mhat) are compared with central finite differences of alpha E[M] on
the same quasi-Monte Carlo points (common random numbers: the envelope is continuous in the
overlaps, so the differences are smooth). For the symmetric q and V, element (i, j) is the
derivative along (e_i e_j^T + e_j e_i^T)/2, which pairs with the symmetric hat's (i, j) entry.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TypedDict

import numpy as np

from ...params import ModelParams
from .. import overlaps as ge
from .channel import QMCChannel

# (overlap, hat, factor): hat = factor * alpha * dE[M]/d(overlap)
_PAIRS = (("q", "Vhat", 2.0), ("V", "qhat", -2.0), ("M", "Mhat", -1.0), ("theta", "thetahat", -1.0))


@dataclass(frozen=True)
class StationarityCheck:
    """hats: the §7.2 hats at the overlaps; derivatives: the same from finite differences of
    alpha E[M] (dicts keyed qhat, Mhat, thetahat, Vhat)."""

    hats: dict[str, np.ndarray]
    derivatives: dict[str, np.ndarray]

    def deviation(self, name: str) -> float:
        """max |hat - derivative| / max(|hat|_max, |derivative|_max, 1e-12)."""
        a, b = self.hats[name], self.derivatives[name]
        scale = max(np.abs(a).max(), np.abs(b).max(), 1e-12)
        return float(np.abs(a - b).max() / scale)


def _directions(name: str, shape: tuple[int, int]):
    """(index, unit perturbation) pairs: symmetric ones for q and V, elementary otherwise."""
    for i in range(shape[0]):
        for j in range(shape[1]):
            if name in ("q", "V") and j < i:
                continue
            e = np.zeros(shape)
            e[i, j] += 0.5 if name in ("q", "V") else 1.0
            if name in ("q", "V"):
                e[j, i] += 0.5
            yield (i, j), e


class _ModelInputs(TypedDict):
    """The model's keyword arguments of `QMCChannel.moments`."""

    C: np.ndarray
    sigma: float
    omega: float
    A: np.ndarray


def check_stationarity(
    alpha: float,
    p: ModelParams,
    o: ge.MatrixOverlaps,
    channel: QMCChannel,
    *,
    step: float = 1e-4,
) -> StationarityCheck:
    """The hats at o and alpha times the finite-difference gradient of E[M] (central, relative
    step `step` of each block's scale) on `channel`'s points."""
    rho = p.sigma**2 * np.eye(p.teacher_rank)
    kw: _ModelInputs = {"C": p.C_array, "sigma": p.sigma, "omega": p.omega, "A": p.A_array}
    h = ge.hats(channel.moments(o, **kw), o, alpha=alpha, rho=rho)

    def envelope(x: ge.MatrixOverlaps) -> float:
        return channel.moments(x, **kw).M

    hats, derivatives = {}, {}
    for name, hat, factor in _PAIRS:
        base = getattr(o, name)
        eps = step * max(np.abs(base).max(), np.abs(o.q).max() ** 0.5, 1e-2)
        grad = np.zeros_like(base)
        for (i, j), e in _directions(name, base.shape):
            up = envelope(dataclasses.replace(o, **{name: base + eps * e}))
            down = envelope(dataclasses.replace(o, **{name: base - eps * e}))
            grad[i, j] = (up - down) / (2 * eps)
            if name in ("q", "V"):
                grad[j, i] = grad[i, j]
        hats[hat] = getattr(h, hat)
        derivatives[hat] = factor * alpha * grad
    return StationarityCheck(hats=hats, derivatives=derivatives)
