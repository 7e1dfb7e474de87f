"""The exact L=2 channel's solver: tied rank-1 dot-product attention with two tokens
(docs/theory.md §2-§6), integrated on a Gauss-Hermite grid.

`solve_exact` finds one fixed point of the state evolution; `exact_curve` follows a branch
along a grid of alpha with warm starts. Both return `TheoryResult` records; the public entry
points are `attnphase.theory.solve` and `attnphase.theory.learning_curve`.
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np

from ...params import ModelParams
from ..baseline import linear_test_error
from ..branches import (
    EXACT_BRANCHES,
    Q_DECAYED,
    Q_NULL,
    START_V,
    follow_branch,
    null_start_v,
)
from ..iterate import (
    DECAYED,
    Decayed,
    InadmissibleStep,
    StageOptions,
    iterate,
    iterate_checked,
    residual_jacobian,
)
from ..method import GaussHermite
from ..overlaps import Hats, MatrixOverlaps, Overlaps, scalar_free_entropy, scalar_overlaps
from ..result import ConvergenceError, NonConvergenceWarning, TheoryResult
from .channel import ChannelIntegrator, ChannelMoments, hats, kappa, test_error

# The authors' initial overlaps (q, m, V, theta) for each branch (docs/theory.md §3).
INITIAL_OVERLAPS: dict[str, Overlaps] = {
    "semantic": Overlaps(q=0.9068, m=0.0002, V=START_V, theta=0.3472),
    "positional": Overlaps(q=0.0207, m=0.2, V=START_V, theta=0.0),
    "trivial": Overlaps(q=0.0207, m=0.0, V=START_V, theta=0.0),
}

# below this token std the semantic start is not admissible (q sigma^2 <= theta^2)
SEMANTIC_START_SIGMA = math.sqrt(
    INITIAL_OVERLAPS["semantic"].theta ** 2 / INITIAL_OVERLAPS["semantic"].q
)


def _start_bound(sigma: float, theta: float) -> str:
    """What a message adds where the semantic start is refused for a small sigma."""
    if sigma < SEMANTIC_START_SIGMA and theta != 0:
        return f"; the authors' semantic start needs sigma >= {SEMANTIC_START_SIGMA:.3f}"
    return ""


COARSE_ORDER = (16, 8)
COARSE_MAX_ITER = 100  # the damped coarse stage of a cold start only prepares the fine solve


def _as_vector(o: Overlaps) -> np.ndarray:
    return np.array([o.q, o.m, o.V, o.theta])


def admissible(x: np.ndarray, rho: float) -> bool:
    q, _, V, theta = x
    return bool(q > 0 and V > 0 and rho - theta * theta / q > 0)


def swap_symmetric(p: ModelParams) -> bool:
    """A commutes with the token swap (A11 = A22, A12 = A21): then m = 0 is invariant."""
    (a11, a12), (a21, a22) = p.A
    return a11 == a22 and a12 == a21


def pinned_overlaps(branch: str, p: ModelParams) -> tuple[bool, bool]:
    """Which of (m, theta) a branch holds at exactly zero.

    theta = 0 is invariant under the map for any A (symmetry y -> -y), and m = 0 when A is
    swap-symmetric (docs/theory.md §6). Solving a branch on its invariant manifold keeps rounding
    noise from carrying the iteration off an unstable branch; explicit starts pin nothing.
    """
    sym = swap_symmetric(p)
    return {
        "semantic": (sym, False),
        "positional": (False, True),
        "trivial": (sym, True),
    }.get(branch, (False, False))


class GaussHermiteMap:
    """The state-evolution map (q, m, V, theta) -> overlaps(hats(...)) at fixed alpha, with the
    pinned components of (m, theta) held at zero. local: each node's prox from its warm start
    alone (`ChannelIntegrator.moments`); the global search otherwise."""

    def __init__(
        self,
        alpha: float,
        p: ModelParams,
        integ: ChannelIntegrator,
        estimator: str,
        pinned: tuple[bool, bool] = (False, False),
    ):
        self.alpha, self.p, self.integ, self.estimator = alpha, p, integ, estimator
        self.pinned = pinned
        self.keep = np.array([1.0, 0.0 if pinned[0] else 1.0, 1.0, 0.0 if pinned[1] else 1.0])
        self.local = False
        self.floor = Q_DECAYED  # a q below it ends the iteration (`Decayed`)

    def moments(self, o: Overlaps) -> ChannelMoments:
        p = self.p
        return self.integ.moments(
            o.q,
            o.m,
            o.V,
            o.theta,
            rho=p.rho,
            sigma2=p.sigma**2,
            omega=p.omega,
            A=p.A_array,
            swap_symmetric=self.pinned[0],
            flip_symmetric=self.pinned[1],
            local=self.local,
        )

    def step(self, x: np.ndarray) -> tuple[np.ndarray, tuple[Hats, ChannelMoments]]:
        if 0 <= x[0] < self.floor:  # q = 0: a start at the null point
            raise Decayed(f"q = {x[0]:.3g}")
        if not admissible(x, self.p.rho):
            shown = ", ".join(f"{float(v):.4g}" for v in x)
            raise InadmissibleStep(
                f"overlaps (q, m, V, theta) = ({shown}) are not admissible (need q, V > 0, "
                f"q rho > theta^2, rho = sigma^2 = {self.p.rho:.4g})"
                + _start_bound(self.p.sigma, x[3])
            )
        o = Overlaps(*x)
        e = self.moments(o)
        h = hats(e, o, alpha=self.alpha, rho=self.p.rho, estimator=self.estimator)
        try:
            new = scalar_overlaps(h, sigma=self.p.sigma, lam=self.p.lam, rho=self.p.rho)
        except ArithmeticError as err:
            raise InadmissibleStep(str(err)) from None
        fx = _as_vector(new) * self.keep
        if not np.all(np.isfinite(fx)):
            raise InadmissibleStep(f"non-finite overlaps {tuple(fx)}")
        return fx, (h, e)


class NullMap(GaussHermiteMap):
    """The map at the null point W = 0 (q = m = theta = 0, docs/theory.md §3): the fields are
    zero, where the loss is stationary, so the prox is linear in them and the conjugates have
    finite limits as q -> 0. It holds q at Q_NULL and m = theta = 0 and iterates V; `multiplier`
    is q's growth factor per step there (below 1: the null point attracts q)."""

    def __init__(self, alpha: float, p: ModelParams, integ: ChannelIntegrator):
        super().__init__(alpha, p, integ, "direct", (True, True))
        self.floor = 0.0
        self.multiplier = float("nan")

    def step(self, x: np.ndarray) -> tuple[np.ndarray, tuple[Hats, ChannelMoments]]:
        fx, aux = super().step(np.array([Q_NULL, 0.0, x[2], 0.0]))
        self.multiplier = float(fx[0]) / Q_NULL
        return np.array([Q_NULL, 0.0, fx[2], 0.0]), aux


def _values(alpha: float, p: ModelParams, x, hats_, mom) -> dict[str, np.ndarray | float]:
    """Overlaps, hats (1 x 1) and observables at a fixed point x with its hats and moments."""
    o = Overlaps(*x)
    k = kappa(sigma=p.sigma, omega=p.omega, A=p.A)
    phi = scalar_free_entropy(o, hats_, mom.M + k, alpha=alpha, sigma=p.sigma, lam=p.lam, rho=p.rho)
    scalars = dict(q=o.q, M=o.m, V=o.V, theta=o.theta)
    scalars.update(qhat=hats_.qhat, Mhat=hats_.mhat, Vhat=hats_.Vhat)
    scalars.update(thetahat=hats_.thetahat)
    values: dict[str, np.ndarray | float] = {key: np.array([[v]]) for key, v in scalars.items()}
    values.update(test_error=test_error(mom, kappa_=k), train_loss=-phi)
    return values


def _result(alpha, p, branch, method, eps_lin, rep, values=None, errors=None) -> TheoryResult:
    """The result record; without `values` (`_values`) it holds none (all NaN)."""
    return TheoryResult(
        alpha=alpha,
        params=p,
        branch=branch,
        method=method,
        values=values or {},
        errors=errors or {},
        linear_test_error=eps_lin,
        linear_test_error_err=float("nan"),
        converged=rep.converged,
        iterations=rep.iterations,
        status=rep.status,
        residuals=rep.residuals,
    )


class _Ladder:
    """Integrators for a coarse-to-fine solve, each keeping its per-node prox warm starts, and
    the Jacobian of the residual map reused along a learning curve.

    coarse: damped iterations of a cold start (docs/theory.md §6); mid (half the xi order, a quarter
    of the nodes): Anderson to a loose tolerance and the finite-difference Jacobian, with the
    local prox; full: chord Newton steps with that Jacobian (Anderson when they stall); check:
    the same at the check order from the converged point, for the errors. The coarse, full and
    check stages iterate with the local prox and check their end point with the global one
    (`iterate_checked`).
    """

    def __init__(self, method: GaussHermite):
        self.method = method
        order = method.order
        self.full = ChannelIntegrator(*order)
        self.check = ChannelIntegrator(*method.check_order)
        self.coarse = ChannelIntegrator(*COARSE_ORDER)
        mid = (order[0] // 2, order[1])
        self.mid = ChannelIntegrator(*mid) if mid[0] > COARSE_ORDER[0] else self.full
        self.jacobian: np.ndarray | None = None


def _solve_with(
    alpha: float,
    p: ModelParams,
    start: Overlaps,
    branch: str,
    ladder: _Ladder,
    *,
    cold: bool,
    strict: bool,
    check: bool,
) -> TheoryResult:
    method = ladder.method
    tol, damping, anderson = method.tol, method.damping, method.anderson
    max_iter, estimator = method.max_iter, method.estimator
    eps_lin = linear_test_error(p)
    pinned = pinned_overlaps(branch, p)
    engine = GaussHermiteMap(alpha, p, ladder.full, estimator, pinned)
    mid = GaussHermiteMap(alpha, p, ladder.mid, estimator, pinned)
    x = _as_vector(start) * engine.keep
    kw: StageOptions = {
        "admissible": lambda z: admissible(z, p.rho),
        "damping": damping,
        "max_iter": max_iter,
    }
    iterations = 0
    if cold:
        ladder.jacobian = None
        pre = iterate_checked(
            GaussHermiteMap(alpha, p, ladder.coarse, estimator, pinned),
            x,
            tol=max(tol, 1e-4),
            anderson=0,
            **{**kw, "max_iter": min(max_iter, COARSE_MAX_ITER)},
        )
        iterations += pre.iterations
        if pre.aux is not None and admissible(pre.x, p.rho):
            x = pre.x
        ladder.full.reset()
    if ladder.jacobian is None:
        mid.local = True  # a preparation (start and Jacobian) of the full order's checked solve
        pre = iterate(mid.step, x, tol=max(tol, 1e-5), anderson=anderson, **kw)
        iterations += pre.iterations
        if pre.aux is not None and admissible(pre.x, p.rho):
            x = pre.x
            try:  # the map may be undefined at x itself (lambda + sigma^2 Vhat <= 0), or a
                # difference step may cross q rho = theta^2 (alpha >> 1): no Jacobian then
                fx, _ = mid.step(x)
                ladder.jacobian = residual_jacobian(mid.step, x, fx, engine.keep > 0)
            except InadmissibleStep:
                ladder.jacobian = None
            iterations += 1 + int(np.sum(engine.keep))
    rep = iterate_checked(engine, x, tol=tol, anderson=anderson, jacobian=ladder.jacobian, **kw)
    ladder.jacobian = None if rep.chord_failed else rep.jacobian
    null = rep.status == DECAYED or (branch == "trivial" and not rep.converged)
    if null:
        # the weights decay to zero geometrically, which a relative test never accepts (or the
        # trivial start is undefined): the null point, from V = sigma^2 / lambda (Vhat = 0)
        ladder.jacobian = None
        finish = NullMap(alpha, p, ladder.full)
        x0 = np.array([Q_NULL, 0.0, null_start_v(p.sigma, p.lam), 0.0])
        nrep = iterate_checked(finish, x0, tol=tol, **kw)
        null = nrep.converged and finish.multiplier < 1.0
        rep = nrep if null else rep
    rep = dataclasses.replace(rep, iterations=iterations + rep.iterations)
    if not rep.converged:
        ladder.jacobian = None
        msg = f"alpha={alpha}, branch={branch}: {rep.status} (residual {rep.residual:.2e})"
        if p.lam == 0 and rep.x[2] > START_V:
            msg += (
                f"; V reached {rep.x[2]:.4g}: without a ridge V diverges, and no fixed point "
                "exists, where the training data can be interpolated (small alpha)"
            )
        if strict:
            raise ConvergenceError(msg)
        warnings.warn(msg, NonConvergenceWarning, stacklevel=4)
        if rep.aux is None or not rep.unfinished:
            return _result(alpha, p, branch, method, eps_lin, rep)
    assert rep.aux is not None  # the map's output at an iterate (returned above otherwise)
    hats_, mom = rep.aux
    values = _values(alpha, p, rep.x, hats_, mom)
    errors = None
    if check and rep.converged and method.estimates_errors:
        at_check = (
            NullMap(alpha, p, ladder.check)
            if null
            else GaussHermiteMap(alpha, p, ladder.check, estimator, pinned)
        )
        crep = iterate_checked(
            at_check, rep.x, tol=tol, anderson=anderson, jacobian=ladder.jacobian, **kw
        )
        if crep.converged and crep.aux is not None:
            errors = _order_difference(values, _values(alpha, p, crep.x, *crep.aux), tol)
    if null:  # the point held at Q_NULL stands for q = 0
        values["q"] = np.zeros((1, 1))
        if errors is not None:
            errors["q"] = np.zeros((1, 1))
    return _result(alpha, p, branch, method, eps_lin, rep, values, errors)


def _order_difference(values: dict, check: dict, tol: float) -> dict[str, np.ndarray | float]:
    """Every number's error: its change between the two orders of the Gauss-Hermite method, and
    at least tol times the number (both fixed points are converged to that relative tolerance
    only, so a smaller change, or none where the check solve stops at its start, is not seen)."""
    return {
        k: np.maximum(np.abs(np.asarray(v) - np.asarray(check[k])), tol * np.abs(np.asarray(v)))
        for k, v in values.items()
    }


def start_overlaps(start) -> Overlaps:
    """Explicit starting overlaps: an `Overlaps`, 1 x 1 `MatrixOverlaps`, a dict or the
    numbers (q, m, V, theta); ValueError names `start`."""
    if isinstance(start, Overlaps):
        return start
    if isinstance(start, MatrixOverlaps):
        vals = np.array([np.ravel(getattr(start, k)) for k in ("q", "M", "V", "theta")])
        if vals.shape != (4, 1):
            raise ValueError("start: Gauss-Hermite needs 1 x 1 overlaps (L = 2, r = t = K = 1)")
        return Overlaps(*vals[:, 0])
    if isinstance(start, dict):
        return Overlaps(**{k: float(start[k]) for k in ("q", "m", "V", "theta")})
    vals = np.asarray(start, dtype=float)
    if vals.shape != (4,) or not np.all(np.isfinite(vals)):
        raise ValueError(f"start overlaps must be 4 finite numbers (q, m, V, theta), got {start!r}")
    return Overlaps(*vals)


def solve_exact(
    alpha: float,
    p: ModelParams,
    start,
    branch: str,
    method: GaussHermite,
    *,
    strict: bool = False,
    check: bool = True,
) -> TheoryResult:
    """One fixed point on the exact channel. start None: the branch's initial overlaps
    (docs/theory.md §3), solved cold (damped iterations at a coarse order first); explicit overlaps
    are solved directly with Anderson acceleration, on `branch`'s invariant manifold
    (`pinned_overlaps`; "custom" pins nothing). check: every number's error is its change
    when the fixed point is re-solved at the method's check order (warm, from the first); NaN
    when the two orders are equal (`GaussHermite.estimates_errors`)."""
    if start is None:
        if branch not in INITIAL_OVERLAPS:
            raise ValueError(
                f"branch must be one of {EXACT_BRANCHES} for this method, got {branch!r}"
            )
        first = INITIAL_OVERLAPS[branch]
    else:
        first = start_overlaps(start)
    if not admissible(_as_vector(first), p.rho):
        raise ValueError(
            f"start overlaps {first} are not admissible (need q, V > 0, q rho > theta^2)"
            + _start_bound(p.sigma, first.theta)
        )
    return _solve_with(
        alpha,
        p,
        first,
        branch,
        _Ladder(method),
        cold=start is None,
        strict=strict,
        check=check,
    )


def _predict(done: list[TheoryResult], alpha: float, rho: float) -> Overlaps:
    """Secant predictor from the last two converged points (or the last one, also where they
    share their alpha) for a warm start."""
    last = _as_vector(Overlaps(done[-1].q, done[-1].m, done[-1].V, done[-1].theta))
    if len(done) >= 2 and done[-1].kind == done[-2].kind and done[-1].alpha != done[-2].alpha:
        prev = _as_vector(Overlaps(done[-2].q, done[-2].m, done[-2].V, done[-2].theta))
        step = (alpha - done[-1].alpha) / (done[-1].alpha - done[-2].alpha)
        guess = last + step * (last - prev)
        if admissible(guess, rho):
            return Overlaps(*guess)
    return Overlaps(*last)


def exact_curve(
    alphas: list[float],
    p: ModelParams,
    branch: str,
    method: GaussHermite,
    *,
    progress: bool = False,
    check: bool = True,
) -> list[TheoryResult]:
    """Follow one branch along alpha (`branches.follow_branch`): cold points from the
    branch's initial overlaps, warm ones from the previous converged points (secant-predicted),
    all sharing one `_Ladder` (prox warm starts and the chord Jacobian)."""
    if branch not in EXACT_BRANCHES:
        raise ValueError(f"branch must be one of {EXACT_BRANCHES} for this method, got {branch!r}")
    ladder = _Ladder(method)

    def solve_point(alpha: float, done: list[TheoryResult]) -> TheoryResult:
        start = _predict(done, alpha, p.rho) if done else INITIAL_OVERLAPS[branch]
        return _solve_with(
            alpha,
            p,
            start,
            branch,
            ladder,
            cold=not done,
            strict=False,
            check=check,
        )

    return follow_branch(alphas, branch, solve_point, progress)
