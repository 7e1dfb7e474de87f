"""Which minimum a start reaches, how often (the paper's App. E.4, Fig. 15; docs/theory.md §10).

At each alpha, `runs` independent problems (seed = run index: teacher, data, test set and start
from the seed) are trained from a start (default: random, with Adam), and on the same data the
two informed starts (semantic Q = Q*, positional m = init_m) are trained with L-BFGS. Each end
point is classified by `classify`, a pure function of its numbers:

- it is "semantic" ("positional") when its training loss is within a relative `loss_rtol` of
  the semantic-start (positional-start) run's loss on the same data AND its overlaps
  (|theta|/sigma^2, |m|) are within a Euclidean distance `overlap_atol` of that run's (signs
  ignored: S(h) = S(-h));
- when it matches both (the two informed runs ended in one minimum), its overlaps decide:
  semantic if |theta|/sigma^2 > |m|, positional otherwise;
- anything else (another minimum, a non-finite loss) is "other".

Default tolerances, from runs at d = 500, omega = 0.3, sigma = 0.5, lam = 0.01 (alpha 0.5 and
3, seeds 0-2): semantic and positional minima of one problem differ by >= 10% in training loss
and by >= 0.2 in (|theta|/sigma^2, |m|); Adam from a random start reached minima with the
positional start's loss to 1e-6 relative, or (alpha 0.5, in the overfitting regime with many
nearby minima) to 2.5e-3 and within 0.06 in overlaps. Hence `loss_rtol` = 0.02 and
`overlap_atol` = 0.1: about half the gap between the two kinds of minima, above the spread
within one kind.

The runs are simulation sweeps (`sweep.run_sweep`, one point per (alpha, start, seed)): with a
`store` file a rerun computes only the runs it lacks. The study lives in `validity`, beside the
trust map, not in `sim`: it is built on the sweeps, which themselves run `sim`. Each run
uses one torch thread (serially or in `workers` processes): several threads per small run only
compete for the cores, and several seeds of one alpha trained as one torch batch were measured
slower per seed (d = 500, 4 or 10 seeds: 1.3x at alpha 0.5, 2.2-2.4x at 1.75 and 3), so runs
are not batched. Without a `store`, a temporary one is kept in memory (/dev/shm where it exists): a
store on disk syncs every point's claim and result (~40 ms a point measured, ~1 min of the
1650 points of the 11 x 50 study).

Stopping rule of the trained runs: the RMS gradient `gtol` (default 1e-8, as every simulation)
or `steps` (Adam: 5000). Measured on 33 Adam runs at d = 500 (11 alphas 0.5..3, seeds 3-5):
stopping at 1e-6 instead takes 27% fewer steps and moves the end point by at most 2e-4 in
(|theta|/sigma^2, |m|) and 2e-7 relative in loss, far inside the classifier's tolerances;
at 1e-5 one run stopped on a plateau on its way down (overlaps 0.006, loss 0.7% off).
"""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .. import sweep
from ..params import STANDARD_A, check_alpha, check_int, check_nonnegative, check_positive
from ..run_options import INITS, OPTIMIZERS
from ..sim.grid import torch_threads

OUTCOMES = ("semantic", "positional", "other")
INFORMED = ("semantic", "positional")
INFORMED_OPTIMIZER = "lbfgs"
OVERLAP_ATOL = 0.1
LOSS_RTOL = 0.02
GTOL = 1e-8  # SimConfig's default: the trained runs' points are the simulation sweep's own
_SHM = Path("/dev/shm")


def _memory_dir() -> str | None:
    """Where a temporary store goes: /dev/shm when it is a writable directory, else the default
    temporary directory."""
    return str(_SHM) if _SHM.is_dir() and os.access(_SHM, os.W_OK | os.X_OK) else None


def _close(loss: float, reference: float, rtol: float) -> bool:
    return math.isfinite(reference) and abs(loss - reference) <= rtol * abs(reference)


def _check_tolerances(overlap_atol: float, loss_rtol: float) -> None:
    """overlap_atol in (0, 1] and loss_rtol in [0, 1]: the overlaps compared are O(0.1) and the
    two kinds of minima lie about 0.2 apart, so a wider tolerance matches every run to both."""
    check_positive("overlap_atol", overlap_atol)
    check_nonnegative("loss_rtol", loss_rtol)
    for name, value in (("overlap_atol", overlap_atol), ("loss_rtol", loss_rtol)):
        if value > 1:
            raise ValueError(
                f"{name} must be at most 1 (wider matches every run to both informed ones), "
                f"got {value:g}"
            )


def classify(
    theta: float,
    m: float,
    loss: float,
    semantic: tuple[float, float, float],
    positional: tuple[float, float, float],
    *,
    sigma: float,
    overlap_atol: float = OVERLAP_ATOL,
    loss_rtol: float = LOSS_RTOL,
) -> str:
    """ "semantic", "positional" or "other" for an end point with overlaps theta, m (docs/theory.md
    §1, r = t = 1) and training loss `loss`; `semantic` and `positional` are (theta, m, loss)
    of the semantic-start and positional-start runs on the same data. Rules in the module
    docstring."""
    check_positive("sigma", sigma)
    _check_tolerances(overlap_atol, loss_rtol)
    if not all(math.isfinite(x) for x in (theta, m, loss)):
        return "other"
    point = (abs(theta) / sigma**2, abs(m))
    matches = []
    for name, (theta_ref, m_ref, loss_ref) in (("semantic", semantic), ("positional", positional)):
        ref = (abs(theta_ref) / sigma**2, abs(m_ref))
        if _close(loss, loss_ref, loss_rtol) and math.dist(point, ref) <= overlap_atol:
            matches.append(name)
    if len(matches) == 1:
        return matches[0]
    if len(matches) == 2:  # both informed runs ended in this minimum: its overlaps decide
        return "semantic" if point[0] > point[1] else "positional"
    return "other"


@dataclass(frozen=True)
class OutcomeStudy:
    """fractions: one record per alpha (alpha, runs, n_* and fraction_* per outcome, their
    binomial standard errors se_*, not_converged); runs: one record per trained run (alpha,
    seed, theta, m, train_loss, the informed runs' losses, converged, outcome)."""

    fractions: list[dict]
    runs: list[dict]


def _specs(alphas, runs, base, init, optimizer, lr, steps, gtol):
    seeds = list(range(runs))
    trained = sweep.SweepSpec(
        "simulation",
        {"alpha": list(alphas), "seed": seeds},
        {**base, "init": init, "optimizer": optimizer, "lr": lr, "steps": steps, "gtol": gtol},
    )
    informed = sweep.SweepSpec(
        "simulation",
        {"alpha": list(alphas), "init": list(INFORMED), "seed": seeds},
        {**base, "optimizer": INFORMED_OPTIMIZER},
    )
    return trained, informed


def _check(alphas, runs, init, optimizer, overlap_atol, loss_rtol):
    if len(alphas) == 0:
        raise ValueError("alpha must not be empty")
    for a in alphas:
        check_alpha(a)
    check_int("runs", runs)
    if init not in INITS:
        raise ValueError(f"init must be one of {INITS}, got {init!r}")
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {optimizer!r}")
    _check_tolerances(overlap_atol, loss_rtol)


def outcome_specs(
    alphas: Sequence[float],
    runs: int,
    *,
    d: int = 500,
    init: str = "random",
    optimizer: str = "adam",
    lr: float | None = None,
    steps: int | None = None,
    gtol: float = GTOL,
    omega: float = 0.3,
    sigma: float = 0.5,
    lam: float = 0.01,
    A=STANDARD_A,
    n_test: int = 1000,
    overlap_atol: float = OVERLAP_ATOL,
    loss_rtol: float = LOSS_RTOL,
):
    """The two validated sweeps of a study: (trained runs, informed L-BFGS runs); ValueError
    naming the parameter on bad input, before anything runs."""
    _check(alphas, runs, init, optimizer, overlap_atol, loss_rtol)
    base = dict(d=d, omega=omega, sigma=sigma, lam=lam, A=A, n_test=n_test)
    return _specs(alphas, runs, base, init, optimizer, lr, steps, gtol)


def _table(spec, store, backend, workers, progress) -> pd.DataFrame:
    with torch_threads(1):  # the serial backend's runs, as in the process backend's workers
        table = sweep.run_sweep(spec, store, backend=backend, workers=workers, progress=progress)
    ids = [rid for rid, _ in spec.runs()]
    return table.set_index("run_id").loc[ids].reset_index()


def _end_point(row) -> tuple[float, float, float]:
    """(theta, m, train_loss) of a stored run; NaN for a failed one."""
    if row.run_status != "ok":
        return (float("nan"),) * 3
    return float(row.theta), float(row.m), float(row.train_loss)


def summarise(runs: list[dict], alphas: Sequence[float]) -> list[dict]:
    """One record per alpha: counts, fractions and binomial standard errors of the outcomes."""
    out = []
    for a in alphas:
        mine = [r for r in runs if r["alpha"] == a]
        n = len(mine)
        rec: dict = {"alpha": a, "runs": n}
        for name in OUTCOMES:
            rec[f"n_{name}"] = sum(r["outcome"] == name for r in mine)
        for name in OUTCOMES:
            f = rec[f"n_{name}"] / n
            rec[f"fraction_{name}"] = f
            rec[f"se_{name}"] = math.sqrt(f * (1 - f) / n)
        rec["not_converged"] = sum(not r["converged"] for r in mine)
        out.append(rec)
    return out


def outcomes(
    alphas: Sequence[float],
    runs: int = 50,
    *,
    d: int = 500,
    init: str = "random",
    optimizer: str = "adam",
    lr: float | None = None,
    steps: int | None = None,
    gtol: float = GTOL,
    omega: float = 0.3,
    sigma: float = 0.5,
    lam: float = 0.01,
    A=STANDARD_A,
    n_test: int = 1000,
    overlap_atol: float = OVERLAP_ATOL,
    loss_rtol: float = LOSS_RTOL,
    store: str | Path | None = None,
    backend: str = "serial",
    workers: int = 1,
    progress: bool | None = None,
) -> OutcomeStudy:
    """Train `runs` seeds per alpha from `init` with `optimizer` (stopping at RMS gradient
    `gtol` or after `steps`), and the two informed starts with L-BFGS on the same data; classify
    every end point (`classify`). `store`: the sweep store the runs are kept in (a rerun
    resumes); None: a temporary one (in memory where possible)."""
    alphas = [float(a) for a in alphas]
    trained, informed = outcome_specs(
        alphas, runs, d=d, init=init, optimizer=optimizer, lr=lr, steps=steps, gtol=gtol,
        omega=omega, sigma=sigma, lam=lam, A=A, n_test=n_test, overlap_atol=overlap_atol,
        loss_rtol=loss_rtol,
    )  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="attnphase-outcomes-", dir=_memory_dir()) as tmp:
        path = Path(tmp) / "runs.sqlite" if store is None else Path(store)
        ref = _table(informed, path, backend, workers, progress)
        end = _table(trained, path, backend, workers, progress)
    nan = float("nan")
    informed_end = {(r.alpha, r.init, r.seed): _end_point(r) for r in ref.itertuples()}
    records = []
    for r in end.itertuples():
        theta, m, loss = _end_point(r)
        sem = informed_end.get((r.alpha, "semantic", r.seed), (nan, nan, nan))
        pos = informed_end.get((r.alpha, "positional", r.seed), (nan, nan, nan))
        outcome = classify(
            theta, m, loss, sem, pos, sigma=sigma, overlap_atol=overlap_atol, loss_rtol=loss_rtol
        )
        records.append(
            {
                "alpha": r.alpha,
                "seed": r.seed,
                "theta": theta,
                "m": m,
                "train_loss": loss,
                "train_loss_semantic": sem[2],
                "train_loss_positional": pos[2],
                "converged": bool(r.run_status == "ok" and r.converged),
                "outcome": outcome,
            }
        )
    return OutcomeStudy(summarise(records, alphas), records)


__all__ = [
    "GTOL",
    "INFORMED",
    "LOSS_RTOL",
    "OUTCOMES",
    "OVERLAP_ATOL",
    "OutcomeStudy",
    "classify",
    "outcome_specs",
    "outcomes",
    "summarise",
]
