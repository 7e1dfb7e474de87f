"""Transverse stability of the simplex family's symmetric positional fixed point (docs/scaling.md
§3): the Jacobian of the state evolution's map with nothing pinned and no frame chosen, at the
fixed point the `simplex_positional` branch holds on its symmetric manifold, split by what each
direction does to the permutation symmetry.

At that point M = m I, q = q0 I, V = v I, theta = 0. The perturbations fall into classes the
symmetry keeps apart (up to the integration's own asymmetry, about 1% at these points): along
the manifold (M, q, V proportional to I: three directions, the branch's own stability), the
rotations of the student's columns (M's antisymmetric part: an orbit of equivalent fixed points,
eigenvalue 1), theta (the semantic direction: theta -> -theta with the teacher's sign is a
symmetry, so it decouples at theta = 0), and the rest (M, q, V off the identity: they break the
permutation symmetry). The undamped iteration leaves the point along a class whose largest
eigenvalue exceeds 1; a real eigenvalue crossing 1 there is where a fixed point that breaks the
symmetry (or, along theta, one with m and theta both non-zero) branches off.

Each scrambling's point is solved on the branch, the map is differentiated by central
differences (relative step 1e-4) with the channel's global prox, and the eigenvalues of each
class are those of the Jacobian projected on it. Where theta's or the breaking class's largest
eigenvalue exceeds 1, the point is kicked along its eigenvector (by 0.05 q0^(1/2)) and solved
again with nothing pinned, to see where the iteration goes (m as |M| / sqrt(K), |theta|, and
the training loss against the symmetric point's). `seconds`: the Jacobian and that solve.

    python studies/simplex_transverse.py [--L 3,4] [--omega 0.3,0.5] [--alpha 0.5,1,2]
                                         [--points 2048] [--randomisations 2]
"""

from __future__ import annotations

import argparse
import csv
import time
import warnings
from pathlib import Path

import numpy as np

from attnphase import QMC
from attnphase.scaling.family import family_model
from attnphase.scaling.point import FREE
from attnphase.theory import overlaps as ge
from attnphase.theory.baseline import linear_test_error_qmc
from attnphase.theory.branches import SIMPLEX_BRANCH
from attnphase.theory.qmc.engine import (
    Layout,
    QMCMap,
    make_channels,
    solve_one,
    solve_qmc,
)

OUT = Path(__file__).parent / "data" / "simplex_transverse.csv"
FIELDS = [
    "L",
    "omega",
    "alpha",
    "scrambling",
    "m",
    "manifold",
    "orbit",
    "theta",
    "breaking",
    "followed",
    "end_m",
    "end_theta",
    "end_loss_gap",
    "end_vs_semantic",
    "end_test_error",
    "eps_lin",
    "end_converged",
    "seconds",
]
KICK = 0.05  # the free solve's start: the point moved by this many q0^(1/2) (theta's scale)
STEP = 1e-4


def raw_map(fmap: QMCMap, layout: Layout):
    """x -> the next overlaps, nothing pinned, no frame chosen (the map's equivariant form)."""

    def F(x: np.ndarray) -> np.ndarray:
        o = layout.unpack(x)
        h, _ = fmap.evaluate(o)
        new = ge.overlaps(h, sigma=fmap.p.sigma, lam=fmap.lam, rho=fmap.rho)
        return layout.pack(new)

    return F


def jacobian(F, x: np.ndarray) -> np.ndarray:
    J = np.empty((x.size, x.size))
    for j in range(x.size):
        h = STEP * max(abs(x[j]), 1e-2)
        e = np.zeros_like(x)
        e[j] = h
        J[:, j] = (F(x + e) - F(x - e)) / (2 * h)
    return J


def classes(layout: Layout) -> dict[str, np.ndarray]:
    """Orthonormal bases (columns, in packed coordinates) of the four classes (docstring)."""
    r, K, t = layout.r, layout.K, layout.t
    zero = ge.MatrixOverlaps(
        q=np.zeros((r, r)), M=np.zeros((K, r)), theta=np.zeros((t, r)), V=np.zeros((r, r))
    )

    def vec(**kw) -> np.ndarray:
        return layout.pack(ge.MatrixOverlaps(**{**zero.__dict__, **kw}))

    eye = np.eye(r)
    manifold = [vec(q=eye), vec(M=np.eye(K, r)), vec(V=eye)]
    orbit = []
    for i in range(r):
        for j in range(i + 1, r):
            A = np.zeros((r, r))
            A[i, j], A[j, i] = 1.0, -1.0
            orbit.append(vec(M=np.eye(K, r) @ A))
    theta = [np.eye(layout.pack(zero).size)[:, k] for k in range(*_block(layout, 2))]
    taken = np.linalg.qr(np.column_stack(manifold + orbit + theta))[0]
    rest = np.eye(taken.shape[0]) - taken @ taken.T
    u, s, _ = np.linalg.svd(rest)
    breaking = u[:, s > 0.5]
    basis = {
        "manifold": np.column_stack(manifold),
        "orbit": np.column_stack(orbit),
        "theta": np.column_stack(theta),
        "breaking": breaking,
    }
    return {k: np.linalg.qr(v)[0] for k, v in basis.items()}


def _block(layout: Layout, k: int) -> tuple[int, int]:
    b = layout.blocks()[k]
    return b.start, b.stop


def largest(J: np.ndarray, basis: np.ndarray) -> tuple[float, np.ndarray]:
    """The largest real part among the eigenvalues of J projected on the basis, and its
    eigenvector (real part) in packed coordinates."""
    lam, vecs = np.linalg.eig(basis.T @ J @ basis)
    i = int(np.argmax(lam.real))
    return float(lam[i].real), basis @ vecs[:, i].real


def follow(
    alpha, p, channel, layout: Layout, sol, semantic, direction: np.ndarray
) -> dict[str, object]:
    """A free solve (nothing pinned) from the point kicked along `direction`: where the
    iteration goes once the symmetric point is left (its m, |theta|, test error, and training
    loss against the symmetric point's and against the semantic branch's `semantic` on the
    same scrambling)."""
    x = layout.pack(sol.overlaps)
    scale = np.sqrt(np.trace(sol.overlaps.q) / sol.overlaps.q.shape[0])
    x0 = x + KICK * scale * direction / np.linalg.norm(direction)
    end = solve_one(alpha, p, layout.unpack(x0), FREE, channel)
    if end.overlaps is None:
        return dict(end_converged=False)
    o = end.overlaps
    loss = end.observables["train_loss"]
    return dict(
        end_m=f"{np.linalg.norm(o.M) / np.sqrt(p.K):.4f}",
        end_theta=f"{np.linalg.norm(o.theta):.4f}",
        end_loss_gap=f"{loss - sol.observables['train_loss']:.2e}",
        end_vs_semantic=f"{loss - semantic.observables['train_loss']:.2e}",
        end_test_error=f"{end.observables['test_error']:.6f}",
        end_converged=end.converged,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--L", default="3")
    ap.add_argument("--omega", default="0.3,0.5")
    ap.add_argument("--alpha", default="0.5,1,2")
    ap.add_argument("--points", type=int, default=2048)
    ap.add_argument("--randomisations", type=int, default=2)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    method = QMC(args.points, args.randomisations)
    new = not OUT.exists()
    with OUT.open("a", newline="") as fh:
        out = csv.DictWriter(fh, FIELDS)
        if new:
            out.writeheader()
        print(" ".join(FIELDS), flush=True)
        for L in (int(v) for v in args.L.split(",")):
            for omega in (float(v) for v in args.omega.split(",")):
                p = family_model(L, omega, "simplex")
                channels = make_channels(p, method)
                eps_lin, _ = linear_test_error_qmc(p)
                for alpha in (float(v) for v in args.alpha.split(",")):
                    res = solve_qmc(alpha, p, None, SIMPLEX_BRANCH, method, channels=channels)
                    sem = solve_qmc(alpha, p, None, "semantic", method, channels=channels)
                    pairs = zip(channels, res.solutions, sem.solutions, strict=True)
                    for k, (channel, sol, semantic) in enumerate(pairs):
                        t0 = time.perf_counter()
                        if sol.overlaps is None or not sol.converged:
                            print(f"L={L} omega={omega} alpha={alpha} k={k}: not converged")
                            continue
                        layout = Layout(channel.r, p.K, p.teacher_rank)
                        keep = np.ones(layout.pack(sol.overlaps).size)
                        channel.local = False
                        fmap = QMCMap(alpha, p, channel, keep)
                        J = jacobian(raw_map(fmap, layout), layout.pack(sol.overlaps))
                        ev = {c: largest(J, b) for c, b in classes(layout).items()}
                        row: dict[str, object] = dict(
                            L=L,
                            omega=omega,
                            alpha=alpha,
                            scrambling=k,
                            m=f"{np.trace(sol.overlaps.M) / p.K:.4f}",
                            eps_lin=f"{eps_lin:.6f}",
                            **{c: f"{lam:.4f}" for c, (lam, _) in ev.items()},
                        )
                        unstable = max(("theta", "breaking"), key=lambda c: ev[c][0])
                        if ev[unstable][0] > 1:
                            channel.local = True
                            row["followed"] = unstable
                            row.update(
                                follow(alpha, p, channel, layout, sol, semantic, ev[unstable][1])
                            )
                        row["seconds"] = f"{time.perf_counter() - t0:.0f}"
                        out.writerow(row)
                        fh.flush()
                        print(" ".join(str(row.get(f, "")) for f in FIELDS), flush=True)


if __name__ == "__main__":
    main()
