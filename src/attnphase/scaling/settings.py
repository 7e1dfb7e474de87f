"""The settings of a scaling scan (docs/scaling.md §2), shared by one point and the table: the
family's model parameters, the alpha grid and the QMC integration."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from ..params import ModelParams, check_alpha, check_int
from ..theory.method import QMC, GaussHermite, Method
from ..theory.precision import check_precision
from .family import family_model

# the precision ladder's default budget: the L = 3, omega = 0.3 row needs 2048 points (its
# replicas disagree at 1024); each doubling doubles the row's time
MAX_POINTS = 2048
# one scaling point against one cold fixed point of its first rung (`Method.seconds`) at the
# default 16 alphas: the scan's alphas on two branches and every scrambling, the roots'
# refinement, the bisection of both branches' ends and the free solves. Measured on 2 cores:
# omega 0.3, L = 2 took 176 s (estimate 396 s), L = 3 1588 s at load 3 (estimate 690 s)
POINT_FIXED_POINTS = 150


@dataclass(frozen=True)
class ScanSettings:
    """a, sigma, lam: the family's target diagonal, token standard deviation and ridge;
    `num` alphas spaced geometrically on [alpha_min, alpha_max]; QMC(points, randomisations)
    at L >= 3, the points doubled while the replicas disagree on which branches exist, up to
    `max_points` (the precision ladder, `scaling.point`; default max(points, MAX_POINTS)).
    precision: the ladder also climbs (QMC points doubled up to `max_points`, Gauss-Hermite
    orders raised at L = 2, `theory.precision.finer`) until alpha_c_err and alpha_l_err are each
    at most this fraction of their transition; None: until the replicas agree only.
    Validated on construction (ValueError naming the first bad setting)."""

    a: float = 0.6
    sigma: float = 0.5
    lam: float = 0.01
    alpha_min: float = 0.1
    alpha_max: float = 16.0
    num: int = 16
    points: int = 1024
    randomisations: int = 4
    max_points: int | None = None  # None: max(points, MAX_POINTS)
    precision: float | None = None

    def __post_init__(self) -> None:
        family_model(2, 0.3, "linear", a=self.a, sigma=self.sigma, lam=self.lam)
        check_alpha(self.alpha_min, "alpha_min")
        check_alpha(self.alpha_max, "alpha_max")
        for name in ("a", "sigma", "lam", "alpha_min", "alpha_max"):  # 3 and 3.0: one point id
            object.__setattr__(self, name, float(getattr(self, name)))
        if not self.alpha_min < self.alpha_max:
            raise ValueError(
                f"alpha_min: need alpha_min < alpha_max, got {self.alpha_min}, {self.alpha_max}"
            )
        object.__setattr__(self, "num", check_int("num", self.num, minimum=3))
        QMC(self.points, self.randomisations)  # a power of two
        budget = max(self.points, MAX_POINTS) if self.max_points is None else self.max_points
        QMC(check_int("max_points", budget), self.randomisations)
        if budget < self.points:
            raise ValueError(f"max_points: must be at least points ({self.points}), got {budget}")
        object.__setattr__(self, "max_points", budget)
        randomisations = check_int("randomisations", self.randomisations, minimum=2)
        object.__setattr__(self, "randomisations", randomisations)
        if self.precision is not None:
            floor = min(GaussHermite.tol, QMC.tol)  # either may answer (L = 2: Gauss-Hermite)
            object.__setattr__(self, "precision", check_precision(self.precision, floor))

    @property
    def budget(self) -> int:
        """The precision ladder's largest number of points (`max_points`, resolved)."""
        assert self.max_points is not None  # resolved in __post_init__
        return self.max_points

    def method_for(self, p: ModelParams) -> Method:
        """The ladder's first rung for model `p`: the exact channel at L = 2, QMC otherwise."""
        return GaussHermite() if p.is_l2 else QMC(self.points, self.randomisations)

    def point_seconds(self, p: ModelParams) -> float:
        """A rough duration of one scaling point of model `p` on the ladder's first rung (each
        rung climbed doubles it): POINT_FIXED_POINTS cold fixed points per 16 alphas."""
        return POINT_FIXED_POINTS * self.num / 16 * self.method_for(p).seconds(p)

    def as_dict(self) -> dict[str, Any]:
        """The settings as a store point's parameters (precision only where it is asked for, so
        that earlier stores resume)."""
        out = asdict(self)
        if self.precision is None:
            del out["precision"]
        return out
