"""Empirical phase boundaries read off a simulated phase map (the paper's Fig. 3 and Fig. 14):
at each omega, the sample ratio where the semantic start's minimum first has the lower training
loss, i.e. where the semantic-minus-positional training-loss difference turns negative."""

from __future__ import annotations

import numpy as np
import pandas as pd

# |gap| at or below this is "both starts ended in one minimum", counted as 0. Measured on the
# 5 x 625 gaps of `attnphase figure extensions --full` (d = 500, L-BFGS, gtol 1e-8): one minimum
# gives |gap| <= 7.7e-15, distinct minima >= 3.7e-8 (rank 2; >= 1.2e-6 for the others), and no
# gap lies in [1e-12, 1e-9).
SAME_MINIMUM = 1e-9
STATUSES = ("crossing", "negative from the smallest alpha", "no negative gap", "no data")


def _crossing(alphas: np.ndarray, gaps: np.ndarray, tol: float) -> tuple[float, str, int]:
    """(alpha_t, status, sign changes) of one omega's row (NaN gaps already dropped)."""
    if alphas.size == 0:
        return np.nan, STATUSES[3], 0
    signs = np.where(gaps < -tol, -1, np.where(gaps > tol, 1, 0))
    nonzero = signs[signs != 0]
    changes = int(np.count_nonzero(np.diff(nonzero)))
    negative = np.flatnonzero(signs < 0)
    if negative.size == 0:
        return np.nan, STATUSES[2], changes
    i = int(negative[0])
    if i == 0:
        return np.nan, STATUSES[1], changes
    g0, g1 = float(gaps[i - 1]), float(gaps[i])  # g0 >= -tol > g1
    a0, a1 = float(alphas[i - 1]), float(alphas[i])
    return a0 + (a1 - a0) * g0 / (g0 - g1), STATUSES[0], changes


def empirical_transitions(gap: pd.DataFrame, tol: float = SAME_MINIMUM) -> pd.DataFrame:
    """Per omega (the rows of `gap`, the semantic-minus-positional training loss with omega rows and
    alpha columns, as `attnphase.figures.curves.phase_maps` gives it): alpha_t, the smallest alpha
    where the gap becomes negative (< -tol; a gap within tol is one minimum for both starts, no
    sign), linearly interpolated between that grid point and the one before it (the zero of the line
    through their gaps). Missing gaps (NaN: no converged pair) are skipped. status: "crossing",
    "negative from the smallest alpha" or "no negative gap" (alpha_t NaN: the transition is outside
    the grid), "no data". sign_changes: how often the sign (gaps within tol skipped) changes along
    alpha: 1 for a clean transition, more where the map is noisy."""
    if not (np.isfinite(tol) and tol >= 0):
        raise ValueError(f"tol must be a finite number >= 0, got {tol}")
    alphas = np.asarray(gap.columns, dtype=float)
    order = np.argsort(alphas)
    values = gap.to_numpy(dtype=float)[:, order]
    rows = []
    for omega, row in zip(gap.index, values, strict=True):
        keep = np.isfinite(row)
        alpha_t, status, changes = _crossing(alphas[order][keep], row[keep], tol)
        rows.append(dict(omega=float(omega), alpha_t=alpha_t, status=status, sign_changes=changes))
    return pd.DataFrame(rows, columns=["omega", "alpha_t", "status", "sign_changes"])


__all__ = ["SAME_MINIMUM", "empirical_transitions"]
