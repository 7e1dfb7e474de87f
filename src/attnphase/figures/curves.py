"""Figures (matplotlib object API, no pyplot): Fig. 2 learning curves (theory, simulations),
Fig. 3 phase maps and finite-size scaling. Each function draws from a table, states the
parameters on the figure, and returns the data it plotted. Colours: `attnphase.figures.style`."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd

from .style import (
    LINEAR_ATTENTION,
    LINES,
    SEMANTIC_POSITIONAL,
    color,
    legend_below,
    new_figure,
    phase_mesh,
    save,
    seed_errorbars,
)

_SYMBOLS = {"omega": r"$\omega$", "sigma": r"$\sigma$", "lam": r"$\lambda$", "alpha": r"$\alpha$"}


def parameters_text(df: pd.DataFrame, keys=("omega", "sigma", "lam")) -> str:
    """'ω = 0.3, σ = 0.5, λ = 0.01, A = [[0.6, 0.4], [0.4, 0.6]]' from the table's first row,
    for the columns it has (one value each: the figures draw one parameter set)."""
    first = df.iloc[0]
    parts = [f"{_SYMBOLS[k]} = {first[k]:g}" for k in keys if k in df]
    if {"a11", "a12", "a21", "a22"} <= set(df):
        a = [first[k] for k in ("a11", "a12", "a21", "a22")]
        parts.append(f"A = [[{a[0]:g}, {a[1]:g}], [{a[2]:g}, {a[3]:g}]]")
    elif "A" in df:  # sweep tables keep A as given, a nested list (or its JSON)
        given = first["A"]
        matrix = np.asarray(json.loads(given) if isinstance(given, str) else given, dtype=float)
        rows = ", ".join(
            "[" + ", ".join(f"{v:g}" for v in row) + "]" for row in np.atleast_2d(matrix)
        )
        parts.append(f"A = [{rows}]")
    if {"n_xi", "n_y"} <= set(df):
        parts.append(f"quadrature order ({int(first['n_xi'])}, {int(first['n_y'])})")
    if {"rank", "teacher_rank"} <= set(df) and (first["rank"], first["teacher_rank"]) != (1, 1):
        parts.append(f"r = {int(first['rank'])}, t = {int(first['teacher_rank'])}")
    if {"points", "randomisations"} <= set(df) and (
        first.get("method") == "qmc" or first.get("engine") == "general"  # tables of 0.1
    ):
        parts.append(
            f"QMC {int(first['randomisations'])} x {int(first['points'])} points "
            "(bars: ±2 standard errors)"
        )
    return ", ".join(parts)


def _scalar(values: pd.Series) -> np.ndarray:
    """Overlaps as numbers: scalars as they are, matrices (r, t or K > 1) by their Frobenius
    norm."""
    return np.array([float(np.linalg.norm(np.asarray(v, dtype=float))) for v in values])


def _theory_axes(theory: pd.DataFrame, prefix: str = "") -> tuple:
    """Figure with theta/sigma^2, m and eps_g against alpha for each branch (converged points on
    their branch only) and eps_lin; returns (fig, axes, plotted data per branch)."""
    fig, axes = new_figure(1, 3, (13, 4.4))
    axes = axes[0]
    plotted: dict[str, pd.DataFrame] = {}
    for branch, sub in theory.groupby("branch", sort=False):
        sub = sub[sub["converged"] & (sub["kind"] == branch)].sort_values("alpha")
        plotted[branch] = sub
        style = {**LINES.get(branch, {"color": color(branch)}), "label": f"{prefix}{branch}"}
        s2 = sub["sigma"].to_numpy() ** 2
        for ax, col, scale in (
            (axes[0], "theta", s2),
            (axes[1], "m", 1.0),
            (axes[2], "test_error", 1.0),
        ):
            _curve(ax, sub, col, scale, style)
    lin = theory.drop_duplicates("alpha").sort_values("alpha")
    _curve(
        axes[2],
        lin,
        "linear_test_error",
        1.0,
        {"label": r"linear baseline $\epsilon_{lin}$", **LINES["linear"]},
    )
    matrix = len(theory) and np.asarray(theory["theta"].iloc[0], dtype=float).size > 1
    labels = (
        (r"$\|\theta\|_F/\sigma^2$", r"$\|M\|_F$", r"$\epsilon_g$")
        if matrix
        else (r"$\theta/\sigma^2$", r"$m$", r"$\epsilon_g$")
    )
    for ax, ylabel in zip(axes, labels, strict=True):
        ax.set_xlabel(r"$\alpha = n/d$")
        ax.set_ylabel(ylabel)
    return fig, axes, plotted


def _curve(ax, sub: pd.DataFrame, col: str, scale, style: dict) -> None:
    """A theory curve; with bars of two standard errors where the table has `<col>_err` (the
    general engine's integration error; for a matrix overlap, the norm of the entries'
    errors)."""
    y = _scalar(sub[col]) / scale
    if f"{col}_err" in sub and np.isfinite(_scalar(sub[f"{col}_err"])).any():
        err = 2 * _scalar(sub[f"{col}_err"]) / scale
        ax.errorbar(sub["alpha"], y, yerr=err, capsize=2, elinewidth=0.8, marker="o", ms=3, **style)
    else:
        ax.plot(sub["alpha"], y, **style)


def learning_curves(df: pd.DataFrame, path: str | Path) -> dict[str, pd.DataFrame]:
    """theta/sigma^2 and m vs alpha for each branch, and eps_g with eps_lin (Fig. 2, theory).

    Only converged points that sit on their branch are drawn; returns the plotted data per branch.
    """
    fig, axes, plotted = _theory_axes(df)
    legend_below(fig, axes)
    fig.suptitle(f"Theory (state evolution): {parameters_text(df)}", fontsize=10)
    save(fig, path)
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
    seed_errorbars(
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
                ax.axvline(value, color="k", linestyle=style, lw=0.8, label=f"{name} (theory)")
    legend_below(fig, axes)
    optimizer = f", {sims['optimizer'].iloc[0]}" if "optimizer" in sims else ""
    fig.suptitle(
        f"Simulations: d = {int(sims['d'].iloc[0])}, {sims['seed'].nunique()} seeds "
        f"(mean ± std){optimizer}. Theory: {parameters_text(theory)}",
        fontsize=10,
    )
    save(fig, path)
    return summary


def phase_maps(runs: pd.DataFrame, start: str = "init") -> dict[str, pd.DataFrame]:
    """Per (alpha, omega), averaged over seeds when the table has them: the training-loss
    difference of the semantic- and positional-start minima, and eps_lin - eps_g of the
    lower-loss minimum (Fig. 3 centre/right). `start` names the column of the start
    ("init" in simulations, "branch" in theory tables); unconverged runs are left out."""
    ok = runs[runs["converged"].astype(bool)]
    keys = ["alpha", "omega", *(["seed"] if "seed" in runs else [])]
    wide = ok.pivot_table(
        index=keys, columns=start, values=["train_loss", "test_error", "linear_test_error"]
    )
    loss_gap = wide[("train_loss", "semantic")] - wide[("train_loss", "positional")]
    best_err = wide[("test_error", "semantic")].where(
        loss_gap < 0, wide[("test_error", "positional")]
    )
    gain = wide[("linear_test_error", "semantic")] - best_err
    frame = pd.DataFrame({"loss_gap": loss_gap, "gain": gain}).groupby(["alpha", "omega"]).mean()
    return {name: frame[name].unstack("alpha").sort_index() for name in ("loss_gap", "gain")}


def theory_line_notes(lines: pd.DataFrame, alpha_lo: float, alpha_hi: float) -> list[str]:
    """Why theory points are missing from a phase map: a root not found in the scanned alpha
    range (NaN), or one outside the plotted range [alpha_lo, alpha_hi]. One line per omega
    with a missing point."""
    why = {
        "alpha_c": "the training losses do not cross",
        "alpha_l": r"$\epsilon_g$ does not cross $\epsilon_{lin}$",
    }
    notes = []
    for _, row in lines.sort_values("omega").iterrows():
        scanned = f" in [{row['alpha_min']:g}, {row['alpha_max']:g}]" if "alpha_max" in row else ""
        parts = []
        for key, name in (("alpha_c", r"$\alpha_c$"), ("alpha_l", r"$\alpha_l$")):
            value = row[key]
            if not np.isfinite(value):
                parts.append(f"no {name}{scanned} ({why[key]})")
            elif not alpha_lo <= value <= alpha_hi:
                parts.append(f"{name} = {value:.3g}, outside the simulated range")
        if parts:
            notes.append(f"ω = {row['omega']:g}: " + "; ".join(parts))
    return notes


def fig3(
    theory: pd.DataFrame, sims: pd.DataFrame, lines: pd.DataFrame, path: str | Path
) -> pd.DataFrame:
    """Fig. 3 centre/right: colour maps over (alpha, omega), the theory's (`theory`: both
    starts' fixed points, column `branch`) above the simulations' (`sims`: seed means), with
    the theory's alpha_c(omega) and alpha_l(omega) on top and missing theory points explained
    below. Left: training loss of the semantic minus the positional start; right: the gain of
    the lower-loss minimum over the linear baseline. Each column shares its colour scale.
    Returns the maps' table: one row per (alpha, omega), columns theory_/sim_ loss_gap, gain."""
    maps = {"theory": phase_maps(theory, start="branch"), "sim": phase_maps(sims)}
    fig, axes = new_figure(2, 2, (11, 8.6))
    panels = {
        "loss_gap": (
            "training loss: semantic − positional start\n(< 0: semantic lower)",
            SEMANTIC_POSITIONAL,
        ),
        "gain": (r"$\epsilon_{lin} - \epsilon_g$" + "\n(> 0: attention better)", LINEAR_ATTENTION),
    }
    rows = {
        "theory": "theory (replica-symmetric fixed points, d → ∞)",
        "sim": f"simulations, d = {int(sims['d'].iloc[0])}, {sims['seed'].nunique()} seeds",
    }
    for j, (name, (label, cmap)) in enumerate(panels.items()):
        grids = [maps[source][name] for source in rows]
        lim = max(float(np.nanmax(np.abs(g.to_numpy()))) for g in grids) or 1.0
        for i, (source, grid) in enumerate(zip(rows, grids, strict=True)):
            ax = axes[i, j]
            mesh = phase_mesh(ax, grid, cmap, lim)
            fig.colorbar(mesh, ax=ax, label=label)
            ax.plot(lines["alpha_c"], lines["omega"], "ko-", lw=1.5, label=r"$\alpha_c$ (theory)")
            ax.plot(lines["alpha_l"], lines["omega"], "ks--", lw=1.5, label=r"$\alpha_l$ (theory)")
            ax.set_xlabel(r"$\alpha = n/d$")
            ax.set_ylabel(r"$\omega$")
            ax.set_title(rows[source], fontsize=9)
    alphas = maps["sim"]["loss_gap"].columns
    notes = theory_line_notes(lines, float(alphas.min()), float(alphas.max()))
    caption = "\n".join(textwrap.wrap("Missing theory lines: " + "; ".join(notes), 170))
    legend_below(fig, axes.ravel(), caption if notes else None)
    order = ""
    if {"n_xi", "n_y"} <= set(theory):
        order = f"; theory at quadrature order ({theory['n_xi'].iloc[0]}, {theory['n_y'].iloc[0]})"
    fig.suptitle(
        f"{parameters_text(sims, ('sigma', 'lam'))}; simulations: seed means{order}", fontsize=9
    )
    save(fig, path)
    columns = {
        f"{source}_{name}": grid.stack().rename_axis(["omega", "alpha"])
        for source, by_name in maps.items()
        for name, grid in by_name.items()
    }
    table = pd.DataFrame(columns).reset_index()
    return table[["alpha", "omega", *columns]].sort_values(["omega", "alpha"], ignore_index=True)


def _start_label(branch: str, kind: str) -> str:
    """'theory, semantic start', with where the start ended when that is another fixed point."""
    return f"theory, {branch} start" + (f" (→ {kind})" if kind != branch else "")


def finite_size(sims: pd.DataFrame, theory: pd.DataFrame, path: str | Path) -> pd.DataFrame:
    """Fig. 3 left (one alpha) and Fig. 7 (one column per alpha): theta/sigma^2 and m of both
    starts' minima against d (mean and std over seeds), with the theory's fixed point reached
    from each start (`theory`: rows alpha, branch, kind, theta, m, converged) as lines.
    Simulations show |theta|: from the positional start its sign is random (Q -> -Q)."""
    ok = sims[sims["converged"]].copy()
    ok["theta_s2"] = ok["theta"].abs() / ok["sigma"] ** 2
    cols = ("theta_s2", "m")
    summary = ok.groupby(["alpha", "init", "d"])[list(cols)].agg(["mean", "std"]).reset_index()
    alphas = sorted(summary["alpha"].unique())
    width = max(9.5, 3.6 * len(alphas) + 1.5)  # one column: room for the title and legend
    fig, axes = new_figure(2, len(alphas), (width, 6.4), sharex=True)
    sigma2 = float(ok["sigma"].iloc[0]) ** 2
    ds = sorted(summary["d"].unique())
    for j, alpha in enumerate(alphas):
        column = axes[:, j]
        sub = summary[summary["alpha"] == alpha]
        seed_errorbars(column, sub, "d", cols, "simulation, ", fmt="o-", capsize=2)
        at = theory[np.isclose(theory["alpha"], alpha) & theory["converged"]]
        for _, row in at.iterrows():
            style = LINES.get(row["kind"], {"color": color(row["branch"])})
            values = (float(row["theta"]) / sigma2, float(row["m"]))
            for ax, value in zip(column, values, strict=True):
                ax.axhline(
                    value,
                    **{**style, "linestyle": "--"},
                    lw=1,
                    label=_start_label(row["branch"], row["kind"]),
                )
        column[0].set_title(f"{_SYMBOLS['alpha']} = {alpha:g}", fontsize=10)
        for ax, ylabel in zip(column, (r"$|\theta|/\sigma^2$", r"$m$"), strict=True):
            ax.set_xscale("log")
            ax.set_xticks(ds, [f"{d:g}" for d in ds])
            ax.minorticks_off()
            ax.set_ylabel(ylabel)
        column[1].set_xlabel("d")
    legend_below(fig, axes.ravel())
    optimizer = f", {sims['optimizer'].iloc[0]}" if "optimizer" in sims else ""
    fig.suptitle(
        f"Finite-size scaling: {parameters_text(sims, ('omega', 'sigma', 'lam'))}; "
        f"{sims['seed'].nunique()} seeds (mean ± std){optimizer}",
        fontsize=10,
    )
    save(fig, path)
    return summary


__all__ = [
    "fig3",
    "finite_size",
    "learning_curves",
    "parameters_text",
    "phase_maps",
    "simulation_overlay",
    "theory_line_notes",
]
