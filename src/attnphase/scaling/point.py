"""One point of the scaling study (docs/scaling.md §2): alpha_c, alpha_l and the ends of both
branches (docs/theory.md §5) of one member of the family, solved by the general engine
(docs/theory.md §7; the exact one at L = 2, §6), each with its error, and a search for fixed
points with m and theta both non-zero.

The branches are followed on a geometric grid of alpha on every replica of the integration
(`transitions.scan`: Gauss-Hermite at L = 2, the main order and the check order; QMC otherwise,
every scrambling on the same points). Errors: Gauss-Hermite, the change between the two orders
plus the interpolation bounds; QMC, the standard error over scramblings plus the largest
interpolation bound. A branch's end carries no interpolation bound of its own: its error is the
spread over replicas plus the bisection's resolution (`SPINODAL_STEPS` halvings of the grid
step). A quantity that does not exist gets NaN and a status saying why.

The precision ladder (QMC): where the replicas disagree on whether a branch exists at a grid
alpha (one scrambling on it, another off it), a root there is interpolated across a hole and
its error bar does not cover it (measured at L = 3, omega 0.3: 0.30 +- 0.06 at 1024 points,
0.4077 +- 0.0027 at 2048); the scan is then repeated with twice the points, up to the
settings' `max_points`, and the row says at which points the replicas agreed or where they
still disagree.

The simplex family's positional branch (L >= 3) has every column positional, held on the
manifold symmetric under the token permutations (the engine's simplex branch, docs/scaling.md §1).
"""

from __future__ import annotations

import math
import time
import warnings
from typing import Any

import numpy as np

from ..params import ModelParams, Tied
from ..theory import QMC, Method, NonConvergenceWarning
from ..theory.branches import SIMPLEX_BRANCH
from ..theory.overlaps import MatrixOverlaps
from ..theory.precision import finer
from ..theory.replicas import ReplicaScan, scan_replicas
from ..transitions import above_precision
from ..transitions.scan import SPINODAL_STEPS, replica_roots
from .family import family_model
from .settings import ScanSettings

FREE = "free"  # a branch name the engine pins nothing on
MIXED_STARTS = 3  # alphas of the search for mixed fixed points


def _on_grid(scan) -> list[bool]:
    return [scan.on(s) for s in scan.grid]


def _statuses(per: list[dict], n_found: dict[str, int], lower_where_both: str | None) -> dict:
    """Why each quantity has its value, or none (module docstring)."""
    main = per[0]
    sem, pos = _on_grid(main["semantic"]), _on_grid(main["positional"])
    both = [s and q for s, q in zip(sem, pos, strict=True)]
    n = len(per)

    def found(name: str) -> str:
        k = n_found[name]
        return "found" if k == n else f"found on {k} of {n} replicas"

    out = {}
    if n_found["alpha_c"]:
        out["alpha_c"] = found("alpha_c")
    elif not any(pos):
        out["alpha_c"] = "no positional branch in the window"
    elif not any(sem):
        out["alpha_c"] = "no semantic branch in the window"
    elif not any(both):
        out["alpha_c"] = "the branches never coexist on the grid"
    else:
        out["alpha_c"] = f"no crossing in the window ({lower_where_both} lower wherever both exist)"
    out["alpha_l"] = found("alpha_l") if n_found["alpha_l"] else "no crossing in the window"
    if n_found["spinodal_semantic"]:
        out["spinodal_semantic"] = found("spinodal_semantic")
    elif not any(sem):
        out["spinodal_semantic"] = "no semantic branch in the window"
    else:
        out["spinodal_semantic"] = "below the window (the branch exists at alpha_min)"
    if n_found["spinodal_positional"]:
        out["spinodal_positional"] = found("spinodal_positional")
    elif not any(pos):
        out["spinodal_positional"] = "no positional branch"
    else:
        out["spinodal_positional"] = "beyond the window (the branch exists at alpha_max)"
    return out


def _lower(main: dict) -> str | None:
    """The branch with the lower training loss wherever both exist on the main replica's grid
    (None when they never coexist or swap)."""
    s = np.array(main["semantic"].grid_values("train_loss"))
    q = np.array(main["positional"].grid_values("train_loss"))
    ok = np.isfinite(s) & np.isfinite(q)
    if not ok.any():
        return None
    if np.all(s[ok] < q[ok]):
        return "semantic"
    if np.all(q[ok] < s[ok]):
        return "positional"
    return None


def disagreements(alphas: list[float], per: list[dict]) -> list[str]:
    """Where the replicas disagree on whether a branch exists: per branch, the grid alphas on
    it for some replicas and off it for others (empty when they all agree)."""
    out = []
    for branch in ("semantic", "positional"):
        flags = np.array([_on_grid(r[branch]) for r in per])
        split = np.flatnonzero(flags.any(0) & ~flags.all(0))
        if split.size:
            out.append(f"{branch} at alpha " + ", ".join(f"{alphas[i]:.3g}" for i in split))
    return out


def _transitions(
    method: Method, scan: ReplicaScan, per: list[dict]
) -> tuple[dict[str, float], dict[str, int]]:
    """alpha_c and alpha_l with their errors (the module docstring's error model) and on how
    many replicas each was found."""
    out: dict[str, float] = {}
    n_found: dict[str, int] = {}
    weight = 1 if method.averages_replicas else 2  # an interpolation bound on both orders
    for name in ("alpha_c", "alpha_l"):
        value, err, n_found[name] = method.combine([r[name] for r in per])
        bound = max(r[f"bound_{name[-1]}"] for r in per)
        out[name], out[f"{name}_err"] = value, err + weight * bound
    if math.isfinite(out["alpha_l"]):  # with eps_lin's own integration error (QMC)
        slopes = [r["slope"] for r in per if math.isfinite(r["slope"]) and r["slope"] != 0]
        if slopes:
            out["alpha_l_err"] = math.hypot(
                out["alpha_l_err"], scan.eps_lin_err / abs(float(np.mean(slopes)))
            )
    return out, n_found


def _next_rung(method: Method, s: ScanSettings, precision_short: bool) -> Method | None:
    """The precision ladder's next integration: QMC points doubled up to s.budget, the
    Gauss-Hermite orders raised (`theory.precision.finer`) where a precision is not met."""
    if method.averages_replicas:
        points = 2 * method.settings()["points"]
        return QMC(points, s.randomisations) if points <= s.budget else None
    return finer(method) if precision_short else None


def _agreed_scan(
    p: ModelParams, alphas: list[float], s: ScanSettings, positional: str, progress: bool
) -> tuple[Method, ReplicaScan, list[dict], list[str], list[str]]:
    """The replicas' scan (and each replica's roots): the exact engine at L = 2; QMC from
    s.points; climbing the precision ladder (`_next_rung`) while the replicas disagree
    (`disagreements`) or a transition's error is above s.precision, to its end. Also returns
    the disagreements and the transitions short of the precision at the last rung."""
    method = s.method_for(p)
    while True:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NonConvergenceWarning)
            scan = scan_replicas(p, alphas, method, positional=positional, progress=progress)
            per = [replica_roots(alphas, r, scan.eps_lin) for r in scan.replicas]
        split = disagreements(alphas, per) if method.averages_replicas else []
        values = _transitions(method, scan, per)[0]
        short = [] if s.precision is None else above_precision(values, s.precision)
        if not split and not short:
            return method, scan, per, split, short
        rung = _next_rung(method, s, bool(short))
        if rung is None:
            return method, scan, per, split, short
        method = rung


def mixed_search(
    p: ModelParams, alphas: list[float], main: dict, scan: ReplicaScan
) -> dict[str, Any]:
    """Fixed points with m and theta both non-zero: solved with nothing pinned from the mean of
    the semantic and positional fixed points' overlaps (theta from the first, M from the second)
    at up to MIXED_STARTS grid alphas where both branches exist (else where either does). The
    result says where each start ended and, for a mixed end, its theta, m, training loss and
    whether it lies below both branches (the global minimum)."""
    sem, pos = main["semantic"], main["positional"]
    idx = [i for i in range(len(alphas)) if sem.on(sem.grid[i]) and pos.on(pos.grid[i])]
    if not idx:
        return {"mixed": "not searched: the branches never coexist on the grid", "mixed_found": 0}
    pick = sorted({idx[0], idx[len(idx) // 2], idx[-1]})[:MIXED_STARTS]
    ends, found, global_min = [], [], []
    for i in pick:
        s, q = sem.replica.overlaps(sem.grid[i]), pos.replica.overlaps(pos.grid[i])
        start = MatrixOverlaps(q=0.5 * (s.q + q.q), M=q.M, theta=s.theta, V=0.5 * (s.V + q.V))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NonConvergenceWarning)
            res = scan.solve(alphas[i], start, FREE)
        ends.append(f"{alphas[i]:.3g}: {res.kind}")
        if res.kind == "mixed":
            losses = [
                sem.replica.observable(sem.grid[i], "train_loss"),
                pos.replica.observable(pos.grid[i], "train_loss"),
            ]
            below = bool(res.train_loss < min(losses))
            theta = float(np.abs(res.values["theta"]).max())
            m = float(np.abs(res.values["M"]).max())
            found.append(
                f"alpha {alphas[i]:.3g} theta {theta:.4g} m {m:.4g} train loss {res.train_loss:.6g}"
            )
            global_min.append(below)
    text = "free starts ended at alpha " + ", ".join(ends)
    if found:
        text += "; mixed: " + "; ".join(
            f"{f} ({'global minimum' if g else 'not the global minimum'})"
            for f, g in zip(found, global_min, strict=True)
        )
    return {"mixed": text, "mixed_found": len(found), "mixed_global": any(global_min)}


def scaling_point(
    L: int,
    omega: float,
    family: str = "linear",
    settings: ScanSettings | None = None,
    *,
    mixed: bool = True,
    progress: bool = False,
    mask: str = "none",
    heads: int = 1,
) -> dict[str, Any]:
    """The row of one (L, omega, family) (module docstring; docs/scaling.md §2) at `settings`
    (default `ScanSettings()`): the grid is `num` alphas spaced geometrically on [alpha_min,
    alpha_max]; the integration is the exact engine at L = 2 (Gauss-Hermite, default orders)
    and QMC(points, randomisations) otherwise (a variant, `mask` or `heads` as in
    `family_model`, by QMC at every L; the search for mixed fixed points is the tied model's)."""
    t0 = time.perf_counter()
    s = settings or ScanSettings()
    p = family_model(L, omega, family, a=s.a, sigma=s.sigma, lam=s.lam, mask=mask, heads=heads)
    alphas = [float(x) for x in np.geomspace(s.alpha_min, s.alpha_max, s.num)]
    positional = SIMPLEX_BRANCH if family == "simplex" and p.L > 2 else "positional"
    method, scan, per, split, short = _agreed_scan(p, alphas, s, positional, progress)
    values, n_found = _transitions(method, scan, per)
    row: dict[str, Any] = dict(values)
    step = math.log(alphas[1] / alphas[0])  # the grid step, relative
    for name, lower in (("spinodal_semantic", True), ("spinodal_positional", False)):
        ends = [r["semantic" if lower else "positional"].spinodal(lower=lower) for r in per]
        value, err, n_found[name] = method.combine(ends)
        resolution = value * step / 2**SPINODAL_STEPS if math.isfinite(value) else math.nan
        row[name], row[f"{name}_err"] = value, err + resolution
    statuses = _statuses(per, n_found, _lower(per[0]))
    for name, text in statuses.items():
        row[f"{name}_status"] = text
    row["eps_lin"], row["eps_lin_err"] = scan.eps_lin, scan.eps_lin_err
    if mixed and p.variant != Tied():
        row |= {"mixed": "not searched: the search follows the tied model", "mixed_found": 0}
    elif mixed:
        main, search = per[0], scan
        if scan.channels is None:  # L = 2: the roots came from the exact engine
            search = scan_replicas(p, alphas, QMC(s.points, s.randomisations))
            main = replica_roots(alphas, search.replicas[0], 0.0)
        row |= mixed_search(p, alphas, main, search)
    row["rank"], row["K"] = p.rank, p.K
    row["method"] = method.name
    # the integration that answered (the ladder's rung), beside the settings asked for, named
    # as a sweep point names it: points_used, n_xi_used, ...
    row |= {f"{k}_used": v for k, v in method.columns().items() if k != "method"}
    if s.precision is not None:
        row["precision_status"] = (
            "met"
            if not short
            else f"{', '.join(short)} above precision {s.precision:g} at the ladder's end"
        )
    if method.averages_replicas:
        points = method.settings()["points"]
        row["replicas"] = (
            f"agree at {points} points"
            if not split
            else f"disagree at {points} points (max_points): " + "; ".join(split)
        )
    row["seconds"] = time.perf_counter() - t0
    return row
