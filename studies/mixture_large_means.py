"""Correlated tokens with cluster means the teacher sees (docs/mixtures-large-means.md): does the
positional -> semantic transition move when |mu_k| = kappa sqrt(d)?

docs/theory-mixtures.md shows that with means of norm O(1) the teacher's fields
mu_k Q*/sqrt(d) are O(d^-1/2) and the transition does not move. Here N = kappa sqrt(d), so
tau_k = mu_k Q*/sqrt(d) = O(kappa): the target depends on the labels. For each setting
(kappa, rho) and the tied model (kappa = 0, clusters = 1, the same seeds' teacher and noise),
both informed starts are trained by L-BFGS on an alpha grid (a resumable sweep store per d and
omega in --store-dir). Printed per setting: the seed-mean semantic-minus-positional training
loss with its standard error per alpha, the crossing alpha_t of the seed-mean gap and of each
seed's gap (`attnphase.paper.empirical.empirical_transitions`), their shifts from the tied model,
and per branch the seed means of m, theta and |cluster_m|; per seed, tau = mu_1 Q*/sqrt(d).

The runs behind docs/mixtures-large-means.md:

    .venv/bin/python studies/mixture_large_means.py --omegas 0.3 --d 500 \
        --kappas 0.25,0.5 --rhos 0,0.8 --norms 1 --alphas 0.2:2.4:12 --seeds 8
    .venv/bin/python studies/mixture_large_means.py --omegas 0.3 --d 500 \
        --kappas 0.1,0.15 --rhos 0,0.8 --alphas 0.2:2.4:12 --seeds 8
    .venv/bin/python studies/mixture_large_means.py --omegas 0.2 --d 500 \
        --kappas 0.25,0.5 --rhos 0,0.8 --norms 1 --alphas 0.2:2.4:12 --seeds 8
    .venv/bin/python studies/mixture_large_means.py --omegas 0.3 --d 250,1000 \
        --kappas 0.25 --rhos 0,0.8 --alphas 0.2:2.4:12 --seeds 8

A rerun reads the finished runs from the stores and prints the same tables in seconds.

Options: --workers (2), --store-dir (./mixture_large_means), --out (CSV tables, default the
store directory), --n-test (2000).
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from attnphase.paper.common import INITS
from attnphase.paper.empirical import empirical_transitions
from attnphase.params import Mixture, ModelParams
from attnphase.sim import SimConfig
from attnphase.sim.run import draw_training_set, mixture_means
from attnphase.sweep import SweepSpec, parse_grid, run_sweep

# A run counts when its final RMS gradient is at most this. With |mu| = kappa sqrt(d) the
# L-BFGS line search stalls at RMS gradients of 1e-8 ... 9e-8 (kappa = 0.5, d = 500 and 1000),
# above the default gtol 1e-8, so `converged` is False there. Measured on four such runs
# (alpha 1.6, rho 0.8): stopping at gtol 1e-6 (RMS 2.5e-7 ... 3.3e-7) instead changes the
# training loss by <= 2e-12 and m, theta, cluster_m by < 1e-5, while the gaps studied here
# are >= 1e-5 away from the crossing.
ACCEPT_GRAD = 1e-6


def setting_params(d: int, kappa: float | None, rho: float, norm: float | None) -> dict:
    """The mixture parameters of a setting: kappa = 0 the tied model (clusters = 1), else K = 2
    means of norm kappa sqrt(d) (or the fixed `norm`) and label correlation rho."""
    if norm is None and kappa == 0:
        return {"clusters": 1}
    size = norm if norm is not None else kappa * math.sqrt(d)
    return {"clusters": 2, "label_correlation": rho, "cluster_norm": float(f"{size:.12g}")}


def settings(kappas, rhos, norms) -> list[dict]:
    """The tied model first, then every (kappa, rho) and every fixed norm with each rho."""
    out = [dict(name="tied", kappa=0.0, rho=0.0, norm=None)]
    out += [dict(name=f"kappa={k:g} rho={r:g}", kappa=k, rho=r, norm=None)
            for k in kappas for r in rhos]  # fmt: skip
    out += [dict(name=f"N={n:g} rho={r:g}", kappa=None, rho=r, norm=n) for n in norms for r in rhos]
    return out


def sweep(store: Path, d: int, omega: float, alphas, seeds, extra: dict, args) -> pd.DataFrame:
    """Both starts' runs of one setting (resumable: the store keeps every finished point)."""
    grid = {"alpha": alphas, "init": INITS, "seed": seeds}
    base = {"d": d, "omega": omega, "n_test": args.n_test, **extra}
    backend = "process" if args.workers > 1 else "serial"
    df = run_sweep(
        SweepSpec("simulation", grid, base), store, backend=backend, workers=args.workers
    )
    keep = (df["run_status"] == "ok") & (df["omega"] == omega) & (df["d"] == d)
    for key, value in extra.items():
        keep &= df[key] == value
    for key, values in grid.items():
        keep &= df[key].isin(values)
    return df[keep]


def seed_gaps(runs: pd.DataFrame) -> pd.DataFrame:
    """Semantic-minus-positional training loss, seeds x alphas (NaN where a run is missing or
    its RMS gradient exceeds ACCEPT_GRAD)."""
    ok = runs[runs["grad_rms"] <= ACCEPT_GRAD]
    wide = ok.pivot_table(index="seed", columns=["init", "alpha"], values="train_loss")
    return (wide["semantic"] - wide["positional"]).sort_index(axis=1)


def crossings(gaps: pd.DataFrame) -> tuple[pd.Series, list[str]]:
    """alpha_t of each row of `gaps` (rows x alphas), by `empirical_transitions`: -inf when the
    gap is negative from the smallest alpha, +inf when it never is (the crossing lies outside
    the grid on that side), and its text ("<a0", ">a1" for these)."""
    t = empirical_transitions(gaps)
    lo, hi = min(gaps.columns), max(gaps.columns)
    side = {"negative from the smallest alpha": (-np.inf, f"<{lo:g}"),
            "no negative gap": (np.inf, f">{hi:g}")}  # fmt: skip
    values, labels = [], []
    for a, status in zip(t["alpha_t"], t["status"], strict=True):
        value, label = (a, f"{a:.3f}") if status == "crossing" else side.get(status, (a, status))
        values.append(value)
        labels.append(label)
    return pd.Series(values, index=gaps.index), labels


def bounded(x: float, lo: float, hi: float) -> str:
    """A crossing or shift for the tables: the number, or the side of the grid it is beyond."""
    if x == -np.inf:
        return f"<{lo:g}"
    if x == np.inf:
        return f">{hi:g}"
    return fmt(x)


def loss_ratios(runs: pd.DataFrame, tied: pd.DataFrame) -> pd.DataFrame:
    """Seed mean of train_loss / the tied model's on the same seed, per (alpha, init)."""
    key = ["alpha", "init", "seed"]
    both = runs.set_index(key)["train_loss"] / tied.set_index(key)["train_loss"]
    return both.groupby(["alpha", "init"]).mean().unstack("init")


def teacher_fields(d: int, seeds, norm: float) -> list[float]:
    """tau = mu_1 Q*/sqrt(d) of each seed (K = 2: mu_2 = -mu_1), from the library's draws."""
    cfg = SimConfig(params=ModelParams(variant=Mixture(2, cluster_norm=norm)), d=d, alpha=1.0 / d)
    cpu = torch.device("cpu")
    teacher, _, _ = draw_training_set(cfg, seeds, torch.float64, cpu)
    means = mixture_means(cfg, seeds, torch.float64, cpu)
    return (torch.einsum("bd,bd->b", means[:, 0], teacher[:, :, 0]) / math.sqrt(d)).tolist()


def branch_overlaps(runs: pd.DataFrame) -> pd.DataFrame:
    """Seed means of m, theta and |cluster_m| per (alpha, init)."""
    r = runs[runs["grad_rms"] <= ACCEPT_GRAD].copy()
    cm = r["cluster_m"] if "cluster_m" in r else pd.Series(np.nan, index=r.index)
    r["abs_cluster_m"] = [abs(v[0]) if isinstance(v, list) else np.nan for v in cm]
    return r.groupby(["alpha", "init"])[["m", "theta", "abs_cluster_m"]].mean().unstack("init")


def fmt(x: float, digits: int = 3) -> str:
    return "—" if not np.isfinite(x) else f"{x:.{digits}f}"


def shift_text(alpha_t: float, tied: float, lo: float, hi: float) -> str:
    """One seed's shift alpha_t - tied, or its bound when alpha_t is outside the grid."""
    if alpha_t == -np.inf:
        return f"<{lo - tied:.3f}"
    if alpha_t == np.inf:
        return f">{hi - tied:.3f}"
    return fmt(alpha_t - tied)


def report(title, runs, tau, mean, se, over, ratio, took) -> None:
    """Print one setting's table: per alpha the gap (seed mean, SE), per branch the seed means
    of m, theta, |cluster_m| and of the training loss over the tied model's."""
    n_bad = int((runs["grad_rms"] > ACCEPT_GRAD).sum())
    print(f"\n### {title}  ({took})")
    print(f"runs {len(runs)}, rejected (RMS gradient > {ACCEPT_GRAD:g}) {n_bad}, "
          f"default-gtol converged {int(runs['converged'].sum())}")  # fmt: skip
    if tau:
        print("tau = mu_1 Q*/sqrt(d) per seed: " + ", ".join(f"{t:+.3f}" for t in tau))
    head = ["alpha", "gap (1e-4)", "SE (1e-4)"]
    for b in ("sem", "pos"):
        head += [f"{b} m", f"{b} theta", f"{b} abs(cm)"]
    head += ["sem/tied", "pos/tied"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for a in mean.index:
        cells = [f"{a:g}", f"{mean[a] * 1e4:+.2f}", f"{se[a] * 1e4:.2f}"]
        for init in INITS:
            cells += [fmt(over.loc[a, (k, init)]) for k in ("m", "theta", "abs_cluster_m")]
        cells += [fmt(ratio.loc[a, init]) for init in INITS]
        print("| " + " | ".join(cells) + " |")


def study(d: int, omega: float, args) -> pd.DataFrame:
    """All settings at one (d, omega): prints the tables, returns one summary row per setting."""
    alphas = [float(a) for a in parse_grid([f"alpha={args.alphas}"], "simulation")["alpha"]]
    seeds = list(range(args.seeds))
    store = args.store_dir / f"mixlarge_d{d}_omega{omega:g}.sqlite"
    lo, hi = min(alphas), max(alphas)
    rows, tied_t, tied_seed_t, tied_runs = [], np.nan, None, None
    for s in settings(args.kappas, args.rhos, args.norms):
        start = time.perf_counter()
        extra = setting_params(d, s["kappa"], s["rho"], s["norm"])
        runs = sweep(store, d, omega, alphas, seeds, extra, args)
        gaps = seed_gaps(runs)
        mean, se = gaps.mean(), gaps.std(ddof=1) / np.sqrt(gaps.count())
        (alpha_t,), (label_t,) = crossings(mean.to_frame().T)
        seed_t, seed_labels = crossings(gaps)
        if s["name"] == "tied":
            tied_t, tied_seed_t, tied_runs = alpha_t, seed_t, runs
        seed_shift = seed_t - tied_seed_t
        down, up = int((seed_shift < 0).sum()), int((seed_shift > 0).sum())
        over = branch_overlaps(runs)
        ratio = loss_ratios(runs, tied_runs)
        tau = teacher_fields(d, seeds, extra["cluster_norm"]) if extra["clusters"] > 1 else []
        report(f"d = {d}, omega = {omega:g}, {s['name']} {extra}", runs, tau, mean, se, over,
               ratio, f"{time.perf_counter() - start:.0f} s")  # fmt: skip
        shifts = [shift_text(v, t, lo, hi) for v, t in zip(seed_t, tied_seed_t, strict=True)]
        print(f"alpha_t (seed-mean gap) {label_t}, shift {fmt(alpha_t - tied_t)}; per seed "
              f"alpha_t {', '.join(seed_labels)}, median {bounded(seed_t.median(), lo, hi)}; "
              f"per-seed shift {', '.join(shifts)}; seeds moved down {down}, up {up}")  # fmt: skip
        rows.append(dict(d=d, omega=omega, setting=s["name"], kappa=s["kappa"], rho=s["rho"],
                         cluster_norm=extra.get("cluster_norm", 0.0), alpha_t=alpha_t,
                         status=label_t,
                         shift=alpha_t - tied_t, seed_median=bounded(seed_t.median(), lo, hi),
                         down=down, up=up, seed_shift=";".join(shifts),
                         seed_alpha_t=";".join(seed_labels),
                         tau=";".join(f"{t:+.3f}" for t in tau),
                         rejected=int((runs["grad_rms"] > ACCEPT_GRAD).sum())))  # fmt: skip
        gap_table = pd.DataFrame({"gap_mean": mean, "gap_se": se}).join(
            over.set_axis([f"{i}_{v}" for v, i in over.columns], axis=1)
        )
        name = s["name"].replace(" ", "_").replace("=", "")
        gap_table.to_csv(args.out / f"gaps_d{d}_omega{omega:g}_{name}.csv")
    return pd.DataFrame(rows)


def floats(text: str) -> list[float]:
    return [float(v) for v in text.split(",") if v.strip()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--omegas", type=floats, default=[0.3])
    ap.add_argument("--d", type=lambda t: [int(v) for v in t.split(",")], default=[500])
    ap.add_argument("--kappas", type=floats, default=[0.25, 0.5])
    ap.add_argument("--rhos", type=floats, default=[0.0, 0.8])
    ap.add_argument("--norms", type=floats, default=[], help="fixed cluster norms (O(1) control)")
    ap.add_argument("--alphas", default="0.8:2.4:9", help="start:stop:num or a comma list")
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--n-test", type=int, default=2000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--store-dir", type=Path, default=Path("mixture_large_means"))
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    if args.seeds < 2:
        ap.error("--seeds: need at least 2 for a standard error")
    args.out = args.out or args.store_dir
    args.store_dir.mkdir(parents=True, exist_ok=True)
    args.out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(1)
    start = time.perf_counter()
    summary = pd.concat([study(d, w, args) for d in args.d for w in args.omegas])
    tag = "_".join(f"d{d}" for d in args.d) + "_" + "_".join(f"w{w:g}" for w in args.omegas)
    summary.to_csv(args.out / f"summary_{tag}.csv", index=False)
    print("\n" + summary.drop(columns=["seed_alpha_t", "seed_shift", "tau"]).to_string(index=False))
    print(f"\nwall time {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
