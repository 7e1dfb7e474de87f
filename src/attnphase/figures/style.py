"""One palette and one way to make, label and save figures, for every figure of the package.

Figures are drawn with matplotlib's object API (`matplotlib.figure.Figure`), which needs
neither pyplot nor a backend switch: importing attnphase never changes the caller's backend.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.colors import LinearSegmentedColormap
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.patches import Rectangle

from ..io import atomic_output

COLORS = {
    "semantic": "tab:blue",
    "positional": "tab:orange",
    "trivial": "tab:gray",
    "linear": "black",
    # anything else: another optimizer, a trustworthy point, attention beating the baseline
    "accent": "tab:green",
}
LINES = {
    "semantic": dict(color=COLORS["semantic"]),
    "positional": dict(color=COLORS["positional"]),
    "trivial": dict(color=COLORS["trivial"], linestyle=":"),
    "linear": dict(color=COLORS["linear"], linestyle="--"),
}
# one colour per model extension, none of them the semantic blue or the positional orange
EXTENSION_COLORS = ("0.3", "tab:purple", COLORS["accent"], "tab:red", "tab:brown", "tab:olive")
# diverging maps whose ends are the palette's colours: low = semantic, high = positional;
# low = linear baseline better, high = attention better
SEMANTIC_POSITIONAL = LinearSegmentedColormap.from_list(
    "semantic_positional", [COLORS["semantic"], "white", COLORS["positional"]]
)
LINEAR_ATTENTION = LinearSegmentedColormap.from_list(
    "linear_attention", ["0.35", "white", COLORS["accent"]]
)


def color(name: str) -> str:
    """The palette colour of a branch, start or model (the accent for anything else)."""
    return COLORS.get(name, COLORS["accent"])


MISSING_LABEL = "no value (no converged fixed point or run)"


def _cell_edges(centres: np.ndarray) -> np.ndarray:
    """The edges of cells centred on sorted `centres`: midpoints, the ends mirrored."""
    c = np.asarray(centres, dtype=float)
    if c.size == 1:
        return np.array([c[0] - 0.5, c[0] + 0.5])
    mid = 0.5 * (c[1:] + c[:-1])
    return np.concatenate([[2 * c[0] - mid[0]], mid, [2 * c[-1] - mid[-1]]])


def phase_mesh(ax: Axes, grid: pd.DataFrame, cmap, lim: float):
    """A diverging colour map of `grid` (omega rows, alpha columns) on [-lim, lim], one cell
    per grid point, a cell without a value hatched (labelled MISSING_LABEL, never a white
    hole); returns the mesh (for a colour bar)."""
    values = grid.to_numpy()
    mesh = ax.pcolormesh(
        grid.columns, grid.index, values, shading="nearest", cmap=cmap, vmin=-lim, vmax=lim
    )
    x, y = _cell_edges(grid.columns.to_numpy()), _cell_edges(grid.index.to_numpy())
    label = MISSING_LABEL
    for i, j in zip(*np.nonzero(~np.isfinite(values)), strict=True):
        ax.add_patch(
            Rectangle(
                (x[j], y[i]),
                x[j + 1] - x[j],
                y[i + 1] - y[i],
                fill=False,
                hatch="////",
                edgecolor="0.45",
                linewidth=0.0,
                label=label,
            )
        )
        label = "_nolegend_"
    return mesh


def new_figure(nrows: int, ncols: int, figsize: tuple[float, float], **kw):
    """A Figure (constrained layout) and its axes array, without pyplot."""
    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.subplots(nrows, ncols, squeeze=False, **kw)


def seed_errorbars(axes, summary: pd.DataFrame, x: str, cols, prefix: str, **style) -> None:
    """Seed means with standard-deviation bars, one series per start, one column per axis
    (`summary`: columns init, x and (col, "mean" | "std"))."""
    for init, sub in summary.groupby("init"):
        for ax, col in zip(axes, cols, strict=True):
            ax.errorbar(
                sub[x],
                sub[(col, "mean")],
                yerr=sub[(col, "std")].fillna(0.0),
                color=color(init),
                label=f"{prefix}{init} start",
                **style,
            )


def _legend_rank(label: str) -> tuple[int, int]:
    """Legend order: theory lines, the linear baseline, simulations, marked transitions; within
    each, semantic before positional."""
    group = 2 if "simulation" in label else 1 if "linear" in label else 3 if "$" in label else 0
    branch = 0 if "semantic" in label else 1 if "positional" in label else 2
    return group, branch


def legend_below(fig: Figure, axes: Iterable[Axes], caption: str | None = None) -> None:
    """One legend for all panels, below them (never over the data), in at most two rows;
    `caption`, a note on what the panels lack, as the legend's title (small, above the
    entries)."""
    seen: dict[str, Artist] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            seen.setdefault(label, handle)
    labels = sorted(seen, key=_legend_rank)
    ncols = len(labels) if len(labels) <= 4 else -(-len(labels) // 2)
    # matplotlib fills the legend column by column: reorder so that it reads row by row
    order = [r * ncols + c for c in range(ncols) for r in range(2) if r * ncols + c < len(labels)]
    legend = fig.legend(
        [seen[labels[i]] for i in order],
        [labels[i] for i in order],
        loc="outside lower center",
        ncols=ncols,
        frameon=False,
        fontsize=8,
    )
    if caption:
        legend.set_title(caption, prop=FontProperties(size=7))


def save(fig: Figure, path: str | Path) -> None:
    """`path` (its suffix names the format; PNG at 150 dpi) and a PDF twin, each written
    atomically (`attnphase.io.atomic_output`)."""
    path = Path(path)
    formats: list[tuple[Path, dict[str, Any]]] = [
        (path, {"dpi": 150}),
        (path.with_suffix(".pdf"), {}),
    ]
    for target, options in formats:
        with atomic_output(target) as tmp:
            fig.savefig(tmp, format=target.suffix.lstrip(".").lower(), **options)
