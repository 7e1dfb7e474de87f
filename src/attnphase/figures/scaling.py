"""The scaling table (`attnphase.scaling.scaling_table`) drawn against the sequence length L: one
column of panels per omega, the transitions alpha_c and alpha_l above and the ends of both
branches below, solid for the linear encodings and dashed for the simplex ones, error bars from
the table. A value that does not exist is drawn as what it is, from its status: an arrow at the
window's edge where it lies beyond the window (a branch that exists at alpha_min, a crossing
below or above the window), a cross where there is nothing to find (no branch, no crossing)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from .style import COLORS, new_figure, save

FAMILY_LINES = {"linear": "-", "simplex": "--"}
# (quantity, marker, colour, filled); the branch ends in the branches' own colours
ROWS = (
    (("alpha_c", "o", "0.25", True), ("alpha_l", "s", COLORS["accent"], False)),
    (
        ("spinodal_semantic", "v", COLORS["semantic"], True),
        ("spinodal_positional", "^", COLORS["positional"], True),
    ),
)
LABELS = {
    "alpha_c": r"$\alpha_c$ (positional $\to$ semantic minimum)",
    "alpha_l": r"$\alpha_l$ (attention beats the linear baseline)",
    "spinodal_semantic": "semantic branch starts",
    "spinodal_positional": "positional branch ends",
}
ROW_TITLES = ("transitions", "ends of the branches")


def status_kind(status: str) -> str | None:
    """How a missing value is drawn, from its status: "below" (under the window: a branch that
    exists at alpha_min, a crossing below it), "beyond" (over the window), "none" (nothing to
    find: no branch, no crossing, the branches never coexist), None (not computed or failed:
    not drawn)."""
    text = str(status)
    if "below the window" in text or "semantic lower wherever" in text:
        return "below"
    if "beyond the window" in text or "positional lower wherever" in text:
        return "beyond"
    if text.startswith(("not computed", "failed")) or text in ("", "nan"):
        return None
    return "none"


def _window(df: pd.DataFrame) -> tuple[float, float]:
    """The alpha window of the scans (the settings' columns, else the values' range)."""
    if {"alpha_min", "alpha_max"} <= set(df.columns):
        return float(df["alpha_min"].min()), float(df["alpha_max"].max())
    names = [name for row in ROWS for name, *_ in row]
    values = df[names].to_numpy(float)
    values = values[np.isfinite(values)]
    return (float(values.min()), float(values.max())) if values.size else (0.1, 10.0)


def scaling_figure(df: pd.DataFrame, path: str | Path) -> None:
    """Draw the table (module docstring); writes path (PNG) and its PDF twin."""
    omegas = sorted(float(w) for w in df["omega"].unique())
    fig, axes = new_figure(2, len(omegas), (3.6 * len(omegas) + 0.6, 6.4))
    lo, hi = _window(df)
    edge = {"below": (lo, r"$\downarrow$"), "beyond": (hi, r"$\uparrow$"), "none": (lo, "x")}
    lengths = sorted(int(v) for v in df["L"].unique())
    for col, omega in enumerate(omegas):
        at = df[np.isclose(df["omega"].astype(float), omega)].sort_values("L")
        for row, quantities in enumerate(ROWS):
            ax = axes[row][col]
            for f, (family, rows) in enumerate(at.groupby("encodings")):
                style = FAMILY_LINES.get(str(family), ":")
                L = rows["L"].to_numpy(float)
                for k, (name, marker, colour, filled) in enumerate(quantities):
                    y = rows[name].to_numpy(float)
                    err = rows[f"{name}_err"].to_numpy(float)
                    ok = np.isfinite(y)
                    ax.errorbar(
                        L[ok],
                        y[ok],
                        yerr=np.where(np.isfinite(err[ok]), err[ok], 0.0),
                        color=colour,
                        mfc=colour if filled else "white",
                        marker=marker,
                        linestyle=style,
                        ms=5,
                        capsize=2,
                    )
                    # side by side where several missing values share an L
                    shift = 0.2 * (k - 0.5) + 0.08 * f
                    for x, status in zip(L[~ok], rows[f"{name}_status"][~ok], strict=True):
                        kind = status_kind(status)
                        if kind is not None:
                            level, symbol = edge[kind]
                            ax.plot(
                                [x + shift], [level], marker=symbol, color=colour, ms=8, ls="none"
                            )
            ax.set_yscale("log")
            ax.set_ylim(lo / 1.4, hi * 1.4)
            ax.axhspan(lo / 1.4, lo, color="0.93", zorder=0)
            ax.axhspan(hi, hi * 1.4, color="0.93", zorder=0)
            ax.set_xticks(lengths)
            ax.set_title(rf"$\omega = {omega:g}$, {ROW_TITLES[row]}", fontsize=9)
            if row == 1:
                ax.set_xlabel("sequence length L")
            if col == 0:
                ax.set_ylabel(r"$\alpha = n/d$")
    handles = [
        Line2D([], [], color=c, marker=m, mfc=c if f else "white", ls="none", label=LABELS[n])
        for quantities in ROWS
        for n, m, c, f in quantities
    ]
    handles += [
        Line2D([], [], color="0.3", ls=FAMILY_LINES[f], label=f"{f} encodings")
        for f in sorted(set(map(str, df["encodings"])) & set(FAMILY_LINES))
    ]
    marks = (
        (r"$\downarrow$", "below the window"),
        (r"$\uparrow$", "beyond the window"),
        ("x", "does not exist (no branch, no crossing)"),
    )
    handles += [
        Line2D([], [], color="0.3", marker=m, ms=9, ls="none", label=text) for m, text in marks
    ]
    fig.legend(handles=handles, loc="outside lower center", ncols=3, frameon=False, fontsize=8)
    fig.suptitle(
        rf"Transitions against L (theory; target a = 0.6 on the diagonal; window "
        rf"$\alpha \in [{lo:g}, {hi:g}]$, shaded outside)",
        fontsize=9,
    )
    save(fig, path)
