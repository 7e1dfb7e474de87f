"""The state evolution of a GAMP run, iteration by iteration (docs/theory.md §7.2-§7.3, §8).

The overlap map o -> overlaps(hats(o)) of the general engine (randomised QMC with antithetic
points, the global prox of the state evolution; any L, r, t) is iterated from GAMP's overlaps at
some iterate, on a few independent scramblings (`theory.trajectory`): the trace is their mean
and its standard error per iterate. Unlike the engine's
fixed-point solver nothing is pinned and no frame is imposed (no `canonical`, no column signs),
so for r > 1 the overlaps stay in the frame of the GAMP estimate they started from.

Damping: damping = 0 is the state evolution of undamped GAMP (iterate t of GAMP has the
overlaps of iterate t of the map, up to O(1/sqrt(d))). damping > 0 mixes successive overlaps,
o <- (1 - damping) map(o) + damping o (the convention of `attnphase.theory.iterate`); this is
exact at the fixed point but only approximates damped GAMP along the way (q is quadratic in
the damped estimate, and damping F mixes outputs of several iterations).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..params import ModelParams, check_alpha, check_damping, check_int
from ..theory import QMC
from ..theory import overlaps as ge
from ..theory.attention import attention_map
from ..theory.overlaps import admissible
from ..theory.trajectory import trajectories
from .result import GampResult, plain

TRACE_POINTS = 4096  # Sobol points per scrambling (before antithetic images)
TRACE_RANDOMISATIONS = 4
GAMMA_FLOOR = 1e-3  # relative: an iterate with Gamma below it cannot seed the state evolution


@dataclass(frozen=True)
class StateEvolutionTrace:
    """overlaps[k], errors[k]: mean over scramblings and its standard error at iterate
    start_iteration + k; test_error[k] (eps_g = sigma^2/2 E|S(w) - T(h*)|^2 at those overlaps,
    §7.4) likewise; status: "ok" or why the trace ended early."""

    alpha: float
    params: ModelParams
    start_iteration: int
    damping: float
    overlaps: tuple[ge.MatrixOverlaps, ...]
    errors: tuple[ge.MatrixOverlaps, ...]
    test_error: tuple[float, ...]
    test_error_err: tuple[float, ...]
    points: int
    randomisations: int
    status: str

    def rows(self) -> list[dict]:
        """One row per iterate: iteration, q, m, theta, V, test_error and their `_err`."""
        out = []
        for k, (o, e) in enumerate(zip(self.overlaps, self.errors, strict=True)):
            row: dict[str, object] = {"iteration": self.start_iteration + k}
            for name, key in (("q", "q"), ("m", "M"), ("theta", "theta"), ("V", "V")):
                row[name] = plain(getattr(o, key))
                row[f"{name}_err"] = plain(getattr(e, key))
            row["test_error"] = self.test_error[k]
            row["test_error_err"] = self.test_error_err[k]
            out.append(row)
        return out


def state_evolution_trace(
    params: ModelParams,
    alpha: float,
    start: ge.MatrixOverlaps,
    iterations: int,
    damping: float = 0.0,
    *,
    start_iteration: int = 0,
    points: int = TRACE_POINTS,
    randomisations: int = TRACE_RANDOMISATIONS,
    seed: int = 0,
) -> StateEvolutionTrace:
    """`iterations` steps of the state-evolution map (§7.2-§7.3) from the overlaps `start`
    (e.g. a GAMP iterate, see `trace_start`), labelled from `start_iteration` on."""
    p = params
    alpha = check_alpha(alpha)
    iterations = check_int("iterations", iterations, minimum=0)
    damping = check_damping(damping)
    start_iteration = check_int("start_iteration", start_iteration, minimum=0)
    points = check_int("points", points, minimum=2)
    randomisations = check_int("randomisations", randomisations)
    seed = check_int("seed", seed, minimum=0)
    rho = p.sigma**2 * np.eye(p.teacher_rank)
    r = attention_map(p.variant).field_width(p.rank)  # the student field's columns
    shapes = {"q": (r, r), "M": (p.K, r), "theta": (p.teacher_rank, r)}
    shapes["V"] = shapes["q"]
    for name, shape in shapes.items():
        if np.shape(getattr(start, name)) != shape:
            raise ValueError(f"start.{name} must have shape {shape}")
    if not admissible(start, rho):
        raise ValueError(
            "start: overlaps not admissible (q, V and Gamma = rho - theta q^-1 theta^T must be "
            "positive definite; an informed start Qh = Q* has Gamma = 0: start at iterate 1)"
        )
    method = QMC(points, randomisations, seed)
    runs, layout = trajectories(alpha, p, start, iterations, damping, method)
    length = min(len(run.overlaps) for run in runs)
    X = np.array([run.overlaps[:length] for run in runs])  # (scramblings, iterates, packed)
    E = np.array([run.test_errors[:length] for run in runs])
    R = len(runs)
    nan = np.full(X.shape[1:], np.nan)
    mean, se = X.mean(0), (X.std(0, ddof=1) / np.sqrt(R) if R > 1 else nan)
    statuses = sorted({run.status for run in runs if run.status != "ok"})
    return StateEvolutionTrace(
        alpha=alpha,
        params=p,
        start_iteration=start_iteration,
        damping=damping,
        overlaps=tuple(layout.unpack(x) for x in mean),
        errors=tuple(layout.unpack(x) for x in se),
        test_error=tuple(E.mean(0).tolist()),
        test_error_err=tuple(
            (E.std(0, ddof=1) / np.sqrt(R) if R > 1 else np.full(length, np.nan)).tolist()
        ),
        points=points,
        randomisations=R,
        status="; ".join(statuses) if statuses else "ok",
    )


def trace_start(result: GampResult) -> tuple[int, ge.MatrixOverlaps]:
    """The first iterate of a GAMP run that can seed the state evolution: the start, unless Gamma =
    rho - theta q^{-1} theta^T vanishes there, as at an informed start Qh = Q* (docs/theory.md §8.1;
    with the data set's rho_d = sigma^2 Q*^T Q*/d, since the theory's sigma^2 differs from it by
    O(1/sqrt(d)) in either direction), then iterate 1: the first iterate with Gamma above
    GAMMA_FLOOR sigma^2 for both rho_d and sigma^2 I."""
    p = result.params
    rhos = (p.sigma**2 * np.eye(p.teacher_rank), np.atleast_2d(result.rho))
    for step in result.history:
        o = step.overlaps
        if all(admissible(o, rho) for rho in rhos):
            gamma = min(np.linalg.eigvalsh(ge.teacher_covariance(o, rho))[0] for rho in rhos)
            if gamma > GAMMA_FLOOR * p.sigma**2:
                return step.iteration, o
    raise ValueError("result: no iterate of this GAMP run can seed the state evolution")


def trace_of_run(
    result: GampResult,
    iterations: int | None = None,
    *,
    damping: float | None = None,
    points: int = TRACE_POINTS,
    randomisations: int = TRACE_RANDOMISATIONS,
) -> StateEvolutionTrace:
    """The state evolution beside a GAMP run: from `trace_start(result)` to the run's last
    iterate (or `iterations` steps), with the run's damping unless given (exact for an
    undamped run, an approximation along the way for a damped one: module docstring)."""
    k, start = trace_start(result)
    steps = result.iterations - k if iterations is None else iterations
    return state_evolution_trace(
        result.params,
        result.alpha,
        start,
        steps,
        result.damping if damping is None else damping,
        start_iteration=k,
        points=points,
        randomisations=randomisations,
    )
