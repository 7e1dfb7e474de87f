"""Empirical phase boundaries (`attnphase.paper.empirical`, the paper's Fig. 3 and Fig. 14):
the transition read off a loss-gap map."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from attnphase.paper.empirical import SAME_MINIMUM, empirical_transitions

ALPHAS = [0.1, 0.5, 0.9, 1.3, 1.7, 2.1, 2.5]


def _map(rows: dict[float, list[float]], alphas=ALPHAS) -> pd.DataFrame:
    return pd.DataFrame(rows, index=alphas).T.rename_axis(index="omega", columns="alpha")


def test_a_planted_linear_sign_change_is_recovered_exactly():
    # gap = c (alpha_0 - alpha) is linear: the interpolation between the two grid points around
    # alpha_0 is exact, so alpha_t = alpha_0 to rounding; off-grid and on-grid alpha_0 alike
    planted = {0.1: 0.62, 0.2: 1.0, 0.3: 1.4999, 0.4: 2.31}
    rows = {w: [3e-3 * (a0 - a) for a in ALPHAS] for w, a0 in planted.items()}
    t = empirical_transitions(_map(rows)).set_index("omega")
    np.testing.assert_allclose(t["alpha_t"], list(planted.values()), rtol=0, atol=1e-12)
    assert (t["status"] == "crossing").all() and (t["sign_changes"] == 1).all()


def test_unsorted_columns_and_missing_gaps():
    # columns in any order; a NaN (no converged pair) is skipped: the crossing is interpolated
    # between its neighbours 0.5 (gap 4e-4) and 1.3 (gap -4e-4), so at 0.9
    gaps = [8e-4, 4e-4, np.nan, -4e-4, -8e-4, -1.2e-3, -1.6e-3]
    shuffled = [6, 2, 0, 5, 1, 4, 3]
    gap = _map({0.3: [gaps[i] for i in shuffled]}, [ALPHAS[i] for i in shuffled])
    t = empirical_transitions(gap).iloc[0]
    assert t["alpha_t"] == pytest.approx(0.9, abs=1e-12) and t["status"] == "crossing"


def test_one_minimum_for_both_starts_counts_as_zero():
    # both starts in one minimum: gaps of +-1e-15 (measured <= 7.7e-15, SAME_MINIMUM) are no
    # sign change; the first real negative gap, at 1.3 after the "zero" at 0.9: alpha_t = 0.9
    row = [2e-4, -1e-15, 1e-15, -5e-4, -6e-4, 1e-15, -7e-4]
    t = empirical_transitions(_map({0.2: row})).iloc[0]
    assert t["alpha_t"] == pytest.approx(0.9, abs=1e-12) and t["sign_changes"] == 1
    strict = empirical_transitions(_map({0.2: row}), tol=0.0).iloc[0]
    assert strict["alpha_t"] == pytest.approx(0.5, abs=1e-9) and strict["sign_changes"] == 5
    assert SAME_MINIMUM < 3.7e-8  # below the smallest measured gap between distinct minima


def test_noisy_rows_and_transitions_outside_the_grid():
    rows = {
        0.1: [1e-4, -2e-4, 3e-4, -1e-4, 1e-4, -1e-4, -2e-4],  # noisy: the first crossing
        0.2: [-1e-4] * 7,  # negative from the smallest alpha
        0.3: [1e-4] * 7,  # never negative
        0.4: [np.nan] * 7,
    }
    t = empirical_transitions(_map(rows)).set_index("omega")
    assert t.loc[0.1, "alpha_t"] == pytest.approx(0.1 + 0.4 * 1 / 3, abs=1e-12)
    assert t.loc[0.1, "sign_changes"] == 5
    assert t["status"].tolist() == [
        "crossing", "negative from the smallest alpha", "no negative gap", "no data",
    ]  # fmt: skip
    assert t.loc[[0.2, 0.3, 0.4], "alpha_t"].isna().all()
    with pytest.raises(ValueError, match="tol"):
        empirical_transitions(_map(rows), tol=-1.0)
