"""The exact L=2 engine: tied rank-1 dot-product attention with two tokens (THEORY.md §2-§6).

`solve` finds one fixed point of the state evolution; `learning_curve` follows a branch along a
grid of alpha with warm starts. Both return frozen `TheoryResult` records.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Iterable, Sequence

import numpy as np

from ...baseline import linear_test_error
from ...params import ModelParams, check_positive
from ..iterate import InadmissibleStep, iterate, residual_jacobian
from ..result import ConvergenceError, NonConvergenceWarning, TheoryResult
from . import equations as eq
from .channel import ChannelIntegrator, ChannelMoments

BRANCHES = ("semantic", "positional", "trivial")

# The authors' initial overlaps (q, m, V, theta) for each branch (THEORY.md §3).
INITIAL_OVERLAPS: dict[str, eq.Overlaps] = {
    "semantic": eq.Overlaps(q=0.9068, m=0.0002, V=14.575, theta=0.3472),
    "positional": eq.Overlaps(q=0.0207, m=0.2, V=14.575, theta=0.0),
    "trivial": eq.Overlaps(q=0.0207, m=0.0, V=14.575, theta=0.0),
}

# Default Gauss-Hermite orders (n_xi, n_y); see the convergence study in the README.
DEFAULT_ORDER = (64, 24)
COARSE_ORDER = (16, 8)
COARSE_MAX_ITER = 100  # the damped coarse stage of a cold start only prepares the fine solve


def _as_vector(o: eq.Overlaps) -> np.ndarray:
    return np.array([o.q, o.m, o.V, o.theta])


def _admissible(x: np.ndarray, rho: float) -> bool:
    q, _, V, theta = x
    return bool(q > 0 and V > 0 and rho - theta * theta / q > 0)


def _check_order(order) -> tuple[int, int]:
    if isinstance(order, int):
        order = (order, order)
    if len(order) != 2 or any(int(n) != n or n < 2 for n in order):
        raise ValueError(
            f"order must be an int >= 2 or a pair (n_xi, n_y) of ints >= 2, got {order!r}"
        )
    return int(order[0]), int(order[1])


def swap_symmetric(p: ModelParams) -> bool:
    """A commutes with the token swap (A11 = A22, A12 = A21): then m = 0 is invariant."""
    (a11, a12), (a21, a22) = p.A
    return a11 == a22 and a12 == a21


def pinned_overlaps(branch: str, p: ModelParams) -> tuple[bool, bool]:
    """Which of (m, theta) a branch holds at exactly zero.

    theta = 0 is invariant under the map for any A (symmetry y -> -y), and m = 0 when A is
    swap-symmetric (THEORY.md §6). Solving a branch on its invariant manifold keeps rounding
    noise from carrying the iteration off an unstable branch; explicit starts pin nothing.
    """
    sym = swap_symmetric(p)
    return {
        "semantic": (sym, False),
        "positional": (False, True),
        "trivial": (sym, True),
    }.get(branch, (False, False))


class _Engine:
    """The state-evolution map (q, m, V, theta) -> overlaps(hats(...)) at fixed alpha, with the
    pinned components of (m, theta) held at zero."""

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

    def moments(self, o: eq.Overlaps) -> ChannelMoments:
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
        )

    def step(self, x: np.ndarray) -> tuple[np.ndarray, tuple[eq.Hats, ChannelMoments]]:
        if not _admissible(x, self.p.rho):
            raise InadmissibleStep(f"overlaps (q, m, V, theta) = {tuple(x)} are not admissible")
        o = eq.Overlaps(*x)
        e = self.moments(o)
        h = eq.hats(e, o, alpha=self.alpha, rho=self.p.rho, estimator=self.estimator)
        try:
            new = eq.overlaps(h, sigma=self.p.sigma, lam=self.p.lam, rho=self.p.rho)
        except ArithmeticError as err:
            raise InadmissibleStep(str(err)) from None
        fx = _as_vector(new) * self.keep
        if not np.all(np.isfinite(fx)):
            raise InadmissibleStep(f"non-finite overlaps {tuple(fx)}")
        return fx, (h, e)


def _result(alpha, p, branch, order, eps_lin, rep, x=None, hats_=None, mom=None) -> TheoryResult:
    """The result record; without a point (x, hats_, mom) every computed number is NaN."""
    nan = float("nan")
    values = dict.fromkeys(
        ("q", "m", "V", "theta", "qhat", "mhat", "Vhat", "thetahat", "test_error", "train_loss"),
        nan,
    )
    if x is not None:
        o = eq.Overlaps(*x)
        k = eq.kappa(sigma=p.sigma, omega=p.omega, A=p.A)
        phi = eq.free_entropy(
            o, hats_, mom, alpha=alpha, sigma=p.sigma, lam=p.lam, rho=p.rho, kappa_=k
        )
        values.update(
            q=o.q,
            m=o.m,
            V=o.V,
            theta=o.theta,
            qhat=hats_.qhat,
            mhat=hats_.mhat,
            Vhat=hats_.Vhat,
            thetahat=hats_.thetahat,
            test_error=eq.test_error(mom, kappa_=k),
            train_loss=-phi,
        )
    return TheoryResult(
        alpha=alpha,
        omega=p.omega,
        sigma=p.sigma,
        lam=p.lam,
        A=p.A,
        branch=branch,
        **values,
        linear_test_error=eps_lin,
        converged=rep.converged,
        iterations=rep.iterations,
        residual=rep.residual,
        residuals=rep.residuals,
        status=rep.status,
        order=order,
    )


class _Ladder:
    """Integrators for a coarse-to-fine solve, each keeping its per-node prox warm starts, and
    the Jacobian of the residual map reused along a learning curve.

    coarse: damped iterations of a cold start (THEORY.md §6); mid (half the xi order, a quarter
    of the nodes): Anderson to a loose tolerance and the finite-difference Jacobian; full: chord
    Newton steps with that Jacobian (Anderson when they stall).
    """

    def __init__(self, order: tuple[int, int]):
        self.full = ChannelIntegrator(*order)
        self.coarse = ChannelIntegrator(*COARSE_ORDER)
        mid = (order[0] // 2, order[1])
        self.mid = ChannelIntegrator(*mid) if mid[0] > COARSE_ORDER[0] else self.full
        self.jacobian: np.ndarray | None = None

    @property
    def order(self) -> tuple[int, int]:
        return self.full.n_xi, self.full.n_y


def _solve_with(
    alpha: float,
    p: ModelParams,
    start: eq.Overlaps,
    branch: str,
    ladder: _Ladder,
    *,
    cold: bool,
    tol: float,
    damping: float,
    anderson: int,
    max_iter: int,
    estimator: str,
    strict: bool,
) -> TheoryResult:
    order = ladder.order
    eps_lin = linear_test_error(p)
    pinned = pinned_overlaps(branch, p)
    engine = _Engine(alpha, p, ladder.full, estimator, pinned)
    mid = _Engine(alpha, p, ladder.mid, estimator, pinned)
    x = _as_vector(start) * engine.keep
    kw = dict(admissible=lambda z: _admissible(z, p.rho), damping=damping, max_iter=max_iter)
    iterations = 0
    if cold:
        ladder.jacobian = None
        pre = iterate(
            _Engine(alpha, p, ladder.coarse, estimator, pinned).step,
            x,
            tol=max(tol, 1e-4),
            anderson=0,
            **kw,
        )
        iterations += pre.iterations
        if pre.aux is not None and _admissible(pre.x, p.rho):
            x = pre.x
        ladder.full.reset()
    if ladder.jacobian is None:
        pre = iterate(mid.step, x, tol=max(tol, 1e-5), anderson=anderson, **kw)
        iterations += pre.iterations
        if pre.aux is not None and _admissible(pre.x, p.rho):
            x = pre.x
            fx, _ = mid.step(x)
            ladder.jacobian = residual_jacobian(mid.step, x, fx, engine.keep > 0)
            iterations += 1 + int(np.sum(engine.keep))
    rep = iterate(engine.step, x, tol=tol, anderson=anderson, jacobian=ladder.jacobian, **kw)
    ladder.jacobian = None if rep.chord_failed else rep.jacobian
    rep = dataclasses.replace(rep, iterations=iterations + rep.iterations)
    if not rep.converged:
        ladder.jacobian = None
        msg = f"alpha={alpha}, branch={branch}: {rep.status} (residual {rep.residual:.2e})"
        if strict:
            raise ConvergenceError(msg)
        warnings.warn(msg, NonConvergenceWarning, stacklevel=3)
        if rep.aux is None or rep.status != "maximum iterations reached":
            return _result(alpha, p, branch, order, eps_lin, rep)
    hats_, mom = rep.aux
    return _result(alpha, p, branch, order, eps_lin, rep, rep.x, hats_, mom)


def _check_l2(p: ModelParams) -> ModelParams:
    if not p.is_l2:
        raise ValueError(
            "the exact L=2 engine needs L = 2, rank = teacher_rank = 1 and encodings (+1, -1); "
            f"got L={p.L}, rank={p.rank}, teacher_rank={p.teacher_rank}, "
            f"encodings={p.encodings} (use the general engine)"
        )
    return p


def _start_overlaps(init) -> tuple[eq.Overlaps, str]:
    if isinstance(init, str):
        if init not in INITIAL_OVERLAPS:
            raise ValueError(f"init must be one of {BRANCHES} or explicit overlaps, got {init!r}")
        return INITIAL_OVERLAPS[init], init
    if isinstance(init, eq.Overlaps):
        return init, "custom"
    if isinstance(init, dict):
        return eq.Overlaps(**{k: float(init[k]) for k in ("q", "m", "V", "theta")}), "custom"
    vals = np.asarray(init, dtype=float)
    if vals.shape != (4,) or not np.all(np.isfinite(vals)):
        raise ValueError(f"init overlaps must be 4 finite numbers (q, m, V, theta), got {init!r}")
    return eq.Overlaps(*vals), "custom"


def solve(
    alpha: float,
    params: ModelParams | None = None,
    *,
    init="semantic",
    order=DEFAULT_ORDER,
    tol: float = 1e-6,
    damping: float = 0.8,
    anderson: int = 5,
    max_iter: int = 300,
    estimator: str = "ibp",
    strict: bool = False,
    branch: str | None = None,
) -> TheoryResult:
    """One fixed point of the state evolution at sample complexity alpha.

    init: a branch name ("semantic", "positional", "trivial": the authors' starting overlaps,
    solved cold, i.e. damped iterations at a coarse order first) or explicit overlaps
    (an `Overlaps`, a dict or (q, m, V, theta)), solved directly with Anderson acceleration;
    with explicit overlaps, `branch` solves on that branch's invariant manifold (m and/or theta
    held at zero, see `pinned_overlaps`) and labels the result with it.
    order: Gauss-Hermite orders (n_xi, n_y), or one int for both.
    Non-convergence: converged=False and a NonConvergenceWarning, or ConvergenceError if strict.
    """
    alpha = check_positive("alpha", alpha)
    p = _check_l2(params if params is not None else ModelParams())
    start, label = _start_overlaps(init)
    if branch is not None:
        if branch not in BRANCHES or isinstance(init, str):
            raise ValueError(f"branch must be one of {BRANCHES}, with explicit overlaps as init")
        label = branch
    if not _admissible(_as_vector(start), p.rho):
        raise ValueError(
            f"init overlaps {start} are not admissible (need q, V > 0, q rho > theta^2)"
        )
    return _solve_with(
        alpha,
        p,
        start,
        label,
        _Ladder(_check_order(order)),
        cold=isinstance(init, str),
        tol=tol,
        damping=damping,
        anderson=anderson,
        max_iter=max_iter,
        estimator=estimator,
        strict=strict,
    )


def branch_curves(
    alphas: Iterable[float],
    params: ModelParams | None = None,
    branches: Sequence[str] = ("semantic", "positional"),
    order=DEFAULT_ORDER,
    progress: bool = False,
) -> list[TheoryResult]:
    """`learning_curve` of each branch in turn, concatenated (branch by branch)."""
    alist = list(alphas)
    return [
        r
        for b in branches
        for r in learning_curve(alist, params, branch=b, order=order, progress=progress)
    ]


def _predict(done: list[TheoryResult], alpha: float, rho: float) -> eq.Overlaps:
    """Secant predictor from the last two converged points (or the last one) for a warm start."""
    last = _as_vector(eq.Overlaps(done[-1].q, done[-1].m, done[-1].V, done[-1].theta))
    if len(done) >= 2 and done[-1].kind == done[-2].kind:
        prev = _as_vector(eq.Overlaps(done[-2].q, done[-2].m, done[-2].V, done[-2].theta))
        step = (alpha - done[-1].alpha) / (done[-1].alpha - done[-2].alpha)
        guess = last + step * (last - prev)
        if _admissible(guess, rho):
            return eq.Overlaps(*guess)
    return eq.Overlaps(*last)


def learning_curve(
    alphas: Iterable[float],
    params: ModelParams | None = None,
    *,
    branch: str = "semantic",
    order=DEFAULT_ORDER,
    tol: float = 1e-6,
    damping: float = 0.8,
    anderson: int = 5,
    max_iter: int = 300,
    estimator: str = "ibp",
    progress: bool = False,
) -> list[TheoryResult]:
    """Follow one branch along alpha with warm starts; results in the order of `alphas`.

    The branch is continued from the end where its cold start is reliable: increasing alpha for
    the positional and trivial branches, decreasing alpha for the semantic one. Until the branch
    is found every point is started cold from the branch's initial overlaps; from then on each
    point starts from the previous converged one (secant-predicted), so past the end of the
    branch the curve follows the fixed point it ran into. `kind` says which fixed point each
    result is; a failed point is reported (converged=False) and the next one is started cold.
    """
    if branch not in BRANCHES:
        raise ValueError(f"branch must be one of {BRANCHES}, got {branch!r}")
    alist = [check_positive("alpha", a) for a in alphas]
    if not alist:
        raise ValueError("alphas must not be empty")
    p = _check_l2(params if params is not None else ModelParams())
    ladder = _Ladder(_check_order(order))
    sequence = sorted(range(len(alist)), key=lambda i: alist[i], reverse=branch == "semantic")
    results: dict[int, TheoryResult] = {}
    done: list[TheoryResult] = []  # consecutive converged points to continue from, in order
    reached = False  # has this continuation been on the branch yet?
    iterator: Sequence[int] | Iterable[int] = sequence
    if progress:
        from tqdm.auto import tqdm

        iterator = tqdm(sequence, desc=f"{branch} branch", unit="alpha")
    for i in iterator:
        start = _predict(done, alist[i], p.rho) if done else INITIAL_OVERLAPS[branch]
        res = _solve_with(
            alist[i],
            p,
            start,
            branch,
            ladder,
            cold=not done,
            tol=tol,
            damping=damping,
            anderson=anderson,
            max_iter=max_iter,
            estimator=estimator,
            strict=False,
        )
        results[i] = res
        reached = reached or res.kind == branch
        # before the branch appears, cold-start every point; after it ended, follow the fixed
        # point it ran into
        done = done + [res] if res.converged and reached else []
    return [results[i] for i in range(len(alist))]
