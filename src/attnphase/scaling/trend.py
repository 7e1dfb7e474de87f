"""The trend of the scaling table tested (docs/scaling.md §5): does alpha_c(L) or alpha_l(L)
collapse onto one value when alpha is multiplied by a count of what one sequence tells the
student?

A count n(L) collapses a transition if alpha(L) n(L) is the same at every L. The candidates
(`COUNTS`): none (alpha itself), the tokens of a sequence (L), and the independent attention
logits of a sequence, L (L + 1) / 2 - 1 (the symmetric L x L logits of a tied student, less a
common shift). `rescaled` multiplies the table's values, their errors and the window's edges
by each count; `collapse` says per family, omega, transition and count how far the rescaled
values are from one value: their spread (largest over smallest), the exponent of L left in them
(least squares of log alpha n against log L; 0 for a collapse) and, where a transition lies
below or beyond the window, whether the collapsed value predicts that.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pandas as pd

from .status import status_kind

COUNTS: dict[str, Callable[[int], float]] = {
    "none": lambda L: 1.0,
    "tokens": lambda L: float(L),
    "logits": lambda L: L * (L + 1) / 2 - 1,
}
TRANSITIONS = ("alpha_c", "alpha_l")
GROUP = ["encodings", "omega", "quantity", "count"]


def _kind(value: float, status: str) -> str | None:
    """ "found" for a value, else what its status says (`status_kind`)."""
    return "found" if math.isfinite(value) else status_kind(status)


def rescaled(df: pd.DataFrame) -> pd.DataFrame:
    """One row per table row, transition and count: the value, its error and the window edge
    that bounds a missing one (alpha_min below the window, alpha_max beyond it), each times
    n(L); `kind` is "found", "below", "beyond", "none" or None (not computed)."""
    rows = []
    for _, r in df.iterrows():
        L = int(r["L"])
        for quantity in TRANSITIONS:
            value, err = float(r[quantity]), float(r[f"{quantity}_err"])
            kind = _kind(value, r[f"{quantity}_status"])
            edge = {"below": r["alpha_min"], "beyond": r["alpha_max"]}.get(str(kind), math.nan)
            for count, n in COUNTS.items():
                rows.append(
                    dict(
                        encodings=r["encodings"],
                        omega=float(r["omega"]),
                        quantity=quantity,
                        count=count,
                        L=L,
                        kind=kind,
                        rescaled=value * n(L),
                        rescaled_err=err * n(L),
                        bound=float(edge) * n(L),
                    )
                )
    return pd.DataFrame(rows)


def collapse(df: pd.DataFrame) -> pd.DataFrame:
    """Per family, omega, transition and count with at least two found values (module
    docstring): `lengths` (the found L), `spread` (largest over smallest rescaled value),
    `exponent` (the slope of log alpha n against log L), `level` (the geometric mean),
    `bounds` (values below or beyond the window) and `bounds_kept` (those for which level /
    n(L) lies on the same side of the window)."""
    out = []
    for key, g in rescaled(df).groupby(GROUP, sort=True):
        found = g[g["kind"] == "found"].sort_values("L")
        if len(found) < 2:
            continue
        L = found["L"].to_numpy(float)
        y = np.log(found["rescaled"].to_numpy(float))
        level = float(np.exp(y.mean()))
        edges = g[g["kind"].isin(["below", "beyond"])]
        kept = sum(
            (level < b) if k == "below" else (level > b)
            for k, b in zip(edges["kind"], edges["bound"], strict=True)
        )
        out.append(
            dict(
                zip(GROUP, key, strict=True),
                lengths=",".join(str(int(x)) for x in L),
                spread=float(np.exp(y.max() - y.min())),
                exponent=float(np.polyfit(np.log(L), y, 1)[0]),
                level=level,
                bounds=len(edges),
                bounds_kept=int(kept),
            )
        )
    return pd.DataFrame(out)
