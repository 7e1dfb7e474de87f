"""Fixed points of the general state evolution (THEORY.md §7) for any L, r, t and encodings.

One scrambling of the quasi-Monte Carlo points gives a deterministic map
overlaps -> hats -> overlaps (`general_equations`), iterated with the generic loop of
`attnphase.theory.iterate` (damping weights the OLD iterate; Anderson acceleration). The fixed
point is solved once per independent scrambling; the result reports the mean over them and,
for every overlap and observable, the standard error of that mean (`<name>_err`), as THEORY.md
§7.6 recommends (averaging many small-sample fixed points instead would bias the result).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

from ...baseline import linear_test_error_qmc
from ...params import ModelParams, check_int, check_positive
from .. import overlaps as ge
from ..iterate import InadmissibleStep, iterate
from .channel import GeneralChannel
from .mixture import Mixture, cluster_overlaps

GENERAL_BRANCHES = ("semantic", "positional", "trivial", "mixed")
MIXTURE_BRANCH = "clustered"  # correlated tokens: aligned with the cluster means, not the positions
DEFAULT_POINTS = 8192  # per scrambling, before the antithetic images
DEFAULT_RANDOMISATIONS = 4
COARSE_FRACTION = 8  # the damped cold-start stage uses points / 8
# damping of the cold stage: the undamped map's multipliers (THEORY.md §8.1) bound the step
# 1 - damping below ~0.76 on the semantic branch and ~0.36 on the positional one (at 0.5 the
# cold positional start at L=2, alpha 1.5 cycled with residual O(1); 0.8 on the semantic branch
# took twice the iterations of 0.5)
# and on the clustered branch 0.9: its multiplier in m_mu is ~ -9.5 at N = 3 (the damped
# factor 0.9 - 0.1 * 9.5 ~ 0; at 0.5 its cold start fell back to m_mu = 0)
COARSE_DAMPING = {"positional": 0.8, "mixed": 0.8, "clustered": 0.9}
COARSE_DAMPING_DEFAULT = 0.5
COLLAPSED = 1e-4  # max |M| (positional) or |theta| (semantic): the start fell to the trivial point
# step of the finite difference in m_mu that measures its multiplier (correlated tokens; the map
# is odd in m_mu, so the forward difference is central: error O(step^2 N^2))
MEAN_STEP = 1e-3


def field_width(p: ModelParams, untied: bool) -> int:
    """Columns of the student field: r, or 2r for untied query and key (docs/theory-untied.md)."""
    return 2 * p.rank if untied else p.rank


def ridge(p: ModelParams, untied: bool) -> float:
    """The ridge of the state evolution in the field's columns: lambda, or lambda/2 untied (the
    simulations' lambda/4 (|Q_Q|^2 + |Q_K|^2), the tied ridge at Q_Q = Q_K)."""
    return p.lam / 2 if untied else p.lam


def mean_rows(mixture: Mixture | None) -> int:
    """Rows of M beyond the positional ones: the K - 1 mean directions of a mixture."""
    return 0 if mixture is None else mixture.directions


def start_overlaps(
    branch: str, p: ModelParams, untied: bool = False, mixture: Mixture | None = None
) -> ge.MatrixOverlaps:
    """Starting overlaps of each branch, the L=2 authors' values (THEORY.md §3) per column:
    semantic: every column aligned with the teacher; positional: column 1 along the first
    encoding direction (M = (0.2, 0, ...): any M of rank one is this up to a rotation of the
    columns), the others trivial; mixed (r >= 2): column 1 semantic, column 2 positional;
    trivial. untied: the tied start in both the query and the key columns (Q_Q = Q_K, made
    admissible by a 10% independent part in q). mixture: the mean rows m_mu = 0 (the
    invariant manifold of docs/theory-mixtures.md §3, whose stability `mean_multiplier`
    measures), except on the clustered branch: the semantic start with m_mu = 0.2 along the
    first mean direction."""
    if branch == MIXTURE_BRANCH and mixture is None:
        raise ValueError(f"branch {MIXTURE_BRANCH!r} needs correlated tokens (a mixture)")
    if untied:
        return _untied_start(start_overlaps(branch, p))
    if mixture is not None:
        o = start_overlaps("semantic" if branch == MIXTURE_BRANCH else branch, p)
        means = np.zeros((mixture.directions, p.rank))
        if branch == MIXTURE_BRANCH:
            means[0, 0] = 0.2
        return dataclasses.replace(o, M=np.vstack([o.M, means]))
    r, t, K = p.rank, p.teacher_rank, p.K
    q = 0.02 * np.eye(r)
    M = np.zeros((K, r))
    theta = np.zeros((t, r))
    if branch == "semantic":
        q = 0.5 * np.eye(r) + 0.4 * np.ones((r, r))
        theta[0, :] = 0.35 * p.sigma**2 / 0.25 / np.sqrt(r)
    elif branch == "positional":
        M[0, 0] = 0.2
    elif branch == "mixed":
        if r < 2:
            raise ValueError(f"the mixed start needs rank >= 2, got rank={r}")
        q = np.diag([0.9] + [0.02] * (r - 1))
        theta[0, 0] = 0.35 * p.sigma**2 / 0.25
        M[0, 1] = 0.2
    elif branch != "trivial":
        raise ValueError(f"branch must be one of {GENERAL_BRANCHES}, got {branch!r}")
    return ge.MatrixOverlaps(q=q, M=M, theta=theta, V=14.575 * np.eye(r))


def _untied_start(o: ge.MatrixOverlaps) -> ge.MatrixOverlaps:
    """(Q_Q, Q_K) = (Q, Q) in overlaps, with q's off-diagonal blocks 0.9 q (q positive definite)."""
    return ge.MatrixOverlaps(
        q=np.kron(np.array([[1.0, 0.9], [0.9, 1.0]]), o.q),
        M=np.hstack([o.M, o.M]),
        theta=np.hstack([o.theta, o.theta]),
        V=np.kron(np.eye(2), o.V),
    )


def free_overlaps(
    branch: str, r: int, K: int, t: int, untied: bool = False, means: int = 0
) -> ge.MatrixOverlaps:
    """1 where an overlap iterates freely on a branch, 0 where it is held at zero. Every
    pinned set is an invariant manifold of the exact map for any A; the integration breaks the
    single-column symmetries of rank >= 2, hence the pins there (free, a trivial column's M
    oscillated around zero at the noise level and rank-2 runs never settled):
    - semantic: M = 0 (the law of the fields is symmetric under (xi, y) -> -(xi, y), S(-h) = S(h));
    - positional: theta = 0 (symmetric under y -> -y); for r >= 2 column 1 positional, the
      others trivial with q, V diagonal: flipping one such column (h_c -> -h_c) leaves the law
      and S(h) = softmax(h h^T) unchanged, so its Mhat and the off-diagonal qhat, Vhat vanish;
    - mixed: column 1 semantic (its M = 0), column 2 positional (its theta = 0), others trivial,
      q, V diagonal: symmetric under flipping column 1 together with y -> -y;
    - trivial: M = theta = 0.
    untied (rank 1: r = 2, query and key column): the same symmetries pin M on the semantic
    branch and theta on the positional one (S(-h_Q, -h_K) = S(h_Q, h_K)); flipping one column
    alone is no symmetry (it flips the logits), so nothing else is pinned.
    means (correlated tokens): that many mean rows of M below the K positional ones, held at 0
    on every branch (m_mu = 0 is invariant, docs/theory-mixtures.md §3; free, the rounding
    noise there grows where the map's multiplier in m_mu is below -1, measured -5.3 at
    N = 2, and moved a 512-point fixed point by 1%) except the clustered one: M's positional
    rows 0 (exact for K = 2: the reflection (xi, y, labels) -> (-xi, -y, swapped labels)),
    theta and the mean rows free: look for it where m_mu = 0 is unstable (`mean_multiplier`)."""
    q, theta, V = np.ones((r, r)), np.ones((t, r)), np.ones((r, r))
    if branch == MIXTURE_BRANCH:
        if not means:
            raise ValueError(f"branch {MIXTURE_BRANCH!r} needs correlated tokens (a mixture)")
        M = np.ones((K + means, r))
        M[:K] = 0.0
        return ge.MatrixOverlaps(q=q, M=M, theta=theta, V=V)
    M = np.ones((K + means, r))
    if branch in GENERAL_BRANCHES:
        M[K:] = 0.0
    if branch in ("semantic", "trivial"):
        M[:] = 0.0
    if branch in ("positional", "trivial"):
        theta[:] = 0.0
    if untied:
        if branch == "mixed":
            raise ValueError(
                "untied: the mixed branch needs rank >= 2; the untied theory has rank 1"
            )
        return ge.MatrixOverlaps(q=q, M=M, theta=theta, V=V)
    if branch in ("positional", "mixed"):
        diag = np.eye(r, dtype=bool)
        q[~diag] = V[~diag] = 0.0
        pos = 0 if branch == "positional" else 1
        M[:, [c for c in range(r) if c != pos]] = 0.0
    if branch == "mixed":
        theta[:, 1:] = 0.0
    return ge.MatrixOverlaps(q=q, M=M, theta=theta, V=V)


class _Layout:
    """Packing of MatrixOverlaps into one vector: q and V by their upper triangles."""

    def __init__(self, r: int, K: int, t: int, untied: bool = False, means: int = 0):
        self.r, self.K, self.t, self.untied, self.means = r, K + means, t, untied, means
        self.iu = np.triu_indices(r)

    def pack(self, o: ge.MatrixOverlaps) -> np.ndarray:
        return np.concatenate([o.q[self.iu], o.M.ravel(), o.theta.ravel(), o.V[self.iu]])

    def _sym(self, v: np.ndarray) -> np.ndarray:
        a = np.zeros((self.r, self.r))
        a[self.iu] = v
        return a + np.triu(a, 1).T

    def unpack(self, x: np.ndarray) -> ge.MatrixOverlaps:
        nq = len(self.iu[0])
        KM, tT = self.K * self.r, self.t * self.r
        return ge.MatrixOverlaps(
            q=self._sym(x[:nq]),
            M=x[nq : nq + KM].reshape(self.K, self.r),
            theta=x[nq + KM : nq + KM + tT].reshape(self.t, self.r),
            V=self._sym(x[nq + KM + tT :]),
        )

    def blocks(self) -> list[slice]:
        """Slices of q, M, theta and V in the packed vector."""
        nq = len(self.iu[0])
        edges = np.cumsum([0, nq, self.K * self.r, self.t * self.r, nq])
        return [slice(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:], strict=True)]

    def pins_M_and_theta(self, keep: np.ndarray) -> bool:
        _, bM, bT, _ = self.blocks()
        return not keep[bM].any() and not keep[bT].any()

    def mask(self, branch: str) -> np.ndarray:
        """The packed `free_overlaps` of a branch (all free for any other name)."""
        pos = self.K - self.means
        return self.pack(free_overlaps(branch, self.r, pos, self.t, self.untied, self.means))

    def free_means(self, keep: np.ndarray) -> np.ndarray:
        """A mask with the mean rows of M (correlated tokens) free and keep's other pins."""
        out = keep.copy()
        stop = self.blocks()[1].stop
        out[stop - self.means * self.r : stop] = 1.0
        return out


def canonical(o: ge.MatrixOverlaps, untied: bool = False) -> ge.MatrixOverlaps:
    """The overlaps in a fixed frame of the student's column space. The model is invariant under
    Q -> Q R (R orthogonal r x r: S(h R) = S(h), the ridge is isotropic), so fixed points come
    in orbits q -> R^T q R, M -> M R, theta -> theta R, V -> R^T V R, along which an iteration
    would drift. The frame: q diagonal, its eigenvectors assigned to the current axes they are
    closest to (the permutation maximising sum |U_cc|) and signed to keep U_cc >= 0. Tying the
    frame to the current axes keeps the map continuous where two eigenvalues of q cross
    (sorting them would swap two columns there) and keeps a map that flips a column (M -> -M)
    from passing for a fixed point. For r = 1 this is the identity, and for untied query and key
    of rank 1 too (rotating the query column into the key column is no symmetry)."""
    if untied:
        return o
    _, U = np.linalg.eigh(o.q)
    _, cols = linear_sum_assignment(-np.abs(U))
    U = U[:, cols]
    U = U * np.where(np.diag(U) < 0, -1.0, 1.0)
    return ge.MatrixOverlaps(q=U.T @ o.q @ U, M=o.M @ U, theta=o.theta @ U, V=U.T @ o.V @ U)


def _column_signs(o: ge.MatrixOverlaps, untied: bool = False) -> np.ndarray:
    """Per student column, the sign making its largest theta entry positive (its largest M
    entry where theta's column is below COLLAPSED; + on the trivial manifold). untied: one
    sign for both columns (only the joint flip (Q_Q, Q_K) -> -(Q_Q, Q_K) is a symmetry), that
    of the largest theta entry (else M entry) over both."""
    if untied:
        for block in (o.theta.ravel(), o.M.ravel()):
            top = block[np.argmax(np.abs(block))] if block.size else 0.0
            if abs(top) >= COLLAPSED:
                return np.full(o.q.shape[0], np.sign(top))
        return np.ones(o.q.shape[0])
    signs = np.ones(o.q.shape[0])
    for c in range(signs.size):
        for block in (o.theta[:, c], o.M[:, c]):
            top = block[np.argmax(np.abs(block))] if block.size else 0.0
            if abs(top) >= COLLAPSED:
                signs[c] = np.sign(top)
                break
    return signs


def oriented(
    o: ge.MatrixOverlaps, h: ge.MatrixHats, untied: bool = False
) -> tuple[ge.MatrixOverlaps, ge.MatrixHats]:
    """Overlaps and their hats with every student column signed by `_column_signs`.
    Flipping a column (Q_c -> -Q_c, R = diag(+-1) in `canonical`'s symmetry) maps fixed points
    to fixed points of the point set reflected in y, whose law is the same; without it a damped
    cold start that carries theta through zero reports -theta."""
    D = _column_signs(o, untied)
    two = np.outer(D, D)
    flipped = ge.MatrixOverlaps(q=o.q * two, M=o.M * D, theta=o.theta * D, V=o.V * two)
    hats = ge.MatrixHats(
        qhat=h.qhat * two, Mhat=h.Mhat * D, thetahat=h.thetahat * D, Vhat=h.Vhat * two
    )
    return flipped, hats


def admissible(o: ge.MatrixOverlaps, rho: np.ndarray) -> bool:
    """q and V positive definite and Gamma = rho - theta q^-1 theta^T positive definite."""
    try:
        if np.linalg.eigvalsh(o.q)[0] <= 0 or np.linalg.eigvalsh(o.V)[0] <= 0:
            return False
        return bool(np.linalg.eigvalsh(ge.teacher_covariance(o, rho))[0] > 0)
    except np.linalg.LinAlgError:
        return False


class GeneralMap:
    """x -> pack(overlaps(hats(moments(unpack(x))))) at fixed alpha, pinned parts held at 0."""

    def __init__(self, alpha: float, p: ModelParams, channel: GeneralChannel, keep: np.ndarray):
        self.alpha, self.p, self.channel, self.keep = alpha, p, channel, keep
        self.untied = channel.untied
        self.lam = ridge(p, self.untied)
        self.layout = _Layout(
            channel.r, p.K, p.teacher_rank, self.untied, mean_rows(channel.mixture)
        )
        # M = theta = 0 (trivial manifold): the fixed point is rotation invariant (q, V
        # proportional to I), nothing drifts, and q's eigenvectors are no frame
        self.isotropic = self.layout.pins_M_and_theta(keep)
        self.rho = p.sigma**2 * np.eye(p.teacher_rank)

    def admissible(self, x: np.ndarray) -> bool:
        return admissible(self.layout.unpack(x), self.rho)

    def evaluate(self, o: ge.MatrixOverlaps) -> tuple[ge.MatrixHats, ge.GeneralMoments]:
        p = self.p
        m = self.channel.moments(o, C=p.C_array, sigma=p.sigma, omega=p.omega, A=p.A_array)
        return ge.hats(m, o, alpha=self.alpha, rho=self.rho), m

    def step(self, x: np.ndarray):
        o = self.layout.unpack(x)
        if not admissible(o, self.rho):
            raise InadmissibleStep("overlaps not admissible (q, V, Gamma must be pos. definite)")
        h, m = self.evaluate(o)
        try:
            new = ge.overlaps(h, sigma=self.p.sigma, lam=self.lam, rho=self.rho)
        except ArithmeticError as err:
            raise InadmissibleStep(str(err)) from None
        fx = self.layout.pack(new if self.isotropic else canonical(new, self.untied)) * self.keep
        if not np.all(np.isfinite(fx)):
            raise InadmissibleStep("non-finite overlaps")
        return fx, (h, m)


def collapsed(layout: _Layout, x: np.ndarray, branch: str) -> bool:
    """Whether a semantic (positional) iterate's theta (M) has fallen below COLLAPSED."""
    _, bM, bT, _ = layout.blocks()
    block = {"semantic": bT, "positional": bM}.get(branch)
    return block is not None and float(np.abs(x[block]).max()) < COLLAPSED


def defined_start(fmap: GeneralMap, x: np.ndarray, layout: _Layout, tries: int = 6) -> np.ndarray:
    """A cold start where the map is defined: q doubled until lambda I + sigma^2 Vhat is positive
    definite there. With q small the fields sit where the loss is concave on average and Vhat < 0
    (measured at L=3, omega 0.3, start q = 0.02: from alpha 1.5 on the trivial manifold and at
    alpha 2 on the positional one; q >= 0.1 is defined at alpha 0.8-3)."""
    for _ in range(tries):
        try:
            fmap.step(x)
            return x
        except InadmissibleStep:
            o = layout.unpack(x)
            x = layout.pack(dataclasses.replace(o, q=2.0 * o.q)) * fmap.keep
    return x


@dataclass(frozen=True)
class Solution:
    """The fixed point of one scrambling."""

    overlaps: ge.MatrixOverlaps | None
    hats: ge.MatrixHats | None
    observables: dict[str, float]
    converged: bool
    iterations: int
    residuals: tuple[float, ...]
    status: str


def mean_multiplier(fmap: GeneralMap, o: ge.MatrixOverlaps) -> float:
    """The largest real part of the eigenvalues of the map's Jacobian in the mean rows m_mu
    at a fixed point on m_mu = 0 (by finite differences of MEAN_STEP). m_mu decouples there at
    linear order (the label permutations act on m_mu alone), so these are eigenvalues of the
    whole Jacobian: below +1 no branch with m_mu != 0 bifurcates from the fixed point
    (docs/theory-mixtures.md §3). At a clustered fixed point (m_mu != 0) it is the m_mu block's
    eigenvalue only, not decoupled from the other overlaps."""
    layout = fmap.layout
    first = layout.K - layout.means
    n = layout.means * layout.r
    J = np.zeros((n, n))
    for j in range(n):
        M = o.M.copy()
        M[first + j // layout.r, j % layout.r] += MEAN_STEP
        fx, _ = fmap.step(layout.pack(dataclasses.replace(o, M=M)) * fmap.keep)
        J[:, j] = (layout.unpack(fx).M[first:] - o.M[first:]).ravel() / MEAN_STEP
    return float(np.linalg.eigvals(J).real.max())


def _observables(o, h, m, alpha, p: ModelParams, lam: float) -> dict[str, float]:
    rho = p.sigma**2 * np.eye(p.teacher_rank)
    phi = ge.free_entropy(o, h, m, alpha=alpha, sigma=p.sigma, lam=lam, rho=rho)
    return {
        "test_error": ge.test_error(m),
        "train_loss": -phi,
        "train_loss_identity": ge.train_loss_identity(o, m, alpha=alpha, sigma=p.sigma, lam=lam),
    }


def solve_one(
    alpha: float,
    p: ModelParams,
    start: ge.MatrixOverlaps,
    branch: str,
    channel: GeneralChannel,
    *,
    coarse: GeneralChannel | None = None,
    tol: float = 1e-5,
    damping: float = 0.5,
    anderson: int = 3,
    max_iter: int = 200,
) -> Solution:
    """Fixed point on one scrambling from `start` (first damped on `coarse` when given), by
    Anderson-accelerated damped steps; a start whose order parameter collapses (`collapsed`)
    is finished on the trivial manifold."""
    untied = channel.untied
    layout = _Layout(channel.r, p.K, p.teacher_rank, untied, mean_rows(channel.mixture))
    keep = layout.mask(branch)
    x = layout.pack(canonical(start, untied)) * keep
    fine = GeneralMap(alpha, p, channel, keep)
    kw = dict(admissible=fine.admissible, damping=damping, max_iter=max_iter)
    iterations = 0
    if coarse is not None:
        # plain damped steps: Anderson started cold can land on the unstable trivial point.
        # On the coarse points first; where they do not settle, on the fine points (at L=3,
        # alpha 0.8 the positional branch is lost on 128 points for a quarter of the
        # scramblings and on 1024 points for none of 20): only they can tell a collapse.
        for stage in (coarse, channel):
            rough = GeneralMap(alpha, p, stage, keep)
            pre = iterate(
                rough.step,
                defined_start(rough, x, layout),
                tol=1e-3,
                **{**kw, "damping": COARSE_DAMPING.get(branch, COARSE_DAMPING_DEFAULT)},
            )
            iterations += pre.iterations
            if pre.converged:
                break
        if pre.aux is not None and fine.admissible(pre.x):
            # the coarse points' fixed point stands in for the fine points' one of the same
            # sign: hand over +theta, else the fine stage solves the y-reflected points
            x = layout.pack(oriented(layout.unpack(pre.x), pre.aux[0], untied)[0]) * keep
            if not pre.converged and collapsed(layout, x, branch):
                keep = layout.mask("trivial")
                x, fine = x * keep, GeneralMap(alpha, p, channel, keep)
    rep = iterate(fine.step, x, tol=tol, anderson=anderson, **kw)
    iterations += rep.iterations
    if not rep.converged and rep.aux is not None and collapsed(layout, rep.x, branch):
        # the branch's order parameter decays geometrically to zero, which a relative
        # convergence test never accepts: finish on the trivial manifold
        keep = layout.mask("trivial")
        fine = GeneralMap(alpha, p, channel, keep)
        rep = iterate(fine.step, rep.x * keep, tol=tol, anderson=anderson, **kw)
        iterations += rep.iterations
    if rep.aux is None or not (rep.converged or rep.status == "maximum iterations reached"):
        return Solution(None, None, {}, False, iterations, rep.residuals, rep.status)
    h, m = rep.aux
    o, h = oriented(layout.unpack(rep.x), h, untied)
    observables = _observables(o, h, m, alpha, p, ridge(p, untied))
    if channel.mixture is not None:
        fmap = GeneralMap(alpha, p, channel, layout.free_means(keep))
        observables["mean_multiplier"] = mean_multiplier(fmap, o)
    return Solution(o, h, observables, rep.converged, iterations, rep.residuals, rep.status)


@dataclass(frozen=True)
class GeneralResult:
    """Mean over scramblings of one fixed point, with standard errors (`errors[name]`).

    values: q, M, theta, V, qhat, Mhat, thetahat, Vhat (arrays) and test_error, train_loss,
    train_loss_identity (R/d computed as alpha E[ell] + lambda tr q/(2 sigma^2), equal to
    train_loss = -Phi at a fixed point up to the integration error). points: Sobol points per
    scrambling, before their antithetic images (the integrals use twice as many). untied:
    the overlaps are those of the field (h_Q, h_K): q is 2 x 2 (query, key), M and theta have
    a query and a key column (docs/theory-untied.md). mixture: correlated tokens; M's last
    K - 1 rows are the mean overlaps m_mu (docs/theory-mixtures.md), reported as m_mean and
    per cluster as cluster_m (mu_k^T Q / sqrt d, the simulations' name), m being the positional
    rows, and mean_multiplier, the stability of m_mu = 0 (`mean_multiplier`)."""

    alpha: float
    params: ModelParams
    branch: str
    values: dict[str, np.ndarray | float]
    errors: dict[str, np.ndarray | float]
    converged: bool
    iterations: int
    status: str
    points: int
    randomisations: int
    linear_test_error: float
    linear_test_error_err: float
    solutions: tuple[Solution, ...] = dataclasses.field(repr=False)
    untied: bool = False
    mixture: Mixture | None = None

    engine = "general"

    def __getattr__(self, name: str):
        """q, m (= M), V, theta, qhat, mhat, Vhat, thetahat, test_error, train_loss: the mean
        over scramblings (a float for r = t = K = 1, else an array); `<name>_err` likewise;
        rs_stability, jump_mass, vhat_smooth are NaN until `with_stability` measures them."""
        base = name[:-4] if name.endswith("_err") else name
        key = _ALIASES.get(base, base)
        values = self.__dict__.get("values")  # None while unpickling
        if values is None or (key not in values and key not in _MEASURED_LATER):
            raise AttributeError(name)
        table = self.errors if name.endswith("_err") else self.values
        return plain_value(table[key]) if key in table else float("nan")

    def as_dict(self) -> dict:
        """Flat record for tables and JSON: today's keys (overlaps as scalars for r = t = K = 1,
        nested lists otherwise), `<name>_err` for every overlap and observable, and `engine`."""
        p = self.params
        d = {
            "alpha": self.alpha,
            "omega": p.omega,
            "sigma": p.sigma,
            "lam": p.lam,
            "branch": self.branch,
        }
        for name in (
            "q",
            "m",
            "V",
            "theta",
            "qhat",
            "mhat",
            "Vhat",
            "thetahat",
            "test_error",
            "train_loss",
            "train_loss_identity",
            *_MEASURED_LATER,
        ):
            d[name] = _listed(getattr(self, name)) if self.values else float("nan")
            d[f"{name}_err"] = (
                _listed(getattr(self, f"{name}_err")) if self.values else float("nan")
            )
        d.update(
            linear_test_error=self.linear_test_error,
            linear_test_error_err=self.linear_test_error_err,
            converged=self.converged,
            iterations=self.iterations,
            status=self.status,
            kind=self.kind,
            engine=self.engine,
            untied=self.untied,
            L=p.L,
            rank=p.rank,
            teacher_rank=p.teacher_rank,
            A=[list(row) for row in p.A],
            encodings=[list(row) for row in p.encodings],
            points=self.points,
            randomisations=self.randomisations,
        )
        if self.untied and self.values:
            d.update(self._query_key())
        if self.mixture is not None:
            d.update(self._mixture_fields())
        return d

    def _mixture_fields(self) -> dict:
        """Correlated tokens: the mixture's parameters, m (positional rows of M), m_mean (the
        mean rows) and cluster_m (per cluster), with errors (NaN when not converged)."""
        mix = self.mixture
        out = {
            "mean_multiplier": self.values.get("mean_multiplier", float("nan")),
            "mean_multiplier_err": self.errors.get("mean_multiplier", float("nan")),
            "clusters": mix.clusters,
            "label_correlation": mix.label_correlation,
            "cluster_norm": mix.cluster_norm,
        }
        K = self.params.K
        for table, suffix in ((self.values, ""), (self.errors, "_err")):
            if not self.values:
                out.update({f"{k}{suffix}": float("nan") for k in ("m", "m_mean", "cluster_m")})
                continue
            M = np.asarray(table["M"])
            out[f"m{suffix}"] = _listed(plain_value(M[:K]))
            out[f"m_mean{suffix}"] = _listed(plain_value(M[K:]))
            out[f"cluster_m{suffix}"] = _listed(
                np.asarray(table["cluster_m"])[:, 0] if M.shape[1] == 1 else table["cluster_m"]
            )
        return out

    def _query_key(self) -> dict:
        """Untied: the overlaps of Q_Q (column 0 of the field) and Q_K (column 1) by the names
        the simulations report (q_query, m_query, theta_query, q_key, ...), with errors."""
        out = {}
        for name, key in (("q", "q"), ("m", "M"), ("theta", "theta")):
            for table, suffix in ((self.values, ""), (self.errors, "_err")):
                block = np.asarray(table[key])
                for col, role in enumerate(("query", "key")):
                    part = block[col, col] if key == "q" else block[:, col]
                    out[f"{name}_{role}{suffix}"] = _listed(plain_value(part))
        return out

    @property
    def kind(self) -> str:
        """semantic (theta != 0), positional (M != 0), mixed (both) or trivial, judged against
        three standard errors (against 1e-8 alone for one scrambling); "none" when not
        converged. Correlated tokens: clustered where the mean rows m_mu are != 0 and the
        positional rows are 0 (whatever theta), mixed where both are != 0."""
        if not self.converged:
            return "none"
        err = {k: np.nan_to_num(self.errors[k]) for k in ("theta", "M")}  # NaN: one scrambling
        sem = np.any(np.abs(self.values["theta"]) > 3 * err["theta"] + 1e-8)
        aligned = np.abs(self.values["M"]) > 3 * err["M"] + 1e-8
        pos = np.any(aligned[: self.params.K])
        if np.any(aligned[self.params.K :]):
            return "mixed" if pos else "clustered"
        if sem and pos:
            return "mixed"
        return "semantic" if sem else "positional" if pos else "trivial"


_ALIASES = {"m": "M", "mhat": "Mhat"}
_MEASURED_LATER = ("rs_stability", "jump_mass", "vhat_smooth")  # NaN until `with_stability`


def plain_value(x) -> float | np.ndarray:
    """A float for a one-element array (r = t = K = 1), the array otherwise."""
    arr = np.asarray(x)
    return float(arr.ravel()[0]) if arr.size == 1 else arr


def _listed(x):
    return x.tolist() if isinstance(x, np.ndarray) else x


def _summary(solutions: list[Solution], mixture: Mixture | None = None) -> tuple[dict, dict]:
    keys = ("q", "M", "theta", "V")
    hat_keys = ("qhat", "Mhat", "thetahat", "Vhat")
    rows: dict[str, list] = {k: [] for k in keys + hat_keys}
    for s in solutions:
        if mixture is not None:
            rows.setdefault("cluster_m", []).append(cluster_overlaps(s.overlaps.M, mixture))
        for k in keys:
            rows[k].append(getattr(s.overlaps, k))
        for k in hat_keys:
            rows[k].append(getattr(s.hats, k))
        for k, v in s.observables.items():
            rows.setdefault(k, []).append(v)
    n = len(solutions)
    values = {k: np.mean(v, axis=0) for k, v in rows.items()}
    errors = {
        k: (np.std(v, axis=0, ddof=1) / np.sqrt(n) if n > 1 else np.full_like(values[k], np.nan))
        for k, v in rows.items()
    }
    return values, errors


def check_variant(p: ModelParams, untied: bool, mixture: Mixture | None) -> None:
    """ValueError naming the option for what the general engine does not solve: untied with
    rank > 1, untied with a mixture, a mixture with too many label sequences."""
    if untied and p.rank != 1:
        raise ValueError(f"untied: the untied theory has student rank 1, got rank={p.rank}")
    if mixture is not None:
        if untied:
            raise ValueError("mixture: correlated tokens are solved for the tied model only")
        mixture.check_length(p.L)


def make_channels(
    p: ModelParams,
    points: int,
    randomisations: int,
    seed: int = 0,
    untied: bool = False,
    mixture: Mixture | None = None,
):
    """`randomisations` independent scramblings (seeds seed, seed + 1, ...) of `points` points."""
    width = field_width(p, untied)
    return [
        GeneralChannel(p.L, width, p.teacher_rank, points, seed + k, untied, mixture)
        for k in range(randomisations)
    ]


def solve_general(
    alpha: float,
    params: ModelParams | None = None,
    *,
    init: str | ge.MatrixOverlaps = "semantic",
    branch: str | None = None,
    points: int = DEFAULT_POINTS,
    randomisations: int = DEFAULT_RANDOMISATIONS,
    seed: int = 0,
    tol: float = 1e-5,
    damping: float = 0.5,
    anderson: int = 3,
    max_iter: int = 200,
    channels: list[GeneralChannel] | None = None,
    untied: bool = False,
    mixture: Mixture | None = None,
) -> GeneralResult:
    """One fixed point of the general state evolution at alpha, on `randomisations`
    independent scramblings of `points` Sobol points (plus antithetic images) each.
    untied: separate query and key matrices (rank 1; docs/theory-untied.md). mixture:
    correlated tokens (tied model; docs/theory-mixtures.md), the mean overlaps m_mu free.

    init: a branch name (started cold: damped iterations on points/8 first) or explicit
    MatrixOverlaps (with `branch` naming the manifold to pin, if any). The first scrambling's
    fixed point warm-starts the others. `channels` (one per scrambling) may be passed in to
    reuse points and prox warm starts along a curve.
    """
    alpha = check_positive("alpha", alpha)
    p = params if params is not None else ModelParams()
    points = check_int("points", points, minimum=2)
    randomisations = check_int("randomisations", randomisations)
    check_variant(p, untied, mixture)
    if channels is not None and any(c.untied != untied for c in channels):
        raise ValueError(f"channels: built with untied={not untied}, solving untied={untied}")
    if channels is not None and any(c.mixture != mixture for c in channels):
        raise ValueError(f"channels: built for another mixture than {mixture}")
    if isinstance(init, str):
        start, label, cold = start_overlaps(init, p, untied, mixture), init, True
    else:
        start, label, cold = init, branch or "custom", False
    if channels is None:
        channels = make_channels(p, points, randomisations, seed, untied, mixture)
    solutions: list[Solution] = []
    for k, channel in enumerate(channels):
        coarse = None
        if cold and k == 0:
            coarse = GeneralChannel(
                p.L,
                field_width(p, untied),
                p.teacher_rank,
                max(points // COARSE_FRACTION, 64),
                seed + 10_000,
                untied,
                mixture,
            )
        sol = solve_one(
            alpha,
            p,
            start,
            label,
            channel,
            coarse=coarse,
            tol=tol,
            damping=damping,
            anderson=anderson,
            max_iter=max_iter,
        )
        solutions.append(sol)
        if sol.overlaps is None:
            break
        if k == 0:
            start = sol.overlaps
    eps_lin, eps_lin_err = linear_test_error_qmc(p)
    ok = [s for s in solutions if s.overlaps is not None]
    converged = len(ok) == len(channels) and all(s.converged for s in solutions)
    values, errors = _summary(ok, mixture) if ok else ({}, {})
    status = "converged" if converged else "; ".join(sorted({s.status for s in solutions}))
    return GeneralResult(
        alpha=alpha,
        params=p,
        branch=label,
        values=values,
        errors=errors,
        converged=converged,
        iterations=sum(s.iterations for s in solutions),
        status=status,
        points=channels[0].n_points // 2,
        randomisations=len(channels),
        linear_test_error=eps_lin,
        linear_test_error_err=eps_lin_err,
        solutions=tuple(solutions),
        untied=untied,
        mixture=mixture,
    )


def general_learning_curve(
    alphas,
    params: ModelParams | None = None,
    *,
    branch: str = "semantic",
    points: int = DEFAULT_POINTS,
    randomisations: int = DEFAULT_RANDOMISATIONS,
    seed: int = 0,
    tol: float = 1e-5,
    progress: bool = False,
    channels: list[GeneralChannel] | None = None,
    untied: bool = False,
    mixture: Mixture | None = None,
) -> list[GeneralResult]:
    """Follow one branch along alpha with the general engine (results in the order of alphas):
    the same points and prox warm starts throughout (common random numbers, so differences
    between alphas and branches are smooth; pass the same `channels` to several curves to share
    them across branches), each point warm-started from the previous one once the branch is
    found (beyond its end too); increasing alpha, except decreasing for the semantic branch."""
    p = params if params is not None else ModelParams()
    alist = [check_positive("alpha", a) for a in alphas]
    if not alist:
        raise ValueError("alphas must not be empty")
    check_variant(p, untied, mixture)
    if channels is None:
        channels = make_channels(p, points, randomisations, seed, untied, mixture)
    order = sorted(range(len(alist)), key=lambda i: alist[i], reverse=branch == "semantic")
    if progress:
        from tqdm.auto import tqdm

        order = tqdm(order, desc=f"{branch} branch", unit="alpha")
    results: dict[int, GeneralResult] = {}
    previous: GeneralResult | None = None
    found = False
    for i in order:
        # warm from the previous point once the branch is found, also where it has ended
        # (its order parameter collapsed: the curve goes on at the point it fell to, instead
        # of a cold start per alpha that falls there again, ~10x slower at L=3)
        warm = previous is not None and previous.converged and found
        init = previous.solutions[0].overlaps if warm else branch
        res = solve_general(
            alist[i],
            p,
            init=init,
            branch=branch,
            channels=channels,
            tol=tol,
            untied=untied,
            mixture=mixture,
        )
        found = found or (res.converged and res.kind == branch)
        results[i] = res
        previous = res
    return [results[i] for i in range(len(alist))]
