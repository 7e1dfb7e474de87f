"""The trend test of the scaling table (docs/scaling.md §5): a table that collapses by
construction is found to (spread 1, exponent 0, its window bounds kept), one that does not is
not; the committed table's verdicts."""

import math
from pathlib import Path

import pandas as pd
import pytest

from attnphase.scaling.trend import COUNTS, collapse, rescaled

DOCS = Path(__file__).resolve().parents[2] / "docs"


def table(values: dict[int, float], below: tuple[int, ...] = (), alpha_min: float = 0.3):
    """A linear-family table at omega 0.5 with alpha_c = values[L] (error 1% of it), and
    alpha_c below the window [alpha_min, 16] at the lengths `below`; alpha_l not computed."""
    rows = []
    for L in sorted({*values, *below}):
        found = L in values
        rows.append(
            dict(
                L=L,
                omega=0.5,
                encodings="linear",
                alpha_c=values[L] if found else math.nan,
                alpha_c_err=0.01 * values[L] if found else math.nan,
                alpha_c_status="found"
                if found
                else "below the window (the branch exists at alpha_min)",
                alpha_l=math.nan,
                alpha_l_err=math.nan,
                alpha_l_status="not computed",
                alpha_min=alpha_min,
                alpha_max=16.0,
            )
        )
    return pd.DataFrame(rows)


def row(summary: pd.DataFrame, count: str, quantity: str = "alpha_c", omega: float = 0.5):
    sel = summary[
        (summary["count"] == count)
        & (summary["quantity"] == quantity)
        & (summary["omega"] == omega)
        & (summary["encodings"] == "linear")
    ]
    assert len(sel) == 1
    return sel.iloc[0]


def test_counts_are_the_documented_ones():
    """L (L + 1) / 2 - 1 independent logits: 2 at L = 2, 9 at L = 4; L tokens."""
    assert [COUNTS["logits"](L) for L in (2, 3, 4, 8)] == [2, 5, 9, 35]
    assert [COUNTS["tokens"](L) for L in (2, 5)] == [2, 5]


def test_a_table_that_collapses_by_construction_is_found_to():
    """alpha_c = 5 / n(L) with n the logits: spread 1 and exponent 0 for that count, and a
    length below the window where 5 / n(L) < alpha_min is a bound kept; without rescaling
    alpha falls as about L^-2 (an exponent of log(5/14 / 5/2) / log(5/2) = -2.12 from L 2 to 5)."""
    n = COUNTS["logits"]
    df = table({L: 5 / n(L) for L in (2, 3, 4, 5)}, below=(8,), alpha_min=0.3)
    summary = collapse(df)
    logits = row(summary, "logits")
    assert logits.spread == pytest.approx(1.0, abs=1e-12)
    assert logits.exponent == pytest.approx(0.0, abs=1e-12)
    assert logits.level == pytest.approx(5.0)
    assert (logits.bounds, logits.bounds_kept) == (1, 1)  # 5 / 35 = 0.14 < 0.3
    none = row(summary, "none")
    assert none.spread == pytest.approx(7.0)  # n(5) / n(2) = 14 / 2
    assert -2.4 < none.exponent < -1.9


def test_a_bound_the_collapse_contradicts_is_not_kept():
    """The level predicts alpha_c(8) = 5 / 35 = 0.14, inside a window that starts at 0.1,
    while the table says it lies below 0.1."""
    n = COUNTS["logits"]
    df = table({L: 5 / n(L) for L in (2, 3)}, below=(8,), alpha_min=0.1)
    assert (row(collapse(df), "logits").bounds_kept, row(collapse(df), "logits").bounds) == (0, 1)


def test_rescaled_values_carry_their_errors_and_window_edges():
    df = table({2: 1.0, 3: 0.5}, below=(4,), alpha_min=0.3)
    r = rescaled(df)
    r = r[(r["quantity"] == "alpha_c") & (r["count"] == "logits")].set_index("L")
    assert r.loc[3, "rescaled"] == pytest.approx(2.5) and r.loc[3, "rescaled_err"] == 0.025
    assert r.loc[4, "kind"] == "below" and r.loc[4, "bound"] == pytest.approx(2.7)  # 0.3 * 9


def test_the_committed_table_collapses_under_no_count():
    """docs/scaling.md §5: at omega 0.5 the logits count brings alpha_c's spread over L = 2-6
    from 14.7 to 1.47, but at omega 0.3 it predicts alpha_c(4) = 2.28 / 9 = 0.25, inside the
    window, where the table has it below 0.1 (no bound kept); alpha_l levels off at omega 0.1,
    so every growing count makes its spread larger."""
    summary = collapse(pd.read_csv(DOCS / "scaling.csv"))
    assert row(summary, "none").spread > 10 > row(summary, "tokens").spread > 4
    assert 1.3 < row(summary, "logits").spread < 1.6
    at_03 = row(summary, "logits", omega=0.3)
    assert at_03.bounds == 3 and at_03.bounds_kept == 0
    level_l = {c: row(summary, c, "alpha_l", 0.1).spread for c in COUNTS}
    assert level_l["none"] < level_l["tokens"] < level_l["logits"]
