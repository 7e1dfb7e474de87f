"""The paper's figures, end to end: each recipe computes its tables (theory, transition lines,
resumable simulation sweeps stored under the output directory; `attnphase.paper.common`) and
hands them to `attnphase.figures` to draw. `MAKERS` names every recipe (Fig. 14 is
`attnphase.paper.extensions`).

Every figure has a quick size (minutes on a 2-core machine) and a full, paper-sized one
(`sizes`). A rerun resumes: simulations come from sweep stores (`<name>.sqlite` in the output
directory, only missing points computed) and theory tables from their stores
(`<name>_theory.sqlite`, one table per parameter set, written out as `<name>_theory.csv`); the
transition lines' points are kept in `<name>_lines.sqlite`, so an interrupted line resumes.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from ..figures.curves import fig3, finite_size, simulation_overlay
from ..figures.paper import omega_slices
from ..params import ModelParams
from ..sweep import StoreError, point_id, run_points, write_table
from ..theory import GaussHermite, fill_unconverged, learning_curves
from ..transitions.table import transition_table
from .common import INITS, cached_table, grid, model_key, simulations
from .extensions import make_extensions
from .outputs import ALL, FIGURES, HISTOGRAM_CHECKPOINTS

ALTERNATIVE_A = ((0.3, 0.7), (0.8, 0.2))
SLICE_OMEGAS = (0.1, 0.2, 0.3, 0.4)


def line_omegas(quick: bool) -> list[float]:
    """The omegas of the theory lines drawn on phase diagrams (and the demo's table)."""
    return grid(0.05, 0.5, 10) if quick else grid(0.02, 0.5, 25)


def transition_lines(
    omegas, p: ModelParams, quick: bool = True, store=None, workers: int = 2
) -> pd.DataFrame:
    """alpha_c(omega) and alpha_l(omega) (theory), one row per omega, followed by
    continuation at the default accuracy (`transition_table`, in `workers` processes; its
    points kept in `store`, so an interrupted line resumes; `quick` is kept for the
    figures' signature: continuation is fast enough for both sizes)."""
    omegas = [float(f"{w:.12g}") for w in omegas]
    lines = ("alpha_c", "alpha_l")
    return transition_table(p, omegas, lines=lines, workers=workers, store=store)


def sizes(name: str, quick: bool) -> dict:
    """The grid of a figure: alphas/omegas/ds (lists), d, seeds, theory order. Full sizes follow
    the paper: Fig. 3 on the authors' 25 x 25 points at d = 1000, finite sizes d = 10 ... 2000."""
    if name == "fig2":
        if quick:
            return dict(alphas=grid(0.4, 2.0, 7), d=200, seeds=3, order=(32, 12))
        return dict(alphas=grid(0.4, 2.0, 16), d=1000, seeds=5, order=(64, 24))
    if name == "fig3":  # the theory maps at (32, 12) without error estimates: colours only
        if quick:
            return dict(
                alphas=grid(0.4, 2.4, 5), omegas=grid(0.1, 0.5, 3), d=100, seeds=2,
                order=(32, 12), errors=False,
            )  # fmt: skip
        return dict(
            alphas=grid(0.1, 2.5, 25), omegas=grid(0.02, 0.5, 25), d=1000, seeds=2,
            order=(32, 12), errors=False,
        )  # fmt: skip
    if name in ("finite-size", "fig7"):
        alphas = [1.5] if name == "finite-size" else [0.5, 1.0, 1.5, 2.0]
        ds = [50, 100, 200, 400] if quick else [10, 20, 50, 100, 200, 500, 1000, 2000]
        return dict(alphas=alphas, ds=ds, seeds=4 if quick else 8, order=(32, 12))
    if name in ("fig8", "fig9"):
        if quick:
            return dict(
                alphas=grid(0.2, 2.4, 12), sim_alphas=grid(0.25, 2.0, 8), omegas=SLICE_OMEGAS,
                d=200, seeds=2, order=(32, 12),
            )  # fmt: skip
        return dict(
            alphas=grid(0.1, 2.5, 25), sim_alphas=grid(0.25, 2.5, 10), omegas=SLICE_OMEGAS,
            d=1000, seeds=5, order=(64, 24),
        )  # fmt: skip
    raise ValueError(f"name must be one of {FIGURES}, got {name!r}")


def theory_curve(kind: str, params: dict) -> dict:
    """The point function of the theory tables: both starts' learning curves
    (`learning_curves`) at one omega, as table rows."""
    p = ModelParams(omega=params["omega"], sigma=params["sigma"], lam=params["lam"], A=params["A"])
    method = GaussHermite(tuple(params["order"]))
    errors = params.get("errors", True)
    curves = learning_curves(params["alphas"], p, INITS, method=method, errors=errors)
    curves = fill_unconverged(curves, p, method)  # holes re-solved before they are drawn
    return {"rows": [r.as_dict() for r in curves]}


def _theory(
    out: Path, name: str, alphas, omegas, p: ModelParams, order, workers: int = 1, errors=True
) -> pd.DataFrame:
    """Both starts' learning curves at each omega, one runner point per omega (`workers`
    processes) kept in `<name>_theory.sqlite`, written out as `<name>_theory.csv`; `errors`:
    the Gauss-Hermite error estimates (a second solve at the check order per point)."""
    base = {**model_key(p), "alphas": list(alphas), "order": list(order)}
    if not errors:
        base["errors"] = False
    points = []
    for omega in omegas:
        params = {**base, "omega": float(f"{omega:.12g}")}
        points.append((point_id("theory-curve", params), "theory-curve", params))
    summary = run_points(
        points,
        theory_curve,
        store=out / f"{name}_theory.sqlite",
        backend="process" if workers > 1 and len(points) > 1 else "serial",
        workers=workers,
        progress=None,
        desc=f"{name} theory (one point per omega)",
    )
    rows = []
    for rid, _, params in points:
        status, result, error = summary.outcomes[rid]
        if status != "ok" or result is None:
            raise StoreError(f"{name} theory at omega = {params['omega']:g} failed: {error}")
        rows += result["rows"]
    table = pd.DataFrame(rows)
    write_table(table, out / f"{name}_theory.csv")
    return table


def cached_lines(
    out: Path, name: str, omegas, p: ModelParams, quick: bool, workers: int = 2
) -> pd.DataFrame:
    """`transition_lines` at these omegas, cached in `<name>_transitions.csv`; the line points
    in `<name>_lines.sqlite`, so an interrupted line resumes."""
    key = {**model_key(p), "omegas": list(omegas), "method": "continuation", "lines": 2}
    path, store = out / f"{name}_transitions.csv", out / f"{name}_lines.sqlite"
    return cached_table(path, key, lambda: transition_lines(omegas, p, quick, store, workers))


def make_fig2(
    out: Path,
    quick: bool = True,
    workers: int = 2,
    p: ModelParams | None = None,
    lines: pd.DataFrame | None = None,
):
    """Fig. 2: simulations on the theory's learning curves; alpha_c, alpha_l from `lines` (a
    row at p.omega) or computed."""
    p = p or ModelParams()
    size = sizes("fig2", quick)
    d, alphas = size["d"], size["alphas"]
    theory = _theory(out, "fig2", alphas, [p.omega], p, size["order"])
    sims = simulations(
        out,
        f"fig2_d{d}",
        {"alpha": alphas, "init": INITS, "seed": list(range(size["seeds"]))},
        {"d": d, "omega": p.omega, "sigma": p.sigma, "lam": p.lam, "A": p.A, "n_test": 4000},
        workers,
    )
    at = None if lines is None else lines[np.isclose(lines["omega"], p.omega)]
    if at is None or at.empty:
        at = cached_lines(out, "fig2", [p.omega], p, quick, workers)
    t = at.iloc[0]
    return simulation_overlay(theory, sims, out / "fig2.png", t["alpha_c"], t["alpha_l"])


def make_fig3(
    out: Path,
    quick: bool = True,
    workers: int = 2,
    p: ModelParams | None = None,
    lines: pd.DataFrame | None = None,
):
    """Fig. 3 centre/right: phase maps over (alpha, omega) from the theory (both starts'
    learning curves at every omega) and from a simulation sweep with both starts, the lines
    alpha_c, alpha_l on top (computed and cached when `lines` is not given); the maps' table
    is written as `fig3.csv`."""
    p = p or ModelParams()
    size = sizes("fig3", quick)
    d = size["d"]
    theory = _theory(
        out, "fig3", size["alphas"], size["omegas"], p, size["order"], workers, size["errors"]
    )
    sims = simulations(
        out,
        f"fig3_d{d}",
        {
            "alpha": size["alphas"],
            "omega": size["omegas"],
            "init": INITS,
            "seed": list(range(size["seeds"])),
        },
        {"d": d, "sigma": p.sigma, "lam": p.lam, "A": p.A, "n_test": 2000},
        workers,
    )
    if lines is None:
        lines = cached_lines(out, "fig3", line_omegas(quick), p, quick, workers)
    table = fig3(theory, sims, lines, out / "fig3.png")
    write_table(table, out / "fig3.csv")
    return table


def _finite_size(name: str, out: Path, quick: bool, workers: int, p: ModelParams | None):
    p = p or ModelParams()
    size = sizes(name, quick)
    sims = simulations(
        out,
        "finite_size",
        {
            "d": size["ds"],
            "alpha": size["alphas"],
            "init": INITS,
            "seed": list(range(size["seeds"])),
        },
        {"omega": p.omega, "sigma": p.sigma, "lam": p.lam, "A": p.A, "n_test": 2000},
        workers,
    )
    theory = _theory(out, name.replace("-", "_"), size["alphas"], [p.omega], p, size["order"])
    return finite_size(sims, theory, out / f"{name.replace('-', '_')}.png")


def make_finite_size(out: Path, quick: bool = True, workers: int = 2, p: ModelParams | None = None):
    """Fig. 3 left: theta and m of both starts against d at alpha = 1.5 (its simulations are a
    subset of Fig. 7's store)."""
    return _finite_size("finite-size", out, quick, workers, p)


def make_fig7(out: Path, quick: bool = True, workers: int = 2, p: ModelParams | None = None):
    """Fig. 7: the finite-size study at alpha = 0.5, 1, 1.5, 2 (d = 10 ... 2000 in full)."""
    return _finite_size("fig7", out, quick, workers, p)


def _slices(name: str, out: Path, quick: bool, workers: int, p: ModelParams, title: str, note):
    size = sizes(name, quick)
    d = size["d"]
    theory = _theory(out, name, size["alphas"], size["omegas"], p, size["order"])
    sims = simulations(
        out,
        f"{name}_d{d}",
        {
            "alpha": size["sim_alphas"],
            "omega": list(size["omegas"]),
            "init": INITS,
            "seed": list(range(size["seeds"])),
        },
        {"d": d, "sigma": p.sigma, "lam": p.lam, "A": p.A, "n_test": 2000},
        workers,
    )
    return omega_slices(theory, sims, out / f"{name}.png", title, note)


def make_fig8(out: Path, quick: bool = True, workers: int = 2, p: ModelParams | None = None):
    """Fig. 8: learning curves of both starts at omega = 0.1, 0.2, 0.3, 0.4 (standard A)."""
    return _slices("fig8", out, quick, workers, p or ModelParams(), "Fig. 8", None)


def make_fig9(out: Path, quick: bool = True, workers: int = 2, p: ModelParams | None = None):
    """Fig. 9: the slices of Fig. 8 for the alternative A = [[0.3, 0.7], [0.8, 0.2]], with the
    measured explanation of the positional start (FIG9_NOTE)."""
    p = p or ModelParams()
    alt = ModelParams(omega=p.omega, sigma=p.sigma, lam=p.lam, A=ALTERNATIVE_A)
    return _slices("fig9", out, quick, workers, alt, "Fig. 9, alternative A", FIG9_NOTE)


# Measured (docs/figures.md, "Fig. 9"): theory at order (32, 12), L-BFGS runs of
# `attnphase simulate --A 0.3,0.7,0.8,0.2 --omega 0.2 --init positional --seeds 3`.
FIG9_NOTE = (
    "Note (omega = 0.2, measured): the theory has no positional fixed point for this A: from "
    "m = 0.05 ... 0.3 every solve ends at the trivial point (a tied positional score 2 m^2 only "
    "raises the diagonal attention, this A is anti-diagonal). L-BFGS from the positional start "
    "still stops at theta ~ 0, m ~ 0.06 at alpha = 0.5 (means 0.058-0.069 over 3 seeds at "
    "d = 250 ... 4000, no decay with d; training loss 2e-5 above the semantic start's): minima "
    "outside the replica-symmetric theory. From alpha ~ 1.5 most runs leave them for the "
    "semantic minimum (gradient descent after 5000 steps: half-way, theta drifting > 0)."
)


def make_histogram(out: Path, quick: bool = True, workers: int = 2, p=None):
    """The histogram task's figures (attention maps, training curves); resumes from per-epoch
    checkpoints in `out/HISTOGRAM_CHECKPOINTS`."""
    from ..figures.histogram import attention_figure, training_figure
    from ..histogram import config_from, run_histogram

    result = run_histogram(
        config_from(quick), out / HISTOGRAM_CHECKPOINTS, progress=sys.stderr.isatty()
    )
    attention_figure(result, out / "histogram_attention.png")
    training_figure(result, out / "histogram_training.png")
    return result


def make_all(
    out: Path,
    quick: bool = True,
    workers: int = 2,
    report: Callable[[str, float], None] | None = None,
) -> dict[str, float]:
    """Every figure of ALL into `out`, the transition lines computed once for Fig. 2 and 3;
    returns (and reports, as each finishes) the wall time of each in seconds."""
    seconds = {}
    lines = None
    for name in ALL:
        start = time.perf_counter()
        if name in ("fig2", "fig3"):
            if lines is None:
                omegas = sizes("fig3", quick)["omegas"]
                lines = cached_lines(out, "fig3", omegas, ModelParams(), quick, workers)
            MAKERS[name](out, quick=quick, workers=workers, lines=lines)
        else:
            MAKERS[name](out, quick=quick, workers=workers)
        seconds[name] = time.perf_counter() - start
        if report is not None:
            report(name, seconds[name])
    return seconds


# the recipes' signatures differ (only fig2 and fig3 take `lines`): callers pass keywords
MAKERS: dict[str, Callable[..., object]] = {
    "fig2": make_fig2,
    "fig3": make_fig3,
    "finite-size": make_finite_size,
    "fig7": make_fig7,
    "fig8": make_fig8,
    "fig9": make_fig9,
    "histogram": make_histogram,
    "extensions": make_extensions,
}
