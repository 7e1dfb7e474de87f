"""The scaling table (`attnphase.scaling.scaling_table`) drawn against the sequence length L:
alpha_c and alpha_l (left) and the ends of both branches (right), one colour per omega, solid
for the linear encodings and dashed for the simplex ones, error bars from the table; the
quantities that do not exist are listed with their reason under the title."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .style import new_figure, save

OMEGA_COLORS = ("tab:purple", "tab:green", "tab:red", "tab:brown", "tab:olive", "tab:cyan")
FAMILY_LINES = {"linear": "-", "simplex": "--"}
PANELS = (
    (("alpha_c", "o"), ("alpha_l", "s")),
    (("spinodal_semantic", "v"), ("spinodal_positional", "^")),
)
TITLES = (
    r"$\alpha_c$ (filled) and $\alpha_l$ (open)",
    "semantic branch starts (filled), positional branch ends (open)",
)


def missing_notes(df: pd.DataFrame, limit: int = 6) -> list[str]:
    """One line per quantity missing from some rows: where, and the first row's reason."""
    notes = []
    for panel in PANELS:
        for name, _ in panel:
            gone = df[~np.isfinite(df[name].astype(float))]
            if len(gone):
                first = gone.iloc[0]
                where = ", ".join(
                    f"L={int(r.L)} w={r.omega:g}" for r in gone.head(3).itertuples()
                ) + (" ..." if len(gone) > 3 else "")
                notes.append(f"{name} missing at {where}: {first[f'{name}_status']}")
    return notes[:limit]


def scaling_figure(df: pd.DataFrame, path: str | Path) -> None:
    """Draw the table (module docstring); writes path (PNG) and its PDF twin."""
    fig, axes = new_figure(1, 2, (11.0, 4.8))
    omegas = sorted(df["omega"].unique())
    for ax, panel, title in zip(axes[0], PANELS, TITLES, strict=True):
        for (family, omega), rows in df.sort_values("L").groupby(["encodings", "omega"]):
            c = OMEGA_COLORS[omegas.index(omega) % len(OMEGA_COLORS)]
            for k, (name, marker) in enumerate(panel):
                y = rows[name].to_numpy(float)
                if not np.isfinite(y).any():
                    continue
                err = rows[f"{name}_err"].to_numpy(float)
                fill = c if k == 0 else "white"
                ax.errorbar(
                    rows["L"].to_numpy(float),
                    y,
                    yerr=np.where(np.isfinite(err), err, 0.0),
                    color=c,
                    mfc=fill,
                    marker=marker,
                    linestyle=FAMILY_LINES.get(str(family), ":"),
                    ms=5,
                    capsize=2,
                    label=f"{name}, {family}, omega {omega:g}",
                )
        ax.set_xticks(sorted(int(v) for v in df["L"].unique()))
        ax.set_xlabel("sequence length L")
        ax.set_ylabel(r"$\alpha = n/d$")
        ax.set_yscale("log")
        ax.set_title(title, fontsize=9)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(loc="best", fontsize=6)
    notes = missing_notes(df)
    head = "Transitions against L (theory; target a = 0.6 on the diagonal)"
    fig.suptitle(head + ("\n" + "\n".join(notes) if notes else ""), fontsize=7)
    save(fig, path)
