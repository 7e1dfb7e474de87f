"""Validated model parameters shared by the theory, the simulations and the CLI."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

STANDARD_A: tuple[tuple[float, float], tuple[float, float]] = ((0.6, 0.4), (0.4, 0.6))
ALTERNATIVE_A: tuple[tuple[float, float], tuple[float, float]] = ((0.3, 0.7), (0.8, 0.2))


def check_finite(name: str, value: float) -> float:
    """Return value as float, or raise ValueError naming the parameter if it is not finite."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number, got {value!r}") from None
    if not math.isfinite(x):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return x


def check_positive(name: str, value: float) -> float:
    x = check_finite(name, value)
    if x <= 0:
        raise ValueError(f"{name} must be > 0, got {value!r}")
    return x


def check_nonnegative(name: str, value: float) -> float:
    x = check_finite(name, value)
    if x < 0:
        raise ValueError(f"{name} must be >= 0, got {value!r}")
    return x


def check_int(name: str, value, minimum: int = 1) -> int:
    """Return value as int, or raise ValueError naming the parameter unless it is an integer
    >= minimum (bools are not integers here)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if not (isinstance(value, (float, np.floating)) and float(value).is_integer()):
            raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_unit_interval(name: str, value: float) -> float:
    x = check_finite(name, value)
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"{name} must lie in [0, 1], got {value!r}")
    return x


def as_matrix_2x2(A) -> tuple[tuple[float, float], tuple[float, float]]:
    """A 2x2 matrix from nested sequences or 4 numbers (row-major); ValueError names A."""
    arr = np.asarray(A, dtype=float) if not isinstance(A, str) else None
    if (
        arr is None
        or arr.size != 4
        or arr.ndim not in (1, 2)
        or (arr.ndim == 2 and arr.shape != (2, 2))
    ):
        raise ValueError(f"A must be a 2x2 matrix (or 4 numbers a11,a12,a21,a22), got {A!r}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"A must have finite entries, got {A!r}")
    a = arr.reshape(2, 2)
    return (float(a[0, 0]), float(a[0, 1])), (float(a[1, 0]), float(a[1, 1]))


@dataclass(frozen=True)
class ModelParams:
    """Target mix omega in [0, 1], token std sigma > 0, ridge lam >= 0 and the 2x2 matrix A.

    The teacher's field variance is rho = sigma^2 (teacher entries N(0, 1), THEORY.md §1).
    """

    omega: float = 0.3
    sigma: float = 0.5
    lam: float = 0.01
    A: tuple[tuple[float, float], tuple[float, float]] = field(default=STANDARD_A)

    def __post_init__(self) -> None:
        object.__setattr__(self, "omega", check_unit_interval("omega", self.omega))
        object.__setattr__(self, "sigma", check_positive("sigma", self.sigma))
        object.__setattr__(self, "lam", check_nonnegative("lam", self.lam))
        object.__setattr__(self, "A", as_matrix_2x2(self.A))

    @property
    def rho(self) -> float:
        return self.sigma**2

    @property
    def A_array(self) -> np.ndarray:
        return np.asarray(self.A, dtype=float)
