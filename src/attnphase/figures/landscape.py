"""Figure of the landscape probe (docs/theory.md §9): where L-BFGS ends against the start overlap c.

Top row: |theta_final|/sigma^2 against c (the sign of Q is a symmetry of the model: Q and -Q
are one minimum), one thin line per seed and the seed mean ± standard deviation, with the
start's own theta(Q0)/sigma^2 ~ c dotted (a flat curve: one minimum; one that follows the
start: a continuum). Bottom row: training loss R/d minus its smallest value
over c on the same seed's data. One column per alpha. Colours: `attnphase.figures.style`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .curves import parameters_text
from .style import COLORS, new_figure, save


def landscape_figure(rows: list[dict] | pd.DataFrame, path: str | Path) -> pd.DataFrame:
    """Draw `LandscapeResult.rows()` (scalar theta: r = t = 1) to `path` and its PDF twin;
    returns the plotted seed means and standard deviations per (alpha, c)."""
    df = pd.DataFrame(rows) if not isinstance(rows, pd.DataFrame) else rows.copy()
    if df.empty:
        raise ValueError("rows: nothing to plot")
    if not np.issubdtype(df["theta"].dtype, np.number):
        raise ValueError("rows: the figure draws scalar theta (rank r = t = 1)")
    df["theta_s2"] = df["theta"].abs() / df["sigma"] ** 2
    best = df.groupby(["alpha", "seed"])["train_loss"].transform("min")
    df["excess_loss"] = df["train_loss"] - best
    summary = (
        df.groupby(["alpha", "c"])[["theta_s2", "excess_loss"]].agg(["mean", "std"]).reset_index()
    )
    alphas = sorted(df["alpha"].unique())
    fig, axes = new_figure(2, len(alphas), (4.2 * len(alphas), 6.4), sharex=True)
    colour = COLORS["semantic"]
    for j, alpha in enumerate(alphas):
        top, bottom = axes[0, j], axes[1, j]
        sub = df[df["alpha"] == alpha]
        for _, one in sub.groupby("seed"):
            one = one.sort_values("c")
            for ax, col in ((top, "theta_s2"), (bottom, "excess_loss")):
                ax.plot(
                    one["c"],
                    one[col],
                    color=colour,
                    alpha=0.35,
                    lw=0.8,
                    marker=".",
                    label="one seed",
                )
        mean = summary[summary["alpha"] == alpha]
        for ax, col in ((top, "theta_s2"), (bottom, "excess_loss")):
            ax.errorbar(
                mean["c"],
                mean[(col, "mean")],
                yerr=mean[(col, "std")].fillna(0.0),
                color=colour,
                lw=1.8,
                capsize=3,
                marker="o",
                ms=4,
                label="seed mean ± sd",
            )
        c = np.linspace(0.0, 1.0, 2)
        top.plot(
            c, c, color="0.5", linestyle=":", lw=1, label=r"start: $\theta(Q_0)/\sigma^2 \approx c$"
        )
        top.set_title(rf"$\alpha$ = {alpha:g}, n = {int(sub['n'].iloc[0])}", fontsize=10)
        top.set_ylabel(r"$|\theta_{final}|/\sigma^2$")
        bottom.set_ylabel(r"$R/d - \min_c R/d$ (same seed)")
        bottom.set_xlabel(r"start overlap $c$:  $Q_0 = c\,Q^* + \sqrt{1-c^2}\,g$")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    keep = {label: h for h, label in zip(handles, labels, strict=True)}
    fig.legend(
        keep.values(), keep.keys(), loc="outside lower center", ncols=3, frameon=False, fontsize=8
    )
    fig.suptitle(
        f"L-BFGS end points: d = {int(df['d'].iloc[0])}, {df['seed'].nunique()} seeds, "
        f"{parameters_text(df)}",
        fontsize=10,
    )
    save(fig, path)
    return summary


__all__ = ["landscape_figure"]
