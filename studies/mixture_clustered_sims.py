"""Does the finite-d model have the theory's "clustered" minimum (docs/theory-mixtures.md)?

Correlated tokens with K = 2 means mu_2 = -mu_1 of norm N = 3, labels i.i.d. (rho = 0),
omega 0.3, sigma 0.5, lambda 0.01, L = 2. The theory (`attnphase theory --clusters 2
--cluster-norm 3 --branch clustered|positional|semantic`) finds, besides the tied branches, a
clustered fixed point where the student aligns with the cluster-mean direction
(cluster_m = mu_k^T Q/sqrt(d) = +-N m_mean, m = 0). Here each (d, alpha, start) is trained by
L-BFGS on the same seeds (teacher, data and test set depend only on the seed, so the starts
are paired). Starts: semantic, positional, random (the library's) and "clustered": the
explicit start Q0 = c sqrt(d) mu_1 / N^2 with this seed's mu_1 (`mixture_means`), so that
cluster_m = (c, -c), m = 0, q = c^2/N^2 (c = --clustered-c, 0.3).

Each run is labelled by where it ends: "clustered" (|cluster_m| > 0.15, |m| < 0.1),
"positional" (|m| > 0.15, |cluster_m| < 0.1), "semantic/trivial" (both < 0.1) or "other".
Printed: per (d, alpha, start) the seed means +- SE of train loss, test error, m, theta, q,
|cluster_m| and the end counts; per (d, alpha) the paired difference of the training loss of
each seed's lowest clustered-ending run minus its lowest positional-ending run; and, with
--theory FILE ..., every seed mean against the theory (CSV files of `attnphase theory
--format csv --branch B`), flagged when |sim - theory| > 3 SE + 5% |theory|.

Commands run (the theory files one per branch B = clustered, positional, semantic):

    .venv/bin/attnphase theory --alpha 0.25,0.5,0.75,1,1.25 --clusters 2 --cluster-norm 3 \
        --label-correlation 0 --branch B --points 1024 --randomisations 2 --format csv \
        > clustered_sims/theory_B.csv
    .venv/bin/python studies/mixture_clustered_sims.py --alphas 0.5 --dims 500,1000 \
        --seeds 8 --out clustered_sims/runs_a05.csv
    .venv/bin/python studies/mixture_clustered_sims.py --alphas 0.5 --dims 250,2000 \
        --starts positional,clustered,random --seeds 8 --out clustered_sims/runs_a05_extra.csv
    .venv/bin/python studies/mixture_clustered_sims.py --alphas 1.0 --dims 500,1000 \
        --seeds 8 --out clustered_sims/runs_a1.csv
    .venv/bin/python studies/mixture_clustered_sims.py --alphas 1.0 --dims 2000 \
        --starts positional,clustered --seeds 8 --out clustered_sims/runs_a1_extra.csv

(each point's runs kept in results/mixture_clustered_sims.sqlite: a rerun computes only what is
missing) and the tables, with the theory (reading the finished runs back, in seconds):

    .venv/bin/python studies/mixture_clustered_sims.py --more clustered_sims/runs_a05.csv \
        clustered_sims/runs_a05_extra.csv clustered_sims/runs_a1.csv \
        clustered_sims/runs_a1_extra.csv \
        --theory clustered_sims/theory_*.csv

Alpha 0.5's theory values (1024 Sobol points x 2 scramblings) are built in (THEORY_A05);
--theory files replace them.
"""

from __future__ import annotations

import argparse
import ast
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from runlog import run_study

from attnphase.params import Mixture, ModelParams
from attnphase.sim import SimConfig, simulate
from attnphase.sim.run import mixture_means

STARTS = ("semantic", "positional", "random", "clustered")
METRICS = ("train_loss", "test_error", "m", "theta", "q", "abs_cluster_m")
# Theory at alpha 0.5 (omega 0.3, sigma 0.5, lambda 0.01, K 2, rho 0, N 3), from the main
# developer's QMC solve run (`solve`, method QMC(1024, 2): 1024 Sobol points x 2 scramblings).
THEORY_A05 = {
    "clustered": dict(
        train_loss=0.001132,
        test_error=0.003542,
        m=0.0,
        theta=0.0012,
        q=0.0250,
        abs_cluster_m=0.306,
    ),
    "positional": dict(train_loss=0.0011491, test_error=0.003240, m=0.2201, theta=0.0),
    "semantic": dict(train_loss=0.0012989, test_error=0.003927, theta=0.0028),
}


def clustered_start(cfg: SimConfig, seed: int, c: float) -> np.ndarray:
    """Q0 = c sqrt(d) mu_1 / N^2 for this seed's first cluster mean: cluster_m = (c, -c)."""
    mu1 = mixture_means(cfg, [seed], torch.float64, "cpu")[0, 0].numpy()
    mixture = cfg.params.mixture
    assert mixture is not None
    norm = mixture.cluster_norm
    return (c * np.sqrt(cfg.d) * mu1 / norm**2)[:, None]


def run_start(base: SimConfig, start: str, seeds: list[int], c: float) -> list:
    """The runs of one start: the library's starts as one batch, the clustered start per seed."""
    if start != "clustered":
        return simulate(replace(base, init=start), seeds=seeds)
    out = []
    for s in seeds:
        cfg = replace(base, init=clustered_start(base, s, c))
        out += simulate(cfg, seeds=[s])
    return out


def end_point(m: float, cm: float) -> str:
    if abs(cm) > 0.15 and abs(m) < 0.1:
        return "clustered"
    if abs(m) > 0.15 and abs(cm) < 0.1:
        return "positional"
    if abs(m) < 0.1 and abs(cm) < 0.1:
        return "semantic/trivial"
    return "other"


def runs(point: dict) -> dict:
    """The table rows of one (alpha, d, start) point's seeds."""
    mixture = Mixture(2, point["rho"], point["cluster_norm"])
    base = SimConfig(
        params=ModelParams(variant=mixture), d=point["d"], alpha=point["alpha"],
        n_test=point["n_test"],
    )  # fmt: skip
    seeds = list(range(point["seeds"]))
    start = point["start"]
    return {"rows": [row(r, start) for r in run_start(base, start, seeds, point["clustered_c"])]}


def row(r, start: str) -> dict:
    cm = float(np.ravel(r.cluster_m)[0])
    return dict(
        d=r.d,
        alpha=r.alpha,
        start=start,
        seed=r.seed,
        train_loss=r.train_loss,
        test_error=r.test_error,
        m=float(r.m),
        theta=float(r.theta),
        q=float(r.q),
        cluster_m=cm,
        abs_cluster_m=abs(cm),
        converged=r.converged,
        grad_rms=r.grad_rms,
        steps=r.steps,
        end=end_point(float(r.m), cm),
    )


def first_number(v) -> float:
    """A CSV cell of `attnphase theory`: a number or a nested list (its first entry)."""
    if isinstance(v, str):
        v = ast.literal_eval(v)
    return float(np.ravel(v)[0])


def theory_values(paths: list[str], norm: float) -> dict:
    """{alpha: {branch: {metric: value}}} from `attnphase theory --format csv` files;
    |cluster_m| = N |m_mean|."""
    out: dict = {0.5: THEORY_A05}
    for p in paths:
        t = pd.read_csv(p)
        for _, tr in t.iterrows():
            vals = {
                k: first_number(tr[k])
                for k in ("train_loss", "test_error", "m", "theta", "q")
                if k in tr and pd.notna(tr[k])
            }
            if "m_mean" in tr and pd.notna(tr["m_mean"]):
                vals["abs_cluster_m"] = norm * abs(first_number(tr["m_mean"]))
            out.setdefault(round(float(tr["alpha"]), 6), {})[str(tr["branch"])] = vals
    return out


def summarise(df: pd.DataFrame, theory: dict) -> None:
    pd.set_option("display.width", 200)
    paired: dict = {}
    for (d, alpha), g in df.groupby(["d", "alpha"]):
        print(f"\n=== d = {d}, alpha = {alpha} ===")
        for start, h in g.groupby("start", sort=False):
            n = len(h)
            cells = [f"{k} {h[k].mean():.5g}+-{h[k].std(ddof=1) / np.sqrt(n):.2g}" for k in METRICS]
            ends = h["end"].value_counts().to_dict()
            print(
                f"{start:<10} n={n} nonconv={int((~h['converged']).sum())}  "
                + "  ".join(cells)
                + f"  ends {ends}"
            )
        by_end = g.groupby(["seed", "end"])["train_loss"].min().unstack()
        if {"clustered", "positional"} <= set(by_end.columns):
            diff = (by_end["clustered"] - by_end["positional"]).dropna()
            rel = diff / by_end["positional"].loc[diff.index]
            if len(diff) > 1:
                paired.setdefault(alpha, []).append(
                    (d, diff.mean(), diff.std(ddof=1) / np.sqrt(len(diff)))
                )
                print(
                    f"paired train loss clustered - positional over {len(diff)} seeds: "
                    f"{diff.mean():+.3e} +- {diff.std(ddof=1) / np.sqrt(len(diff)):.1e} "
                    f"(relative {rel.mean():+.4f} +- {rel.std(ddof=1) / np.sqrt(len(rel)):.4f}"
                    f"; clustered lower in {int((diff < 0).sum())}/{len(diff)})"
                )
        th = theory.get(round(float(alpha), 6), {})
        for branch, vals in th.items():
            h = g[g["end"] == ("semantic/trivial" if branch == "semantic" else branch)]
            h = h.sort_values("train_loss").groupby("seed").head(1)  # one run per seed
            if len(h) < 2:
                print(f"theory {branch}: fewer than 2 runs end there")
                continue
            parts = []
            for k, v in vals.items():
                sim, se = h[k].mean(), h[k].std(ddof=1) / np.sqrt(len(h))
                if k == "m" and v != 0:
                    sim = h[k].abs().mean()
                ok = abs(sim - v) <= 3 * se + 0.05 * abs(v)
                parts.append(f"{k} {sim:.5g}+-{se:.2g} vs {v:.5g}{'' if ok else ' (!)'}")
            print(f"theory {branch} vs {len(h)} seeds ending there: " + "; ".join(parts))
    for alpha, pts in paired.items():
        if len(pts) >= 2:
            extrapolate_paired(alpha, pts, theory.get(round(float(alpha), 6), {}))


def extrapolate_paired(alpha: float, pts: list, th: dict) -> None:
    """Weighted least-squares fit of the paired difference to a + b/d (a: its d -> infinity
    limit), against the theory's clustered - positional training loss."""
    d, y, se = (np.array(v, dtype=float) for v in zip(*pts, strict=True))
    X = np.stack([np.ones_like(d), 1 / d], axis=1) / se[:, None]
    coef, *_ = np.linalg.lstsq(X, y / se, rcond=None)
    cov = np.linalg.inv(X.T @ X)
    ref = ""
    if "clustered" in th and "positional" in th:
        ref = f"; theory {th['clustered']['train_loss'] - th['positional']['train_loss']:+.2e}"
    print(
        f"alpha {alpha}: paired clustered - positional = a + b/d over d = {d.astype(int).tolist()}:"
        f" a = {coef[0]:+.2e} +- {np.sqrt(cov[0, 0]):.1e}, b = {coef[1]:+.3f} +- "
        f"{np.sqrt(cov[1, 1]):.3f}{ref}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--alphas", default="", help="alphas to run (none: only summarise --more)")
    ap.add_argument("--dims", default="500,1000")
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--starts", default=",".join(STARTS))
    ap.add_argument("--cluster-norm", type=float, default=3.0)
    ap.add_argument("--rho", type=float, default=0.0)
    ap.add_argument("--clustered-c", type=float, default=0.3)
    ap.add_argument("--n-test", type=int, default=10000)
    ap.add_argument("--theory", nargs="*", default=[], help="`attnphase theory` CSV files")
    ap.add_argument("--more", nargs="*", default=[], help="more run CSVs to summarise with --out")
    ap.add_argument("--out", type=Path, default=None, help="CSV of every run of this command")
    args = ap.parse_args()
    torch.set_num_threads(1)
    points = [
        {"alpha": alpha, "d": d, "start": start, "seeds": args.seeds, "cluster_norm":
         args.cluster_norm, "rho": args.rho, "clustered_c": args.clustered_c, "n_test": args.n_test}
        for alpha in (float(a) for a in args.alphas.split(",") if a)
        for d in (int(x) for x in args.dims.split(","))
        for start in args.starts.split(",")
    ]  # fmt: skip
    records = run_study("mixture_clustered_sims", points, runs)
    df = pd.concat(
        [pd.DataFrame([r for rec in records for r in rec["rows"]])]
        + [pd.read_csv(f) for f in args.more],
        ignore_index=True,
    )
    if args.out is not None and records:
        df.to_csv(args.out, index=False)
    summarise(df, theory_values(args.theory, args.cluster_norm))


if __name__ == "__main__":
    main()
