"""Phase diagrams of the model's extensions side by side (the paper's Fig. 14): one colour map
of the semantic-minus-positional training loss over (alpha, omega) per extension, on one colour
scale, with the tied model's theory alpha_c(omega) for reference. Colours: `attnphase.figures.style`
(the maps' ends are the semantic and positional colours)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pandas as pd

from .style import (
    EXTENSION_COLORS,
    SEMANTIC_POSITIONAL,
    legend_below,
    new_figure,
    phase_mesh,
    save,
)

THEORY_LINE = dict(color="k", lw=1.4, label=r"$\alpha_c(\omega)$, theory of the tied model")


def extension_maps(
    maps: dict[str, pd.DataFrame],
    transitions: dict[str, pd.DataFrame],
    lines: pd.DataFrame,
    titles: dict[str, str],
    path: str | Path,
    head: str,
) -> float:
    """One panel per extension (`maps`: name -> training-loss gap, omega rows and alpha
    columns) with limits ± the largest |gap| of all panels, the theory line `lines` (omega,
    alpha_c) and the panel's empirical transition (`transitions`: name -> omega, alpha_t) on
    top, then a panel with every extension's empirical transition against omega. `titles`
    name the panels, `head` (the parameters) is the figure's title. Returns the colour limit."""
    names = list(maps)
    ncols = 3
    nrows = -(-(len(names) + 1) // ncols)
    fig, axes = new_figure(
        nrows, ncols, (4.3 * ncols + 1.2, 3.5 * nrows + 1.4), sharex=True, sharey=True
    )
    flat = axes.ravel()
    lim = max(float(np.nanmax(np.abs(m.to_numpy()))) for m in maps.values()) or 1.0
    colors = dict(zip(names, EXTENSION_COLORS, strict=False))
    summary = flat[len(names)]
    for ax, name in zip(flat, names, strict=False):
        gap = maps[name]
        mesh = phase_mesh(ax, gap, SEMANTIC_POSITIONAL, lim)
        ax.plot(lines["alpha_c"], lines["omega"], **THEORY_LINE)
        t = transitions[name]
        ax.plot(t["alpha_t"], t["omega"], "x", color="k", ms=4, label="empirical transition")
        ax.set_title(titles[name], fontsize=9, color=colors[name])
        summary.plot(t["alpha_t"], t["omega"], "o-", ms=2.5, lw=1, color=colors[name],
                     label=f"empirical, {titles[name]}")  # fmt: skip
    summary.plot(lines["alpha_c"], lines["omega"], **THEORY_LINE)
    summary.set_title("empirical transitions (first sign change)", fontsize=9)
    for ax in flat[len(names) + 1 :]:
        ax.set_visible(False)
    for ax in flat[: len(names) + 1]:
        ax.set_ylabel(r"$\omega$")
        ax.set_xlabel(r"$\alpha = n/d$")
    fig.colorbar(
        mesh,
        ax=list(flat[: len(names)]),
        label="training loss: semantic − positional start (< 0: semantic lower)",
        shrink=0.8,
    )
    legend_below(fig, flat[: len(names) + 1])
    fig.suptitle("\n".join(textwrap.wrap(head, 170)), fontsize=9)
    save(fig, path)
    return lim


__all__ = ["extension_maps"]
