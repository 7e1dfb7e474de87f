"""Generic fixed-point iteration x = F(x): damped steps, optional Anderson acceleration.

Damping convention (one, everywhere): a damped step is
    x_new = (1 - damping) * F(x) + damping * x,
so damping weights the OLD iterate (the authors' protocol is damping = 0.8).
Convergence: every component must satisfy |F(x)_i - x_i| <= tol * (|x_i| + atol).
Given an approximate Jacobian J of g(x) = F(x) - x, the iteration takes quasi-Newton steps
x_new = x - J^{-1} g(x), improving J by Broyden's update (in the norm weighted by the variable
scales), while they shrink the residual at least twofold; otherwise it falls back to
Anderson/damped steps. `iterate_checked` iterates a map whose integrands have a cheap local
mode and checks the end point in global mode.

The batch axis: a step may be a generator that yields a list of requests (the expensive
integrals it needs) and receives their answers; `iterate_steps` and `iterate_checked_steps`
are then generators of the same kind, `gather` interleaves many of them so that each round's
requests of every live iteration are answered in one call, and `run` drives one to its end.
Every iteration keeps its own damping, history, convergence and warm starts; finished ones
drop out of the rounds.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, replace
from typing import Any, Generic, Protocol, TypedDict, TypeVar

import numpy as np

from ..params import check_damping

Aux = TypeVar("Aux")
AuxOut = TypeVar("AuxOut", covariant=True)
Out = TypeVar("Out")
# a computation that yields lists of requests, receives their answers and returns Out
Steps = Generator[list[Any], list[Any], Out]
Answer = Callable[[list[Any]], list[Any]]
ATOL = 1e-8  # absolute floor of the variable scales in the convergence test
MAX_ITER, STALLED = "maximum iterations reached", "stalled"  # the statuses of `unfinished`
DECAYED = "decayed to zero"  # the status of an iteration ended by `Decayed`
CHECK_ROUNDS = 4  # local iterations ended by a failed global check before iterating globally
# the global iteration after them stops once its least residual over STALL_ITERATIONS is no lower
# than STALL_RATIO of its least over the STALL_ITERATIONS before: a plateau of jumps, not a slow
# approach (a contraction slow enough to be stopped needs over 800 iterations a decade, and a
# residual that rises before it falls has fallen within the next window)
STALL_ITERATIONS = 40
STALL_RATIO = 0.9


class InadmissibleStep(ArithmeticError):
    """The map F is undefined at the proposed point (e.g. lambda + sigma^2 Vhat <= 0)."""


class Decayed(InadmissibleStep):
    """The iterate reached a limit the map cannot resolve (an order parameter decaying to zero
    geometrically, where no relative test converges): the iteration ends there at once, with
    status DECAYED, for the caller to finish on that limit."""


class OffDomain(ArithmeticError):
    """A residual cannot be evaluated at this point (inadmissible overlaps, a collapsed branch):
    the transitions' Newton solves end there with the reason."""


@dataclass(frozen=True)
class FixedPointReport(Generic[Aux]):
    """Outcome of `iterate`: the last point, whatever the map returned there, and a status.

    chord_failed is True when a Jacobian was given and its steps were abandoned; jacobian is
    the Broyden-updated Jacobian (None when none was given).
    """

    x: np.ndarray
    aux: Aux | None
    converged: bool
    iterations: int
    residuals: tuple[float, ...]
    status: str
    chord_failed: bool = False
    jacobian: np.ndarray | None = None

    @property
    def residual(self) -> float:
        return self.residuals[-1] if self.residuals else float("nan")

    @property
    def unfinished(self) -> bool:
        """Stopped short of tol at an iterate where the map was evaluated (its maximum of
        iterations, or stalled): the last iterate's values stand, as an unconverged answer."""
        return self.status in (MAX_ITER, STALLED)


class StageOptions(TypedDict):
    """Keyword arguments of `iterate` that the stages of one solve share."""

    admissible: Callable[[np.ndarray], bool]
    damping: float
    max_iter: int


def anderson_candidate(
    x: np.ndarray, g: np.ndarray, xs: list, gs: list, beta: float, weight: np.ndarray
) -> np.ndarray:
    """Type-II Anderson mixing over the stored history (Walker & Ni 2011): from the iterate x
    with residual g = F(x) - x and the past iterates xs with residuals gs,
    x + beta g - (dX + beta dG) gamma, gamma the least-squares fit of g by the residuals'
    differences dG (rows weighted by `weight`)."""
    dX = np.diff(np.asarray(xs + [x]), axis=0).T
    dG = np.diff(np.asarray(gs + [g]), axis=0).T
    gamma = np.linalg.lstsq(weight[:, None] * dG, weight * g, rcond=None)[0]
    return x + beta * g - (dX + beta * dG) @ gamma


def relative_residual(x: np.ndarray, fx: np.ndarray, atol: float = ATOL) -> float:
    """max_i |F(x)_i - x_i| / (|x_i| + atol), the residual `iterate` compares with tol."""
    return float(np.max(np.abs(fx - x) / (np.abs(x) + atol)))


def run(steps: Steps[Out], answer: Answer | None = None) -> Out:
    """Drive `steps` to its end, each list of requests answered by `answer` in one call (steps
    that request nothing need none)."""
    try:
        requests = next(steps)
        while True:
            if answer is None:
                raise TypeError("run: the steps request integrals; pass `answer`")
            requests = steps.send(answer(requests))
    except StopIteration as stop:
        return stop.value


def gather(computations: Sequence[Steps[Out]]) -> Steps[list[Out]]:
    """The computations interleaved: each round yields the requests of every live one in one
    list and hands each its own answers; returns their results in order."""
    results: list[Any] = [None] * len(computations)
    pending: dict[int, list[Any]] = {}

    def advance(i: int, answers: list[Any] | None) -> None:
        try:
            co = computations[i]
            pending[i] = next(co) if answers is None else co.send(answers)
        except StopIteration as stop:
            results[i] = stop.value

    for i in range(len(computations)):
        advance(i, None)
    while pending:
        rounds = list(pending.items())
        pending.clear()
        answers = yield [req for _, reqs in rounds for req in reqs]
        at = 0
        for i, reqs in rounds:
            advance(i, answers[at : at + len(reqs)])
            at += len(reqs)
    return results


def _call(step: Callable[[np.ndarray], Any], x: np.ndarray) -> Steps[Any]:
    """step(x), whether step returns its value or is a generator of requests (`Steps`)."""
    out = step(x)
    if inspect.isgenerator(out):
        out = yield from out
    return out


def iterate(
    step: Callable[[np.ndarray], tuple[np.ndarray, Aux]],
    x0: np.ndarray,
    **kw,
) -> FixedPointReport[Aux]:
    """`iterate_steps` on a step that returns F(x) directly, run to its end."""
    return run(iterate_steps(step, x0, **kw))


def iterate_steps(
    step: Callable[[np.ndarray], Any],
    x0: np.ndarray,
    *,
    admissible: Callable[[np.ndarray], bool],
    damping: float = 0.8,
    tol: float = 1e-7,
    atol: float = ATOL,
    max_iter: int = 500,
    anderson: int = 0,
    max_backtracks: int = 8,
    jacobian: np.ndarray | None = None,
    stall: int = 0,
) -> Steps[FixedPointReport[Any]]:
    """Solve x = F(x), with step(x) = (F(x), aux) (or a generator of requests returning it,
    `Steps`); aux at the returned x is kept.

    anderson > 0 keeps that many past iterates for Anderson acceleration; `jacobian`, an
    approximation of d(F(x) - x)/dx, switches on quasi-Newton steps (see the module docstring).
    An extrapolated point that is not admissible, or where F is undefined, is replaced by a
    damped step (with the mixing halved on every failure, at most max_backtracks times), and
    the history is reset. stall > 0 ends the iteration, unconverged, once the least residual of
    the last `stall` iterations is not below STALL_RATIO of the least of the `stall` before.
    """
    beta = 1.0 - check_damping(damping)
    x = np.asarray(x0, dtype=float)
    try:
        fx, aux = yield from _call(step, x)
    except Decayed:
        return FixedPointReport(x, None, False, 0, (), DECAYED)
    except InadmissibleStep as err:
        return FixedPointReport(x, None, False, 0, (), f"map undefined at the start: {err}")
    xs: list[np.ndarray] = []
    gs: list[np.ndarray] = []
    residuals: list[float] = []
    J = None if jacobian is None else np.array(jacobian, dtype=float)
    chord = J is not None
    chord_failed = False
    last_chord: tuple[np.ndarray, np.ndarray] | None = None
    for it in range(1, max_iter + 1):
        g = fx - x
        scale = np.abs(x) + atol
        res = relative_residual(x, fx, atol)
        residuals.append(res)
        if last_chord is not None:
            # Broyden's good update, weighted by the variable scales
            dx, dg = x - last_chord[0], g - last_chord[1]
            wdx = dx / scale**2
            if dx @ wdx > 0:
                J += np.outer(dg - J @ dx, wdx) / (dx @ wdx)
            last_chord = None
        if not np.isfinite(res):
            return FixedPointReport(
                x, aux, False, it, tuple(residuals), "non-finite residual", chord_failed, J
            )
        if res <= tol:
            return FixedPointReport(
                x, aux, True, it, tuple(residuals), "converged", chord_failed, J
            )
        if (
            stall
            and len(residuals) >= 2 * stall
            and min(residuals[-stall:]) >= STALL_RATIO * min(residuals[-2 * stall : -stall])
        ):
            return FixedPointReport(x, aux, False, it, tuple(residuals), STALLED, chord_failed, J)
        if chord and len(residuals) > 1 and res > 0.5 * residuals[-2]:
            chord, chord_failed = False, True
        candidate = x + beta * g
        if chord:
            assert J is not None  # chord steps only with a Jacobian
            try:
                newton = x - np.linalg.solve(J, g)
            except np.linalg.LinAlgError:
                newton = np.full_like(x, np.nan)
                chord, chord_failed = False, True
            if np.all(np.isfinite(newton)) and admissible(newton):
                candidate = newton
                last_chord = (x, g)
        elif anderson > 0 and xs:
            accelerated = anderson_candidate(x, g, xs, gs, beta, 1.0 / scale)
            if np.all(np.isfinite(accelerated)) and admissible(accelerated):
                candidate = accelerated
        xs.append(x)
        gs.append(g)
        del xs[: -anderson or None], gs[: -anderson or None]
        mix = beta
        for _ in range(max_backtracks + 1):
            try:
                fnew, aux_new = yield from _call(step, candidate)
                break
            except Decayed:
                return FixedPointReport(
                    x, aux, False, it, tuple(residuals), DECAYED, chord_failed, J
                )
            except InadmissibleStep as err:
                last_error = err
                xs.clear()
                gs.clear()
                mix *= 0.5
                candidate = x + mix * g
        else:
            return FixedPointReport(
                x,
                aux,
                False,
                it,
                tuple(residuals),
                f"map undefined near the iterate: {last_error}",
                chord_failed,
                J,
            )
        x, fx, aux = candidate, fnew, aux_new
    return FixedPointReport(x, aux, False, max_iter, tuple(residuals), MAX_ITER, chord_failed, J)


class LocalGlobalMap(Protocol[AuxOut]):
    """A map F with a cheap local mode: `step` as in `iterate`; with `local` True it may follow
    each integrand's previous solution instead of searching for the global one (the prox of
    docs/theory.md §6 and §7.1), exact until a global minimiser jumps."""

    local: bool

    def step(self, x: np.ndarray) -> tuple[np.ndarray, AuxOut]: ...


def iterate_checked(fmap: LocalGlobalMap[Aux], x: np.ndarray, **kw) -> FixedPointReport[Aux]:
    """`iterate_checked_steps` on a map whose step returns F(x) directly, run to its end."""
    return run(iterate_checked_steps(fmap, x, **kw))


def iterate_checked_steps(
    fmap: LocalGlobalMap[Any], x: np.ndarray, **kw
) -> Steps[FixedPointReport[Any]]:
    """`iterate` (keywords `kw`, tol among them) on the map in its local mode, then one global
    evaluation at the end point: the fixed point is accepted when that residual meets tol too,
    and its aux is the global evaluation's. Otherwise the local iteration resumes there (the
    integrands now following the global solutions); after CHECK_ROUNDS failed checks, or when
    a local iteration fails other than by its maximum of iterations, the map is iterated in
    global mode (from the last checked point, or from x) until it converges or stalls
    (STALL_ITERATIONS). A local iteration that reaches its maximum of iterations ends there,
    with the global evaluation's aux; one that `Decayed` ends at once. A map with `steps` (a
    generator of requests, `Steps`) is stepped through it."""
    step = getattr(fmap, "steps", fmap.step)
    start, iterations = x, 0
    residuals: tuple[float, ...] = ()
    for _ in range(CHECK_ROUNDS):
        fmap.local = True
        rep = yield from iterate_steps(step, x, **kw)
        fmap.local = False
        iterations, residuals = iterations + rep.iterations, residuals + rep.residuals
        if rep.status == DECAYED:
            return replace(rep, iterations=iterations, residuals=residuals)
        if not rep.converged and rep.status != MAX_ITER:
            x = start
            break
        try:
            fx, aux = yield from _call(step, rep.x)
        except InadmissibleStep:
            break
        res = relative_residual(rep.x, fx, kw.get("atol", ATOL))
        iterations, residuals = iterations + 1, residuals + (res,)
        if res <= kw["tol"] or not rep.converged:
            converged = rep.converged and res <= kw["tol"]
            return replace(
                rep, aux=aux, iterations=iterations, residuals=residuals, converged=converged
            )
        x, start, kw = rep.x, rep.x, {**kw, "jacobian": rep.jacobian}
    rep = yield from iterate_steps(step, x, **kw, stall=STALL_ITERATIONS)
    return replace(rep, iterations=iterations + rep.iterations, residuals=residuals + rep.residuals)


def residual_jacobian(
    step: Callable[[np.ndarray], tuple[np.ndarray, Aux]],
    x: np.ndarray,
    fx: np.ndarray,
    free: np.ndarray,
    rel_step: float = 1e-4,
) -> np.ndarray:
    """Forward-difference Jacobian of g(x) = F(x) - x; fixed (non-free) components get -I."""
    n = x.size
    J = -np.eye(n)
    g0 = fx - x
    for j in np.flatnonzero(free):
        h = rel_step * max(abs(x[j]), 1e-3)
        xp = x.copy()
        xp[j] += h
        fp, _ = step(xp)
        J[:, j] = (fp - xp - g0) / h
    return J
