"""The predicted-vs-actual figure of a GAMP run (THEORY.md §8): per overlap, GAMP's iterates
(markers, one series per seed) beside the state evolution's trace of the same run (line with a band
of ±2 standard errors of its integration), iteration on x. Drawn from the rows of
`attnphase.gamp.trace_table` (matplotlib object API, colours of `attnphase.figures.style`: the
start's colour for both, so semantic and positional read as everywhere else)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
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


_DASHES = ("-", "--", ":", "-.")


def _params_text(params, alpha: float) -> str:
    A = ", ".join("[" + ", ".join(f"{v:g}" for v in row) + "]" for row in params.A_array)
    return (
        f"$\\alpha$ = {alpha:g}, $\\omega$ = {params.omega:g}, $\\sigma$ = {params.sigma:g}, "
        f"$\\lambda$ = {params.lam:g}, A = [{A}]"
    )


def tracking_figure(
    summary: pd.DataFrame, fits: pd.DataFrame, windows: dict, params, alpha, path: str | Path
) -> None:
    """Top: per overlap, the RMS over seeds of GAMP minus its state evolution, pooled over each
    start's window of iterates, against d (log-log) with the fitted slope and a d^-1/2 guide.
    Bottom: the RMS per iterate, one line per d (from the iterate after the trace's start,
    where the deviation is zero by construction). Tables of `attnphase.gamp.study`
    (`deviation_summary`, `scaling_fit`)."""
    names = ("q", "m", "theta", "V")
    fig, axes = new_figure(2, len(names), (4.0 * len(names), 7.0))
    sizes = sorted(summary["d"].unique())
    for j, name in enumerate(names):
        top, bottom = axes[0, j], axes[1, j]
        for _, fit in fits[fits["overlap"] == name].iterrows():
            c = color(fit["init"])
            ds = np.array(
                [d for d in sizes if f"rms_d{d}" in fit and np.isfinite(fit[f"rms_d{d}"])]
            )
            rms = np.array([fit[f"rms_d{d}"] for d in ds])
            w = list(windows[fit["init"]])
            top.loglog(ds, rms, "o", color=c, label=f"{fit['init']} start, iterates {w[0]}-{w[-1]}")
            line = np.exp(np.polyval(np.polyfit(np.log(ds), np.log(rms), 1), np.log(ds)))
            top.loglog(
                ds,
                line,
                "-",
                color=c,
                lw=1,
                label=f"{fit['init']}: slope {fit['slope']:.2f} ± {fit['slope_err']:.2f}",
            )
            top.loglog(ds, rms[0] * (ds / ds[0]) ** -0.5, ":", color=c, lw=1)
        top.set_xlabel("d")
        top.set_ylabel(f"RMS GAMP - SE, {name}")
        top.legend(fontsize=7)
        for init, sub in summary[summary["overlap"] == name].groupby("init"):
            for k, d in enumerate(sizes):
                s = sub[(sub["d"] == d) & (sub["rms"] > 0)].sort_values("iteration")
                bottom.semilogy(
                    s["iteration"],
                    s["rms"],
                    _DASHES[k % 4],
                    marker=".",
                    color=color(init),
                    label=f"{init}, d = {d}",
                )
        bottom.set_xlabel("iteration")
        bottom.set_ylabel(f"RMS GAMP - SE, {name}")
    axes[1, 0].legend(fontsize=7, ncols=2)
    fig.suptitle(
        "Undamped GAMP vs its state evolution (dotted: $d^{-1/2}$ guide): "
        + _params_text(params, alpha),
        fontsize=9,
    )
    save(fig, path)


def rugged_figure(runs: Sequence[dict], refs: dict, params, path: str | Path) -> None:
    """One column per alpha. Top: theta along GAMP's iterations (one line per run, dash per d),
    the identically damped state evolution beside one run (band ±2 s.e.), the RS fixed point
    of `solve` (grey dashes) and the L-BFGS minima from the same start on the same data
    (green ticks at the right edge). Middle: the same for m (a run or a trace that ends at the
    positional minimum shows there). Bottom: |grad R|/sqrt(d) along GAMP, L-BFGS's final one.
    runs: records of studies/gamp_rugged.py (gamp_history, lbfgs_*, optional se_trace)."""
    alphas = sorted({r["alpha"] for r in runs})
    sizes = sorted({r["d"] for r in runs})
    fig, axes = new_figure(3, len(alphas), (6.0 * len(alphas), 10.5))
    c, c_lb = color("semantic"), color("L-BFGS")
    for j, alpha in enumerate(alphas):
        top, mid, bottom = axes[0, j], axes[1, j], axes[2, j]
        sub = [r for r in runs if r["alpha"] == alpha]
        end = max(len(r["gamp_history"]) for r in sub)
        for r in sub:
            h = pd.DataFrame(r["gamp_history"])
            style = dict(color=c, lw=0.9, alpha=0.8, ls=_DASHES[sizes.index(r["d"]) % 4])
            label = f"GAMP, d = {r['d']}" if r["seed"] == 0 else None
            top.plot(h["iteration"], h["theta"], label=label, **style)
            mid.plot(h["iteration"], h["m"], **style)
            mid.plot([end + 3], [r["lbfgs_m"]], "_", color=c_lb, ms=12, mew=1.5)
            bottom.semilogy(h["iteration"], h["grad_norm"], label=label, **style)
            top.plot(
                [end + 3],
                [r["lbfgs_theta"]],
                "_",
                color=c_lb,
                ms=12,
                mew=1.5,
                label="L-BFGS (same data, same start)" if r is sub[0] else None,
            )
            bottom.semilogy([end + 3], [r["lbfgs_grad_rms"]], "_", color=c_lb, ms=12, mew=1.5)
            if "se_trace" in r:
                t = pd.DataFrame(r["se_trace"])
                top.plot(
                    t["iteration"],
                    t["theta"],
                    color="k",
                    lw=1.4,
                    label=f"state evolution (damped as GAMP), beside d = {r['d']} seed {r['seed']}",
                )
                for ax, key in ((top, "theta"), (mid, "m")):
                    if ax is mid:
                        ax.plot(t["iteration"], t[key], color="k", lw=1.4)
                    ax.fill_between(
                        t["iteration"],
                        t[key] - 2 * t[f"{key}_err"],
                        t[key] + 2 * t[f"{key}_err"],
                        color="k",
                        alpha=0.2,
                        lw=0,
                    )
        top.axhline(
            refs[alpha]["theta"],
            color="0.4",
            ls="--",
            lw=1,
            label=f"RS fixed point (solve): $\\theta$ = {refs[alpha]['theta']:.3g}",
        )
        top.set_title(f"$\\alpha$ = {alpha:g}, semantic start", fontsize=10)
        top.set_ylabel(r"$\theta$")
        mid.axhline(refs[alpha].get("m", 0.0), color="0.4", ls="--", lw=1)
        mid.set_ylabel("m")
        bottom.set_ylabel(r"$|\nabla R|/\sqrt{d}$")
        bottom.set_xlabel("GAMP iteration")
        top.legend(fontsize=7)
    fig.suptitle(
        "GAMP vs L-BFGS vs the RS state evolution below $\\alpha$ ~ 1: "
        + _params_text(params, alphas[0]).split(", ", 1)[1]
        + f", damping {runs[0]['gamp_damping']:g}",
        fontsize=9,
    )
    save(fig, path)
