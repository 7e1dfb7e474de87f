"""The scaling table (`attnphase.scaling.scaling_table`) drawn against the sequence length L: one
column of panels per omega, the transitions alpha_c and alpha_l above and the ends of both
branches below, solid for the linear encodings and dashed for the simplex ones (a causal mask
dotted, several heads dash-dotted), error bars from the table. A value that does not exist is
drawn as what it is, from its status: an arrow at the window's edge where it lies beyond the
window (a branch that exists at alpha_min, a crossing below or above the window), a cross where
there is nothing to find (no branch, no crossing)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from ..scaling.status import status_kind
from .style import COLORS, EXTENSION_COLORS, new_figure, save

FAMILY_LINES = {"linear": "-", "simplex": "--"}
VARIANT_LINES = {"causal": ":", "heads": "-."}


def model_of(row: dict) -> tuple[str, str]:
    """The label and line style of a table row's model: its encoding family, and its variant
    where the row has one (`mask`, `heads` columns; absent in tables without variants)."""
    family = str(row["encodings"])
    if str(row.get("mask", "none")) == "causal":
        return f"{family} encodings, causal mask", VARIANT_LINES["causal"]
    heads = row.get("heads", 1)
    if pd.notna(heads) and int(heads) > 1:
        return f"{family} encodings, {int(heads)} heads", VARIANT_LINES["heads"]
    return f"{family} encodings", FAMILY_LINES.get(family, ":")


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
    models = [model_of(r) for r in df.to_dict("records")]
    df = df.assign(model=[label for label, _ in models])
    styles = dict(models)
    for col, omega in enumerate(omegas):
        at = df[np.isclose(df["omega"].astype(float), omega)].sort_values("L")
        for row, quantities in enumerate(ROWS):
            ax = axes[row][col]
            for f, (model, rows) in enumerate(at.groupby("model")):
                style = styles[str(model)]
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
        Line2D([], [], color="0.3", ls=style, label=label)
        for label, style in sorted(styles.items())
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


COUNT_LABELS = {
    "none": r"$\alpha$",
    "tokens": r"$\alpha L$",
    "logits": r"$\alpha\,[L(L+1)/2 - 1]$",
}


def trend_figure(rescaled: pd.DataFrame, collapse: pd.DataFrame, path: str | Path) -> None:
    """The trend test (`attnphase.scaling.trend`): one row of panels per transition, one column
    per count; each family and omega's rescaled values divided by their geometric mean
    (`collapse`'s level), so that a collapse is every point on 1; a value below or beyond the
    window as an arrow at its bound. Writes path (PNG) and its PDF twin."""
    counts = [c for c in COUNT_LABELS if c in set(collapse["count"])]
    quantities = [q for q in ("alpha_c", "alpha_l") if q in set(collapse["quantity"])]
    fig, axes = new_figure(len(quantities), len(counts), (3.4 * len(counts) + 0.6, 5.8))
    omegas = sorted(set(collapse["omega"]))
    palette = {w: EXTENSION_COLORS[i % len(EXTENSION_COLORS)] for i, w in enumerate(omegas)}
    arrows = {"below": r"$\downarrow$", "beyond": r"$\uparrow$"}
    for row, quantity in enumerate(quantities):
        for col, count in enumerate(counts):
            ax = axes[row][col]
            ax.axhline(1.0, color="0.6", lw=0.8, zorder=0)
            for _, c in collapse[
                (collapse["quantity"] == quantity) & (collapse["count"] == count)
            ].iterrows():
                sel = rescaled[
                    (rescaled["quantity"] == quantity)
                    & (rescaled["count"] == count)
                    & (rescaled["encodings"] == c["encodings"])
                    & np.isclose(rescaled["omega"], c["omega"])
                ].sort_values("L")
                found = sel[sel["kind"] == "found"]
                colour = palette[c["omega"]]
                ax.errorbar(
                    found["L"],
                    found["rescaled"] / c["level"],
                    yerr=found["rescaled_err"].fillna(0.0) / c["level"],
                    color=colour,
                    ls=FAMILY_LINES.get(str(c["encodings"]), ":"),
                    marker="o",
                    ms=4,
                    capsize=2,
                )
                for kind, symbol in arrows.items():
                    edge = sel[sel["kind"] == kind]
                    ax.plot(
                        edge["L"],
                        edge["bound"] / c["level"],
                        ls="none",
                        marker=symbol,
                        ms=9,
                        color=colour,
                    )
            ax.set_yscale("log")
            ax.set_title(
                f"{LABELS[quantity].split(' (')[0]} rescaled: {COUNT_LABELS[count]}", fontsize=9
            )
            if row == len(quantities) - 1:
                ax.set_xlabel("sequence length L")
            if col == 0:
                ax.set_ylabel("over its geometric mean")
    handles = [
        Line2D([], [], color=palette[w], marker="o", label=rf"$\omega = {w:g}$") for w in omegas
    ]
    handles += [
        Line2D([], [], color="0.3", ls=FAMILY_LINES[f], label=f"{f} encodings")
        for f in sorted(set(map(str, collapse["encodings"])) & set(FAMILY_LINES))
    ]
    handles += [
        Line2D(
            [],
            [],
            color="0.3",
            marker=arrows["below"],
            ms=9,
            ls="none",
            label="below the window (at its edge)",
        ),
        Line2D(
            [],
            [],
            color="0.3",
            marker=arrows["beyond"],
            ms=9,
            ls="none",
            label="beyond the window (at its edge)",
        ),
    ]
    fig.legend(handles=handles, loc="outside lower center", ncols=4, frameon=False, fontsize=8)
    save(fig, path)
