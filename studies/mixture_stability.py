"""Correlated tokens (docs/theory-mixtures.md §3): is the manifold m_mu = 0 stable, and is it
the only fixed point?

The library's mixture channel (`Mixture`, K = 2 clusters, means of norm N) is docs/theory.md §7 with
the encodings [C, N s(c)] averaged over the label chain. On m_mu = 0 its fixed points are the
tied model's. By the label-flip symmetry the map is even in m_mu in every other overlap, so
m_mu decouples at linear order and its multiplier dF_mu/dm_mu at a tied fixed point is an
eigenvalue of the map's Jacobian there: a new branch with m_mu != 0 can bifurcate only where it
crosses +1. For each alpha and branch the script solves the fixed point once (one scrambling;
with m_mu = 0 it does not depend on rho or N), then for each (rho, N):
- evaluates the map at m_mu = eps and prints the multiplier F_mu / eps;
- with --profile m1,m2,..., holds m_mu at each value, solves the other overlaps, and prints
  the map's pull G = F_mu - m_mu there: a distant fixed point with m_mu != 0 on this branch
  would show as a sign change of G (G < 0 everywhere: every m_mu is pulled back towards 0).

    .venv/bin/python studies/mixture_stability.py [--alphas 0.5,1,2,3] [--rhos 0,0.8,1]
        [--norms 1,3] [--points 2048] [--profile 0.1,0.3,1]
"""

from __future__ import annotations

import argparse
import dataclasses

from attnphase import QMC, Mixture, ModelParams, solve
from attnphase.theory.iterate import iterate
from attnphase.theory.qmc.engine import Layout, QMCMap, make_channels


def pull(fmap: QMCMap, layout: Layout, o, m0: float) -> str:
    """G = F_mu - m0 at the fixed point of the other overlaps with m_mu held at m0."""
    i = layout.blocks()[1].start + layout.K - 1  # m_mu's entry (rank 1: the last row of M)
    x0 = layout.pack(o)
    x0[i] = m0
    last = {}

    def held(x):
        fx, aux = fmap.step(x)
        last["g"] = fx[i] - m0
        fx = fx.copy()
        fx[i] = m0
        return fx, aux

    rep = iterate(held, x0, admissible=fmap.admissible, damping=0.5, anderson=3, tol=1e-6)
    if not rep.converged:
        return f"{m0:g}: {rep.status}"
    return f"{m0:g}: {last['g']:+.4f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--alphas", default="0.5,1,2,3")
    ap.add_argument("--rhos", default="0,0.8,1")
    ap.add_argument("--norms", default="1,3")
    ap.add_argument("--points", type=int, default=2048)
    ap.add_argument("--eps", type=float, default=0.02)
    ap.add_argument("--profile", default="", help="held m_mu values (empty: none)")
    args = ap.parse_args()
    p = ModelParams()
    floats = lambda text: [float(v) for v in text.split(",") if v]  # noqa: E731
    print("branch      alpha   rho    N   order  multiplier  m_mu held: pull G", flush=True)
    base = Mixture(2, 0.0, 1.0)
    layout = Layout(1, p.K, 1, base)  # one mean row (K = 2 clusters)
    for branch in ("semantic", "positional"):
        for alpha in floats(args.alphas):
            res = solve(
                alpha,
                dataclasses.replace(p, variant=base),
                branch=branch,
                method=QMC(args.points, 1),
            )
            if not res.converged:
                print(f"{branch:<10} {alpha:5.2f}  {res.status}", flush=True)
                continue
            o = res.solutions[0].overlaps  # m_mu = 0 here: the tied fixed point
            order = abs(o.M[0, 0]) if branch == "positional" else o.theta[0, 0]
            for rho in floats(args.rhos):
                for norm in floats(args.norms):
                    pm = dataclasses.replace(p, variant=Mixture(2, rho, norm))
                    channels = make_channels(pm, QMC(args.points, 1))
                    fmap = QMCMap(alpha, pm, channels[0], layout.free_means(layout.mask(branch)))
                    M = o.M.copy()
                    M[1, 0] = args.eps
                    fx, _ = fmap.step(layout.pack(dataclasses.replace(o, M=M)))
                    mult = layout.unpack(fx).M[1, 0] / args.eps
                    far = "  ".join(pull(fmap, layout, o, m0) for m0 in floats(args.profile))
                    print(
                        f"{branch:<10} {alpha:5.2f} {rho:5.2f} {norm:4.1f} {order:7.4f}"
                        f"  {mult:+9.4f}  {far}",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
