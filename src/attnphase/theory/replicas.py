"""A method's replicas (docs/theory.md §5, §7.6): the deterministic integrations of the state
evolution that a transition is found on and compared across, whatever the method.

Gauss-Hermite has two, the main order and the check order, whose difference is the error; QMC
one per scrambling, the branches solved on the same points so that their differences are smooth
in alpha, whose spread is the error (`Method.combine`). `scan_replicas` follows branches along a
grid of alpha on every replica of a method and returns them with the linear baseline; the
transitions and the scaling study work on these objects only.
"""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..params import ModelParams
from .attention import attention_map
from .baseline import linear_test_error, linear_test_error_qmc
from .branches import on_own_branch
from .engine import learning_curve, solve
from .method import QMC, GaussHermite, Method
from .overlaps import MatrixOverlaps
from .qmc.channel import QMCChannel
from .qmc.engine import Solution, make_channels, qmc_curve, solve_one, solve_qmc
from .result import NonConvergenceWarning, TheoryResult

POSITIONAL = "positional"
SCRAMBLING = QMC()  # the on-branch test of one scrambling (`QMC.significant`, no error bar)


class Replica(ABC):
    """One deterministic integration of the state evolution: the grid's fixed points of a
    branch, a fixed point warm-started from one of them, whether a fixed point is on its branch
    and its observables (train_loss, test_error)."""

    @abstractmethod
    def curve(self, alphas: list[float], branch: str) -> list[Any]: ...

    @abstractmethod
    def solve_near(self, alpha: float, near: Any, branch: str) -> Any: ...

    @abstractmethod
    def on_branch(self, point: Any, branch: str) -> bool: ...

    @abstractmethod
    def observable(self, point: Any, key: str) -> float: ...

    @abstractmethod
    def overlaps(self, point: Any) -> MatrixOverlaps:
        """The fixed point's overlaps as matrices."""


class GaussHermiteReplica(Replica):
    """The exact channel at one order: fixed points are `TheoryResult`s, on their branch when
    converged and of that `kind`."""

    def __init__(self, p: ModelParams, method: GaussHermite):
        self.p, self.method = p, method

    def curve(self, alphas, branch):
        return learning_curve(alphas, self.p, branch=branch, method=self.method, errors=False)

    def solve_near(self, alpha, near, branch):
        """Solve on near's branch from its overlaps; not converging there leaves the branch."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NonConvergenceWarning)
            start = (near.q, near.m, near.V, near.theta)
            return solve(
                alpha, self.p, start=start, method=self.method, branch=branch, errors=False
            )

    def on_branch(self, point, branch):
        return on_own_branch(point, branch)

    def observable(self, point, key):
        return getattr(point, key)

    def overlaps(self, point):
        return MatrixOverlaps(*(np.array([[x]]) for x in (point.q, point.m, point.theta, point.V)))


class ScramblingReplica(Replica):
    """Scrambling k of a QMC method: the grid's fixed points are that scrambling's `Solution`s
    of curves solved on all scramblings at once (`curves`); `engine` names the engine branch
    that solves each of the scan's branches (`scan_replicas`)."""

    def __init__(
        self,
        p: ModelParams,
        channel: QMCChannel,
        k: int,
        curves: dict,
        engine: dict[str, str] | None = None,
    ):
        self.p, self.channel, self.k, self.curves = p, channel, k, curves
        self.engine = engine or {}  # the engine branch each scanned branch is solved on

    def curve(self, alphas, branch):
        return [
            r.solutions[self.k] if self.k < len(r.solutions) else None for r in self.curves[branch]
        ]

    def solve_near(self, alpha, near, branch):
        return solve_one(
            alpha, self.p, near.overlaps, self.engine.get(branch, branch), self.channel
        )

    def on_branch(self, point: Solution | None, branch):
        if point is None or point.overlaps is None or not point.converged:
            return False
        o = point.overlaps
        return SCRAMBLING.significant(o.theta if branch == "semantic" else o.M)

    def observable(self, point, key):
        return point.observables[key]

    def overlaps(self, point):
        return point.overlaps


def scramblings(p: ModelParams, method: QMC) -> list[QMCChannel]:
    """The points of every scrambling of `method` for model `p` (seeds seed, seed + 1, ...)."""
    return make_channels(p, method)


@dataclass
class ReplicaScan:
    """Branches followed along `alphas` on every replica of `method` (`scan_replicas`), with the
    linear baseline's test error and its integration error; `solve` finds a further fixed
    point on the same integration (QMC: the same points)."""

    p: ModelParams
    method: Method
    replicas: list[Replica]
    eps_lin: float
    eps_lin_err: float
    channels: list[QMCChannel] | None = None

    def solve(self, alpha: float, start: MatrixOverlaps, branch: str) -> TheoryResult:
        """The fixed point at alpha from `start` on `branch`'s manifold (any other name pins
        nothing), on this QMC scan's points and prox warm starts."""
        if self.channels is None or not isinstance(self.method, QMC):
            raise ValueError("solve: a scan of scramblings (QMC) solves on its own points")
        return solve_qmc(alpha, self.p, start, branch, self.method, channels=self.channels)


def scan_engine(p: ModelParams, positional: str | None = None) -> dict[str, str]:
    """The engine branch that solves each of a scan's branches: the attention map's
    `scan_branch`, the positional one `positional` where given."""
    amap = attention_map(p.variant)
    return {
        "semantic": amap.scan_branch("semantic"),
        POSITIONAL: positional or amap.scan_branch(POSITIONAL),
    }


def scan_replicas(
    p: ModelParams,
    alphas: list[float],
    method: Method,
    *,
    positional: str | None = None,
    progress: bool = False,
) -> ReplicaScan:
    """The semantic and positional branches along `alphas` on every replica of `method`:
    Gauss-Hermite at its order and at its check order (followed lazily, as a replica's curve is
    asked for), QMC on every scrambling at once (the same points for both branches). Each is
    solved on the engine branch the model's attention map names for it (`scan_branch`: the
    specialised point for several heads; a refusal for rotary positions), the positional one on
    `positional` where given (the simplex branch for the simplex encodings)."""
    if isinstance(method, GaussHermite):
        replicas: list[Replica] = [
            GaussHermiteReplica(p, method),
            GaussHermiteReplica(p, method.at_order(method.check_order)),
        ]
        return ReplicaScan(p, method, replicas, linear_test_error(p), 0.0)
    assert isinstance(method, QMC)
    engine = scan_engine(p, positional)
    channels = scramblings(p, method)
    curves = {
        b: qmc_curve(alphas, p, e, method, channels=channels, progress=progress)
        for b, e in engine.items()
    }
    eps_lin, eps_lin_err = linear_test_error_qmc(p)
    replicas = [
        ScramblingReplica(p, channel, k, curves, engine) for k, channel in enumerate(channels)
    ]
    return ReplicaScan(p, method, list(replicas), eps_lin, eps_lin_err, channels)


def scrambling_scan(
    p: ModelParams, alphas: Sequence[float], method: QMC, channel: QMCChannel
) -> ScramblingReplica:
    """Both branches along `alphas` on one given scrambling (its points and prox warm starts
    shared by both)."""
    alist = list(alphas)
    engine = scan_engine(p)
    curves = {b: qmc_curve(alist, p, e, method, channels=[channel]) for b, e in engine.items()}
    return ScramblingReplica(p, channel, 0, curves, engine)
