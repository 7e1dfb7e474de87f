"""Figures (matplotlib): Fig. 2 learning curves (theory, simulations), Fig. 3 phase maps and
finite-size scaling. Each function draws from a table and returns the data it plotted."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

BRANCH_STYLE = {
    "semantic": dict(color="tab:blue"),
    "positional": dict(color="tab:orange"),
    "trivial": dict(color="tab:gray", linestyle=":"),
}


def _theory_axes(theory: pd.DataFrame, prefix: str = "") -> tuple:
    """Figure with theta/sigma^2, m and eps_g against alpha for each branch (converged points on
    their branch only) and eps_lin; returns (fig, axes, plotted data per branch)."""
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8), constrained_layout=True)
    plotted: dict[str, pd.DataFrame] = {}
    for branch, sub in theory.groupby("branch", sort=False):
        sub = sub[sub["converged"] & (sub["kind"] == branch)].sort_values("alpha")
        plotted[branch] = sub
        style = BRANCH_STYLE.get(branch, {})
        label = f"{prefix}{branch}"
        axes[0].plot(sub["alpha"], sub["theta"] / sub["sigma"] ** 2, label=label, **style)
        axes[1].plot(sub["alpha"], sub["m"], label=label, **style)
        axes[2].plot(sub["alpha"], sub["test_error"], label=label, **style)
    lin = theory.drop_duplicates("alpha").sort_values("alpha")
    axes[2].plot(lin["alpha"], lin["linear_test_error"], "k--", label="linear baseline")
    for ax, ylabel in zip(axes, (r"$\theta/\sigma^2$", r"$m$", r"$\epsilon_g$"), strict=True):
        ax.set_xlabel(r"$\alpha$")
        ax.set_ylabel(ylabel)
    return fig, axes, plotted


def learning_curves(df: pd.DataFrame, path: str | Path) -> dict[str, pd.DataFrame]:
    """theta/sigma^2 and m vs alpha for each branch, and eps_g with eps_lin (Fig. 2, theory).

    Only converged points that sit on their branch are drawn; returns the plotted data per branch.
    """
    fig, axes, plotted = _theory_axes(df)
    for ax in axes:
        ax.legend(frameon=False)
    first = df.iloc[0]
    fig.suptitle(
        rf"$\omega$={first['omega']:g}, $\sigma$={first['sigma']:g}, $\lambda$={first['lam']:g}"
    )
    _save(fig, Path(path))
    return plotted


def simulation_overlay(
    theory: pd.DataFrame,
    sims: pd.DataFrame,
    path: str | Path,
    alpha_c: float | None = None,
    alpha_l: float | None = None,
) -> pd.DataFrame:
    """Fig. 2: simulation means and standard deviations over seeds (markers with error bars)
    on the theory curves, eps_lin, and alpha_c / alpha_l marked when given. Writes path and
    its .pdf twin; returns the plotted simulation summary."""
    fig, axes, _ = _theory_axes(theory, prefix="theory, ")
    ok = sims[sims["converged"]].copy()
    ok["theta_s2"] = ok["theta"] / ok["sigma"] ** 2
    summary = ok.groupby(["init", "alpha"])[["theta_s2", "m", "test_error"]].agg(["mean", "std"])
    summary = summary.reset_index()
    _seed_errorbars(
        axes,
        summary,
        "alpha",
        ("theta_s2", "m", "test_error"),
        "simulation, ",
        fmt="o",
        ms=4,
        capsize=2,
    )
    for value, name, style in ((alpha_c, r"$\alpha_c$", ":"), (alpha_l, r"$\alpha_l$", "-.")):
        if value is not None and np.isfinite(value):
            for ax in axes:
                ax.axvline(value, color="k", linestyle=style, lw=0.8, label=name)
    axes[2].legend(frameon=False, fontsize=7)
    fig.suptitle(f"d = {int(sims['d'].iloc[0])}, {sims['seed'].nunique()} seeds")
    _save(fig, Path(path))
    return summary


def _seed_errorbars(axes, summary: pd.DataFrame, x: str, cols, prefix: str, **style) -> None:
    """Seed means with standard-deviation bars, one series per start, one column per axis."""
    for init, sub in summary.groupby("init"):
        color = BRANCH_STYLE.get(init, {}).get("color", "tab:green")
        for ax, col in zip(axes, cols, strict=True):
            ax.errorbar(
                sub[x],
                sub[(col, "mean")],
                yerr=sub[(col, "std")].fillna(0.0),
                color=color,
                label=f"{prefix}{init} start",
                **style,
            )


def _save(fig, path: Path) -> None:
    """PNG (or the given suffix) and a PDF twin."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=150)
    fig.savefig(path.with_suffix(".pdf"))
    plt.close(fig)


def phase_maps(sims: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Per (alpha, omega), averaged over seeds: the training-loss difference of the semantic- and
    positional-start minima, and eps_lin - eps_g of the lower-loss minimum (Fig. 3 centre/right)."""
    ok = sims[sims["converged"]]
    wide = ok.pivot_table(
        index=["alpha", "omega", "seed"],
        columns="init",
        values=["train_loss", "test_error", "linear_test_error"],
    )
    loss_gap = wide[("train_loss", "semantic")] - wide[("train_loss", "positional")]
    best_err = wide[("test_error", "semantic")].where(
        loss_gap < 0, wide[("test_error", "positional")]
    )
    gain = wide[("linear_test_error", "semantic")] - best_err
    frame = pd.DataFrame({"loss_gap": loss_gap, "gain": gain}).groupby(["alpha", "omega"]).mean()
    return {name: frame[name].unstack("alpha").sort_index() for name in ("loss_gap", "gain")}


def fig3(sims: pd.DataFrame, lines: pd.DataFrame, path: str | Path) -> dict[str, pd.DataFrame]:
    """Fig. 3 centre/right: colour maps over (alpha, omega) from simulations with the theory's
    alpha_c(omega) and alpha_l(omega) on top. Returns the two maps (omega rows, alpha columns)."""
    maps = phase_maps(sims)
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), constrained_layout=True)
    titles = {
        "loss_gap": "train loss: semantic - positional start",
        "gain": r"$\epsilon_{lin} - \epsilon_g$ (lower-loss minimum)",
    }
    for ax, (name, grid) in zip(axes, maps.items(), strict=True):
        lim = float(np.nanmax(np.abs(grid.to_numpy()))) or 1.0
        mesh = ax.pcolormesh(
            grid.columns,
            grid.index,
            grid.to_numpy(),
            shading="nearest",
            cmap="RdBu_r",
            vmin=-lim,
            vmax=lim,
        )
        fig.colorbar(mesh, ax=ax)
        ax.plot(lines["alpha_c"], lines["omega"], "ko-", lw=1.5, label=r"$\alpha_c$ theory")
        ax.plot(lines["alpha_l"], lines["omega"], "ks--", lw=1.5, label=r"$\alpha_l$ theory")
        ax.set_xlabel(r"$\alpha$")
        ax.set_ylabel(r"$\omega$")
        ax.set_title(titles[name], fontsize=9)
        ax.legend(frameon=False, fontsize=7)
    _save(fig, Path(path))
    return maps


def finite_size(sims: pd.DataFrame, theory: dict[str, dict], path: str | Path) -> pd.DataFrame:
    """Fig. 3 left: theta and m of both minima against d at fixed alpha (mean and std over
    seeds), with the theory's values (theory[init] = {"theta": ..., "m": ...}) as lines."""
    ok = sims[sims["converged"]]
    summary = ok.groupby(["init", "d"])[["theta", "m"]].agg(["mean", "std"]).reset_index()
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6), constrained_layout=True)
    _seed_errorbars(axes, summary, "d", ("theta", "m"), "", fmt="o-")
    for init, values in theory.items():
        color = BRANCH_STYLE.get(init, {}).get("color", "tab:green")
        for ax, col in zip(axes, ("theta", "m"), strict=True):
            ax.axhline(values[col], color=color, linestyle="--", lw=1)
    for ax, col in zip(axes, (r"$\theta$", r"$m$"), strict=True):
        ax.set_xscale("log")
        ax.set_xlabel("d")
        ax.set_ylabel(col)
        ax.legend(frameon=False, fontsize=7)
    fig.suptitle(rf"$\alpha$ = {sims['alpha'].iloc[0]:g}")
    _save(fig, Path(path))
    return summary
