"""How the channel's Gaussian expectations are integrated: one object that travels as one
argument through solves, curves, transitions, sweeps and figures.

`GaussHermite` is the exact L = 2 channel (tied, r = t = 1, C = (+1, -1)): a product
Gauss-Hermite grid of `order` = (n_xi, n_y) nodes, with `check_order` the second order whose
difference estimates the error of a transition. `QMC` is randomised quasi-Monte Carlo for any
model: `randomisations` independent scramblings (seeds `seed`, `seed` + 1, ...) of `points`
Sobol points each, whose spread is the integration error. `"auto"` picks Gauss-Hermite where it
applies and QMC otherwise. Both implement `Method`, the one protocol the layers above the theory
use: they never ask which method they hold.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

import numpy as np

from .._core.device import check_device
from .._core.memory import check_memory
from ..params import ModelParams, check_damping, check_int, check_positive
from .branches import BRANCHES, EXACT_BRANCHES

DEFAULT_ORDER = (64, 24)  # Gauss-Hermite (n_xi, n_y), from studies/convergence.py
CHECK_ORDER = (48, 16)  # the second order of a transition's error estimate
DEFAULT_POINTS = 8192  # Sobol points per scrambling, before the antithetic images
DEFAULT_RANDOMISATIONS = 4


# the fewest nodes per axis: at 2 or 3 teacher (y) nodes the semantic solve at omega 0.3 lands
# on the trivial point and calls it converged, and so at 2 student (xi) nodes; from 3 xi nodes
# on alpha 1's theta is within 3% of (64, 24). At omega = 1 nothing depends on the teacher's
# field, and n_y = 2 is exact there (`resolve_method` checks n_y against the model)
MIN_ORDER = 4
# the fewest Sobol points per scrambling: at 4 points the positional branch's test error at
# alpha 2 lay 5.6 of its error bars from the exact engine's
MIN_POINTS = 64


def check_order(name: str, order) -> tuple[int, int]:
    """An int >= MIN_ORDER (both orders) or a pair (n_xi, n_y) of ints, n_xi >= MIN_ORDER and
    n_y >= 2; ValueError names `name`."""
    if isinstance(order, int):
        order = (order, order)
    try:
        ok = len(order) == 2 and all(int(n) == n for n in order)
        ok = ok and order[0] >= MIN_ORDER and order[1] >= 2
    except TypeError:
        ok = False
    if not ok:
        raise ValueError(
            f"{name} must be an int >= {MIN_ORDER} or a pair (n_xi, n_y) of ints with n_xi >= "
            f"{MIN_ORDER} and n_y >= 2, got {order!r}"
        )
    n_xi, n_y = int(order[0]), int(order[1])
    # the product grid's warm starts: up to n_xi^2 n_y^2 nodes of 2 float64 each (§5)
    check_memory(name, 16.0 * n_xi**2 * n_y**2, f"the grid of order ({n_xi}, {n_y})")
    return n_xi, n_y


ESTIMATORS = ("ibp", "direct")  # the exact channel's forms of the conjugates (§3, §6)


# the loosest tolerance that still certifies a fixed point: measured at alpha 1 (semantic,
# order (24, 8)), a solve to 1e-3 reports theta within 2.3e-5 of the fixed point, one to 1e-2
# 2% off it, one to 10 its own start (the test passes at the first iterate)
MAX_TOL = 1e-3


def check_tol(tol: float) -> float:
    """A fixed point's tolerance in (0, MAX_TOL] (the state evolution's and GAMP's); ValueError
    naming `tol` otherwise."""
    tol = check_positive("tol", tol)
    if tol > MAX_TOL:
        raise ValueError(
            f"tol must be at most {MAX_TOL:g} (a looser test does not certify a fixed point), "
            f"got {tol!r}"
        )
    return tol


def _check_solver(m) -> None:
    """Validates (in place) the solver options every method carries: tol in (0, MAX_TOL],
    damping, anderson, max_iter; ValueError names the option."""
    object.__setattr__(m, "tol", check_tol(m.tol))
    object.__setattr__(m, "damping", check_damping(m.damping))
    object.__setattr__(m, "anderson", check_int("anderson", m.anderson, minimum=0))
    object.__setattr__(m, "max_iter", check_int("max_iter", m.max_iter))


class Method(Protocol):
    """What every integration method gives the layers above the theory: its name and settings,
    the replicas it integrates on and how their values combine into a value and an error, the
    on-branch test, the branches it solves and a rough cost. `GaussHermite` and `QMC` implement
    it; nothing above `theory/` asks which one it holds."""

    name: ClassVar[str]  # the one spelling everywhere: the CLI's --engine, tables, stores
    on_branch: ClassVar[float]

    # the fixed-point solver's options (`theory.iterate`): relative tolerance, damping (the
    # weight of the old iterate), Anderson history, iterations per stage
    @property
    def tol(self) -> float: ...

    @property
    def damping(self) -> float: ...

    @property
    def anderson(self) -> int: ...

    @property
    def max_iter(self) -> int: ...

    # the reported value is the mean over the replicas (QMC) rather than the first replica's
    # own, checked against a second accuracy (Gauss-Hermite)
    averages_replicas: ClassVar[bool]
    branches: ClassVar[tuple[str, ...]]

    def replicas(self) -> range:
        """The independent deterministic integrations a line is followed on."""
        ...

    def combine(self, values: Sequence[float]) -> tuple[float, float, int]:
        """(value, error, how many replicas have a finite value) of one quantity given per
        replica (Gauss-Hermite: the main order's and the check order's)."""
        ...

    def significant(self, value, error=0.0) -> bool:
        """Whether an order parameter (theta or M, any shape) is non-zero: above `on_branch`,
        and for QMC also above three standard errors of the mean over scramblings."""
        ...

    def settings(self) -> dict[str, Any]:
        """The integration's settings (not the solver's options) as JSON-ready numbers: what a
        stored line point's id is made of, read back by `pop_method`."""
        ...

    def columns(self) -> dict[str, Any]:
        """A flat record of the method: its name and settings (orders as n_xi, n_y, ...)."""
        ...

    def seconds(self, p: ModelParams) -> float:
        """A rough duration of one cold fixed point of `p` (warnings and refusals)."""
        ...


@dataclass(frozen=True)
class GaussHermite:
    """The exact L = 2 channel on a Gauss-Hermite grid of `order` = (n_xi, n_y) nodes;
    `check_order` is the second order of the transitions' error estimate; the solver's options
    (`Method`) and `estimator`, the forms of the conjugates ("ibp" §6, "direct" §3)."""

    order: tuple[int, int] = DEFAULT_ORDER
    check_order: tuple[int, int] = CHECK_ORDER
    tol: float = 1e-6
    damping: float = 0.8
    anderson: int = 5
    max_iter: int = 300
    estimator: str = "ibp"
    name: ClassVar[str] = "gauss-hermite"
    # the order parameter (|theta|, |m|) of a fixed point on its branch exceeds this: the
    # solver's tolerance, far above the quadrature's rounding
    on_branch: ClassVar[float] = 1e-6
    averages_replicas: ClassVar[bool] = False
    branches: ClassVar[tuple[str, ...]] = EXACT_BRANCHES

    def __post_init__(self) -> None:
        object.__setattr__(self, "order", check_order("order", self.order))
        object.__setattr__(self, "check_order", check_order("check_order", self.check_order))
        _check_solver(self)
        if self.estimator not in ESTIMATORS:
            raise ValueError(f"estimator must be one of {ESTIMATORS}, got {self.estimator!r}")

    def at_order(self, order) -> GaussHermite:
        """The same method at another order."""
        return dataclasses.replace(self, order=order)

    def replicas(self) -> range:
        return range(1)

    @property
    def estimates_errors(self) -> bool:
        """Whether the change between the two orders measures an error: not when they are
        equal (it would be 0 whatever the quadrature's error)."""
        return self.check_order != self.order

    def combine(self, values: Sequence[float]) -> tuple[float, float, int]:
        main, check = values
        found = sum(math.isfinite(v) for v in values)
        if not math.isfinite(main):
            return math.nan, math.nan, found
        known = math.isfinite(check) and self.estimates_errors
        return main, abs(main - check) if known else math.nan, found

    def significant(self, value, error=0.0) -> bool:
        return bool(np.any(np.abs(value) > self.on_branch))

    def settings(self) -> dict[str, Any]:
        return {"order": list(self.order), "check_order": list(self.check_order)}

    def columns(self) -> dict[str, Any]:
        (n_xi, n_y), (c_xi, c_y) = self.order, self.check_order
        return {"method": self.name, "n_xi": n_xi, "n_y": n_y, "check_n_xi": c_xi, "check_n_y": c_y}

    def seconds(self, p: ModelParams) -> float:
        n_xi, n_y = self.order
        return GH_SECONDS_PER_NODE * (n_xi * n_y) ** 2 * TYPICAL_ITERATIONS


@dataclass(frozen=True)
class QMC:
    """Randomised quasi-Monte Carlo: `randomisations` scramblings of `points` Sobol points
    (seeds `seed`, `seed` + 1, ...); the solver's options (`Method`); `device` where the
    channel's points, integrands and prox live ("cpu", "cuda", "cuda:N" or "auto": CUDA when
    present), float64 on every device.

    Examples
    --------
    >>> from attnphase import QMC
    >>> m = QMC(points=1024, randomisations=2)
    >>> m.name, m.settings()
    ('qmc', {'points': 1024, 'randomisations': 2, 'seed': 0})
    >>> len(m.replicas())
    2
    """

    points: int = DEFAULT_POINTS
    randomisations: int = DEFAULT_RANDOMISATIONS
    seed: int = 0
    tol: float = 1e-5
    damping: float = 0.5
    anderson: int = 3
    max_iter: int = 200
    device: str = "cpu"
    name: ClassVar[str] = "qmc"
    # on one scrambling, the order parameter (largest |theta| or |M| entry) of a fixed point on
    # its branch exceeds this (where a branch has ended it stays at the integration-noise
    # level, not at zero); a mean over scramblings must also exceed three standard errors
    on_branch: ClassVar[float] = 1e-4
    averages_replicas: ClassVar[bool] = True
    branches: ClassVar[tuple[str, ...]] = BRANCHES

    def __post_init__(self) -> None:
        points = check_int("points", self.points)
        if points & (points - 1):  # Sobol points keep their balance only in powers of two
            raise ValueError(f"points must be a power of two (e.g. 1024, 8192), got {points}")
        if points < MIN_POINTS:
            raise ValueError(
                f"points must be >= {MIN_POINTS} (fewer give error bars that miss the "
                f"integration's error), got {points}"
            )
        object.__setattr__(self, "points", points)
        object.__setattr__(self, "randomisations", check_int("randomisations", self.randomisations))
        object.__setattr__(self, "seed", check_int("seed", self.seed, minimum=0))
        check_device(self.device)
        _check_solver(self)

    def replicas(self) -> range:
        return range(self.randomisations)

    def combine(self, values: Sequence[float]) -> tuple[float, float, int]:
        found = [v for v in values if math.isfinite(v)]
        if not found:
            return math.nan, math.nan, 0
        n = len(found)
        err = float(np.std(found, ddof=1) / math.sqrt(n)) if n > 1 else math.nan
        return float(np.mean(found)), err, n

    def significant(self, value, error=0.0) -> bool:
        floor = 3 * np.nan_to_num(error) + self.on_branch
        return bool(np.any(np.abs(value) > floor))

    def settings(self) -> dict[str, Any]:
        return {"points": self.points, "randomisations": self.randomisations, "seed": self.seed}

    def columns(self) -> dict[str, Any]:
        return {"method": self.name, **self.settings()}

    def seconds(self, p: ModelParams) -> float:
        per_point = QMC_SECONDS_PER_POINT * (p.rank * p.L / 2) ** 2
        return per_point * 2 * self.points * self.randomisations * QMC_ITERATIONS


METHODS = (GaussHermite.name, QMC.name)

# one QMC map evaluation per Gaussian point (a Sobol point or its antithetic image) at rank 1,
# L = 2; it grows like (rank L / 2)^2. Measured on 2 cores (load 0.6) by cold semantic solves at
# alpha 2, 1024 x 2 points: 5.0, 4.9, 4.1, 3.9 us at L = 2, 3, 4, 8 (rank 1), 2.2 and 1.1 us at
# rank 2, L = 2 and 3, per point, evaluation and unit of (rank L / 2)^2
QMC_SECONDS_PER_POINT = 5e-6
# map evaluations of one scrambling's cold fixed point: measured 15-30 at rank 1 and teacher
# rank 1-3 and 220 at L = 3, rank 2 (the estimate is within 0.3-4x of those solves' times)
QMC_ITERATIONS = 50
# one Gauss-Hermite map evaluation per node of the product grid (27 ms at order (64, 24),
# 2.4e6 nodes before pruning, on 2 cores)
GH_SECONDS_PER_NODE = 1.1e-8
TYPICAL_ITERATIONS = 100  # a cold Gauss-Hermite fixed point's map evaluations at its order


def pop_method(d: dict[str, Any]) -> GaussHermite | QMC:
    """The method whose settings (`Method.settings`) are keys of `d`, removed from it."""
    if "order" in d:
        order = check_order("order", d.pop("order"))
        return GaussHermite(order, check_order("check_order", d.pop("check_order")))
    return QMC(d.pop("points"), d.pop("randomisations"), d.pop("seed"))


def exact_refusal(p: ModelParams) -> str | None:
    """Why the exact Gauss-Hermite channel cannot solve model `p` ("solves only ..."; the
    caller adds what to use instead), or None when it can (`ModelParams.is_l2`)."""
    if not p.is_tied_gaussian:
        return f"solves only the tied model with Gaussian tokens; got variant={p.variant}"
    if not p.is_l2:
        return (
            f"solves only L = 2, rank = teacher_rank = 1, encodings (+1, -1); got L={p.L}, "
            f"rank={p.rank}, teacher_rank={p.teacher_rank}, encodings={p.encodings}"
        )
    return None


def resolve_method(
    method: Method | str, p: ModelParams, general: QMC | None = None
) -> GaussHermite | QMC:
    """The method to use for model `p`: "auto" is `GaussHermite()` where the exact channel
    applies (`ModelParams.is_l2`), `general` (default `QMC()`) otherwise; Gauss-Hermite for
    another model is a ValueError naming `method`."""
    if isinstance(method, str):
        if method != "auto":
            raise ValueError(
                f"method must be 'auto', GaussHermite(...) or QMC(...), got {method!r}"
            )
        return GaussHermite() if p.is_l2 else (general or QMC())
    if not isinstance(method, GaussHermite | QMC):
        raise ValueError(f"method must be 'auto', GaussHermite(...) or QMC(...), got {method!r}")
    refusal = exact_refusal(p) if isinstance(method, GaussHermite) else None
    if refusal is not None:
        raise ValueError(f"method: Gauss-Hermite {refusal} (use QMC(...))")
    if isinstance(method, GaussHermite) and p.omega < 1:
        n_y = min(method.order[1], method.check_order[1])
        if n_y < MIN_ORDER:
            raise ValueError(
                f"method: n_y = {n_y} teacher nodes cannot hold the semantic branch at omega < 1 "
                f"(its solve lands on the trivial point); give n_y >= {MIN_ORDER}"
            )
    return method


EXACT = GaussHermite()  # the default Gauss-Hermite method
