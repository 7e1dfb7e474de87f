"""The transition lines of `transition_table` drawn as a phase diagram (alpha across, the
varied parameter up, as the paper's Fig. 3): alpha_c and alpha_l in black, the spinodals in
their branch's colour, error bars from the table, and why each line ends stated on the figure."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .curves import parameters_text
from .style import color, new_figure, save

STYLES = {
    "alpha_c": dict(color="black", linestyle="-", marker="o", label=r"$\alpha_c$"),
    "alpha_l": dict(color="black", linestyle="--", marker="s", label=r"$\alpha_l$"),
    "spinodal_semantic": dict(
        color=color("semantic"), linestyle=":", marker="v", label="semantic spinodal"
    ),
    "spinodal_positional": dict(
        color=color("positional"), linestyle=":", marker="^", label="positional spinodal"
    ),
}
LABELS = {"omega": r"$\omega$", "sigma": r"$\sigma$", "lam": r"$\lambda$"}


def line_notes(df: pd.DataFrame, parameter: str) -> list[str]:
    """One note per line that is missing at some values: its reason at the first of them."""
    notes = []
    for name in STYLES:
        missing = df[~np.isfinite(df[name].astype(float))]
        if len(missing):
            first = missing.iloc[0]
            notes.append(f"{name} missing at {len(missing)} values: {first[f'{name}_status']}")
        bif = df[f"{name}_status"].astype(str).str.contains("bifurcation")
        if bif.any():
            notes.append(f"{name}: the branch ends by bifurcating from the trivial fixed point")
    return notes


def transition_lines_figure(df: pd.DataFrame, parameter: str, path: str | Path) -> None:
    """Draw the table's lines against `parameter`; writes path (PNG) and its PDF twin."""
    fig, axes = new_figure(1, 1, (7.0, 5.4))
    ax = axes[0, 0]
    y = df[parameter].to_numpy(float)
    for name, style in STYLES.items():
        x = df[name].to_numpy(float)
        if not np.isfinite(x).any():
            continue
        err = df[f"{name}_err"].to_numpy(float)
        ax.errorbar(x, y, xerr=np.where(np.isfinite(err), err, 0.0), ms=4, capsize=2, **style)
    ax.set_xlabel(r"$\alpha = n/d$")
    ax.set_ylabel(LABELS[parameter])
    ax.legend(loc="best", fontsize=8)
    fixed = [k for k in ("omega", "sigma", "lam") if k != parameter and k in df]
    notes = line_notes(df, parameter)
    title = "Transition lines (theory, exact L=2 engine)"
    if fixed:
        title += f"; {parameters_text(df, tuple(fixed))}"
    fig.suptitle(title + ("\n" + "\n".join(notes) if notes else ""), fontsize=8)
    save(fig, path)
