"""Figures (matplotlib): the learning curves of the paper's Fig. 2."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd

BRANCH_STYLE = {
    "semantic": dict(color="tab:blue"),
    "positional": dict(color="tab:orange"),
    "trivial": dict(color="tab:gray", linestyle=":"),
}


def learning_curves(df: pd.DataFrame, path: str | Path) -> dict[str, pd.DataFrame]:
    """theta/sigma^2 and m vs alpha for each branch, and eps_g with eps_lin (Fig. 2).

    Only converged points that sit on their branch are drawn; returns the plotted data per branch.
    """
    path = Path(path)
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8), constrained_layout=True)
    plotted: dict[str, pd.DataFrame] = {}
    for branch, sub in df.groupby("branch", sort=False):
        sub = sub[sub["converged"] & (sub["kind"] == branch)].sort_values("alpha")
        plotted[branch] = sub
        style = BRANCH_STYLE.get(branch, {})
        axes[0].plot(sub["alpha"], sub["theta"] / sub["sigma"] ** 2, label=branch, **style)
        axes[1].plot(sub["alpha"], sub["m"], label=branch, **style)
        axes[2].plot(sub["alpha"], sub["test_error"], label=branch, **style)
    lin = df.drop_duplicates("alpha").sort_values("alpha")
    axes[2].plot(lin["alpha"], lin["linear_test_error"], "k--", label="linear baseline")
    for ax, ylabel in zip(axes, (r"$\theta/\sigma^2$", r"$m$", r"$\epsilon_g$"), strict=True):
        ax.set_xlabel(r"$\alpha$")
        ax.set_ylabel(ylabel)
        ax.legend(frameon=False)
    first = df.iloc[0]
    fig.suptitle(
        rf"$\omega$={first['omega']:g}, $\sigma$={first['sigma']:g}, $\lambda$={first['lam']:g}"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=150)
    plt.close(fig)
    return plotted
