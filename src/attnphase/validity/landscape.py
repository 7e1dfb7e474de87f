"""The landscape probe of docs/theory.md §9: where does L-BFGS end from starts of varying overlap?

For each seed the data set is the one `attnphase.simulate` draws for that seed (teacher Q*,
training tokens, test set). From Q0 = c Q* + sqrt(1 - c^2) g, with g the d x r standard
Gaussian matrix of the seed's "init" generator (the noise of the simulations' random start,
before its scale; independent of teacher and data, and the SAME g for every c of a seed, so the
starts of a seed lie on one arc from g to Q*), L-BFGS runs to the simulations' gradient
tolerance. |Q0|^2/d ~ 1 and theta(Q0) ~ c sigma^2 for every c. With r > t the student's extra
columns (no teacher column to align with) start at g's columns for every c (a zero column would
stay zero: the gradient vanishes there); with r < t only the first r teacher columns are used.

At the end point Q we report the overlaps and losses of `simulate` and the curvature. H is the
Hessian of the risk R(Q) itself (eq. 3, a sum over samples), whose spectrum is O(1) (H = lam I with
no data); the Hessian of R/d is H/d. hessian_min is its smallest eigenvalue, by Lanczos
(`scipy.sparse.linalg.eigsh`) on Hessian-vector products. The products use that R depends on Q only
through the fields h = x~ Q/sqrt(d): H = lam I + (1/d) sum_mu x~_mu^T H_mu x~_mu with the per-sample
field Hessians H_mu of `attnphase.ops.tensor.loss_derivatives`, which is exact and ~8x faster than
forward-over-reverse through the whole risk (5 ms against 44 ms per product at d = 1000, alpha = 2,
1 thread); the tests compare both with `torch.autograd.functional.hessian`. V_sim = sigma^2
tr(H^-1)/d (r x r block traces for r > 1) is the susceptibility that docs/theory.md §3 calls V
(sigma^2/lam with no data, as sigma^2/(lam + sigma^2 Vhat) at Vhat = 0) and that §8.1 measures by
leave-one-out retraining: exact from the dense H (Cholesky) when d r <= DENSE_MAX, otherwise a
Hutchinson estimate (Rademacher probes, H^-1 z by conjugate gradients on the HVP operator) with its
standard error. V_sim is NaN where H is not positive definite. For r > 1 the r(r-1)/2 exact zero
modes of the symmetry Q -> Q O are projected out of both (see `Curvature`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
import torch
from numpy.linalg import LinAlgError
from scipy.linalg import cholesky, solve_triangular
from scipy.sparse.linalg import LinearOperator, cg, eigsh

from .._core.interrupt import PartialInterrupt
from .._core.progress import progress_bar
from ..ops.tensor import back_project, fields, loss_derivatives
from ..params import (
    DEFAULT_N_TEST,
    ModelParams,
    check_dimension,
    check_int,
    check_positive,
    check_unit_interval,
)
from ..run_options import TRACE_METHODS, check_gtol
from ..sim import SeedProblem, SimConfig, StructuredRisk, TrainReport, minimise

DENSE_MAX = 3000  # "auto": dense Hessian up to d r = 3000 (72 MB, ~d r HVPs), Hutchinson above
DEFAULT_PROBES = 30


@dataclass(frozen=True)
class LandscapePoint:
    """One L-BFGS end point from start overlap c on the data of `seed` (overlaps as
    `simulate` reports them: numbers for r = t = K = 1, nested lists otherwise).
    train_loss = R(Q)/d; grad_norm = |grad R|_F/sqrt(d r) (the simulations' RMS gradient);
    hessian_min: smallest eigenvalue of the Hessian of R (not R/d; for r > 1 off the zero modes
    of the symmetry Q -> Q O, see `Curvature`); V_sim = sigma^2 tr(H^-1)/d
    with standard error V_sim_err (0 for the exact dense trace) and V_sim_method
    ("dense" or "hutchinson")."""

    alpha: float
    c: float
    seed: int
    theta: object
    m: object
    q: object
    train_loss: float
    test_error: float
    grad_norm: float
    converged: bool
    steps: int
    hessian_min: float
    V_sim: object
    V_sim_err: object
    V_sim_method: str


@dataclass(frozen=True)
class LandscapeResult:
    """All end points of one probe (every alpha, start overlap c and seed) and the model."""

    d: int
    omega: float
    sigma: float
    lam: float
    A: tuple
    rank: int
    teacher_rank: int
    gtol: float
    points: tuple[LandscapePoint, ...]

    def rows(self) -> list[dict]:
        """One flat record per end point, with d, n, omega, sigma, lam, A (nested list) and
        gtol."""
        head = dict(
            d=self.d,
            omega=self.omega,
            sigma=self.sigma,
            lam=self.lam,
            A=[list(row) for row in self.A],
            gtol=self.gtol,
        )
        return [head | {"n": int(round(p.alpha * self.d))} | asdict(p) for p in self.points]

    def theta_spread(self) -> dict[tuple[float, int], float]:
        """Per (alpha, seed): the largest distance between the final thetas of two starts, up
        to the model's symmetry Q -> Q O (O orthogonal; Q -> -Q for r = 1), i.e. between the
        singular values of theta (max - min of |theta| for scalar theta). Of the order of the
        gradient tolerance for one minimum; O(theta) for a continuum of minima."""
        groups: dict[tuple[float, int], list[np.ndarray]] = {}
        for p in self.points:
            sv = np.linalg.svd(np.atleast_2d(np.asarray(p.theta, dtype=float)), compute_uv=False)
            groups.setdefault((p.alpha, p.seed), []).append(sv)
        return {
            key: max(float(np.linalg.norm(a - b)) for a in svs for b in svs)
            for key, svs in groups.items()
        }


def start_weights(teacher: torch.Tensor, g: torch.Tensor, c: float) -> torch.Tensor:
    """Q0 = c Q* + sqrt(1 - c^2) g (d x r) for a teacher Q* (d x t) and noise g (d x r); with
    r > t the columns beyond t are g's, with r < t the first r teacher columns are used."""
    c = check_unit_interval("start_overlap", c)
    k = min(g.shape[1], teacher.shape[1])
    Q0 = g.clone()
    Q0[:, :k] = c * teacher[:, :k] + math.sqrt(1.0 - c * c) * g[:, :k]
    return Q0


def probe_config(
    params: ModelParams, d: int, alpha: float, n_test: int = DEFAULT_N_TEST, device: str = "auto"
) -> SimConfig:
    """The simulation configuration whose data the probe uses (its random start, at scale 1,
    is g)."""
    return SimConfig(
        params=params, d=d, alpha=alpha, init="random", init_scale=1.0, n_test=n_test, device=device
    )


class SeedData(SeedProblem):
    """The problem of one seed as `simulate(cfg, [seed])` draws it (`SeedProblem.draw` for a
    `probe_config`), whose random start at scale 1 is the start noise g (d, r)."""

    @property
    def g(self) -> torch.Tensor:
        return self.Q0

    def start(self, c: float) -> torch.Tensor:
        """Q0 = c Q* + sqrt(1 - c^2) g (see `start_weights`)."""
        return start_weights(self.teacher[0], self.g, c)

    def train(self, c: float, gtol: float) -> TrainReport:
        """L-BFGS (`attnphase.sim.train.minimise`) from the start of overlap c."""
        return minimise(self.risk, self.start(c)[None], "lbfgs", gtol=gtol)


class Curvature:
    """The Hessian H of R at Q (one problem: `risk` a batch of one, Q (d, r)).

    R depends on Q only through the fields h = x~ Q/sqrt(d), linearly, so
    H = lam I + (1/d) sum_mu x~_mu^T H_mu x~_mu (with the rank index carried along), where H_mu
    is the (L r) x (L r) Hessian of sample mu's loss g_mu in its fields (docs/theory.md §8,
    `attnphase.ops.tensor.loss_derivatives`). A Hessian-vector product is then two passes over
    the data (`fields`, `back_project`), the dense H one matrix product. Flat vectors are
    row-major over (d, r).

    For r > 1, R(Q O) = R(Q) for every orthogonal O (S sees h h^T; the ridge |Q|^2), so the
    r(r-1)/2 directions Q A (A antisymmetric) are exact zero modes of H at a critical point.
    They carry no physics and make tr(H^-1) infinite, so `operator`, `smallest_eigenvalue` and
    the traces act on their orthogonal complement: with B an orthonormal basis of those
    directions and P = I - B B^T, the deflated H' = P H P + s B B^T, s = tr(H)/(d r) (the mean
    eigenvalue, above the smallest one), and tr restricted to the complement is
    tr(H'^-1) - tr(B B^T)/s. For r = 1 (no continuous symmetry) H' = H."""

    def __init__(self, risk: StructuredRisk, Q: torch.Tensor):
        self.x = risk.x_pos[0]
        self.lam = risk.lam
        self.shape = tuple(Q.shape)
        self.size = Q.numel()
        Q = Q.detach()
        n, L, r = risk.x_pos.shape[1], risk.x_pos.shape[2], Q.shape[1]
        h = fields(risk.x_pos, Q[None])[0]  # (n, L, r)
        _, _, H = loss_derivatives(h, risk.K[0], risk.Cm[0], risk.c[0])
        self.field_hessians = H.reshape(n, L, r, L, r)
        self.gauge = _gauge_basis(Q)  # (d r, k)
        trace = self.lam * self.size + float(
            torch.einsum("nlaka,nlk->", self.field_hessians, risk.K[0])
        )
        self.shift = trace / self.size
        self.matvecs = 0

    def hvp(self, V: torch.Tensor) -> torch.Tensor:
        """H V for V of Q's shape (d, r)."""
        self.matvecs += 1
        w = torch.einsum("nlakb,nkb->nla", self.field_hessians, fields(self.x, V))
        return back_project(self.x, w) + self.lam * V

    def deflated_hvp(self, v: torch.Tensor) -> torch.Tensor:
        """H' v for a flat vector v (H' = H for r = 1)."""
        B = self.gauge
        if B.shape[1] == 0:
            return self.hvp(v.reshape(self.shape)).reshape(-1)
        Bv = B.T @ v
        Hw = self.hvp((v - B @ Bv).reshape(self.shape)).reshape(-1)
        return Hw - B @ (B.T @ Hw) + self.shift * (B @ Bv)

    def operator(self) -> LinearOperator:
        """H' as a scipy LinearOperator on flat vectors."""
        dtype, device = self.x.dtype, self.x.device

        def matvec(v):
            v = torch.as_tensor(np.ravel(v), dtype=dtype, device=device)
            return self.deflated_hvp(v).cpu().numpy()

        return LinearOperator((self.size, self.size), matvec=matvec, dtype=np.float64)

    def dense(self) -> np.ndarray:
        """The full (d r) x (d r) Hessian H, exactly symmetric."""
        d = self.x.shape[-1]
        Y = torch.einsum("nlakb,nkj->nlajb", self.field_hessians, self.x)
        Ht = torch.einsum("nli,nlajb->iajb", self.x, Y).reshape(self.size, self.size) / d
        H = Ht.cpu().numpy()
        H = 0.5 * (H + H.T)
        H[np.diag_indices(self.size)] += self.lam
        return H

    def deflated_dense(self) -> np.ndarray:
        """H' as a dense matrix."""
        H = self.dense()
        B = self.gauge.cpu().numpy()
        if B.shape[1] == 0:
            return H
        P = np.eye(self.size) - B @ B.T
        Hd = P @ H @ P + self.shift * (B @ B.T)
        return 0.5 * (Hd + Hd.T)

    def gauge_block_traces(self) -> np.ndarray:
        """The r x r block traces of B B^T / s: what the gauge directions add to those of
        H'^-1."""
        r = self.shape[1]
        B = self.gauge.cpu().numpy().reshape(self.shape[0], r, self.gauge.shape[1])
        return np.einsum("iak,ibk->ab", B, B) / self.shift

    def smallest_eigenvalue(self, tol: float = 0.0) -> float:
        """The smallest (algebraic) eigenvalue of H' (H for r = 1) by Lanczos (ARPACK's eigsh,
        which='SA', from a fixed start vector; tol 0: to machine precision)."""
        v0 = np.ones(self.size) / math.sqrt(self.size)
        return float(eigsh(self.operator(), k=1, which="SA", tol=tol, v0=v0)[0][0])

    def inverse_block_traces(self) -> np.ndarray | None:
        """The exact r x r block traces of H^-1 on the complement of the gauge directions
        (dense, Cholesky); None when H' is not positive definite."""
        tr = inverse_block_traces(self.deflated_dense(), self.shape[1])
        return None if tr is None else tr - self.gauge_block_traces()


def _gauge_basis(Q: torch.Tensor) -> torch.Tensor:
    """Orthonormal basis (flat, d r x k) of {Q A : A antisymmetric r x r}, the tangent of the
    orbit Q O; k = r(r-1)/2 (fewer when the columns of Q are dependent), 0 for r = 1."""
    d, r = Q.shape
    dirs = []
    for a in range(r):
        for b in range(a + 1, r):
            V = torch.zeros_like(Q)
            V[:, b] = Q[:, a]
            V[:, a] = -Q[:, b]
            dirs.append(V.reshape(-1))
    if not dirs:
        return Q.new_zeros(d * r, 0)
    U, sv, _ = torch.linalg.svd(torch.stack(dirs, dim=1), full_matrices=False)
    return U[:, sv > 1e-10 * sv.max()]


def inverse_block_traces(H: np.ndarray, r: int) -> np.ndarray | None:
    """The r x r block traces sum_i (H^-1)_{(i a), (i b)} (rows and columns row-major over
    (d, r)) from the Cholesky factor H = C C^T (H^-1 = C^-T C^-1); None when H is not positive
    definite."""
    try:
        C = cholesky(H, lower=True)
    except LinAlgError:
        return None
    W = solve_triangular(C, np.eye(len(H)), lower=True).reshape(len(H), -1, r)
    return np.einsum("kia,kib->ab", W, W)


def hutchinson_block_traces(
    curv: Curvature, probes: int, rng: np.random.Generator, rtol: float = 1e-10
) -> tuple[np.ndarray, np.ndarray]:
    """Hutchinson estimate of the r x r block traces of H^-1 (on the complement of the gauge
    directions, see `Curvature`) and its standard error: for Rademacher z (d x r),
    sum_i z_ia (H'^-1 z)_ib is unbiased for those of H'^-1; H'^-1 z by conjugate gradients on
    the HVP operator (relative residual rtol). Needs probes >= 2."""
    d, r = curv.shape
    op = curv.operator()
    samples: list[np.ndarray] = []
    for _ in range(probes):
        z = rng.choice([-1.0, 1.0], size=curv.size)
        u, info = cg(op, z, rtol=rtol, atol=0.0, maxiter=10 * curv.size)
        if info != 0:
            raise ArithmeticError(f"conjugate gradients did not converge (info={info})")
        M = z.reshape(d, r).T @ u.reshape(d, r)
        samples.append(0.5 * (M + M.T))
    stacked = np.array(samples)
    mean = stacked.mean(axis=0) - curv.gauge_block_traces()
    return mean, stacked.std(axis=0, ddof=1) / math.sqrt(probes)


def trace_method(method: str, entries: int) -> str:
    """The trace method that runs: "auto" is dense up to DENSE_MAX entries (d r), Hutchinson
    above; the others as given."""
    if method == "auto":
        return "dense" if entries <= DENSE_MAX else "hutchinson"
    return method


def _susceptibility(curv, hmin, sigma, d, method, probes, rng):
    """(V_sim, V_sim_err, method used) of docs/theory.md §3's V: sigma^2 tr(H^-1)/d."""
    r = curv.shape[1]
    method = trace_method(method, curv.size)
    nan = np.full((r, r), np.nan)
    if not hmin > 0:
        return nan, nan, method
    if method == "dense":
        tr = curv.inverse_block_traces()
        if tr is None:
            return nan, nan, method
        err = np.zeros((r, r))
    else:
        tr, err = hutchinson_block_traces(curv, probes, rng)
    return sigma**2 * tr / d, sigma**2 * err / d, method


def _matrix_or_number(x: np.ndarray):
    return float(x.reshape(())) if x.size == 1 else x.tolist()


def probe_landscape(
    params: ModelParams,
    d: int,
    alphas: float | Sequence[float],
    starts: Sequence[float],
    seeds: Sequence[int] = (0,),
    *,
    gtol: float | None = None,
    n_test: int = DEFAULT_N_TEST,
    method: str = "auto",
    probes: int = DEFAULT_PROBES,
    device: str = "auto",
    progress: bool = False,
) -> LandscapeResult:
    """L-BFGS from every start overlap c in `starts` on the data of every seed and alpha
    (docs/theory.md §9), with the curvature at each end point (see the module docstring).
    gtol: RMS-gradient target (default: the simulations', `SimConfig.gtol`). method: how
    tr(H^-1) is computed ("auto": dense up to d r = DENSE_MAX, else Hutchinson with `probes`
    probes, drawn from a generator seeded by (seed, c index))."""
    d = check_dimension(d)
    alphas = [check_positive("alpha", a) for a in np.atleast_1d(np.asarray(alphas, float))]
    starts = [check_unit_interval("start_overlap", c) for c in starts]
    seeds = [check_int("seeds", s, minimum=0) for s in seeds]
    for name, values in (("alpha", alphas), ("start_overlap", starts), ("seeds", seeds)):
        if not values:
            raise ValueError(f"{name} must not be empty")
    if method not in TRACE_METHODS:
        raise ValueError(f"method must be one of {TRACE_METHODS}, got {method!r}")
    check_int("probes", probes, minimum=2)
    cfgs = [probe_config(params, d, a, n_test=n_test, device=device) for a in alphas]
    gtol = cfgs[0].gtol if gtol is None else check_gtol(gtol)
    bar = None
    if progress:
        total = len(alphas) * len(starts) * len(seeds)
        bar = progress_bar(total=total, desc="landscape", unit="start", enabled=True)
    points: list[LandscapePoint] = []

    def result() -> LandscapeResult:
        return LandscapeResult(
            d=d,
            omega=params.omega,
            sigma=params.sigma,
            lam=params.lam,
            A=params.A,
            rank=params.rank,
            teacher_rank=params.teacher_rank,
            gtol=gtol,
            points=tuple(points),
        )

    try:
        for cfg in cfgs:
            for seed in seeds:
                _probe_seed(SeedData.draw(cfg, seed), starts, gtol, method, probes, bar, points)
    except KeyboardInterrupt:
        raise PartialInterrupt([result()]) from None
    finally:
        if bar is not None:
            bar.close()
    return result()


def _probe_seed(data: SeedData, starts, gtol, method, probes, bar, out: list) -> None:
    """All starts on the data of one seed, each appended to `out` as it finishes."""
    cfg, seed = data.cfg, data.seed
    for j, c in enumerate(starts):
        rep = data.train(c, gtol)
        Q = rep.Q
        with torch.no_grad():
            R = float(data.risk(Q)[0])
        q, m, theta = data.overlaps(Q[0])
        curv = Curvature(data.risk, Q[0])
        hmin = curv.smallest_eigenvalue()
        rng = np.random.default_rng([seed, j])
        V, V_err, used = _susceptibility(curv, hmin, cfg.params.sigma, cfg.d, method, probes, rng)
        out.append(
            LandscapePoint(
                alpha=cfg.alpha,
                c=c,
                seed=seed,
                theta=_matrix_or_number(theta),
                m=_matrix_or_number(m),
                q=_matrix_or_number(q),
                train_loss=R / cfg.d,
                test_error=data.test_error(Q[0]),
                grad_norm=rep.grad_rms[0],
                converged=rep.converged[0],
                steps=rep.steps[0],
                hessian_min=hmin,
                V_sim=_matrix_or_number(V),
                V_sim_err=_matrix_or_number(V_err),
                V_sim_method=used,
            )
        )
        if bar is not None:
            bar.update(1)


__all__ = [
    "DENSE_MAX",
    "Curvature",
    "SeedData",
    "LandscapePoint",
    "LandscapeResult",
    "hutchinson_block_traces",
    "inverse_block_traces",
    "probe_config",
    "probe_landscape",
    "start_weights",
]
