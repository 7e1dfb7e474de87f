"""Correlated tokens (docs/theory-mixtures.md §3-4): is the manifold m_mu = 0 stable?

The mixture state evolution in the O(1)-norm scaling, K = 2 clusters (mu_2 = -mu_1, norm N),
is THEORY.md §7 with the encodings [C, N s(c)] (s_l = +-1 the labels) averaged over the label
chain (s_1 uniform, s_{l+1} = s_l with probability (1 + rho)/2). On m_mu = 0 its fixed points
are the tied model's. By the label-flip symmetry the map is even in m_mu in every other overlap,
so m_mu decouples at linear order and its multiplier dF_mu/dm_mu at a tied fixed point is an
eigenvalue of the map's Jacobian there: |multiplier| < 1 means the iteration pulls a small m_mu
back to 0. This script solves the tied fixed point (general engine, one scrambling), then
evaluates the label-averaged map at m_mu = eps and prints F_mu / eps.

    .venv/bin/python studies/mixture_stability.py [--alphas 1,2] [--rhos 0,0.8] [--points 4096]
"""

from __future__ import annotations

import argparse
import itertools

import numpy as np

from attnphase import ModelParams
from attnphase.theory import overlaps as ge
from attnphase.theory.general.channel import GeneralChannel
from attnphase.theory.general.engine import GeneralMap, _Layout, solve_one, start_overlaps


class LabelAveragedChannel:
    """The channel of docs/theory-mixtures.md §2: moments averaged over the 2^L label sequences
    with their chain probabilities, the last encoding column replaced by N s(c). One
    GeneralChannel per sequence on the same points (each keeps its own prox warm start)."""

    def __init__(self, p: ModelParams, norm: float, rho: float, points: int, seed: int):
        self.r, self.untied = p.rank, False
        self.signs = list(itertools.product((1.0, -1.0), repeat=p.L))
        stay = (1.0 + rho) / 2.0
        self.weights = [
            0.5
            * np.prod([stay if a == b else 1.0 - stay for a, b in zip(s[:-1], s[1:], strict=True)])
            for s in self.signs
        ]
        self.channels = [
            GeneralChannel(p.L, p.rank, p.teacher_rank, points, seed) for _ in self.signs
        ]
        self.norm = norm

    def moments(self, o, *, C, sigma, omega, A) -> ge.GeneralMoments:
        parts = []
        for s, ch in zip(self.signs, self.channels, strict=True):
            Cs = np.column_stack([C[:, :-1], self.norm * np.asarray(s)])
            parts.append(ch.moments(o, C=Cs, sigma=sigma, omega=omega, A=A))
        avg = {
            k: sum(w * getattr(m, k) for w, m in zip(self.weights, parts, strict=True))
            for k in ("ff", "Ma", "yf", "fxi", "M", "ell_prox", "ell_free")
        }
        return ge.GeneralMoments(**avg)


def multiplier(
    alpha: float, rho: float, branch: str, points: int, eps: float
) -> tuple[float, float]:
    tied = ModelParams()
    channel = GeneralChannel(2, 1, 1, points, 0)
    coarse = GeneralChannel(2, 1, 1, max(points // 8, 64), 10_000)
    sol = solve_one(alpha, tied, start_overlaps(branch, tied), branch, channel, coarse=coarse)
    o = sol.overlaps
    mix = ModelParams(encodings=((1.0, 0.0), (-1.0, 0.0)))
    M = np.vstack([o.M, [[eps]]])
    x_o = ge.MatrixOverlaps(q=o.q, M=M, theta=o.theta, V=o.V)
    layout = _Layout(1, 2, 1)
    keep = np.ones_like(layout.pack(x_o))
    fmap = GeneralMap(alpha, mix, LabelAveragedChannel(mix, 1.0, rho, points, 0), keep)
    fx, _ = fmap.step(layout.pack(x_o))
    new = layout.unpack(fx)
    return float(new.M[1, 0] / eps), float(
        np.abs(o.M).max() if branch == "positional" else o.theta[0, 0]
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--alphas", default="1,2")
    ap.add_argument("--rhos", default="0,0.8")
    ap.add_argument("--points", type=int, default=4096)
    ap.add_argument("--eps", type=float, default=0.02)
    args = ap.parse_args()
    for branch in ("semantic", "positional"):
        for alpha in (float(a) for a in args.alphas.split(",")):
            for rho in (float(r) for r in args.rhos.split(",")):
                mult, order = multiplier(alpha, rho, branch, args.points, args.eps)
                print(
                    f"{branch:<10} alpha {alpha:.2f} rho {rho:.2f} (order parameter {order:.4f}):"
                    f"  m_mu multiplier {mult:+.4f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
