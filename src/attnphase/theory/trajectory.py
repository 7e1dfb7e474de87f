"""Iterates of the state-evolution map from given overlaps (docs/theory.md §7.2-§7.4), on every
scrambling of a QMC method, with nothing pinned and no frame imposed: the theory's side of a
GAMP run's trace (`attnphase.gamp.trace`).

Damping mixes successive overlaps, o <- (1 - damping) map(o) + damping o (the convention of
`theory.iterate`). Each run ends early, with the reason, where the map is undefined or the
overlaps leave the admissible set.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ops.array import attention, target
from ..params import ModelParams
from . import overlaps as ge
from .method import QMC
from .qmc.channel import QMCChannel
from .qmc.engine import Layout, QMCMap, make_channels


@dataclass(frozen=True)
class Trajectory:
    """One scrambling's iterates: packed overlaps (`unpack` reads them), the test error at
    each (no prox, §7.4) and "ok" or why it ended early."""

    overlaps: list[np.ndarray]
    test_errors: list[float]
    status: str


def free_test_error(channel: QMCChannel, o: ge.MatrixOverlaps, p: ModelParams) -> float:
    """eps_g at overlaps o on the channel's points (§7.4; no prox)."""
    w, hstar = channel.fields(o, p.C_array, p.sigma)
    T = target(hstar, p.omega, p.A_array)
    return float(0.5 * p.sigma**2 * ((attention(w) - T) ** 2).sum((-1, -2)).mean())


def _trajectory(fmap: QMCMap, layout: Layout, start, iterations, damping, p) -> Trajectory:
    xs, errs = [layout.pack(start)], [free_test_error(fmap.channel, start, p)]
    for t in range(iterations):
        o = layout.unpack(xs[-1])
        try:
            h, _ = fmap.evaluate(o)  # hats (§7.2)
            new = ge.overlaps(h, sigma=p.sigma, lam=p.lam, rho=fmap.rho)  # overlaps (§7.3)
        except ArithmeticError as err:
            return Trajectory(xs, errs, f"map undefined after iterate {t}: {err}")
        x = (1 - damping) * layout.pack(new) + damping * xs[-1]
        if not (np.all(np.isfinite(x)) and ge.admissible(layout.unpack(x), fmap.rho)):
            return Trajectory(xs, errs, f"overlaps not admissible after iterate {t}")
        xs.append(x)
        errs.append(free_test_error(fmap.channel, layout.unpack(x), p))
    return Trajectory(xs, errs, "ok")


def trajectories(
    alpha: float,
    p: ModelParams,
    start: ge.MatrixOverlaps,
    iterations: int,
    damping: float,
    method: QMC,
) -> tuple[list[Trajectory], Layout]:
    """`iterations` (damped) steps of the map from `start` on each scrambling of `method`, and
    the layout that unpacks their overlaps (tied model: q, M, theta, V)."""
    layout = Layout(p.rank, p.K, p.teacher_rank)
    keep = np.ones(layout.pack(start).size)
    runs = [
        _trajectory(QMCMap(alpha, p, ch, keep), layout, start, iterations, damping, p)
        for ch in make_channels(p, method)
    ]
    return runs, layout
