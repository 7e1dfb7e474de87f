"""The paper's figures, end to end: the data (theory, transitions, resumable simulation sweeps
stored under the output directory) and the plots of `attnphase.plots`.

`quick=True` sizes every figure to finish in a few minutes on a 2-core machine; the full sizes
follow the paper more closely (d = 1000 for Fig. 2, a 10 x 10 phase diagram at d = 500).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .params import ModelParams
from .plots import fig3, finite_size, simulation_overlay
from .sweep import SweepSpec, run_sweep
from .theory import branch_curves
from .transitions import find_transitions

FIGURES = ("fig2", "fig3", "finite-size")
INITS = ["semantic", "positional"]


def _sims(out: Path, name: str, grid: dict, base: dict, workers: int) -> pd.DataFrame:
    backend = "process" if workers > 1 else "serial"
    df = run_sweep(
        SweepSpec("simulation", grid, base),
        out / f"{name}.sqlite",
        backend=backend,
        workers=workers,
    )
    return df[df["run_status"] == "ok"]


# find_transitions' own alpha grid ([0.2, 2.5], 24 points, step 0.1) in both modes: a coarser
# grid misses alpha_c at omega = 0.1, where it lies only 0.17 above the semantic spinodal.
# Measured by benchmarks/transitions_table.py (README, "Transitions"): at omega = 0.1, 0.3, 0.5
# the quick orders give the same verdicts as the default orders (64, 24)/(48, 16), with
# alpha_c, alpha_l within 0.003 and the spinodals within 0.04 of them.
QUICK_TRANSITIONS = {
    "alpha_min": 0.2,
    "alpha_max": 2.5,
    "num": 24,
    "order": (24, 8),
    "check_order": (16, 8),
}
FULL_TRANSITIONS = {"alpha_min": 0.2, "alpha_max": 2.5, "num": 24}
QUICK_NOTE = (
    "approximate: quadrature orders (24, 8), errors = change from (16, 8); at omega = 0.1, "
    "0.3, 0.5 alpha_c and alpha_l lie within 0.003, the spinodals within 0.04 of the default "
    "orders (`attnphase transition`, 4-11 CPU-minutes per omega)"
)


def grid(start: float, stop: float, num: int) -> list[float]:
    """num evenly spaced values from start to stop, rounded to 12 significant digits so that
    tables and stores show 0.3, not linspace's 0.30000000000000004."""
    return [float(f"{v:.12g}") for v in np.linspace(start, stop, num)]


def transition_lines(omegas, p: ModelParams, quick: bool) -> pd.DataFrame:
    """alpha_c(omega) and alpha_l(omega) (theory), one row per omega; quick: coarse
    quadrature orders, whose numbers are approximate (QUICK_NOTE)."""
    kw = QUICK_TRANSITIONS if quick else FULL_TRANSITIONS
    rows = []
    for omega in omegas:
        pw = ModelParams(omega=float(f"{omega:.12g}"), sigma=p.sigma, lam=p.lam, A=p.A)
        rows.append(find_transitions(pw, **kw).as_dict())
    return pd.DataFrame(rows)


def make_fig2(out: Path, quick: bool = True, workers: int = 2, p: ModelParams | None = None):
    p = p or ModelParams()
    alphas = grid(0.4, 2.0, 7 if quick else 16)
    d, seeds = (200, 3) if quick else (1000, 5)
    curves = branch_curves(alphas, p, INITS, (32, 12) if quick else (64, 24))
    theory = pd.DataFrame([r.as_dict() for r in curves])
    sims = _sims(
        out,
        f"fig2_d{d}",
        {"alpha": alphas, "init": INITS, "seed": list(range(seeds))},
        {"d": d, "omega": p.omega, "sigma": p.sigma, "lam": p.lam, "n_test": 4000},
        workers,
    )
    t = transition_lines([p.omega], p, quick).iloc[0]
    return simulation_overlay(theory, sims, out / "fig2.png", t["alpha_c"], t["alpha_l"])


def make_fig3(
    out: Path,
    quick: bool = True,
    workers: int = 2,
    p: ModelParams | None = None,
    lines: pd.DataFrame | None = None,
):
    """Fig. 3 centre/right; `lines` (alpha_c, alpha_l per omega) are computed when not given."""
    p = p or ModelParams()
    n = 5 if quick else 10
    alphas = grid(0.4, 2.4, n)
    omegas = grid(0.1, 0.5, 3 if quick else n)
    d, seeds = (100, 2) if quick else (500, 3)
    sims = _sims(
        out,
        f"fig3_d{d}",
        {"alpha": alphas, "omega": omegas, "init": INITS, "seed": list(range(seeds))},
        {"d": d, "sigma": p.sigma, "lam": p.lam, "n_test": 2000},
        workers,
    )
    if lines is None:
        lines = transition_lines(omegas, p, quick)
        lines.to_csv(out / "fig3_transitions.csv", index=False)
    return fig3(sims, lines, out / "fig3.png")


def make_finite_size(
    out: Path,
    quick: bool = True,
    workers: int = 2,
    p: ModelParams | None = None,
    alpha: float = 1.5,
):
    p = p or ModelParams()
    ds = [100, 200, 400] if quick else [250, 500, 1000, 2000]
    sims = _sims(
        out,
        "finite_size",
        {"d": ds, "init": INITS, "seed": list(range(4))},
        {"alpha": alpha, "omega": p.omega, "sigma": p.sigma, "lam": p.lam, "n_test": 2000},
        workers,
    )
    theory = {r.branch: {"theta": r.theta, "m": r.m} for r in branch_curves([alpha], p, INITS)}
    return finite_size(sims, theory, out / "finite_size.png")


MAKERS = {"fig2": make_fig2, "fig3": make_fig3, "finite-size": make_finite_size}
