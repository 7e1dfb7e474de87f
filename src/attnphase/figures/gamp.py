"""The predicted-vs-actual figure of a GAMP run (docs/theory.md §8): per overlap, GAMP's iterates
(markers, one series per seed) beside the state evolution's trace of the same run (line with a band
of ±2 standard errors of its integration), iteration on x. Drawn from the rows of
`attnphase.gamp.trace_table` (matplotlib object API, colours of `attnphase.figures.style`: the
start's colour for both, so semantic and positional read as everywhere else)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from ..gamp.result import GampResult, overlap_number
from .style import color, new_figure, save

PANELS = (
    ("q", r"$q$"),
    ("m", r"$m$"),
    ("theta", r"$\theta$"),
    ("V", r"$V$"),
    ("test_error", r"$\epsilon_g$"),
)
MARKERS = "osD^v<>phX*"


def run_text(runs: Sequence[GampResult]) -> str:
    """The parameters of the runs, for the figure's title (one model, one size, one start)."""
    r, p = runs[0], runs[0].params
    A = ", ".join("[" + ", ".join(f"{v:g}" for v in row) + "]" for row in p.A_array)
    parts = [
        f"d = {r.d}, n = {r.n}, $\\alpha$ = {r.alpha:g}",
        f"$\\omega$ = {p.omega:g}, $\\sigma$ = {p.sigma:g}, $\\lambda$ = {p.lam:g}, A = [{A}]",
        f"{r.init} start, damping {r.damping:g}, seeds {', '.join(str(x.seed) for x in runs)}",
    ]
    if (p.rank, p.teacher_rank) != (1, 1):
        parts.append(f"r = {p.rank}, t = {p.teacher_rank} (Frobenius norms)")
    return "; ".join(parts)


def gamp_trace_figure(
    runs: Sequence[GampResult], rows: Sequence[dict], path: str | Path
) -> pd.DataFrame:
    """q, m, theta, V and eps_g against the iteration: GAMP's iterates (markers; its eps_g is
    measured at the end point only, on the seed's test set) and the state evolution started from
    each run's first admissible iterate (`trace_start`; lines with ±2 standard-error bands).
    rows: `trace_table` of every run (column `seed` tells them apart). Writes `path` and its PDF
    twin; returns the plotted table (numbers; NaN where a series has no value)."""
    if not runs:
        raise ValueError("runs: need at least one GAMP run to draw")
    df = pd.DataFrame(list(rows))
    for name, _ in PANELS:
        for col in (name, f"se_{name}", f"se_{name}_err"):
            if col in df:
                df[col] = [overlap_number(v) for v in df[col]]
    fig, axes = new_figure(1, len(PANELS), (4.0 * len(PANELS), 3.8))
    axes = axes[0]
    c = color(runs[0].init)
    for k, res in enumerate(runs):
        sub = df[df["seed"] == res.seed].sort_values("iteration")
        marker = MARKERS[k % len(MARKERS)]
        for ax, (name, _) in zip(axes, PANELS, strict=True):
            se, err = sub[f"se_{name}"].to_numpy(), 2 * sub[f"se_{name}_err"].to_numpy()
            it = sub["iteration"].to_numpy()
            label = "state evolution (±2 s.e.)" if k == 0 else None
            ax.plot(it, se, color=c, lw=1.2, alpha=0.8, label=label)
            ax.fill_between(it, se - err, se + err, color=c, alpha=0.25, lw=0)
            # GAMP's eps_g exists only at its end point (measured on the seed's test set)
            x, y = (it, sub[name]) if name in sub else ([res.iterations], [res.test_error])
            ax.plot(x, y, marker, color=c, ms=4, mfc="none", label=f"GAMP seed {res.seed}")
    for ax, (_, label) in zip(axes, PANELS, strict=True):
        ax.set_xlabel("iteration")
        ax.set_ylabel(label)
    axes[-1].set_title("GAMP: end point (test set)", fontsize=8)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=min(len(labels), 6), fontsize=8)
    fig.suptitle(
        f"GAMP (markers) vs state evolution of the same run (lines): {run_text(runs)}",
        fontsize=9,
    )
    save(fig, path)
    return df


__all__ = ["gamp_trace_figure", "run_text"]
