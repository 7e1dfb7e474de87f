"""The leading finite-d correction the state evolution leaves out: the positional part of the
student's output (docs/theory.md §1 and §7; measured in studies/general_vs_sim.py).

The student outputs f = S(h)(x + P), P = C U^T (rows p_l = sum_k C_lk u_k, eq. 2/15), while the
teacher outputs y = T x (eq. 1/16). Per sample, with z_jk = x_j . u_k ~ N(0, sigma^2),

    ||y - f||_F^2/(2d) = ||(T - S) x||_F^2/(2d)
                         + [||S C||_F^2 - 2 sum_ljk (T - S)_lj (S C)_lk z_jk]/(2d).

The theory's eps_g and -Phi (§7.4) are the d -> infinity limit of the first part; the bracket is
O(1), so it adds O(1/d) to eps_g (eq. 4) and, summed over the n = alpha d samples, O(1/d) to
R(Q)/d (eq. 3). It is not negligible against seed-averaged simulations: at L = 3 on the semantic
branch it is ~5% of eps_g at d = 1000 and ~2.6% at d = 300
(tests/validation/test_general_vs_sim.py). Other O(1/d) effects (finite-d fluctuations of the
overlaps) are not included.
"""

from __future__ import annotations

import numpy as np

from ...ops.array import attention, sym_sqrt, target
from ...params import check_int
from ..overlaps import MatrixOverlaps, teacher_covariance
from ..result import TheoryResult
from .channel import QMCChannel


def positional_output_correction(
    result: TheoryResult, d: int, *, points: int = 2**15, seed: int = 123
) -> dict[str, float]:
    """The finite-d excess of eps_g and of the training loss R/d at dimension d over the
    theory's values at the fixed point `result` (module docstring), keyed like the
    observables ("test_error", "train_loss"):

        test_error:  1/(2d) E[||S C||^2 - 2 sum (T - S)_lj (S C)_lk z_jk] at S = S(w),
        train_loss:  alpha/(2d) E[...] at S = S(h_hat) (the resolvent; first order in 1/d),

    with the fields w, h* of §7.1 at the mean overlaps of `result`, evaluated on `points`
    scrambled-Sobol points (+ antithetic images) of scrambling `seed`. z_l in R^K is jointly
    Gaussian with the fields: Cov(q^{1/2} xi_l, z_l) = sigma^2 M^T, Cov(h*_l, z_l) = 0,
    Var z_lk = sigma^2."""
    d = check_int("d", d)
    p, alpha = result.params, result.alpha
    v = result.values
    o = MatrixOverlaps(q=v["q"], M=v["M"], theta=v["theta"], V=v["V"])
    s2, C, A = p.sigma**2, p.C_array, p.A_array
    ch = QMCChannel(p.L, p.rank, p.teacher_rank, points, seed)
    w, hstar = ch.fields(o, C, p.sigma)
    a = s2 * sym_sqrt(o.q, -0.5) @ o.M.T  # Cov(xi, z): r x K
    gamma = teacher_covariance(o, s2 * np.eye(p.teacher_rank))
    b = -sym_sqrt(gamma, -0.5) @ o.theta @ sym_sqrt(o.q, -0.5) @ a  # Cov(y, z): t x K
    resid = s2 * np.eye(p.K) - a.T @ a - b.T @ b
    eps = np.random.default_rng(seed).standard_normal((w.shape[0], p.L, p.K))
    z = ch.xi @ a + ch.y @ b + eps @ np.linalg.cholesky(resid).T
    T = target(hstar, p.omega, A)
    h_hat = ch.resolvent(o, C=C, sigma=p.sigma, omega=p.omega, A=A)

    def term(S: np.ndarray) -> float:
        SC = S @ C
        cross = np.einsum("nlj,nlk,njk->n", T - S, SC, z)
        return float(0.5 * ((SC**2).sum((1, 2)) - 2 * cross).mean())

    return {
        "test_error": term(attention(w)) / d,
        "train_loss": alpha * term(attention(h_hat)) / d,
    }
