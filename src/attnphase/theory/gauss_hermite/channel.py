"""The channel expectations of the state evolution (docs/theory.md §3, §4, §6), in one compiled
pass.

For fields w_l = sqrt(q) xi_l + s_l m and h*_l = (theta/sqrt(q)) xi_l + v y_l,
v = sqrt(rho - theta^2/q), the kernel solves the global prox at every node of the product
Gauss-Hermite grid over (xi_1, xi_2, y_1, y_2) and accumulates the integrands the channel's
side of the equations needs (`hats`, the exact channel's estimators of the conjugates;
`test_error`, `train_loss_identity`; `kappa`, the teacher-only constant of ell). The
minimisers are written back so that the next iteration can warm-start from them. The prior
side and the free entropy are the matrix equations of §7.3-§7.4 (`theory.overlaps`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import prange

from ..._core.jit import njit_cached
from ..._core.quadrature import gauss_hermite
from ...ops.softmax2 import reduced_loss, softmax_diag, target_centres
from ...prox.closed_form import GTOL, MAX_NEWTON, newton_minimise, node_prox
from ..overlaps import Hats, Overlaps


@dataclass(frozen=True)
class ChannelMoments:
    """Gaussian expectations at one point (q, m, V, theta); names follow docs/theory.md §3-§6.

    M is the Moreau envelope without the teacher-only constant kappa; ell likewise.
    """

    f2: float  # E[f1^2 + f2^2]
    sf: float  # E[s1 f1 + s2 f2]
    fy: float  # E[f1 y1 + f2 y2]
    fxi: float  # E[f1 xi1 + f2 xi2]
    M_a: float  # E[M (a1 - a2)]
    M_ab: float  # E[M (a1 b1 + a2 b2 - 2 C_wh)]
    M_aa: float  # E[M (a1^2 + a2^2 - 2 C_ww)]
    M: float  # E[M]
    ell_prox: float  # E[ell(h_hat; h*)] - kappa
    ell_free: float  # E[ell(w; h*)] - kappa   (test error integrand, eq. 10)


_N_MOMENTS = 10
# Nodes whose product weight is below _PRUNE are skipped: at order (48, 16) that is 74% of the
# grid for a total skipped weight of 7e-15 (the tails of the Gaussian), an error far below the
# quadrature error itself.
_PRUNE = 1e-18
# moments that change sign under the swap (xi1, y1) <-> (xi2, y2) at m = 0, and under y -> -y
# at theta = 0: they vanish exactly when the symmetry holds (fields of ChannelMoments, in order)
_ODD_UNDER_SWAP = (1, 4)  # sf, M_a
_ODD_UNDER_FLIP = (2, 5)  # fy, M_ab


@njit_cached(parallel=True)
def _moments_kernel(
    xi,
    wxi,
    xpairs,
    xmult,
    y,
    wy,
    ypairs,
    ymult,
    ycount,
    q,
    m,
    V,
    theta,
    rho,
    sigma2,
    omega,
    A,
    warm,
    use_warm,
    search,
):
    """Partial sums of the integrands, one row per (xi_1, xi_2) pair (summed by the caller in a
    fixed order, so results do not depend on the number of threads). Node pairs carry a
    multiplicity (1, or 2 for a pair standing for its mirror image under a symmetry); row k
    visits the first ycount[k] y pairs (sorted by decreasing weight, see `_PRUNE`). search
    False (with warm starts): the prox is the local minimiser reached from the warm start alone
    (`ChannelIntegrator.moments`, local)."""
    sq = math.sqrt(q)
    v = math.sqrt(rho - theta * theta / q)
    c_ww = rho / (q * v * v)
    c_wh = -theta / (q * v * v)
    a11, a12, a21, a22 = A[0], A[1], A[2], A[3]
    part = np.zeros((xpairs.shape[0], _N_MOMENTS))
    for k in prange(xpairs.shape[0]):
        x1 = xi[xpairs[k, 0]]
        x2 = xi[xpairs[k, 1]]
        wx = wxi[xpairs[k, 0]] * wxi[xpairs[k, 1]] * xmult[k]
        w1 = sq * x1 + m
        w2 = sq * x2 - m
        sw1, sw2 = softmax_diag(w1, w2)
        acc = part[k]
        for j in range(ycount[k]):
            y1 = y[ypairs[j, 0]]
            y2 = y[ypairs[j, 1]]
            wt = wx * wy[ypairs[j, 0]] * wy[ypairs[j, 1]] * ymult[j]
            hs1 = theta / sq * x1 + v * y1
            hs2 = theta / sq * x2 + v * y2
            c1, c2 = target_centres(hs1, hs2, omega, a11, a12, a21, a22)
            u1, u2 = warm[k, j, 0], warm[k, j, 1]
            if search or not use_warm:
                h1, h2, env = node_prox(
                    w1, w2, V, c1, c2, sigma2, u1, u2, use_warm, GTOL, MAX_NEWTON
                )
            else:
                h1, h2, env = newton_minimise(u1, u2, w1, w2, V, c1, c2, sigma2, GTOL, MAX_NEWTON)
            warm[k, j, 0] = h1
            warm[k, j, 1] = h2
            g1 = (h1 - w1) / V
            g2 = (h2 - w2) / V
            al1 = x1 / sq - theta * y1 / (q * v)
            al2 = x2 / sq - theta * y2 / (q * v)
            b1 = y1 / v
            b2 = y2 / v
            acc[0] += wt * (g1 * g1 + g2 * g2)
            acc[1] += wt * (g1 - g2)
            acc[2] += wt * (g1 * y1 + g2 * y2)
            acc[3] += wt * (g1 * x1 + g2 * x2)
            acc[4] += wt * env * (al1 - al2)
            acc[5] += wt * env * (al1 * b1 + al2 * b2 - 2.0 * c_wh)
            acc[6] += wt * env * (al1 * al1 + al2 * al2 - 2.0 * c_ww)
            acc[7] += wt * env
            acc[8] += wt * reduced_loss(h1, h2, c1, c2, sigma2)
            acc[9] += wt * sigma2 * ((sw1 - c1) ** 2 + (sw2 - c2) ** 2)
    return part


def _index_pairs(n: int, mirror) -> tuple[np.ndarray, np.ndarray]:
    """All pairs (i1, i2) of n nodes, or one representative per orbit of the involution
    `mirror` on pairs, with multiplicity 2 for orbits of two pairs."""
    pairs = [(i1, i2) for i1 in range(n) for i2 in range(n)]
    if mirror is None:
        return np.array(pairs, dtype=np.int64), np.ones(len(pairs))
    keep, mult = [], []
    for pr in pairs:
        img = mirror(pr, n)
        if pr <= img:
            keep.append(pr)
            mult.append(1.0 if pr == img else 2.0)
    return np.array(keep, dtype=np.int64), np.array(mult)


def _swap(pr, n):
    return pr[1], pr[0]


def _flip(pr, n):
    return n - 1 - pr[0], n - 1 - pr[1]


class ChannelIntegrator:
    """Product-grid expectations with a per-node warm start for the prox.

    n_xi, n_y are the Gauss-Hermite orders in the student (xi) and teacher (y) directions; the
    grid has n_xi^2 n_y^2 nodes, less those of weight below _PRUNE. With `swap_symmetric`
    (m = 0 and A swap-symmetric) only one node of each pair mirrored by (xi1, y1) <-> (xi2, y2)
    is visited; with `flip_symmetric`
    (theta = 0) likewise for y -> -y. The moments odd under a used symmetry are exactly zero.
    """

    def __init__(self, n_xi: int, n_y: int):
        self.n_xi = int(n_xi)
        self.n_y = int(n_y)
        self.xi, self.wxi = gauss_hermite(self.n_xi)
        self.y, self.wy = gauss_hermite(self.n_y)
        self._grids: dict[tuple[bool, bool], tuple] = {}
        self._has_warm: set[tuple[bool, bool]] = set()

    def reset(self) -> None:
        """Forget the warm starts (e.g. after a jump to a far-away point)."""
        self._has_warm.clear()

    def _grid(self, swap: bool, flip: bool) -> tuple:
        key = (swap, flip)
        if key not in self._grids:
            # the swap maps (i1, i2, j1, j2) to (i2, i1, j2, j1): keeping xi pairs i1 <= i2 with
            # all y pairs visits one node of each mirrored pair (diagonal pairs in full); the
            # flip acts on y alone, so both reductions compose
            xp, xm = _index_pairs(self.n_xi, _swap if swap else None)
            yp, ym = _index_pairs(self.n_y, _flip if flip else None)
            wxp = self.wxi[xp[:, 0]] * self.wxi[xp[:, 1]]
            wyp = self.wy[yp[:, 0]] * self.wy[yp[:, 1]]
            # prune nodes of weight < _PRUNE: y pairs by decreasing weight, a count per row
            yorder = np.argsort(-wyp, kind="stable")
            yp, ym, wyp = yp[yorder], ym[yorder], wyp[yorder]
            count = np.searchsorted(-wyp, -_PRUNE / wxp, side="right")
            # drop empty rows; order rows so that the threads' contiguous chunks balance
            rows = np.flatnonzero(count > 0)
            rows = rows[np.argsort(-count[rows], kind="stable")]
            rows = np.concatenate([rows[0::2], rows[1::2]])
            xp, xm, count = xp[rows], xm[rows], count[rows].astype(np.int64)
            warm = np.zeros((xp.shape[0], yp.shape[0], 2))
            self._grids[key] = (xp, xm, yp, ym, count, warm)
        return self._grids[key]

    @property
    def nodes_visited(self) -> dict[tuple[bool, bool], int]:
        """Nodes actually visited per symmetry setting (after reduction and pruning)."""
        return {key: int(grid[4].sum()) for key, grid in self._grids.items()}

    def moments(
        self,
        q: float,
        m: float,
        V: float,
        theta: float,
        *,
        rho: float,
        sigma2: float,
        omega: float,
        A: np.ndarray,
        swap_symmetric: bool = False,
        flip_symmetric: bool = False,
        local: bool = False,
    ) -> ChannelMoments:
        """All channel expectations at the overlaps (q, m, V, theta).

        The symmetry flags are the caller's promise that m = 0 with a swap-symmetric A
        (swap_symmetric) or theta = 0 (flip_symmetric); they halve the grid each. local: once
        warm starts exist, each node's prox is the minimiser Newton reaches from its warm
        start, without the global search over the analytic starts (several times cheaper;
        exact as long as no node's global minimiser has jumped to another local minimum, which
        the caller checks with a global evaluation, see `theory.gauss_hermite.engine`).
        """
        if swap_symmetric and m != 0.0:
            raise ValueError(f"swap symmetry needs m = 0, got m={m}")
        if flip_symmetric and theta != 0.0:
            raise ValueError(f"flip symmetry needs theta = 0, got theta={theta}")
        key = (swap_symmetric, flip_symmetric)
        xp, xm, yp, ym, count, warm = self._grid(*key)
        out = _moments_kernel(
            self.xi,
            self.wxi,
            xp,
            xm,
            self.y,
            self.wy,
            yp,
            ym,
            count,
            float(q),
            float(m),
            float(V),
            float(theta),
            float(rho),
            float(sigma2),
            float(omega),
            np.ascontiguousarray(A, dtype=np.float64).ravel(),
            warm,
            key in self._has_warm,
            not local,
        )
        self._has_warm.add(key)
        total = out.sum(axis=0)
        odd = (_ODD_UNDER_SWAP if swap_symmetric else ()) + (
            _ODD_UNDER_FLIP if flip_symmetric else ()
        )
        total[list(odd)] = 0.0
        return ChannelMoments(*(float(x) for x in total))


def teacher_spread(q: float, theta: float, rho: float) -> float:
    """v = sqrt(rho - theta^2/q), the teacher's field noise (docs/theory.md §2)."""
    return math.sqrt(rho - theta * theta / q)


def hats(
    e: ChannelMoments, o: Overlaps, *, alpha: float, rho: float, estimator: str = "ibp"
) -> Hats:
    """Conjugate variables from the channel expectations (docs/theory.md §3 and §6).

    estimator="ibp" uses the integration-by-parts forms (§6), "direct" the forms of §3.
    """
    v = teacher_spread(o.q, o.theta, rho)
    qhat = alpha * e.f2  # qhat = alpha E[f1^2 + f2^2]
    if estimator == "ibp":
        mhat = -alpha * e.M_a  # mhat = -alpha E[M (a1 - a2)]
        thetahat = -alpha * e.M_ab  # thetahat = -alpha E[M (a1 b1 + a2 b2 - 2 C_wh)]
        Vhat = alpha * e.M_aa  # Vhat = alpha E[M (a1^2 + a2^2 - 2 C_ww)]
    elif estimator == "direct":
        mhat = alpha * e.sf  # mhat = alpha E[s1 f1 + s2 f2]
        thetahat = alpha * e.fy / v  # thetahat = alpha E[f1 y1 + f2 y2] / v
        # Vhat = -alpha E[f1 xi1 + f2 xi2]/sqrt(q) + theta thetahat/q
        Vhat = -alpha * e.fxi / math.sqrt(o.q) + o.theta * thetahat / o.q
    else:
        raise ValueError(f"estimator must be 'ibp' or 'direct', got {estimator!r}")
    return Hats(qhat=qhat, mhat=mhat, Vhat=Vhat, thetahat=thetahat)


def kappa(*, sigma: float, omega: float, A) -> float:
    """Teacher-only constant of ell: sigma^2/4 sum_k (1 - T_k1 - T_k2)^2, rows of omega A."""
    r1 = omega * (1.0 - A[0][0] - A[0][1])
    r2 = omega * (1.0 - A[1][0] - A[1][1])
    return sigma**2 / 4.0 * (r1 * r1 + r2 * r2)


def train_loss_identity(
    o: Overlaps, e: ChannelMoments, *, alpha: float, sigma: float, lam: float, kappa_: float
) -> float:
    """alpha E[ell(h_hat; h*)] + lambda q/(2 sigma^2), equal to -Phi at a fixed point (§4)."""
    return alpha * (e.ell_prox + kappa_) + lam * o.q / (2.0 * sigma**2)


def test_error(e: ChannelMoments, *, kappa_: float) -> float:
    """eps_g = mse/2 = E[ell(w; h*)] at the un-proxed fields (eq. 10, docs/theory.md §4)."""
    return e.ell_free + kappa_
