"""Where in (alpha, omega) the replica-symmetric answer is trustworthy (docs/theory.md §9).

For each (alpha, omega) of a grid, `trust_map` puts side by side
- the theory (exact L = 2 engine, `solve`): the fixed points reached from the semantic and the
  positional start, their kind, theta, m, training loss, which is the global minimum, and
  docs/theory.md §9's smooth replicon factor `rs_stability` and `jump_mass` at each converged one
  (`with_stability` on `points` Sobol points x `randomisations` scramblings: 4096 x 4 by default,
  half the general engine's default, to keep a grid affordable);
- L-BFGS at finite d (`simulate`, semantic and positional starts, the given seeds): theta, m,
  training loss (seed means and standard deviations);
- GAMP (`run_gamp`, semantic start, the same seeds and data, default damping): status and the
  distance of its end point to the state evolution's fixed point.

The REFERENCE fixed point is the one the theory reaches from the semantic start (the semantic
branch where it exists; where it does not, whatever the semantic start converges to). A point
is "trustworthy" when all of these hold, else "rugged" with the failed criteria in `reasons`:
- `theory`: the semantic start converges;
- `simulation`: the semantic-start L-BFGS end points agree with the reference fixed point in
  |theta| and |m| (`agrees`);
- `gamp`: GAMP's end point (mean over its runs) agrees with it (skipped without GAMP);
- `gamp_converged`: every GAMP run converges (status "converged": no sample switching prox
  minima, docs/theory.md §8.1); kept apart from `gamp` because at finite d a handful of samples can
  keep GAMP cycling next to the fixed point;
- `rs_stability`: the smooth replicon factor of the reference fixed point is below 1 (§9);
- `jump_mass`: its jump mass is below JUMP_MASS_MAX.

Agreement (`tolerance`): |mean - theory| <= 3 SD/sqrt(S) + 5% |theory| over S seeds, the
the rule of 3 standard errors plus a few per cent of the theory-vs-simulation tests
(tests/validation/test_theory_vs_sim.py), with the
seed-to-seed standard deviation SD measured once where theory and simulation agree (SEED_SD) and
scaled as 1/sqrt(d), not estimated from two seeds at the point itself (whose spread, in a rugged
region, is the landscape's and would widen the tolerance exactly where it should not).
Overlaps are compared in absolute value: the sign of Q is arbitrary.

Resumable: with `store`, the points go through the sweeps' runner (`sweep.runner.run_points`,
kind "trust", run id `point_id`) into a sweep store, and a rerun computes only what is missing;
concurrent runs on one store never compute a point twice.
"""

from __future__ import annotations

import dataclasses
import math
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..params import ModelParams, check_alpha, check_int, check_unit_interval, check_values
from ..sweep.runner import point_id, run_points

KIND = "trust"
VERSION = 1  # part of the run id: a change of what a point computes makes new points
LEASE_SECONDS = 600.0  # a point (theory, simulations, GAMP) can take minutes
# Seed-to-seed standard deviation of the L-BFGS end point at d = 1000, measured at alpha 1.5,
# omega 0.3 (6 seeds, both starts, where theory and simulations agree): theta 0.0073 (semantic)
# and 0.0072 (positional); m 0.0125 (semantic start, m -> 0) and 0.0048 (positional); the
# larger of each.
SEED_SD = {"theta": 0.0073, "m": 0.0125}
SEED_SD_D = 1000
REL_BIAS = 0.05
RS_MAX = 1.0
# docs/theory.md §9 / tests/validity/test_stability.py: jump mass 0 at alpha 1.5 and 3
# semantic (theory,
# L-BFGS and GAMP agree), 0.15% on the positional branch at alpha 1.5 where L-BFGS still
# agrees with the theory in theta, m, q (tests/validation/test_theory_vs_sim.py) while GAMP
# cycles on 4 of
# 3000 samples, 1.4-1.5% at alpha 0.8 semantic where L-BFGS finds theta ~0.08 against the
# theory's 0.060: 1% separates the measured agreeing and disagreeing fixed points.
JUMP_MASS_MAX = 0.01
CRITERIA = ("theory", "simulation", "gamp", "gamp_converged", "rs_stability", "jump_mass")
BRANCH_PREFIX = {"semantic": "sem", "positional": "pos"}
THEORY_FIELDS = ("kind", "converged", "q", "m", "theta", "V", "Vhat", "train_loss", "test_error")


def tolerance(target: float, sd: float, d: int, seeds: int) -> float:
    """3 standard errors (SD at d = 1000 scaled as 1/sqrt(d), over `seeds` runs) + 5%."""
    return 3.0 * sd * math.sqrt(SEED_SD_D / d) / math.sqrt(seeds) + REL_BIAS * abs(target)


def agrees(theta: float, m: float, ref_theta: float, ref_m: float, d: int, seeds: int) -> bool:
    """Seed means (theta, m) agree with a fixed point's within `tolerance`, in absolute value."""
    pairs = ((theta, ref_theta, "theta"), (m, ref_m, "m"))
    return all(
        bool(np.isfinite(x) and np.isfinite(y))
        and abs(abs(x) - abs(y)) <= tolerance(y, SEED_SD[k], d, seeds)
        for x, y, k in pairs
    )


UNFINISHED = "maximum iterations reached"  # a GAMP run's status where max_iter cut it short


def judge(row: dict) -> tuple[str, str]:
    """("trustworthy", "") or ("rugged", the failed criteria joined by '+') for one row;
    ("inconclusive", "gamp_unfinished") where the only failure is GAMP runs stopped by their
    max_iter (not cycling or stalled: no evidence of a rugged landscape).

    Reads sem_converged, sim_agree, gamp_agree and gamp_converged (None or NaN: GAMP not run),
    sem_rs_stability and sem_jump_mass (the reference fixed point's)."""
    failed = {
        "theory": not row["sem_converged"],
        "simulation": not row["sim_agree"],
        "gamp": _fails(row.get("gamp_agree")),
        "gamp_converged": _fails(row.get("gamp_converged")),
        "rs_stability": not row["sem_rs_stability"] < RS_MAX,
        "jump_mass": not row["sem_jump_mass"] < JUMP_MASS_MAX,
    }
    statuses = set(str(row.get("gamp_status", "")).split("; ")) - {"converged"}
    # every unconverged run cut short by its max_iter: no evidence either way
    unfinished = failed["gamp_converged"] and statuses == {UNFINISHED}
    failed["gamp_converged"] &= not unfinished
    reasons = "+".join(k for k in CRITERIA if failed[k])
    if reasons:
        return "rugged", reasons
    return ("inconclusive", "gamp_unfinished") if unfinished else ("trustworthy", "")


def _fails(flag) -> bool:
    """A flag that was measured (not None or NaN) and is False."""
    return flag is not None and not _missing(flag) and not flag


def _missing(x) -> bool:
    return isinstance(x, float) and math.isnan(x)


def _theory(alpha: float, p: ModelParams, points: int, randomisations: int) -> dict:
    from ..theory import solve
    from .stability import STABILITY_KEYS, with_stability

    out: dict = {}
    losses: dict[str, float] = {}
    for branch, pre in BRANCH_PREFIX.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = solve(alpha, p, branch=branch)
            res = with_stability(res, points=points, randomisations=randomisations)
        for k in THEORY_FIELDS + STABILITY_KEYS:
            out[f"{pre}_{k}"] = getattr(res, k)
        if res.converged:
            losses[branch] = res.train_loss
    out["global_min"] = min(losses, key=losses.__getitem__) if losses else "none"
    out["global_min_kind"] = out[f"{BRANCH_PREFIX[out['global_min']]}_kind"] if losses else "none"
    return out


def _simulations(alpha: float, p: ModelParams, d: int, seeds: Sequence[int], n_test: int) -> dict:
    from ..sim import SimConfig, simulate

    out: dict = {}
    for branch, pre in BRANCH_PREFIX.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            runs = simulate(
                SimConfig(params=p, d=d, alpha=alpha, init=branch, n_test=n_test), seeds
            )
        for k in ("theta", "m", "train_loss"):
            v = np.array([getattr(r, k) for r in runs])
            if k != "train_loss":
                v = np.abs(v)  # the sign of Q is a symmetry
            out[f"sim_{pre}_{k}"] = float(v.mean())
            out[f"sim_{pre}_{k}_sd"] = float(v.std(ddof=1)) if len(v) > 1 else math.nan
        out[f"sim_{pre}_converged"] = all(r.converged for r in runs)
    return out


def _gamp(alpha: float, p: ModelParams, d: int, seeds: Sequence[int], max_iter: int, n_test: int):
    from ..gamp import run_gamp

    runs = []
    for s in seeds:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            runs.append(
                run_gamp(p, d, alpha, init="semantic", seed=s, max_iter=max_iter, n_test=n_test)
            )
    mean = lambda k: float(np.mean([abs(getattr(g, k)) for g in runs]))  # noqa: E731
    statuses = sorted({g.status.split(":")[0].split(" (")[0] for g in runs})
    return {
        "gamp_runs": len(runs),
        "gamp_status": "; ".join(statuses),
        "gamp_converged": all(g.converged for g in runs),
        "gamp_iterations": int(max(g.iterations for g in runs)),
        "gamp_theta": mean("theta"),
        "gamp_m": mean("m"),
        "gamp_q": mean("q"),
        "gamp_V": mean("V"),
        "gamp_grad_norm": float(max(g.grad_norm for g in runs)),
        "gamp_train_loss": float(np.mean([g.train_loss for g in runs])),
    }


def trust_point(
    params: ModelParams,
    alpha: float,
    d: int,
    seeds: Sequence[int],
    *,
    gamp: bool = True,
    gamp_seeds: int | None = None,
    gamp_max_iter: int = 400,
    points: int = 4096,
    randomisations: int = 4,
    n_test: int = 2000,
) -> dict:
    """One row of the map (module docstring): theory, L-BFGS, GAMP, agreement and verdict."""
    t0 = time.perf_counter()
    seeds = list(seeds)
    row: dict = {"alpha": alpha, "omega": params.omega, "sigma": params.sigma, "lam": params.lam}
    row |= {"d": d, "seeds": len(seeds)}
    row |= _theory(alpha, params, points, randomisations)
    row["theory_seconds"] = time.perf_counter() - t0
    row |= _simulations(alpha, params, d, seeds, n_test)
    row["sim_seconds"] = time.perf_counter() - t0 - row["theory_seconds"]
    if gamp:
        t1 = time.perf_counter()
        row |= _gamp(alpha, params, d, seeds[: gamp_seeds or len(seeds)], gamp_max_iter, n_test)
        row["gamp_seconds"] = time.perf_counter() - t1
    row["seconds"] = time.perf_counter() - t0
    return assess(row)


def assess(row: dict) -> dict:
    """The row with its agreement flags, GAMP's distance to the reference fixed point, the
    verdict and its reasons (re)computed from the measured numbers."""
    row = dict(row)
    d, seeds = row["d"], row["seeds"]
    ref = (row["sem_theta"], row["sem_m"])
    row["sim_agree"] = bool(row["sem_converged"]) and agrees(
        row["sim_sem_theta"], row["sim_sem_m"], *ref, d, seeds
    )
    row["sim_pos_agree"] = bool(row["pos_converged"]) and agrees(
        row["sim_pos_theta"], row["sim_pos_m"], row["pos_theta"], row["pos_m"], d, seeds
    )
    if _missing(row.get("gamp_runs", math.nan)):
        row["gamp_agree"] = math.nan
    else:
        row["gamp_dtheta"] = abs(row["gamp_theta"] - abs(row["sem_theta"]))
        row["gamp_dm"] = abs(row["gamp_m"] - abs(row["sem_m"]))
        row["gamp_dq"] = abs(row["gamp_q"] - row["sem_q"])
        row["gamp_agree"] = bool(
            row["sem_converged"]
            and agrees(row["gamp_theta"], row["gamp_m"], *ref, d, int(row["gamp_runs"]))
        )
    row["verdict"], row["reasons"] = judge(row)
    return row


def trust_map(
    params_base: ModelParams,
    alphas: Sequence[float],
    omegas: Sequence[float],
    d: int = 1000,
    seeds: int | Sequence[int] = 2,
    *,
    gamp: bool = True,
    gamp_seeds: int | None = None,
    gamp_max_iter: int = 400,
    points: int = 4096,
    randomisations: int = 4,
    n_test: int = 2000,
    store: str | Path | None = None,
    progress: bool = False,
) -> list[dict]:
    """One row per (alpha, omega) (module docstring), omega-major (a point whose computation
    raised: verdict "error", the message in `reasons`, and a warning); `params_base` gives sigma,
    lam and A (L = 2, r = t = 1: the exact engine). seeds: a count (0..N-1) or the seeds.
    gamp_seeds: GAMP on the first k seeds only (None: all). store: a sweep-store file that keeps
    finished points; a rerun computes only the missing ones."""
    seeds = list(range(seeds)) if isinstance(seeds, int) else list(seeds)
    alphas = check_values("alphas", alphas, check_alpha)
    omegas = check_values("omegas", omegas, lambda w: check_unit_interval("omega", w))
    _check_settings(params_base, d, seeds, gamp_seeds, gamp_max_iter, points, randomisations)
    settings: dict[str, Any] = dict(  # trust_point's keyword arguments, kept in every point
        d=d,
        seeds=seeds,
        gamp=gamp,
        gamp_seeds=gamp_seeds,
        gamp_max_iter=gamp_max_iter,
        points=points,
        randomisations=randomisations,
        n_test=n_test,
    )
    A = [list(row) for row in params_base.A]
    base = {"sigma": params_base.sigma, "lam": params_base.lam, "A": A}
    grid = [{"alpha": a, "omega": w, **base, **settings} for w in omegas for a in alphas]
    ids = [point_id(KIND, {"version": VERSION, **point}) for point in grid]

    def compute(kind: str, point: dict) -> dict:
        p = dataclasses.replace(params_base, omega=point["omega"])
        return trust_point(p, point["alpha"], **settings)

    run = run_points(
        [(rid, KIND, point) for rid, point in zip(ids, grid, strict=True)],
        compute,
        store=store,
        lease=LEASE_SECONDS,
        progress=progress,
        desc="trust map",
    )
    rows: list[dict] = []
    for rid, point in zip(ids, grid, strict=True):
        alpha, omega = point["alpha"], point["omega"]
        status, result, error = run.outcomes[rid]
        if status == "ok":
            assert result is not None  # an "ok" point has its record
            rows.append(assess(result))
            continue
        assert error is not None  # a failed point has its message
        message = error.splitlines()[0]
        warnings.warn(f"trust map, alpha {alpha:g} omega {omega:g}: {message}", stacklevel=2)
        rows.append({"alpha": alpha, "omega": omega, "verdict": "error", "reasons": message})
    return rows


def _check_settings(p, d, seeds, gamp_seeds, gamp_max_iter, points, randomisations) -> None:
    if p.L != 2 or p.rank != 1 or p.teacher_rank != 1:
        raise ValueError(
            f"params: the map uses the exact L = 2, r = t = 1 engine, got L = {p.L}, "
            f"r = {p.rank}, t = {p.teacher_rank}"
        )
    check_int("d", d, minimum=2)
    if not seeds:
        raise ValueError("seeds must not be empty")
    for s in seeds:
        check_int("seeds", s, minimum=0)
    if gamp_seeds is not None:
        check_int("gamp_seeds", gamp_seeds)
    check_int("gamp_max_iter", gamp_max_iter)
    check_int("points", points, minimum=2)
    check_int("randomisations", randomisations, minimum=1)
