"""The phase-diagram overlay of `attnphase.validity.trust` (docs/theory.md §9): where in (alpha,
omega)
the replica-symmetric answer is trustworthy.

Background: the jump mass of the fixed point the theory reaches from the semantic start (the
semantic branch where it exists), the quantity docs/theory.md §9 says to map. Markers: the verdict
(filled: trustworthy; open: rugged), each rugged point labelled with the letters of its failed
criteria; a marker edged in the positional colour where the positional branch is the global
minimum. Line: alpha_c(omega) interpolated on the grid itself (the alpha where the two
branches' training losses cross, linear between grid points), not `find_transitions`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.colors import LinearSegmentedColormap

from ..validity.trust import CRITERIA, JUMP_MASS_MAX, RS_MAX
from .style import COLORS, new_figure, save

LETTERS = {
    "theory": "T",
    "simulation": "S",
    "gamp": "G",
    "gamp_converged": "C",
    "rs_stability": "R",
    "jump_mass": "J",
}
JUMP_MAP = LinearSegmentedColormap.from_list("jump_mass", ["white", COLORS["semantic"]])


def _edges(values: np.ndarray) -> np.ndarray:
    mid = (values[1:] + values[:-1]) / 2
    first = values[0] - (mid[0] - values[0]) if len(values) > 1 else values[0] - 0.05
    last = values[-1] + (values[-1] - mid[-1]) if len(values) > 1 else values[-1] + 0.05
    return np.concatenate([[first], mid, [last]])


def grid_alpha_c(rows: list[dict], omega: float) -> float:
    """The first alpha of the grid row `omega` where the semantic-start fixed point's training
    loss drops below the positional one's (linear interpolation), NaN if it does not."""
    pts = sorted(
        (r["alpha"], r["sem_train_loss"] - r["pos_train_loss"])
        for r in rows
        if r["omega"] == omega and r["sem_kind"] == "semantic" and r["pos_kind"] == "positional"
    )
    for (a0, g0), (a1, g1) in zip(pts, pts[1:], strict=False):
        if g0 > 0 >= g1:
            return a0 + (a1 - a0) * g0 / (g0 - g1)
    return float("nan")


def trust_figure(rows: list[dict], path: str | Path, note: str = "") -> None:
    """Draw the overlay of `trust_map` rows to `path` (and its PDF twin); points that failed
    to compute (verdict "error") are left blank."""
    rows = [r for r in rows if r["verdict"] != "error"]
    if not rows:
        raise ValueError("no computed point to draw")
    alphas = np.array(sorted({r["alpha"] for r in rows}))
    omegas = np.array(sorted({r["omega"] for r in rows}))
    jump = np.full((len(omegas), len(alphas)), np.nan)
    for r in rows:
        jump[np.searchsorted(omegas, r["omega"]), np.searchsorted(alphas, r["alpha"])] = r[
            "sem_jump_mass"
        ]
    fig, axes = new_figure(1, 1, (8.0, 6.0))
    ax = axes[0, 0]
    mesh = ax.pcolormesh(
        _edges(alphas), _edges(omegas), 100 * jump, cmap=JUMP_MAP, vmin=0, shading="flat"
    )
    cbar = fig.colorbar(mesh, ax=ax)
    cbar.set_label("jump mass of the semantic-start fixed point (%)")
    cbar.ax.axhline(100 * JUMP_MASS_MAX, color="black", lw=1)
    for r in rows:
        good = r["verdict"] == "trustworthy"
        edge = COLORS["positional"] if r["global_min"] == "positional" else "black"
        ax.plot(
            r["alpha"],
            r["omega"],
            marker="o" if good else "X",
            ms=11,
            mfc=COLORS["accent"] if good else "white",
            mec=edge,
            mew=2,
            ls="none",
        )
        if not good:
            label = "".join(LETTERS[k] for k in CRITERIA if k in r["reasons"].split("+"))
            ax.annotate(
                label,
                (r["alpha"], r["omega"]),
                xytext=(0, 9),
                textcoords="offset points",
                ha="center",
                fontsize=8,
            )
    ac = [grid_alpha_c(rows, w) for w in omegas]
    ax.plot(ac, omegas, color="black", ls="--", lw=1.5)
    ax.set_xlabel(r"$\alpha$")
    ax.set_ylabel(r"$\omega$")
    ax.set_xlim(_edges(alphas)[[0, -1]])
    ax.set_ylim(_edges(omegas)[[0, -1]])
    r0 = rows[0]
    ax.set_title(
        f"Where the RS answer is trustworthy (L = 2, sigma={r0['sigma']:g}, "
        f"lambda={r0['lam']:g})\nd={r0['d']}, {r0['seeds']} L-BFGS seeds"
        + (f", {note}" if note else ""),
        fontsize=9,
    )
    handles = [
        ax.plot([], [], "o", mfc=COLORS["accent"], mec="black", mew=2, ms=9, ls="none")[0],
        ax.plot([], [], "X", mfc="white", mec="black", mew=2, ms=9, ls="none")[0],
        ax.plot([], [], "o", mfc="white", mec=COLORS["positional"], mew=2, ms=9, ls="none")[0],
        ax.plot([], [], color="black", ls="--")[0],
    ]
    labels = [
        "trustworthy",
        "rugged; letters = failed criteria: T the semantic-start theory does not converge,\n"
        "S L-BFGS (semantic start) disagrees with its fixed point, G GAMP ends away from it,\n"
        f"C GAMP does not converge (cycles or stalls), R rs_stability >= {RS_MAX:g}, "
        f"J jump mass >= {100 * JUMP_MASS_MAX:g}%",
        "edge: positional branch is the global minimum",
        r"$\alpha_c$ (training losses cross, interpolated on this grid)",
    ]
    fig.legend(handles, labels, loc="outside lower center", fontsize=7.5, ncols=1, frameon=False)
    save(fig, path)
