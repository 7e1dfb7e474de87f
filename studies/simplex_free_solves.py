"""Free solves of the simplex family at L = 3 from fully positional starts (docs/scaling.md
§3): M = m0 I, theta = 0, q = (m0^2 + 0.1) I, V = I, iterated with nothing pinned at QMC
256 points x 2 scramblings; prints each end's kind, M and theta.

    python studies/simplex_free_solves.py
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from attnphase import QMC
from attnphase.scaling.family import family_model
from attnphase.scaling.point import FREE
from attnphase.theory.overlaps import MatrixOverlaps
from attnphase.theory.qmc.engine import make_channels, solve_qmc

L = 3
CASES = [(0.5, 1.0), (0.5, 4.0), (0.9, 1.0), (0.9, 4.0)]  # (omega, alpha)
STARTS = (0.2, 0.8)  # m0; the simplex fields' softmax equals A_3(0.6) at m = 0.856


def main() -> None:
    warnings.simplefilter("ignore")
    method = QMC(256, 2)
    for omega, alpha in CASES:
        p = family_model(L, omega, "simplex")
        channels = make_channels(p, method)
        for m0 in STARTS:
            r = L - 1
            start = MatrixOverlaps(
                q=np.eye(r) * (m0**2 + 0.1), M=m0 * np.eye(r), theta=np.zeros((1, r)), V=np.eye(r)
            )
            t = time.perf_counter()
            res = solve_qmc(alpha, p, start, FREE, method, channels=channels)
            M, theta = res.values.get("M"), res.values.get("theta")
            ends = (
                "no overlaps"
                if M is None or theta is None
                else (f"M {np.round(M, 3).tolist()} theta {np.round(np.ravel(theta), 3).tolist()}")
            )
            print(
                f"omega {omega} alpha {alpha} m0 {m0}: {res.kind} ({res.status}), {ends}, "
                f"{time.perf_counter() - t:.1f} s",
                flush=True,
            )


if __name__ == "__main__":
    main()
