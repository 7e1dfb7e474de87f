"""Shared by the two GAMP studies (gamp_tracking.py, gamp_rugged.py): how closely GAMP's
iterates follow the state evolution and how that gap scales with d (docs/theory.md §8: the overlaps
of GAMP iterate t equal the undamped map's iterate t up to O(1/sqrt(d)) fluctuations), and the
studies' figures.

`trace_deviations` lays one run beside its trace (GAMP minus state evolution, per iterate and
overlap); `deviation_summary` pools runs per (start, d, iterate, overlap) into the RMS, mean
(bias) and standard deviation over seeds; `scaling_fit` fits log(RMS) = a + slope log(d) over
a window of iterates (slope -1/2: fluctuations of order 1/sqrt(d); 0: a systematic gap).
`tracking_figure` draws the tracking study's tables, `rugged_figure` the rugged study's runs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from attnphase.figures.style import color, new_figure, save
from attnphase.gamp.result import GampResult, overlap_number
from attnphase.gamp.trace import StateEvolutionTrace

OVERLAPS = ("q", "m", "theta", "V")
_KEYS = {"q": "q", "m": "M", "theta": "theta", "V": "V"}


def trace_deviations(result: GampResult, trace: StateEvolutionTrace) -> list[dict]:
    """One row per iterate the run and its trace share (from the trace's start on) and overlap:
    d, init, seed, iteration, overlap, gamp, se, se_err (the trace's standard error) and
    deviation = gamp - se. For r, t, K > 1 overlaps are compared by their Frobenius norms."""
    rows = []
    for k, (o, e) in enumerate(zip(trace.overlaps, trace.errors, strict=True)):
        it = trace.start_iteration + k
        if it > result.iterations:
            break
        g = result.history[it].overlaps
        for name in OVERLAPS:
            gamp, se = (
                overlap_number(getattr(g, _KEYS[name])),
                overlap_number(getattr(o, _KEYS[name])),
            )
            rows.append(
                {
                    "d": result.d,
                    "init": result.init,
                    "seed": result.seed,
                    "iteration": it,
                    "overlap": name,
                    "gamp": gamp,
                    "se": se,
                    "se_err": overlap_number(getattr(e, _KEYS[name])),
                    "deviation": gamp - se,
                }
            )
    return rows


def deviation_summary(rows: Iterable[dict]) -> pd.DataFrame:
    """Per (init, d, iteration, overlap): seeds, rms = sqrt(mean deviation^2), mean (the bias),
    sd (over seeds, ddof 1; NaN for one seed) and the largest trace standard error. rows: of
    `trace_deviations`; each run's first iterate (the trace's start, where the deviation is
    zero by construction, and which is not the same iterate for every seed) is left out."""
    df = pd.DataFrame(list(rows))
    first = df.groupby(["init", "d", "seed"])["iteration"].transform("min")
    df = df[df["iteration"] > first]
    g = df.groupby(["init", "d", "iteration", "overlap"])
    out = g["deviation"].agg(
        seeds="count",
        rms=lambda x: float(np.sqrt(np.mean(np.square(x)))),
        mean="mean",
        sd="std",
    )
    out["se_err"] = g["se_err"].max()
    return out.reset_index()


def scaling_fit(summary: pd.DataFrame, iterations: Sequence[int]) -> pd.DataFrame:
    """Per (init, overlap): the RMS deviation pooled over `iterations` and seeds at each d, and
    the least-squares slope of log(rms) against log(d) with its standard error (NaN with two
    sizes). Columns: init, overlap, sizes, slope, slope_err, and rms_d<d> for every d."""
    sub = summary[summary["iteration"].isin(list(iterations))]
    out = []
    for (init, name), grp in sub.groupby(["init", "overlap"]):
        pooled = grp.groupby("d").apply(
            lambda x: float(np.sqrt(np.average(x["rms"] ** 2, weights=x["seeds"]))),
            include_groups=False,
        )
        x, y = np.log(pooled.index.to_numpy(float)), np.log(pooled.to_numpy())
        row = {"init": init, "overlap": name, "sizes": len(x)}
        if len(x) >= 2:
            slope, intercept = np.polyfit(x, y, 1)
            resid = y - (intercept + slope * x)
            dof = len(x) - 2
            s2 = float(resid @ resid) / dof if dof > 0 else float("nan")
            row["slope"] = float(slope)
            row["slope_err"] = float(np.sqrt(s2 / np.sum((x - x.mean()) ** 2)))
        else:
            row["slope"] = row["slope_err"] = float("nan")
        row.update({f"rms_d{int(d)}": float(v) for d, v in pooled.items()})
        out.append(row)
    return pd.DataFrame(out)


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
    where the deviation is zero by construction). Tables of `deviation_summary` and
    `scaling_fit`."""
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
    runs: records of gamp_rugged.py (gamp_history, lbfgs_*, optional se_trace)."""
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
