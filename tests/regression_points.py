"""The pinned regression table: about 30 representative outputs of the library whose numbers a
refactoring must not move (tests/validation/test_regression_table.py compares them to 1e-10
relative).

Each point is a named computation returning a flat dict of numbers. The table in
tests/data/regression_table.json was written by

    python -m tests.regression_points --write

from the repository root; rerun it only when a change of numbers is intended and explained.
"""

from __future__ import annotations

import argparse
import json
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

from attnphase import Mixture, Untied

TABLE = Path(__file__).parent / "data" / "regression_table.json"
# the slowest points (20-160 s each on the 2-core machine); `pytest -m slow` runs them
SLOW = (
    "transitions/omega0.3",
    "transitions/omega0.2",
    "qmc/L2/semantic/a1.5",
    "qmc/L3/positional/a0.8",
    "qmc/mixture/semantic/a1.0",
    "qmc/mixture/clustered/a0.5",
)
RTOL = 1e-10
# values that vanish at a fixed point come out as rounding noise: in the table they are all
# <= 5.2e-14 in size, every other value >= 5.7e-8; a reordered sum moves such noise by O(1)
# relative (measured: m = 8.9e-18 -> -1.5e-17 when the exact channel's prior side became the
# 1 x 1 case of the matrix equations), so they are compared to this absolute floor
ATOL = 1e-12
# The QMC points (and GAMP's state-evolution trace, which runs on the QMC channel) repeat to
# 1e-10 on one kind of CPU only: numpy's SIMD kernels (exp and sums under AVX-512 against AVX2)
# and OpenBLAS's kernels round differently, and a fixed point solved to a relative residual of
# 1e-5 moves with the rounding of its map. Measured: the table (written on an AVX2 machine)
# against an AVX-512 one, on code that reproduces every point bitwise where numpy's AVX-512
# kernels and OpenBLAS's are held to AVX2 (NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL",
# OPENBLAS_CORETYPE=Haswell): every QMC deviation above ATOL is below 2.2e-9 absolute and
# 3.4e-9 relative to the largest entry of its overlap or conjugate matrix (that of the value,
# for an `_err`: each point computed, |got - table| divided by `block_scale`).
# A QMC number is compared to PORTABLE (9 times that) times its scale; a change of the
# computation (a moved start, another iteration count) moves it by the solver's tolerance,
# 1e-6 or more.
PORTABLE = 3e-8
PORTABLE_PREFIXES = ("qmc/", "gamp/")
OVERLAPS = ("q", "m", "V", "theta", "qhat", "mhat", "Vhat", "thetahat", "test_error", "train_loss")

# cheaper integration than the defaults keeps the table's cost near a minute; the code paths
# (cold staging, warm curves, pins, frames) are those of the defaults
ORDER = (32, 12)
POINTS = 512


def block_scale(table: dict[str, float], key: str) -> float:
    """The largest |entry| of the matrix that `key` (e.g. "Vhat_err[1]@2.0") belongs to, among
    the values (not the errors) of one point of the table."""
    name, _, at = key.partition("@")
    base = name.split("[")[0].removesuffix("_err")
    same = [
        abs(v)
        for k, v in table.items()
        if k.partition("@")[2] == at and k.partition("@")[0].split("[")[0] == base
    ]
    return max(same, default=0.0)


def tolerance(name: str, key: str, table: dict[str, float]) -> tuple[float, float]:
    """(rtol, atol) of one number of point `name` against the table's point `table`."""
    if name.startswith(PORTABLE_PREFIXES):
        return RTOL, max(ATOL, PORTABLE * block_scale(table, key))
    return RTOL, ATOL


def _flat(prefix: str, value) -> dict[str, float]:
    arr = np.atleast_1d(np.asarray(value, dtype=float)).ravel()
    if arr.size == 1:
        return {prefix: float(arr[0])}
    return {f"{prefix}[{i}]": float(x) for i, x in enumerate(arr)}


def record(res, errors: bool = False) -> dict[str, float]:
    """The overlaps, conjugates and observables of a fixed point (and their errors)."""
    out: dict[str, float] = {"converged": float(res.converged), "iterations": res.iterations}
    for name in OVERLAPS:
        out.update(_flat(name, getattr(res, name)))
        if errors:
            out.update(_flat(f"{name}_err", getattr(res, f"{name}_err")))
    return out


def _exact(alpha, branch, **model):
    from attnphase import GaussHermite, ModelParams, solve

    return record(solve(alpha, ModelParams(**model), branch=branch, method=GaussHermite(ORDER)))


def _exact_curve(branch, alphas, **model):
    from attnphase import GaussHermite, ModelParams, learning_curve

    curve = learning_curve(alphas, ModelParams(**model), branch=branch, method=GaussHermite(ORDER))
    return {f"{k}@{r.alpha}": v for r in curve for k, v in record(r).items()}


def _qmc(alpha, branch, variant=None, **model):
    from attnphase import QMC, ModelParams, solve

    p = ModelParams(**model) if variant is None else ModelParams(**model, variant=variant)
    res = solve(alpha, p, branch=branch, method=QMC(POINTS, 2))
    return record(res, errors=True)


def _qmc_curve(branch, alphas, **model):
    from attnphase import QMC, ModelParams, learning_curve

    curve = learning_curve(alphas, ModelParams(**model), branch=branch, method=QMC(POINTS, 2))
    return {f"{k}@{r.alpha}": v for r in curve for k, v in record(r).items()}


def _transitions(omega):
    from attnphase import GaussHermite, ModelParams, find_transitions

    t = find_transitions(
        ModelParams(omega=omega),
        alpha_min=0.3,
        alpha_max=2.5,
        num=12,
        method=GaussHermite((24, 8)),
        approach="scan",
    )
    keys = ("alpha_c", "alpha_c_err", "alpha_l", "alpha_l_err")
    keys += ("spinodal_semantic", "spinodal_positional")
    return {k: float(getattr(t, k)) for k in keys}


def _gamp():
    from attnphase import ModelParams
    from attnphase.gamp import run_gamp, trace_of_run

    res = run_gamp(ModelParams(), d=200, alpha=1.5, init="semantic", seed=3, max_iter=25)
    out: dict[str, float] = {"iterations": res.iterations}
    last = res.history[-1].overlaps
    for key in ("q", "M", "theta", "V"):
        out.update(_flat(f"gamp_{key}", getattr(last, key)))
    trace = trace_of_run(res, iterations=4, points=POINTS, randomisations=2)
    for key in ("q", "M", "theta", "V"):
        out.update(_flat(f"trace_{key}", getattr(trace.overlaps[-1], key)))
    out.update(_flat("trace_test_error", trace.test_error[-1]))
    return out


L3 = dict(A=((0.6, 0.2, 0.2), (0.2, 0.6, 0.2), (0.2, 0.2, 0.6)))
ALT_A = dict(A=((0.3, 0.7), (0.8, 0.2)))

REGRESSION_POINTS: dict[str, Callable[[], dict[str, float]]] = {
    # the exact L = 2 channel (Gauss-Hermite), every branch, cold starts
    "exact/semantic/a0.5": lambda: _exact(0.5, "semantic"),
    "exact/semantic/a1.0": lambda: _exact(1.0, "semantic"),
    "exact/semantic/a2.0": lambda: _exact(2.0, "semantic"),
    "exact/positional/a0.5": lambda: _exact(0.5, "positional"),
    "exact/positional/a1.5": lambda: _exact(1.5, "positional"),
    "exact/trivial/a1.0": lambda: _exact(1.0, "trivial"),
    "exact/semantic/a1.0/omega0.1": lambda: _exact(1.0, "semantic", omega=0.1),
    "exact/positional/a1.0/sigma0.7/lam0.1": lambda: _exact(1.0, "positional", sigma=0.7, lam=0.1),
    "exact/semantic/a1.0/altA": lambda: _exact(1.0, "semantic", **ALT_A),
    "exact/positional/a1.0/altA": lambda: _exact(1.0, "positional", **ALT_A),
    # warm-started curves
    "exact/curve/positional": lambda: _exact_curve("positional", [0.6, 1.0, 1.4]),
    "exact/curve/semantic": lambda: _exact_curve("semantic", [0.8, 1.2, 1.6]),
    # the QMC channel at L = 2 and 3, every branch
    "qmc/L2/semantic/a1.5": lambda: _qmc(1.5, "semantic"),
    "qmc/L2/positional/a1.0": lambda: _qmc(1.0, "positional"),
    "qmc/L3/semantic/a2.0": lambda: _qmc(2.0, "semantic", **L3),
    "qmc/L3/positional/a0.8": lambda: _qmc(0.8, "positional", **L3),
    "qmc/L3/trivial/a1.0": lambda: _qmc(1.0, "trivial", **L3),
    "qmc/L3/curve/semantic": lambda: _qmc_curve("semantic", [1.5, 2.0], **L3),
    # rank 2
    "qmc/L2/rank2/semantic/a1.5": lambda: _qmc(1.5, "semantic", rank=2),
    "qmc/L2/rank2/mixed/a1.0": lambda: _qmc(1.0, "mixed", rank=2),
    # untied query and key
    "qmc/untied/semantic/a1.5": lambda: _qmc(1.5, "semantic", Untied()),
    "qmc/untied/positional/a1.0": lambda: _qmc(1.0, "positional", Untied()),
    # correlated tokens
    "qmc/mixture/semantic/a1.0": lambda: _qmc(1.0, "semantic", Mixture(2, 0.5, 1.0)),
    "qmc/mixture/clustered/a0.5": lambda: _qmc(0.5, "clustered", Mixture(3, 0.0, 3.0)),
    # transitions at two omegas
    "transitions/omega0.3": lambda: _transitions(0.3),
    "transitions/omega0.2": lambda: _transitions(0.2),
    # GAMP and its state-evolution trace
    "gamp/trace": _gamp,
}


def compute(name: str) -> dict[str, float]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return REGRESSION_POINTS[name]()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"write {TABLE}")
    args = parser.parse_args()
    import time

    table = {}
    for name in REGRESSION_POINTS:
        t0 = time.perf_counter()
        table[name] = compute(name)
        print(f"{name}: {time.perf_counter() - t0:.1f} s", flush=True)
    if args.write:
        TABLE.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
        print(f"wrote {TABLE}")


if __name__ == "__main__":
    main()
