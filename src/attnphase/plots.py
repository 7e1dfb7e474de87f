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


def simulation_overlay(theory: pd.DataFrame, sims: pd.DataFrame, path: str | Path) -> pd.DataFrame:
    """Simulation means and standard deviations over seeds (markers with error bars) on the
    theory curves of `learning_curves` (Fig. 2). Returns the plotted simulation summary."""
    path = Path(path)
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8), constrained_layout=True)
    for branch, sub in theory.groupby("branch", sort=False):
        sub = sub[sub["converged"] & (sub["kind"] == branch)].sort_values("alpha")
        style = BRANCH_STYLE.get(branch, {})
        axes[0].plot(
            sub["alpha"], sub["theta"] / sub["sigma"] ** 2, label=f"theory, {branch}", **style
        )
        axes[1].plot(sub["alpha"], sub["m"], label=f"theory, {branch}", **style)
        axes[2].plot(sub["alpha"], sub["test_error"], label=f"theory, {branch}", **style)
    lin = theory.drop_duplicates("alpha").sort_values("alpha")
    axes[2].plot(lin["alpha"], lin["linear_test_error"], "k--", label="linear baseline")
    ok = sims[sims["converged"]].copy()
    ok["theta_s2"] = ok["theta"] / ok["sigma"] ** 2
    summary = ok.groupby(["init", "alpha"])[["theta_s2", "m", "test_error"]].agg(["mean", "std"])
    summary = summary.reset_index()
    for init, sub in summary.groupby("init"):
        color = BRANCH_STYLE.get(init, {}).get("color", "tab:green")
        for ax, col in zip(axes, ("theta_s2", "m", "test_error"), strict=True):
            ax.errorbar(
                sub["alpha"],
                sub[(col, "mean")],
                yerr=sub[(col, "std")].fillna(0.0),
                fmt="o",
                color=color,
                ms=4,
                capsize=2,
                label=f"simulation, {init} start",
            )
    for ax, ylabel in zip(axes, (r"$\theta/\sigma^2$", r"$m$", r"$\epsilon_g$"), strict=True):
        ax.set_xlabel(r"$\alpha$")
        ax.set_ylabel(ylabel)
    axes[2].legend(frameon=False, fontsize=7)
    fig.suptitle(f"d = {int(sims['d'].iloc[0])}, {sims['seed'].nunique()} seeds")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=150)
    plt.close(fig)
    return summary
