"""Convergence of the general engine (docs/theory.md §7.5-§7.6) in the number of points per
scrambling.

For each case and point count, one QMC `solve` with R = `--randomisations` scramblings and
its wall time; row i uses seeds R i, ..., R i + R - 1, so the rows are independent (with the same
seeds in every row, one unlucky draw of scramblings would repeat down the table: nested Sobol
sequences). For q, the order parameter (theta on the semantic branch, |m| on the positional one;
their sign is a symmetry of the model), V, eps_g and the training loss it prints the reported
relative standard error `err` = x_err/|ref| and the actual deviation `dev` = (|x| - ref)/ref of
the mean from the reference. With honest error bars dev/err is Student-t distributed with R - 1
degrees of freedom (heavy-tailed for R = 4: |t_3| > 3.2 in 5% of the rows, > 5.8 in 1%); a drift
away from 0 as the error shrinks is a bias.

References: at L=2 the exact l2 engine at Gauss-Hermite order (128, 32) (its own uncertainty,
the difference from the default order (64, 24), is printed with it); at L=3 a high-accuracy
general run on independent scramblings (seeds 1000, 1001, ...), with its standard error: by
default the stored one of tests/validation/test_error_honesty.py (8 x 65536 points, 25 min),
recomputed
with `--ref-points N` (and `--ref-randomisations`, default 8), which prints it in full.

Starts: the semantic cases start cold from the branch, the positional ones from explicit
overlaps near the branch, so that the table measures the integration error alone (cold
positional starts, which ended at the trivial point on a quarter to a half of the scramblings
before commit 90bbe95, are tested in tests/theory/qmc/test_engine.py).

Timings depend on the load of the (shared, 2-core) machine: the load average is printed at the
start and at the end.

    .venv/bin/python studies/general_convergence.py                  # ~15 min
    .venv/bin/python studies/general_convergence.py --points 512,1024,...,65536
    .venv/bin/python studies/general_convergence.py --cases L3-semantic --points '' \
        --ref-points 65536                                               # the stored reference
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from pathlib import Path

import numpy as np
from scipy import special, stats

from attnphase import QMC, GaussHermite, ModelParams, solve

# the cases (parameters, branch, alpha, start) and the stored L=3 references
_spec = importlib.util.spec_from_file_location(
    "test_error_honesty",
    Path(__file__).resolve().parents[1] / "tests" / "validation" / "test_error_honesty.py",
)
honesty = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = honesty
_spec.loader.exec_module(honesty)

DEFAULT_CASES = tuple(honesty.CASES)
# beyond the test's cases: the ill-conditioned positional point of docs/theory.md §7.6 (l2 engine:
# q = 0.0497, m = 0.2623, V = 9.52)
CASES = {
    **honesty.CASES,
    "L2-positional-a2.5": honesty.Case(
        ModelParams(), "positional", 2.5, honesty.explicit_start(0.05, 0.26, 9.5)
    ),
}
OBSERVABLES = honesty.OBSERVABLES  # q, order parameter (by modulus), V, test_error, train_loss
REFERENCE_SEED = 1000


def solve_case(case, points: int, randomisations: int, seed: int = 0):
    return solve(
        case.alpha,
        case.params,
        branch=case.branch,
        start=case.start,
        method=QMC(points, randomisations, seed),
    )


def values_of(res, branch: str) -> tuple[dict[str, float], dict[str, float]]:
    """Observables of a result (the order parameter by its modulus) and their standard errors."""
    order = "theta" if branch == "semantic" else "m"
    names = dict(zip(OBSERVABLES, ("q", order, "V", "test_error", "train_loss"), strict=True))
    vals = {k: abs(float(getattr(res, n))) for k, n in names.items()}
    errs = {k: float(getattr(res, f"{n}_err")) for k, n in names.items()}
    return vals, errs


def l2_reference(case) -> tuple[dict[str, float], dict[str, float], str]:
    """The exact engine at order (128, 32); uncertainty: its difference from order (64, 24)."""
    fine = solve(
        case.alpha, case.params, branch=case.branch, method=GaussHermite((128, 32)), tol=1e-10
    )
    default = solve(
        case.alpha, case.params, branch=case.branch, method=GaussHermite((64, 24)), tol=1e-10
    )
    assert fine.kind == case.branch == default.kind, (fine.kind, default.kind)

    def pick(r):
        order = r.theta if case.branch == "semantic" else r.m
        values = (r.q, order, r.V, r.test_error, r.train_loss)
        return {k: abs(v) for k, v in zip(OBSERVABLES, values, strict=True)}

    ref, other = pick(fine), pick(default)
    unc = {k: abs(other[k] - ref[k]) for k in ref}
    return ref, unc, "l2 engine at order (128, 32); uncertainty |(64, 24) - (128, 32)|"


def l3_reference(name: str, case, ref_points: int | None, ref_r: int):
    if ref_points is None:
        ref, unc = honesty.L3_REFERENCE[name]
        return (
            ref,
            unc,
            "stored in tests/validation/test_error_honesty.py (8 x 65536 points); its std. error",
        )
    res = solve_case(case, ref_points, ref_r, seed=REFERENCE_SEED)
    assert res.converged and res.kind == case.branch, (name, res.status, res.kind)
    ref, unc = values_of(res, case.branch)
    return ref, unc, f"general engine, {ref_r} x {ref_points} points; its std. error"


def run_case(name: str, points: list[int], randomisations: int, ref_points, ref_r: int) -> None:
    case = CASES[name]
    t = time.perf_counter()
    if case.params.L == 2:
        ref, unc, label = l2_reference(case)
    else:
        ref, unc, label = l3_reference(name, case, ref_points, ref_r)
    start = "cold" if case.start is None else "explicit overlaps"
    print(
        f"\n{name}: {case.branch} branch, alpha={case.alpha}, L={case.params.L}, "
        f"A={case.params.A_array.round(6).tolist()}, C={case.params.C_array.ravel().tolist()}, "
        f"start {start}"
    )
    print(f"reference ({label}; {time.perf_counter() - t:.0f} s):")
    print("  " + "  ".join(f"{k}={ref[k]:.10g} +- {unc[k]:.2g}" for k in OBSERVABLES))
    ref_unc = {k: unc[k] / ref[k] for k in OBSERVABLES}
    print(
        f"{randomisations} scramblings per row; relative to the reference: err = reported "
        "standard error, dev = mean - reference, dev/err with err combined with the "
        "reference's uncertainty"
    )
    print(f"{'points':>7} " + " ".join(f"{k:>26}" for k in OBSERVABLES) + "  seconds", flush=True)
    rows: list[tuple[int, dict[str, float], dict[str, float]]] = []
    for i, n in enumerate(points):
        t = time.perf_counter()
        res = solve_case(case, n, randomisations, seed=randomisations * i)
        secs = time.perf_counter() - t
        if not (res.converged and res.kind == case.branch):
            print(f"{n:>7} not on the branch: {res.status}, {res.kind}  {secs:.1f}", flush=True)
            continue
        vals, errs = values_of(res, case.branch)
        err = {k: errs[k] / ref[k] for k in OBSERVABLES}
        dev = {k: (vals[k] - ref[k]) / ref[k] for k in OBSERVABLES}
        rows.append((n, err, dev))
        cells = [
            f"{err[k]:8.1e} {dev[k]:9.1e} {dev[k] / np.hypot(err[k], ref_unc[k]):7.2f}"
            for k in OBSERVABLES
        ]
        print(f"{n:>7} " + " ".join(cells) + f"  {secs:7.1f}", flush=True)
    if len(rows) >= 3:
        summarise(rows, ref_unc, randomisations)


def summarise(rows, ref_unc: dict[str, float], randomisations: int, target: float = 1e-3):
    """Least-squares fit of the reported relative error over the rows, err = c N^-beta (fitted to
    log err, corrected for E[log s] < log sigma of a standard deviation from R samples), the
    point count where it reaches `target`, the median |dev/err| (Student t with R - 1 d.o.f.
    when honest: 0.76 for R = 4) and the RMS of dev/err_fit, the deviation in units of the
    fitted error, which pools the rows' error estimates (~1 when honest and unbiased); both
    with the reference's uncertainty added to err in quadrature."""
    n = np.array([r[0] for r in rows], dtype=float)
    k = randomisations - 1
    log_bias = 0.5 * (special.digamma(k / 2) - np.log(k / 2))  # E[log(s / sigma)]
    t_median = stats.t.ppf(0.75, k)
    print(
        f"fit of the reported error, err = c N^-beta ({randomisations} scramblings; "
        f"median |dev/err| {t_median:.2f} and RMS dev/err_fit 1 when honest):"
    )
    for name in OBSERVABLES:
        err = np.array([r[1][name] for r in rows])
        dev = np.array([r[2][name] for r in rows])
        slope, icpt = np.polyfit(np.log(n), np.log(err), 1)
        icpt -= log_bias
        needed = np.exp((icpt - np.log(target)) / -slope)
        fitted = np.exp(icpt + slope * np.log(n))
        rms_fit = np.sqrt(np.mean((dev / np.hypot(fitted, ref_unc[name])) ** 2))
        median = np.median(np.abs(dev / np.hypot(err, ref_unc[name])))
        print(
            f"  {name:>10}: beta = {-slope:.2f}, err = {target:.0e} at N = {needed:.3g}; "
            f"median |dev/err| = {median:.2f}, RMS dev/err_fit = {rms_fit:.2f}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=",".join(DEFAULT_CASES), help=f"among {','.join(CASES)}")
    ap.add_argument("--points", default="512,1024,2048,4096,8192,16384")
    ap.add_argument("--randomisations", type=int, default=4)
    ap.add_argument("--ref-points", type=int, help="recompute the L=3 reference")
    ap.add_argument("--ref-randomisations", type=int, default=8)
    args = ap.parse_args()
    points = [int(x) for x in args.points.split(",") if x]
    names = args.cases.split(",")
    unknown = [n for n in names if n not in CASES]
    if unknown:
        ap.error(f"--cases: unknown {unknown}; choose among {list(CASES)}")
    print(f"load average at start (1, 5, 15 min): {os.getloadavg()}; {os.cpu_count()} cores")
    start = time.perf_counter()
    for name in names:
        run_case(name, points, args.randomisations, args.ref_points, args.ref_randomisations)
    print(
        f"\ntotal {time.perf_counter() - start:.0f} s; "
        f"load average at end (1, 5, 15 min): {os.getloadavg()}"
    )


if __name__ == "__main__":
    main()
