"""One palette and one way to make and save figures, for every figure of the package.

Figures are drawn with matplotlib's object API (`matplotlib.figure.Figure`), which needs
neither pyplot nor a backend switch: importing attnphase never changes the caller's backend.
"""

from __future__ import annotations

from pathlib import Path

from matplotlib.colors import LinearSegmentedColormap
from matplotlib.figure import Figure

COLORS = {
    "semantic": "tab:blue",
    "positional": "tab:orange",
    "trivial": "tab:gray",
    "linear": "black",
}
LINES = {
    "semantic": dict(color=COLORS["semantic"]),
    "positional": dict(color=COLORS["positional"]),
    "trivial": dict(color=COLORS["trivial"], linestyle=":"),
    "linear": dict(color=COLORS["linear"], linestyle="--"),
}
# diverging maps whose ends are the palette's colours: low = semantic, high = positional;
# low = linear baseline better, high = attention better
SEMANTIC_POSITIONAL = LinearSegmentedColormap.from_list(
    "semantic_positional", [COLORS["semantic"], "white", COLORS["positional"]]
)
LINEAR_ATTENTION = LinearSegmentedColormap.from_list(
    "linear_attention", ["0.35", "white", "tab:green"]
)


def color(name: str) -> str:
    """The palette colour of a branch, start or model (green for anything else)."""
    return COLORS.get(name, "tab:green")


def new_figure(nrows: int, ncols: int, figsize: tuple[float, float], **kw):
    """A Figure (constrained layout) and its axes array, without pyplot."""
    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.subplots(nrows, ncols, squeeze=False, **kw)


def save(fig: Figure, path: str | Path) -> None:
    """PNG (or the given suffix) at 150 dpi and a PDF twin."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=150)
    fig.savefig(path.with_suffix(".pdf"))
