"""Correlated tokens at growing d (docs/theory-mixtures.md §3): the students' overlap with the
cluster means and the change of the training loss against the tied data on the same seeds.
In the O(1)-norm scaling the theory's fixed points have m_mu = 0 and the tied training loss,
so both should shrink with d.

    .venv/bin/python studies/mixture_scaling.py [--dims 250,500,1000,2000] [--seeds 4]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from attnphase.params import Mixture, ModelParams
from attnphase.sim import SimConfig, simulate


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dims", default="250,500,1000,2000")
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--alpha", type=float, default=1.5)
    ap.add_argument("--rho", type=float, default=0.8)
    args = ap.parse_args()
    torch.set_num_threads(1)
    seeds = list(range(args.seeds))
    for init in ("semantic", "positional"):
        for d in (int(x) for x in args.dims.split(",")):
            start = time.perf_counter()
            kw = dict(d=d, alpha=args.alpha, init=init, n_test=2000)
            mixture = ModelParams(omega=0.3, variant=Mixture(2, args.rho))
            mix = simulate(SimConfig(params=mixture, **kw), seeds=seeds)
            tied = simulate(SimConfig(params=ModelParams(omega=0.3), **kw), seeds=seeds)
            cm = np.array([abs(np.ravel(r.cluster_m)[0]) for r in mix])
            rel = np.array(
                [
                    (a.train_loss - b.train_loss) / b.train_loss
                    for a, b in zip(mix, tied, strict=True)
                ]
            )
            cm_mean, se = cm.mean(), rel.std(ddof=1) / np.sqrt(len(rel))
            print(
                f"{init:<10} d={d:<5} |cluster_m| {cm_mean:.4f} (sqrt(d) x {cm_mean * d**0.5:.2f})"
                f"  train loss vs tied {rel.mean():+.4f} +- {se:.4f}"
                f"  ({time.perf_counter() - start:.0f} s)",
                flush=True,
            )


if __name__ == "__main__":
    main()
