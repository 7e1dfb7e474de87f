"""Fig. 8 and Fig. 9 of the paper: learning curves (theta/sigma^2, m, eps_g against alpha) at
several omega, one column per omega, simulations (seed means ± std) on the theory's fixed points.
Colours, legend and seed bars: `attnphase.figures.style`."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pandas as pd

from .curves import parameters_text
from .style import LINES, color, legend_below, new_figure, save, seed_errorbars

ROWS = (("theta_s2", r"$|\theta|/\sigma^2$"), ("m", r"$m$"), ("test_error", r"$\epsilon_g$"))


def theory_label(branch: str, kind: str) -> str:
    """Legend label of a theory curve: the branch when the start stayed on it, else the fixed
    point it reached ('theory, trivial (θ = m = 0)' for both starts alike)."""
    if kind == branch:
        return f"theory, {branch}"
    return "theory, trivial (θ = m = 0)" if kind == "trivial" else f"theory, {kind}"


def _theory_segments(sub: pd.DataFrame):
    """Runs of consecutive alphas (sorted) with one kind of fixed point: (kind, rows)."""
    sub = sub.sort_values("alpha")
    run_id = (sub["kind"] != sub["kind"].shift()).cumsum()
    for _, seg in sub.groupby(run_id, sort=False):
        yield seg["kind"].iloc[0], seg


def omega_slices(
    theory: pd.DataFrame,
    sims: pd.DataFrame,
    path: str | Path,
    title: str,
    note: str | None = None,
) -> pd.DataFrame:
    """One column per omega: theta/sigma^2, m and eps_g against alpha for the theory's fixed
    point reached from each start (drawn in the style of the fixed point it is: a start that
    ends at the trivial point is drawn grey), eps_lin, and the simulations' seed means ± std
    per start, with |theta|: a run from the positional start picks the sign of theta at
    random (Q -> -Q is a symmetry of the risk), the theory's theta >= 0. `note` (a measured
    explanation) is printed under the title. Returns the
    simulation summary (omega, init, alpha; mean and std of each plotted column)."""
    ok = sims[sims["converged"]].copy()
    ok["theta_s2"] = ok["theta"].abs() / ok["sigma"] ** 2
    cols = [c for c, _ in ROWS]
    summary = ok.groupby(["omega", "init", "alpha"])[cols].agg(["mean", "std"]).reset_index()
    th = theory[theory["converged"]].copy()
    th["theta_s2"] = th["theta"] / th["sigma"] ** 2
    omegas = sorted(set(th["omega"]) | set(summary["omega"]))
    fig, axes = new_figure(3, len(omegas), (3.4 * len(omegas) + 1.0, 8.2), sharex=True)
    for j, omega in enumerate(omegas):
        column = axes[:, j]
        at = th[np.isclose(th["omega"], omega)]
        for branch, sub in at.groupby("branch", sort=False):
            for kind, seg in _theory_segments(sub):
                style = {**LINES.get(kind, {"color": color(kind)}), "lw": 1.4}
                for ax, col in zip(column, cols, strict=True):
                    ax.plot(seg["alpha"], seg[col], label=theory_label(branch, kind), **style)
        lin = at.drop_duplicates("alpha").sort_values("alpha")
        column[2].plot(
            lin["alpha"],
            lin["linear_test_error"],
            label=r"linear baseline $\epsilon_{lin}$",
            **LINES["linear"],
        )
        sub = summary[np.isclose(summary["omega"], omega)]
        seed_errorbars(column, sub, "alpha", cols, "simulation, ", fmt="o", ms=3.5, capsize=2)
        column[0].set_title(rf"$\omega$ = {omega:g}", fontsize=10)
        column[-1].set_xlabel(r"$\alpha = n/d$")
    for ax, (_, ylabel) in zip(axes[:, 0], ROWS, strict=True):
        ax.set_ylabel(ylabel)
    legend_below(fig, axes.ravel())
    head = (
        f"{title}: {parameters_text(theory, ('sigma', 'lam'))}. Simulations: "
        f"d = {int(sims['d'].iloc[0])}, {sims['seed'].nunique()} seeds (mean ± std), "
        f"{sims['optimizer'].iloc[0]}"
    )
    text = head + ("\n" + "\n".join(textwrap.wrap(note, 150)) if note else "")
    fig.suptitle(text, fontsize=9)
    save(fig, path)
    return summary


REFERENCE_PANELS = (
    ("theta", r"$\theta/\sigma^2$"),
    ("m", r"$m$"),
    ("V", r"$V$"),
    ("eps_g", r"$\epsilon_g$ = mse/2"),
)


def reference_comparison(
    ours: pd.DataFrame, reference: pd.DataFrame, path: str | Path, sigma: float, note: str = ""
) -> pd.DataFrame:
    """Our fixed points (lines; rows branch, alpha, kind, q, m, V, theta, mse) against the
    authors' published ones (markers; same columns, no kind) at the same alphas, and below them
    the authors' relative deviation (reference / ours - 1, in %) where our start stays on its
    branch (theta shown as theta/sigma^2). Returns the deviation table (branch, alpha, one
    column per panel)."""
    fig, axes = new_figure(2, len(REFERENCE_PANELS), (15, 6.6), sharex=True)
    sigma2 = sigma**2
    tables = []
    for branch, ref in reference.groupby("branch", sort=False):
        ref = ref.assign(eps_g=ref["mse"] / 2).sort_values("alpha")
        own = ours[(ours["branch"] == branch) & (ours["kind"] == branch)]
        own = own.assign(eps_g=own["mse"] / 2).sort_values("alpha")
        both = ref.merge(own, on="alpha", suffixes=("_ref", ""))
        dev = pd.DataFrame({"branch": branch, "alpha": both["alpha"]})
        style = {"color": color(branch)}
        for j, (col, _) in enumerate(REFERENCE_PANELS):
            scale = sigma2 if col == "theta" else 1.0
            axes[0, j].plot(own["alpha"], own[col] / scale, label=f"attnphase, {branch}", **style)
            axes[0, j].plot(
                ref["alpha"], ref[col] / scale, "x", ms=5, label=f"authors, {branch}", **style
            )
            dev[col] = 100 * (both[f"{col}_ref"] / both[col] - 1)
            if branch == "positional" and col == "theta" or branch == "semantic" and col == "m":
                dev[col] = np.nan  # zero on this branch: no relative deviation
            axes[1, j].plot(dev["alpha"], dev[col], "o-", ms=3, **style)
        tables.append(dev)
    for j, (_, label) in enumerate(REFERENCE_PANELS):
        axes[0, j].set_ylabel(label)
        axes[1, j].set_ylabel("authors / attnphase − 1 (%)")
        axes[1, j].axhline(0, color="k", lw=0.6)
        axes[1, j].set_xlabel(r"$\alpha = n/d$")
    legend_below(fig, axes.ravel())
    order = ""
    if {"n_xi", "n_y"} <= set(ours):
        order = f" at quadrature order ({ours['n_xi'].iloc[0]}, {ours['n_y'].iloc[0]})"
    text = f"Theory: attnphase{order} vs the authors' published fixed points"
    text += "\n" + "\n".join(textwrap.wrap(note, 170)) if note else ""
    fig.suptitle(text, fontsize=9)
    save(fig, path)
    return pd.concat(tables, ignore_index=True)


__all__ = ["omega_slices", "reference_comparison", "theory_label"]
