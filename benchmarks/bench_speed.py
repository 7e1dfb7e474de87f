"""The speed table: each row's workload timed on the baseline revision and on this tree in one
run (`baseline.compare`), printing baseline, new figure and their ratio (above 1: faster now).

Rows (the default accuracy everywhere unless said):
  exact-cold      an exact L = 2 fixed point solved cold at alpha 1.5, semantic and positional
                  (after compilation: a first solve at another alpha)
  exact-warm      one point of a warm-started L = 2 learning curve (21 alphas 0.5..2.5, mean)
  l2-curve        an L = 2 learning curve of both branches, 24 alphas 0.2..2.5, the default
                  accuracy with errors (after compilation)
  find-transitions  `find_transitions(ModelParams())`: alpha_c, alpha_l with errors
  qmc-l3-2048     a QMC L = 3 semantic fixed point at alpha 2, 2048 points x 4 scramblings
  qmc-l3          a QMC L = 3 semantic fixed point at alpha 2, cold, and warm (the second
                  point of a learning curve at alpha 2, 2.05, less a cold solve's time)
  qmc-l3-pos      a QMC L = 3 positional fixed point at alpha 0.8 at tolerance 1e-3
  qmc-l4          a QMC L = 4 semantic fixed point at alpha 2 (A_4(0.6))
  qmc-l8          a QMC L = 8 fixed point at alpha 1, omega 0.3 (A_8(0.6), linear encodings),
                  semantic and positional, at 1024 points x 2 scramblings
  spinodal        map evaluations of the semantic spinodal at omega 0.3, and of both at omega
                  0.1 and the semantic one at 0.5 (each point's alpha, error and status printed)
  lines           the alpha_c and alpha_l lines at 20 omegas in 0.02..0.5
  fig3            the paper's Fig. 3 at full size, from a slice: the theory maps on 5 of the
                  25 omegas (x 5), the simulations on 5 x 5 of the 25 x 25 (alpha, omega)
                  cells (x 25; d = 1000, 2 seeds, both starts) and the lines at all 25 omegas,
                  serially in one process; the slice's parts are timed and scaled up

    python benchmarks/bench_speed.py [ROW ...] [--baseline REV]

Both trees run in fresh interpreters one after the other, so the machine's load moves both
figures alike; the load average is printed before and after.
"""

from __future__ import annotations

import argparse
import os
import textwrap

from baseline import BASELINE, compare

PRELUDE = """
import json, time, warnings
warnings.simplefilter("ignore")
import numpy as np
from attnphase import ModelParams, solve, learning_curve, learning_curves, QMC
"""

L3 = "A=((0.6, 0.2, 0.2), (0.2, 0.6, 0.2), (0.2, 0.2, 0.6))"
A4 = "A=tuple(tuple(0.6 if i == j else 0.4 / 3 for j in range(4)) for i in range(4))"
A8 = "A=tuple(tuple(0.6 if i == j else 0.4 / 7 for j in range(8)) for i in range(8))"


def _cold_solve(model: str, alpha: float, branch: str, options: str = "") -> str:
    """A QMC fixed point solved cold at the default points, after a small solve compiles."""
    return f"""
p = ModelParams({model})
solve({alpha}, p, branch="{branch}", method=QMC(points=256, randomisations=2))
t = time.perf_counter(); r = solve({alpha}, p, branch="{branch}"{options})
print(json.dumps({{"seconds": time.perf_counter() - t, "q": float(np.ravel(r.q)[0])}}))
"""


ROWS: dict[str, list[tuple[str, str]]] = {
    "exact-cold": [
        (
            f"exact L=2 cold, {branch}",
            f"""
p = ModelParams()
solve(1.0, p, branch="{branch}")
t = time.perf_counter(); r = solve(1.5, p, branch="{branch}")
print(json.dumps({{"seconds": time.perf_counter() - t, "q": r.q}}))
""",
        )
        for branch in ("semantic", "positional")
    ],
    "exact-warm": [
        (
            "exact L=2 warm curve point (mean of 21)",
            """
p = ModelParams()
solve(1.0, p, branch="semantic")
alphas = list(np.linspace(0.5, 2.5, 21))
t = time.perf_counter(); c = learning_curve(alphas, p, branch="semantic")
t1 = time.perf_counter() - t
t = time.perf_counter(); solve(0.5, p, branch="semantic"); cold = time.perf_counter() - t
print(json.dumps({"seconds": (t1 - cold) / 20, "q": c[-1].q}))
""",
        )
    ],
    "l2-curve": [
        (
            "L=2 curve, 24 alphas, both branches, errors",
            """
p = ModelParams()
solve(1.0, p, branch="semantic")
alphas = list(np.linspace(0.2, 2.5, 24))
t = time.perf_counter(); c = learning_curves(alphas, p)
print(json.dumps({"seconds": time.perf_counter() - t, "q": c[-1].q}))
""",
        )
    ],
    "find-transitions": [
        (
            "find_transitions(ModelParams())",
            """
from attnphase import find_transitions
solve(1.0, ModelParams(), branch="semantic")
t = time.perf_counter(); tr = find_transitions(ModelParams())
print(json.dumps({"seconds": time.perf_counter() - t, "alpha_c": tr.alpha_c}))
""",
        )
    ],
    "qmc-l3-2048": [
        (
            "QMC L=3 semantic alpha 2, 2048 x 4",
            f"""
p = ModelParams({L3})
solve(2.0, p, branch="semantic", method=QMC(points=256, randomisations=2))
t = time.perf_counter()
r = solve(2.0, p, branch="semantic", method=QMC(points=2048, randomisations=4))
print(json.dumps({{"seconds": time.perf_counter() - t, "q": float(np.ravel(r.q)[0])}}))
""",
        )
    ],
    "qmc-l3": [
        ("QMC L=3 semantic alpha 2, cold", _cold_solve(L3, 2.0, "semantic")),
        (
            "QMC L=3 semantic, warm curve point (alpha 2.05 after 2)",
            f"""
p = ModelParams({L3})
solve(2.0, p, branch="semantic", method=QMC(points=256, randomisations=2))
t = time.perf_counter(); solve(2.0, p, branch="semantic"); cold = time.perf_counter() - t
t = time.perf_counter(); c = learning_curve([2.0, 2.05], p, branch="semantic")
both = time.perf_counter() - t
print(json.dumps({{"seconds": both - cold, "q": float(np.ravel(c[-1].q)[0])}}))
""",
        ),
    ],
    "qmc-l3-pos": [
        (
            "QMC L=3 positional alpha 0.8, tol 1e-3",
            _cold_solve(L3, 0.8, "positional", ", tol=1e-3"),
        )
    ],
    "qmc-l4": [("QMC L=4 semantic alpha 2", _cold_solve(A4, 2.0, "semantic"))],
    "qmc-l8": [
        (
            f"QMC L=8 {branch} alpha 1, 1024 x 2 points",
            f"""
p = ModelParams({A8})
solve(1.0, p, branch="{branch}", method=QMC(points=256, randomisations=2), tol=1e-3)
t = time.perf_counter()
r = solve(1.0, p, branch="{branch}", method=QMC(points=1024, randomisations=2))
print(json.dumps({{"seconds": time.perf_counter() - t, "q": float(np.ravel(r.q)[0])}}))
""",
        )
        for branch in ("semantic", "positional")
    ],
    "spinodal": [
        (
            "spinodal (semantic) at omega 0.3: map evaluations",
            """
from attnphase.transitions.lines import transition_lines
t = time.perf_counter()
res = transition_lines(ModelParams(), [0.3], names=["spinodal_semantic"])
pt = res["spinodal_semantic"][0]
print(json.dumps({"evaluations": pt.evaluations, "seconds": time.perf_counter() - t,
                  "alpha": pt.alpha}))
""",
        ),
        (
            "spinodals at omega 0.1 (both) and 0.5 (semantic)",
            """
from attnphase.transitions.lines import transition_lines
points = {}
for om, name in ((0.1, "spinodal_positional"), (0.1, "spinodal_semantic"),
                 (0.5, "spinodal_semantic")):
    pt = transition_lines(ModelParams(), [om], names=[name])[name][0]
    points[f"{name} at {om}"] = [pt.alpha, pt.alpha_err, pt.evaluations, pt.status]
print(json.dumps({"evaluations": sum(v[2] for v in points.values()), "points": points}))
""",
        ),
    ],
    "lines": [
        (
            "alpha_c and alpha_l lines, 20 omegas 0.02..0.5",
            """
from attnphase.transitions.lines import transition_lines
omegas = list(np.linspace(0.02, 0.5, 20))
t = time.perf_counter()
res = transition_lines(ModelParams(), omegas, names=["alpha_c", "alpha_l"])
print(json.dumps({"seconds": time.perf_counter() - t, "alpha_c": res["alpha_c"][14].alpha}))
""",
        )
    ],
    "fig3": [
        (
            "Fig. 3 full, extrapolated from a slice",
            """
import tempfile
from pathlib import Path
from attnphase.paper import recipes
from attnphase.paper.common import INITS, simulations
size, p = recipes.sizes("fig3", False), ModelParams()
alphas, omegas = size["alphas"], size["omegas"]
out, parts = Path(tempfile.mkdtemp()), {}
t = time.perf_counter()
recipes._theory(out, "fig3", alphas, omegas[::5], p, size["order"], 1, size["errors"])
parts["theory maps"] = 5 * (time.perf_counter() - t)
grid = {"alpha": alphas[::5], "omega": omegas[::5], "init": INITS, "seed": [0, 1]}
base = {"d": size["d"], "sigma": p.sigma, "lam": p.lam, "A": p.A, "n_test": 2000}
t = time.perf_counter()
simulations(out, "fig3_d1000", grid, base, 1)
parts["simulations"] = 25 * (time.perf_counter() - t)
t = time.perf_counter()
recipes.cached_lines(out, "fig3", recipes.line_omegas(False), p, False, 1)
parts["lines"] = time.perf_counter() - t
print(json.dumps({"seconds": sum(parts.values()), "parts": parts}))
""",
        )
    ],
}
KEYS = {"spinodal": "evaluations"}  # rows compared by another figure than seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rows", nargs="*", default=list(ROWS), help=f"rows among {list(ROWS)}")
    ap.add_argument("--baseline", default=BASELINE, help="baseline revision")
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()}")
    for row in args.rows:
        for name, code in ROWS[row]:
            key = KEYS.get(row, "seconds")
            old, new = compare(name, PRELUDE + textwrap.dedent(code), key=key, rev=args.baseline)
            for point, value in new.get("points", {}).items():
                print(
                    f"  {point}: baseline {old['points'][point]}\n  {'':{len(point)}}  new {value}"
                )
            for part, value in new.get("parts", {}).items():
                was = old["parts"][part]
                print(
                    f"  {part:<46} baseline {was:10.3f}  new {value:10.3f}  "
                    f"ratio {was / value:6.2f}x"
                )
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
