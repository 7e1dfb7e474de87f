"""The QMC channel's solver: fixed points of the general state evolution (docs/theory.md §7) for any
L, r, t, encodings and variant (tied, untied, correlated tokens).

One scrambling of the quasi-Monte Carlo points gives a deterministic map overlaps -> hats ->
overlaps (`general_equations`), iterated with the generic loop of `attnphase.theory.iterate`
(damping weights the OLD iterate; Anderson acceleration). The fixed point is solved once per
independent scrambling; the result reports the mean over them and, for every overlap and observable,
the standard error of that mean (`<name>_err`), as docs/theory.md §7.6 recommends (averaging many
small-sample fixed points instead would bias the result).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass

import numpy as np

from ...params import TIED, Mixture, ModelParams, Tied, Variant
from .. import overlaps as ge
from ..attention import attention_map
from ..baseline import linear_test_error_qmc
from ..branches import (
    MIXTURE_BRANCH,
    Q_DECAYED,
    Q_NULL,
    QMC_BRANCHES,
    SIMPLEX_BRANCH,
    START_V,
    branch_kind,
    follow_branch,
    null_start_v,
)
from ..iterate import (
    DECAYED,
    Decayed,
    InadmissibleStep,
    StageOptions,
    Steps,
    gather,
    iterate_checked_steps,
    run,
)
from ..method import QMC
from ..overlaps import admissible, matched_eigenvectors
from ..result import HAT_KEYS, OVERLAP_KEYS, TheoryResult
from .channel import MomentsRequest, QMCChannel, moments_many
from .mixture import cluster_overlaps

COARSE_FRACTION = 8  # the damped cold-start stage uses points / 8
# damping of the cold stage: the undamped map's multipliers (docs/theory.md §8.1) bound the step
# 1 - damping below ~0.76 on the semantic branch and ~0.36 on the positional one (at 0.5 the
# cold positional start at L=2, alpha 1.5 cycled with residual O(1); 0.8 on the semantic branch
# took twice the iterations of 0.5)
# and on the clustered branch 0.9: its multiplier in m_mu is ~ -9.5 at N = 3 (the damped
# factor 0.9 - 0.1 * 9.5 ~ 0; at 0.5 its cold start fell back to m_mu = 0)
COARSE_DAMPING = {"positional": 0.8, "mixed": 0.8, "clustered": 0.9}  # by `branch_kind`
COARSE_DAMPING_DEFAULT = 0.5
COLLAPSED = QMC.on_branch  # max |M| (positional) or |theta| (semantic): fell to the trivial point
# step of the finite difference in m_mu that measures its multiplier (correlated tokens; the map
# is odd in m_mu, so the forward difference is central: error O(step^2 N^2))
MEAN_STEP = 1e-3


def field_width(p: ModelParams) -> int:
    """Columns of the student field: r, or 2r for untied query and key (docs/theory-untied.md)."""
    return attention_map(p.variant).field_width(p.rank)


def ridge(p: ModelParams) -> float:
    """The ridge of the state evolution in the field's columns (`TiedMap.ridge`)."""
    return attention_map(p.variant).ridge(p.lam)


def start_overlaps(branch: str, p: ModelParams) -> ge.MatrixOverlaps:
    """Starting overlaps of each branch, the L=2 authors' values (docs/theory.md §3) per column:
    semantic: every column aligned with the teacher; positional: column 1 along the first
    encoding direction (M = (0.2, 0, ...): any M of rank one is this up to a rotation of the
    columns), the others trivial; mixed (r >= 2): column 1 semantic, column 2 positional;
    trivial; simplex_positional: M = 0.2 I (every column along its own encoding direction).
    untied: the tied start in both the query and the key columns (Q_Q = Q_K, made
    admissible by a 10% independent part in q). mixture: the mean rows m_mu = 0 (the
    invariant manifold of docs/theory-mixtures.md §3, whose stability `mean_multiplier`
    measures), except on the clustered branch: the semantic start with m_mu = 0.2 along the
    first mean direction. ValueError naming `branch` for a branch that needs a positional
    column when every encoding is zero."""
    amap = attention_map(p.variant)
    if branch == MIXTURE_BRANCH and not amap.mean_rows:
        raise ValueError(f"branch {MIXTURE_BRANCH!r} needs correlated tokens (a mixture)")
    if branch in ("positional", "mixed", SIMPLEX_BRANCH) and not np.any(p.C_array):
        raise ValueError(
            f"branch: {branch} needs non-zero encodings (with every encoding zero M does not "
            "enter the fields, and the positional start is the trivial branch)"
        )
    if not p.is_tied_gaussian:
        tied = dataclasses.replace(p, variant=Tied(), rank=amap.tied_rank(p.rank))
        return amap.start(branch, start_overlaps(amap.tied_branch(branch), tied))
    r, t, K = p.rank, p.teacher_rank, p.K
    q = 0.02 * np.eye(r)
    M = np.zeros((K, r))
    theta = np.zeros((t, r))
    if branch == SIMPLEX_BRANCH:
        check_simplex(p)
        M = 0.2 * np.eye(K, r)
    elif branch == "semantic":
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
        raise ValueError(f"branch must be one of {QMC_BRANCHES}, got {branch!r}")
    return ge.MatrixOverlaps(q=q, M=M, theta=theta, V=START_V * np.eye(r))


def free_overlaps(
    branch: str, r: int, K: int, t: int, variant: Variant = TIED
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
    - trivial: M = theta = 0;
    - simplex_positional: theta = 0; the rest is held on its manifold by `symmetrised`.
    The column pins are the attention map's (`TiedMap.pin`); several heads (`HeadsMap`) pin
    the mixed branch as above and leave every head's M free on the positional one.
    untied (rank 1: r = 2, query and key column): the same symmetries pin M on the semantic
    branch and theta on the positional one (S(-h_Q, -h_K) = S(h_Q, h_K)); flipping one column
    alone is no symmetry (it flips the logits), so nothing else is pinned.
    means (correlated tokens): that many mean rows of M below the K positional ones, held at 0
    on every branch (m_mu = 0 is invariant, docs/theory-mixtures.md §3; free, the rounding
    noise there grows where the map's multiplier in m_mu is below -1, measured -5.3 at
    N = 2, and moved a 512-point fixed point by 1%) except the clustered one: M's positional
    rows 0 (exact for K = 2: the reflection (xi, y, labels) -> (-xi, -y, swapped labels)),
    theta and the mean rows free: look for it where m_mu = 0 is unstable (`mean_multiplier`)."""
    amap = attention_map(variant)
    means = amap.mean_rows
    q, theta, V = np.ones((r, r)), np.ones((t, r)), np.ones((r, r))
    if branch == MIXTURE_BRANCH:
        if not means:
            raise ValueError(f"branch {MIXTURE_BRANCH!r} needs correlated tokens (a mixture)")
        M = np.ones((K + means, r))
        M[:K] = 0.0
        return ge.MatrixOverlaps(q=q, M=M, theta=theta, V=V)
    M = np.ones((K + means, r))
    if branch in QMC_BRANCHES:
        M[K:] = 0.0
    if branch in ("semantic", "trivial"):
        M[:] = 0.0
    if branch in ("positional", "trivial", SIMPLEX_BRANCH):
        theta[:] = 0.0
    if branch == "mixed" and not amap.has_branch("mixed", r):
        raise ValueError(
            f"{amap.name}: the mixed branch needs two columns of their own; the {amap.name} "
            f"theory at rank {r} has none"
        )
    return amap.pin(branch, ge.MatrixOverlaps(q=q, M=M, theta=theta, V=V))


class Layout:
    """Packing of MatrixOverlaps into one vector: q and V by their upper triangles."""

    def __init__(self, r: int, K: int, t: int, variant: Variant = TIED):
        self.means = attention_map(variant).mean_rows
        self.r, self.K, self.t, self.variant = r, K + self.means, t, variant
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
        return self.pack(free_overlaps(branch, self.r, pos, self.t, self.variant))

    def free_means(self, keep: np.ndarray) -> np.ndarray:
        """A mask with the mean rows of M (correlated tokens) free and keep's other pins."""
        out = keep.copy()
        stop = self.blocks()[1].stop
        out[stop - self.means * self.r : stop] = 1.0
        return out


def is_simplex(p: ModelParams) -> bool:
    """Whether the simplex branch applies: the tied model with L >= 3, encodings on a regular
    simplex (C C^T = (1 + 1/(L - 1)) I - 1 1^T/(L - 1), K = L - 1), rank K, a target A invariant
    under permuting the tokens (one diagonal value, one off-diagonal value) and teacher rank 1."""
    L, C, A = p.L, p.C_array, p.A_array
    if not p.is_tied_gaussian or L < 3 or p.K != L - 1 or p.rank != p.K or p.teacher_rank != 1:
        return False
    gram = (1.0 + 1.0 / (L - 1)) * np.eye(L) - 1.0 / (L - 1)
    off = A[~np.eye(L, dtype=bool)]
    return bool(
        np.allclose(C @ C.T, gram, atol=1e-12)
        and np.allclose(np.diag(A), A[0, 0], atol=1e-12)
        and np.allclose(off, off[0], atol=1e-12)
    )


def check_simplex(p: ModelParams) -> None:
    """ValueError naming the branch unless `is_simplex(p)`."""
    if not is_simplex(p):
        raise ValueError(
            f"branch {SIMPLEX_BRANCH!r} needs the tied model with L >= 3, simplex encodings "
            f"(K = L - 1), rank K, teacher rank 1 and a permutation-invariant target; got L = "
            f"{p.L}, K = {p.K}, rank = {p.rank}"
        )


def symmetrised(o: ge.MatrixOverlaps) -> ge.MatrixOverlaps:
    """The overlaps averaged over the token permutations (docs/scaling.md §1). With simplex
    encodings a permutation of the tokens rotates the K = L - 1 encoding directions by an
    orthogonal g (the standard representation of the permutations, irreducible); applied to the
    student's columns as well (a symmetry of the model, `canonical`), it maps M -> g^T M g,
    q -> g^T q g, V -> g^T V g, theta -> theta g. Its average over all g is, by Schur's lemma,
    M = (tr M / K) I, q = (tr q / r) I, V = (tr V / r) I, theta = 0: an invariant manifold of the
    exact map (3 unknowns) that the integration's points, not symmetric themselves, would leave."""
    r = o.q.shape[0]
    eye = np.eye(r)
    return ge.MatrixOverlaps(
        q=np.trace(o.q) / r * eye,
        M=np.trace(o.M) / r * eye,
        theta=np.zeros_like(o.theta),
        V=np.trace(o.V) / r * eye,
    )


def canonical(o: ge.MatrixOverlaps, variant: Variant = TIED) -> ge.MatrixOverlaps:
    """The overlaps in a fixed frame of the student's column space. The model is invariant under
    Q -> Q R (R orthogonal r x r: S(h R) = S(h), the ridge is isotropic), so fixed points come
    in orbits q -> R^T q R, M -> M R, theta -> theta R, V -> R^T V R, along which an iteration
    would drift. The frame: q diagonal, its eigenvectors assigned to the current axes they are
    closest to (the permutation maximising sum |U_cc|) and signed to keep U_cc >= 0. Tying the
    frame to the current axes keeps the map continuous where two eigenvalues of q cross
    (sorting them would swap two columns there) and keeps a map that flips a column (M -> -M)
    from passing for a fixed point. For r = 1 this is the identity, and for untied query and key
    of rank 1 too (rotating the query column into the key column is no symmetry), and for
    heads (`HeadsMap.frame`: rotations within each head only); a map with a smaller
    group of rotations fixes its own frame (`TiedMap.frame`)."""
    amap = attention_map(variant)
    if not amap.rotations:
        return amap.frame(o)
    U = matched_eigenvectors(o.q)
    return o.rotated(U)


def teacher_frame(o: ge.MatrixOverlaps) -> ge.MatrixOverlaps:
    """The overlaps in a fixed frame of the teacher's space (t >= 2). The teacher's prior
    (rho = sigma^2 I) and its attention S(h* h*^T) are invariant under h* -> h* R (R orthogonal
    t x t), so fixed points come in orbits theta -> R^T theta along which an iteration drifts
    (measured: at t = 2, rank 1, one scrambling of 1024 points never settled in 200
    iterations). The frame: theta theta^T diagonal, its eigenvectors assigned to the current
    axes they are closest to and signed to keep U_cc >= 0, as `canonical` does for the
    student."""
    if o.theta.shape[0] < 2:
        return o
    U = matched_eigenvectors(o.theta @ o.theta.T)
    return dataclasses.replace(o, theta=U.T @ o.theta)


def _column_signs(o: ge.MatrixOverlaps, variant: Variant) -> np.ndarray:
    """Per student column, the sign making its largest theta entry positive (its largest M
    entry where theta's column is below COLLAPSED; + on the trivial manifold). untied: one
    sign for both columns (only the joint flip (Q_Q, Q_K) -> -(Q_Q, Q_K) is a symmetry), that
    of the largest theta entry (else M entry) over both."""
    if not attention_map(variant).signs_each:
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
    o: ge.MatrixOverlaps, h: ge.MatrixHats, variant: Variant = TIED
) -> tuple[ge.MatrixOverlaps, ge.MatrixHats]:
    """Overlaps and their hats with every student column signed by `_column_signs`.
    Flipping a column (Q_c -> -Q_c, R = diag(+-1) in `canonical`'s symmetry) maps fixed points
    to fixed points of the point set reflected in y, whose law is the same; without it a damped
    cold start that carries theta through zero reports -theta."""
    D = _column_signs(o, variant)
    two = np.outer(D, D)
    flipped = ge.MatrixOverlaps(q=o.q * two, M=o.M * D, theta=o.theta * D, V=o.V * two)
    hats = ge.MatrixHats(
        qhat=h.qhat * two, Mhat=h.Mhat * D, thetahat=h.thetahat * D, Vhat=h.Vhat * two
    )
    return flipped, hats


class QMCMap:
    """x -> pack(overlaps(hats(moments(unpack(x))))) at fixed alpha, pinned parts held at 0."""

    def __init__(
        self,
        alpha: float,
        p: ModelParams,
        channel: QMCChannel,
        keep: np.ndarray,
        symmetric: bool = False,
    ):
        self.alpha, self.p, self.channel, self.keep = alpha, p, channel, keep
        self.symmetric = symmetric  # held on the simplex branch's manifold (`symmetrised`)
        self.variant = channel.variant
        self.lam = ridge(p)
        self.layout = Layout(channel.r, p.K, p.teacher_rank, self.variant)
        # M = theta = 0 (trivial manifold): the fixed point is rotation invariant (q, V
        # proportional to I), nothing drifts, and q's eigenvectors are no frame
        self.isotropic = self.layout.pins_M_and_theta(keep)
        self.rho = p.sigma**2 * np.eye(p.teacher_rank)
        self.floor = Q_DECAYED  # a q whose largest eigenvalue is below it ends the iteration

    @property
    def local(self) -> bool:
        """The channel's local mode (`QMCChannel.local`)."""
        return self.channel.local

    @local.setter
    def local(self, value: bool) -> None:
        self.channel.local = value

    def admissible(self, x: np.ndarray) -> bool:
        return admissible(self.layout.unpack(x), self.rho)

    def evaluate(self, o: ge.MatrixOverlaps) -> tuple[ge.MatrixHats, ge.MatrixMoments]:
        """The hats and moments at overlaps o (§7.2), the channel evaluated alone."""
        return run(self._hats(o), moments_many)

    def _hats(self, o: ge.MatrixOverlaps) -> Steps[tuple[ge.MatrixHats, ge.MatrixMoments]]:
        """`evaluate` as a generator that requests the channel's moments (`MomentsRequest`)."""
        p = self.p
        request = MomentsRequest(self.channel, o, p.C_array, p.sigma, p.omega, p.A_array)
        (m,) = yield [request]
        return ge.hats(m, o, alpha=self.alpha, rho=self.rho), m

    def step(self, x: np.ndarray):
        """F(x) and its (hats, moments), the channel evaluated alone."""
        return run(self.steps(x), moments_many)

    def steps(self, x: np.ndarray) -> Steps[tuple[np.ndarray, tuple]]:
        """`step` as a generator that requests the channel's moments (`MomentsRequest`), for
        evaluations batched with other maps' (`iterate.gather`)."""
        o = self.layout.unpack(x)
        top = float(np.linalg.eigvalsh(o.q).max())
        if 0 <= top < self.floor:  # q = 0: a start at the null point
            raise Decayed(f"q's largest eigenvalue {top:.3g}")
        if not admissible(o, self.rho):
            raise InadmissibleStep("overlaps not admissible (q, V, Gamma must be pos. definite)")
        h, m = yield from self._hats(o)
        try:
            new = ge.overlaps(h, sigma=self.p.sigma, lam=self.lam, rho=self.rho)
        except ArithmeticError as err:
            raise InadmissibleStep(str(err)) from None
        if self.symmetric:
            new = symmetrised(new)
        elif not self.isotropic:
            # the frame of the free overlaps alone: the noise of a pinned one would turn it
            # (theta on the rotary positional branch, 1e-4 on 1024 points, by any angle)
            free = self.layout.unpack(self.layout.pack(new) * self.keep)
            new = teacher_frame(canonical(free, self.variant))
        fx = self.layout.pack(new) * self.keep
        if not np.all(np.isfinite(fx)):
            raise InadmissibleStep("non-finite overlaps")
        return fx, (h, m)


class NullMap(QMCMap):
    """The map at the null point W = 0 (q = 0, M = theta = 0; docs/theory.md §3): q held at
    Q_NULL I, where the prox is linear in the vanishing fields and the conjugates have their
    q -> 0 limits; it iterates V, and `multiplier` is the growth factor per step of q's largest
    eigenvalue there (below 1: the null point attracts q)."""

    def __init__(self, alpha: float, p: ModelParams, channel: QMCChannel):
        trivial = Layout(channel.r, p.K, p.teacher_rank, channel.variant).mask("trivial")
        super().__init__(alpha, p, channel, trivial)
        self.floor = 0.0
        self.multiplier = float("nan")

    def held(self, x: np.ndarray) -> np.ndarray:
        """x with q set to Q_NULL I and the pinned overlaps to zero."""
        o = dataclasses.replace(self.layout.unpack(x), q=Q_NULL * np.eye(self.layout.r))
        return self.layout.pack(o) * self.keep

    def steps(self, x: np.ndarray) -> Steps[tuple[np.ndarray, tuple]]:
        fx, aux = yield from super().steps(self.held(x))
        self.multiplier = float(np.linalg.eigvalsh(self.layout.unpack(fx).q).max()) / Q_NULL
        return self.held(fx), aux


def collapsed(layout: Layout, x: np.ndarray, branch: str) -> bool:
    """Whether a semantic (positional) iterate's theta (M) has fallen below COLLAPSED."""
    _, bM, bT, _ = layout.blocks()
    block = {"semantic": bT, "positional": bM}.get(branch_kind(branch))
    return block is not None and float(np.abs(x[block]).max()) < COLLAPSED


def defined_start(fmap: QMCMap, x: np.ndarray, layout: Layout, tries: int = 6) -> np.ndarray:
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


def mean_multiplier(fmap: QMCMap, o: ge.MatrixOverlaps) -> float:
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


def fixed_point_observables(o, h, m, alpha, p: ModelParams, lam: float) -> dict[str, float]:
    rho = p.sigma**2 * np.eye(p.teacher_rank)
    phi = ge.free_entropy(o, h, m.M, alpha=alpha, sigma=p.sigma, lam=lam, rho=rho)
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
    channel: QMCChannel,
    *,
    coarse: QMCChannel | None = None,
    solver: QMC | None = None,
) -> Solution:
    """`solve_one_steps` run alone."""
    steps = solve_one_steps(alpha, p, start, branch, channel, coarse=coarse, solver=solver)
    return run(steps, moments_many)


def solve_one_steps(
    alpha: float,
    p: ModelParams,
    start: ge.MatrixOverlaps,
    branch: str,
    channel: QMCChannel,
    *,
    coarse: QMCChannel | None = None,
    solver: QMC | None = None,
) -> Steps[Solution]:
    """Fixed point on one scrambling from `start` (first damped on `coarse` when given), by
    Anderson-accelerated damped steps with the options of `solver` (default `QMC()`'s); a
    start whose order parameter collapses (`collapsed`) is finished on the trivial manifold."""
    opts = solver if solver is not None else QMC()
    tol, damping, anderson, max_iter = opts.tol, opts.damping, opts.anderson, opts.max_iter
    variant = channel.variant
    layout = Layout(channel.r, p.K, p.teacher_rank, variant)
    keep = layout.mask(branch)
    symmetric = branch == SIMPLEX_BRANCH
    if symmetric:
        check_simplex(p)
    x = layout.pack(symmetrised(start) if symmetric else canonical(start, variant)) * keep
    fine = QMCMap(alpha, p, channel, keep, symmetric)
    kw: StageOptions = {"admissible": fine.admissible, "damping": damping, "max_iter": max_iter}
    iterations = 0
    if coarse is not None:
        # plain damped steps: Anderson started cold can land on the unstable trivial point.
        # On the coarse points first; where they do not settle, on the fine points (at L=3,
        # alpha 0.8 the positional branch is lost on 128 points for a quarter of the
        # scramblings and on 1024 points for none of 20): only they can tell a collapse.
        for stage in (coarse, channel):
            rough = QMCMap(alpha, p, stage, keep, symmetric)
            damped: StageOptions = {
                **kw,
                "damping": COARSE_DAMPING.get(branch_kind(branch), COARSE_DAMPING_DEFAULT),
            }
            begin = defined_start(rough, x, layout)
            pre = yield from iterate_checked_steps(rough, begin, tol=1e-3, **damped)
            iterations += pre.iterations
            if pre.converged:
                break
        if pre.aux is not None and fine.admissible(pre.x):
            # the coarse points' fixed point stands in for the fine points' one of the same
            # sign: hand over +theta, else the fine stage solves the y-reflected points
            x = layout.pack(oriented(layout.unpack(pre.x), pre.aux[0], variant)[0]) * keep
            if not pre.converged and collapsed(layout, x, branch):
                keep = layout.mask("trivial")
                x, fine = x * keep, QMCMap(alpha, p, channel, keep, symmetric)
    rep = yield from iterate_checked_steps(fine, x, tol=tol, anderson=anderson, **kw)
    iterations += rep.iterations
    if not rep.converged and rep.aux is not None and collapsed(layout, rep.x, branch):
        # the branch's order parameter decays geometrically to zero, which a relative
        # convergence test never accepts: finish on the trivial manifold
        keep = layout.mask("trivial")
        fine = QMCMap(alpha, p, channel, keep, symmetric)
        rep = yield from iterate_checked_steps(fine, rep.x * keep, tol=tol, anderson=anderson, **kw)
        iterations += rep.iterations
    null = rep.status == DECAYED or (branch == "trivial" and not rep.converged)
    if null:
        # q decays to zero geometrically, which a relative test never accepts (or the trivial
        # start is undefined): the null point, from V = sigma^2 / lambda (Vhat = 0)
        finish = NullMap(alpha, p, channel)
        v0 = null_start_v(p.sigma, ridge(p))
        o0 = dataclasses.replace(start_overlaps("trivial", p), V=v0 * np.eye(layout.r))
        x0 = finish.held(layout.pack(o0))
        nkw: StageOptions = {**kw, "admissible": finish.admissible}
        nrep = yield from iterate_checked_steps(finish, x0, tol=tol, anderson=anderson, **nkw)
        iterations += nrep.iterations
        null = nrep.converged and finish.multiplier < 1.0
        rep = nrep if null else rep
    if rep.aux is None or not (rep.converged or rep.unfinished):
        return Solution(None, None, {}, False, iterations, rep.residuals, rep.status)
    h, m = rep.aux
    o, h = oriented(layout.unpack(rep.x), h, variant)
    observables = fixed_point_observables(o, h, m, alpha, p, ridge(p))
    if p.mixture is not None:
        fmap = QMCMap(alpha, p, channel, layout.free_means(keep))
        fmap.floor = 0.0 if null else fmap.floor  # measured at the null point's held q too
        observables["mean_multiplier"] = mean_multiplier(fmap, o)
    if null:  # the point held at Q_NULL I stands for q = 0
        o = dataclasses.replace(o, q=np.zeros_like(o.q))
    return Solution(o, h, observables, rep.converged, iterations, rep.residuals, rep.status)


def _summary(solutions: list[Solution], mixture: Mixture | None = None) -> tuple[dict, dict]:
    keys, hat_keys = OVERLAP_KEYS, HAT_KEYS
    rows: dict[str, list] = {k: [] for k in keys + hat_keys}
    for s in solutions:
        assert s.overlaps is not None  # only solved scramblings are summarised
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


def make_channels(p: ModelParams, method: QMC) -> list[QMCChannel]:
    """`method.randomisations` independent scramblings (seeds seed, seed + 1, ...) of
    `method.points` points."""
    width = field_width(p)
    return [
        QMCChannel(
            p.L, width, p.teacher_rank, method.points, method.seed + k, p.variant, method.device
        )
        for k in range(method.randomisations)
    ]


def solve_qmc(
    alpha: float,
    p: ModelParams,
    start: ge.MatrixOverlaps | None,
    branch: str,
    method: QMC,
    *,
    channels: list[QMCChannel] | None = None,
    coarse_from: QMC | None = None,
) -> TheoryResult:
    """`solve_qmc_steps` run alone (its scramblings still batched together)."""
    steps = solve_qmc_steps(
        alpha, p, start, branch, method, channels=channels, coarse_from=coarse_from
    )
    return run(steps, moments_many)


def _scrambling_status(solutions: list[Solution], n: int) -> str:
    """Why a fixed point over n scramblings is not converged: each failure with the number of
    scramblings it ended, and those never solved (solving stops at the first failure)."""
    counts = Counter(s.status for s in solutions if s.status != "converged")
    parts = [f"{status} on {k} of {n} scramblings" for status, k in sorted(counts.items())]
    if len(solutions) < n:
        parts.append(f"{n - len(solutions)} not solved")
    return "; ".join(parts)


def solve_qmc_steps(
    alpha: float,
    p: ModelParams,
    start: ge.MatrixOverlaps | None,
    branch: str,
    method: QMC,
    *,
    channels: list[QMCChannel] | None = None,
    coarse_from: QMC | None = None,
) -> Steps[TheoryResult]:
    """One fixed point of the general state evolution at alpha, on `method.randomisations`
    independent scramblings of `method.points` Sobol points (plus antithetic images) each,
    with the method's solver options.

    start None: the branch's starting overlaps, started cold (damped iterations on points/8
    first); explicit MatrixOverlaps are solved on `branch`'s invariant manifold (`free_overlaps`;
    any other name pins nothing). The first scrambling's fixed point warm-starts the others,
    which are then solved together (`iterate.gather`: one prox call per round for all).
    `channels` (one per scrambling, built by `make_channels`) may be passed in to reuse points
    and prox warm starts along a curve. A cold start's coarse stage uses 1/8 of the points of
    `coarse_from` (default: `method`) on seed `coarse_from.seed` + 10000.
    """
    attention_map(p.variant).check(p)
    if channels is not None and any(c.variant != p.variant for c in channels):
        raise ValueError(f"channels: built for another variant than {p.variant}")
    if start is None:
        start, cold = start_overlaps(branch, p), True
    else:
        cold = False
    if channels is None:
        channels = make_channels(p, method)
    coarse = None
    if cold:
        stage = coarse_from if coarse_from is not None else method
        coarse = QMCChannel(
            p.L,
            field_width(p),
            p.teacher_rank,
            max(stage.points // COARSE_FRACTION, 64),
            stage.seed + 10_000,
            p.variant,
            method.device,
        )
    first = yield from solve_one_steps(
        alpha, p, start, branch, channels[0], coarse=coarse, solver=method
    )
    solutions = [first]
    if first.overlaps is not None:
        rest = [
            solve_one_steps(alpha, p, first.overlaps, branch, channel, solver=method)
            for channel in channels[1:]
        ]
        solutions += yield from gather(rest)
        failed = [k for k, s in enumerate(solutions) if s.overlaps is None]
        del solutions[(failed[0] + 1 if failed else len(solutions)) :]  # as solved one by one
    eps_lin, eps_lin_err = linear_test_error_qmc(p)
    ok = [s for s in solutions if s.overlaps is not None]
    converged = len(ok) == len(channels) and all(s.converged for s in solutions)
    values, errors = _summary(ok, p.mixture) if ok else ({}, {})
    status = "converged" if converged else _scrambling_status(solutions, len(channels))
    return TheoryResult(
        alpha=alpha,
        params=p,
        branch=branch,
        method=dataclasses.replace(
            method, points=channels[0].n_points // 2, randomisations=len(channels)
        ),
        values=values,
        errors=errors,
        linear_test_error=eps_lin,
        linear_test_error_err=eps_lin_err,
        converged=converged,
        iterations=sum(s.iterations for s in solutions),
        status=status,
        residuals=solutions[0].residuals,
        solutions=tuple(solutions),
    )


def qmc_curve(
    alphas: list[float],
    p: ModelParams,
    branch: str,
    method: QMC,
    *,
    progress: bool = False,
    channels: list[QMCChannel] | None = None,
) -> list[TheoryResult]:
    """Follow one branch along alpha (`branches.follow_branch`): the same points and prox warm
    starts throughout (common random numbers, so differences between alphas and branches are
    smooth; pass the same `channels` to several curves to share them across branches), each
    warm point started from the previous one's first scrambling."""
    attention_map(p.variant).check(p)
    if channels is None:
        channels = make_channels(p, method)

    def solve_point(alpha: float, done: list[TheoryResult]) -> TheoryResult:
        # warm from the previous point once the branch is found, also where it has ended
        # (its order parameter collapsed: the curve goes on at the point it fell to, instead
        # of a cold start per alpha that falls there again, ~10x slower at L=3); a cold
        # start's coarse stage uses 1/8 of the default points (QMC()), not of the curve's:
        # kept as it was, so that the curves' numbers do not move
        start = done[-1].solutions[0].overlaps if done else None
        return solve_qmc(alpha, p, start, branch, method, channels=channels, coarse_from=QMC())

    return follow_branch(alphas, branch, solve_point, progress)
