"""How closely GAMP's iterates follow the state evolution, and how that gap scales with d
(issue 11's study; THEORY.md §8: the overlaps of GAMP iterate t equal the undamped map's
iterate t up to O(1/sqrt(d)) fluctuations).

`trace_deviations` lays one run beside its trace (GAMP minus state evolution, per iterate and
overlap); `deviation_summary` pools runs per (start, d, iterate, overlap) into the RMS, mean
(bias) and standard deviation over seeds; `scaling_fit` fits log(RMS) = a + slope log(d) over
a window of iterates (slope -1/2: fluctuations of order 1/sqrt(d); 0: a systematic gap).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from .result import GampResult, overlap_number
from .trace import StateEvolutionTrace

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
