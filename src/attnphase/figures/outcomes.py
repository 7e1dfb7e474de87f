"""Figure of an outcome study: fractions of semantic / positional / other end points vs alpha
(the paper's Fig. 15)."""

from __future__ import annotations

from pathlib import Path

from .style import COLORS, new_figure, save

_COLOURS = {
    "semantic": COLORS["semantic"],
    "positional": COLORS["positional"],
    "other": COLORS["trivial"],
}


def study_title(
    *, d, runs, init, optimizer, lr, steps, gtol, omega, sigma, lam, A_text: str
) -> str:
    """The parameters of an outcome study as the figure's two-line title."""
    step_text = "default" if steps is None else steps
    return (
        f"d={d}, {runs} runs/alpha, {init} start, {optimizer} (lr={lr or 'default'}, "
        f"steps={step_text}, gtol={gtol:g})\nomega={omega}, sigma={sigma}, lambda={lam}, "
        f"A={A_text}"
    )


def outcome_figure(fractions: list[dict], path: str | Path, parameters: str) -> None:
    """Fractions (with binomial standard errors) of each outcome vs alpha, one record per alpha
    as `attnphase.validity.outcomes` returns them; `parameters` is printed as the title."""
    if not fractions:
        raise ValueError("fractions: nothing to plot")
    fig, axes = new_figure(1, 1, (6.0, 4.0))
    ax = axes[0, 0]
    alphas = [r["alpha"] for r in fractions]
    for name, colour in _COLOURS.items():
        ax.errorbar(
            alphas,
            [r[f"fraction_{name}"] for r in fractions],
            yerr=[r[f"se_{name}"] for r in fractions],
            color=colour,
            marker="o",
            capsize=3,
            label=name,
        )
    ax.set_xlabel(r"$\alpha$")
    ax.set_ylabel("fraction of runs")
    ax.set_ylim(-0.05, 1.05)
    ax.legend()
    ax.set_title(parameters, fontsize=8)
    save(fig, path)
