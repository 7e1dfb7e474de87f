"""Where a transition line lives: the names of the four lines, the parameter paths they are
followed along (docs/theory.md §5), and the size of the scan that starts them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from ..params import ModelParams

LINES = ("alpha_c", "alpha_l", "spinodal_semantic", "spinodal_positional")
VALUE_COLUMNS = [c for line in LINES for c in (line, f"{line}_err")]  # what a table shows
PATHS = ("omega", "sigma", "lam", "A")
SCAN_NUM = 16  # alphas of the scan that starts the lines


def parameter_path(
    p: ModelParams, parameter: str = "omega", A_end=None
) -> Callable[[float], ModelParams]:
    """s -> the model at parameter = s (omega, sigma, lam), or, for "A", at
    A = (1 - s) p.A + s A_end (s in [0, 1])."""
    if parameter not in PATHS:
        raise ValueError(f"parameter must be one of {PATHS}, got {parameter!r}")
    if parameter == "A":
        if A_end is None:
            raise ValueError("a path in A needs A_end")
        a0, a1 = np.asarray(p.A, dtype=float), np.asarray(A_end, dtype=float)
        return lambda s: replace(p, A=((1 - s) * a0 + s * a1).tolist())
    return lambda s: p.with_value(parameter, float(s))
