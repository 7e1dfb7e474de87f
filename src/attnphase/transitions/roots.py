"""Root bracketing and refinement shared by the transition finders (docs/theory.md §5)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from scipy.optimize import brentq

Values = Sequence[float] | np.ndarray  # a grid's values, one per alpha


def bracket_sign_changes(alphas: Sequence[float], values: Values) -> list[tuple[int, int]]:
    """Index pairs (i, i+1) of consecutive finite values with opposite signs."""
    out = []
    for i in range(len(alphas) - 1):
        a, b = values[i], values[i + 1]
        if math.isfinite(a) and math.isfinite(b) and a * b < 0:
            out.append((i, i + 1))
    return out


def interpolated_root(alphas: Sequence[float], values: Sequence[float], i: int, j: int) -> float:
    """The zero of the straight line through (alphas[i], values[i]) and (alphas[j], values[j])."""
    return alphas[i] - values[i] * (alphas[j] - alphas[i]) / (values[j] - values[i])


def first_interpolated_root(alphas: Sequence[float], values: Sequence[float]) -> float:
    """`interpolated_root` of the first sign change of values on the grid (NaN: none)."""
    brackets = bracket_sign_changes(alphas, values)
    return interpolated_root(alphas, values, *brackets[0]) if brackets else math.nan


def refine_root(fn: Callable[[float], float], lo: float, hi: float, xtol: float = 1e-4) -> float:
    """Root of fn in [lo, hi] (a sign change) by Brent's method."""
    return float(brentq(fn, lo, hi, xtol=xtol))


def refine_or_interpolate(fn, lo, hi, f_lo, f_hi) -> tuple[float, float]:
    """(root, error bound): Brent's root with bound 0, or, where fn cannot be evaluated inside
    the bracket (a re-solve left the branch: fn returned NaN), the linear interpolation x of the
    bracketing grid values with bound max(x - lo, hi - x): the root lies somewhere in the
    bracket."""

    def checked(a: float) -> float:
        value = fn(a)
        if not math.isfinite(value):
            raise ValueError(f"not on the branch at alpha = {a}")
        return value

    try:
        return refine_root(checked, lo, hi), 0.0
    except ValueError:
        x = interpolated_root([lo, hi], [f_lo, f_hi], 0, 1)
        return float(x), float(max(x - lo, hi - x))
