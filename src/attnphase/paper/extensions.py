"""The paper's Fig. 14 for the extensions of the model (docs/theory.md §10): the
semantic-minus-positional training loss over (alpha, omega) for the tied model, untied query
and key, a rank-1 value matrix, a rank-2 student and correlated tokens, side by side, and the
empirical transition of each (`attnphase.paper.empirical`) against the tied model's.

Files in `out`: one resumable sweep store per extension (`extensions_<name>_d<d>.sqlite`; a
rerun computes only the missing points), the tied model's theory alpha_c(omega) by continuation
(`extensions_alpha_c.csv`, kept per parameter set in `extensions_alpha_c.sqlite`; its line
points in `extensions_alpha_c_lines.sqlite`, so an interrupted line resumes), the
empirical transitions of each extension (`extensions_<name>_transitions.csv`) and of all with
their shift from the tied model (`extensions_transitions.csv`), and `extensions.png`/`.pdf`.
"""

from __future__ import annotations

import pandas as pd

from ..figures.curves import parameters_text, phase_maps
from ..figures.extensions import extension_maps
from ..params import ModelParams
from ..sweep import write_table
from ..transitions.table import transition_table
from .common import INITS, cached_table, grid, model_key, simulations
from .empirical import empirical_transitions

# name -> the simulation parameters that switch the extension on (none: the tied model)
EXTENSIONS: dict[str, dict] = {
    "tied": {},
    "untied": {"untied": True},
    "value": {"value_rank": 1},
    "rank2": {"r": 2},
    "correlated": {"clusters": 2, "label_correlation": 0.8, "cluster_norm": 1.0},
}
TITLES = {
    "tied": "tied model",
    "untied": "untied query and key",
    "value": "value matrix, rank 1 (value_rank = 1)",
    "rank2": "rank 2 (r = 2)",
    "correlated": "correlated tokens (K = 2 clusters, ρ = 0.8, |μ| = 1)",
}
N_TEST = 2000
COLUMNS = ["extension", "omega", "alpha_t", "status", "sign_changes", "alpha_t_tied", "shift",
           "alpha_c_theory"]  # fmt: skip


def sizes(quick: bool) -> dict:
    """The grid: Fig. 3's (alpha 0.1 ... 2.5 and omega 0.02 ... 0.5, 25 each) at d = 500 with one
    seed in full (25 x 25 x 2 starts per extension); quick: 5 x 3 at d = 100."""
    if quick:
        return dict(alphas=grid(0.4, 2.4, 5), omegas=grid(0.1, 0.5, 3), d=100, seeds=1)
    return dict(alphas=grid(0.1, 2.5, 25), omegas=grid(0.02, 0.5, 25), d=500, seeds=1)


def store_name(name: str, d: int) -> str:
    """The stem of an extension's sweep store in the output directory."""
    return f"extensions_{name}_d{d}"


def extension_sweep(name: str, out, size: dict, p: ModelParams, workers: int) -> pd.DataFrame:
    """The finished runs of one extension's grid, both starts (resumable store in `out`)."""
    points = {
        "alpha": size["alphas"],
        "omega": size["omegas"],
        "init": INITS,
        "seed": list(range(size["seeds"])),
    }
    base = {"d": size["d"], "sigma": p.sigma, "lam": p.lam, "A": p.A, "n_test": N_TEST}
    base = {**base, **EXTENSIONS[name]}
    return simulations(out, store_name(name, size["d"]), points, base, workers)


def theory_alpha_c(omegas, p: ModelParams, workers: int, store=None) -> pd.DataFrame:
    """The tied model's alpha_c at `omegas` (continuation, `transition_table`; its points kept
    in `store`, so an interrupted line resumes)."""
    return transition_table(p, list(omegas), lines=("alpha_c",), workers=workers, store=store)


def cached_alpha_c(out, omegas, p: ModelParams, workers: int) -> pd.DataFrame:
    """`theory_alpha_c`, cached in `extensions_alpha_c.csv` for these omegas and parameters."""
    key = {**model_key(p), "omegas": list(omegas), "method": "continuation", "lines": 1}
    store = out / "extensions_alpha_c_lines.sqlite"
    return cached_table(
        out / "extensions_alpha_c.csv", key, lambda: theory_alpha_c(omegas, p, workers, store)
    )


def transition_summary(transitions: dict[str, pd.DataFrame], lines: pd.DataFrame) -> pd.DataFrame:
    """All extensions' empirical transitions (COLUMNS), with the tied model's at the same omega
    (alpha_t_tied), the shift alpha_t - alpha_t_tied, and the theory's alpha_c where `lines`
    has this omega."""
    tied = transitions["tied"][["omega", "alpha_t"]].rename(columns={"alpha_t": "alpha_t_tied"})
    theory = lines[["omega", "alpha_c"]].rename(columns={"alpha_c": "alpha_c_theory"})
    frames = []
    for name, t in transitions.items():
        frame = t.assign(extension=name, omega=t["omega"].round(9))
        frame = frame.merge(tied.assign(omega=tied["omega"].round(9)), on="omega", how="left")
        frame = frame.merge(theory.assign(omega=theory["omega"].round(9)), on="omega", how="left")
        frames.append(frame.assign(shift=frame["alpha_t"] - frame["alpha_t_tied"]))
    return pd.concat(frames, ignore_index=True)[COLUMNS]


def _head(sims: pd.DataFrame, size: dict, lines: pd.DataFrame) -> str:
    order = ""
    if {"n_xi", "n_y"} <= set(lines):
        order = f" at quadrature order ({lines['n_xi'].iloc[0]}, {lines['n_y'].iloc[0]})"
    return (
        f"Extensions (the paper's Fig. 14): simulations at d = {size['d']}, {size['seeds']} "
        f"seed(s) per point, {len(size['alphas'])} α × {len(size['omegas'])} ω, L-BFGS from "
        f"the semantic and positional starts, {parameters_text(sims, ('sigma', 'lam'))}. "
        "Value matrix: I + U Wᵀ/d, start U = 0; correlated tokens: K cluster means of norm |μ|, "
        f"neighbour label correlation ρ. Black line: the tied model's α_c{order} (continuation); "
        "x: empirical transition (first negative gap, linear interpolation)"
    )


def make_extensions(
    out, quick: bool = True, workers: int = 2, p: ModelParams | None = None
) -> pd.DataFrame:
    """Sweep every extension of EXTENSIONS (resumably), write the transition tables and the
    figure; returns the summary table (`transition_summary`)."""
    p = p or ModelParams()
    size = sizes(quick)
    maps, transitions = {}, {}
    for name in EXTENSIONS:
        sims = extension_sweep(name, out, size, p, workers)
        maps[name] = phase_maps(sims)["loss_gap"]
        transitions[name] = empirical_transitions(maps[name])
        if name == "tied":
            tied = sims
    lines = cached_alpha_c(out, size["omegas"], p, workers)
    table = transition_summary(transitions, lines)
    for name in EXTENSIONS:
        write_table(table[table["extension"] == name], out / f"extensions_{name}_transitions.csv")
    write_table(table, out / "extensions_transitions.csv")
    head = _head(tied, size, lines)
    extension_maps(maps, transitions, lines, TITLES, out / "extensions.png", head)
    return table


__all__ = ["EXTENSIONS", "make_extensions", "sizes", "transition_summary"]
