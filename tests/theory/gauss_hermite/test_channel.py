"""Quadrature kernel: symmetry reductions, closed-form checks, node conventions."""

import math

import numpy as np
import pytest

from attnphase import ModelParams
from attnphase.theory.gauss_hermite.channel import ChannelIntegrator

P = ModelParams()
KW = dict(rho=P.rho, sigma2=P.sigma**2, omega=P.omega, A=P.A_array)


@pytest.mark.parametrize(
    "point, swap, flip",
    [
        ((0.0819, 0.0, 17.27, 0.1217), True, False),  # semantic: m = 0
        ((0.0464, 0.2533, 14.45, 0.0), False, True),  # positional: theta = 0
        ((0.02, 0.0, 20.0, 0.0), True, True),
    ],  # trivial
)
def test_symmetry_reduced_grids_equal_the_full_grid(point, swap, flip):
    full = ChannelIntegrator(15, 7).moments(*point, **KW)
    red = ChannelIntegrator(15, 7).moments(*point, **KW, swap_symmetric=swap, flip_symmetric=flip)
    for name in ("f2", "fy", "fxi", "M_ab", "M_aa", "M", "ell_prox", "ell_free"):
        if flip and name in ("fy", "M_ab"):
            assert abs(getattr(full, name)) < 1e-15 and getattr(red, name) == 0.0
            continue
        assert getattr(red, name) == pytest.approx(getattr(full, name), rel=1e-11, abs=1e-17)
    if swap:  # the IBP m-moment is exactly antisymmetric; the direct one is not (ties)
        assert abs(full.M_a) < 1e-15 and red.M_a == 0.0 and red.sf == 0.0


def test_symmetry_flags_are_checked():
    ci = ChannelIntegrator(5, 3)
    with pytest.raises(ValueError, match="m = 0"):
        ci.moments(0.1, 0.2, 10.0, 0.0, **KW, swap_symmetric=True)
    with pytest.raises(ValueError, match="theta = 0"):
        ci.moments(0.1, 0.0, 10.0, 0.1, **KW, flip_symmetric=True)


def test_test_error_integrand_matches_monte_carlo():
    """eps_g = E[ell(w; h*)] (eq. 10) on the grid vs sampling the correlated fields directly."""
    q, m, V, theta = 0.08, 0.1, 15.0, 0.12
    e = ChannelIntegrator(40, 40).moments(q, m, V, theta, **KW)
    rng = np.random.default_rng(0)
    n = 400_000
    xi, y = rng.standard_normal((2, n, 2))
    w = math.sqrt(q) * xi + np.array([m, -m])
    hs = theta / math.sqrt(q) * xi + math.sqrt(P.rho - theta**2 / q) * y

    def soft(h):
        s = h[:, :, None] * h[:, None, :]
        s = np.exp(s - s.max(-1, keepdims=True))
        return s / s.sum(-1, keepdims=True)

    T = (1 - P.omega) * soft(hs) + P.omega * P.A_array
    loss = P.sigma**2 / 2 * np.sum((soft(w) - T) ** 2, axis=(1, 2))
    assert e.ell_free == pytest.approx(loss.mean(), abs=4 * loss.std() / math.sqrt(n))


def test_pruning_negligible_weights_changes_nothing_that_matters(monkeypatch):
    import attnphase.theory.gauss_hermite.channel as channel

    point = (0.08, 0.1, 15.0, 0.1)
    pruned_ci = ChannelIntegrator(40, 12)
    pruned = pruned_ci.moments(*point, **KW)
    monkeypatch.setattr(channel, "_PRUNE", 0.0)
    full_ci = ChannelIntegrator(40, 12)
    full = full_ci.moments(*point, **KW)
    assert pruned_ci.nodes_visited[False, False] < 0.4 * full_ci.nodes_visited[False, False]
    for name, value in full.__dict__.items():
        assert getattr(pruned, name) == pytest.approx(value, rel=1e-9, abs=1e-20), name


def test_the_local_prox_equals_the_global_one_near_the_minimisers_it_follows():
    """At (64, 24) on the semantic fixed point of alpha 1.5: after a global evaluation, the
    local mode at overlaps moved by 1e-4 relative gives the same moments as the global search
    there (no node's global minimiser jumps for so small a move; measured: at most 3e-12
    relative, Newton's gradient tolerance, so 1e-10 here), and at overlaps moved by 30% (q up,
    V down) the two differ: some nodes' global minimisers jumped (a bug that made the local
    mode run the full search would pass the first check and fail this one)."""

    p = ModelParams()
    kw = dict(rho=p.rho, sigma2=p.sigma**2, omega=p.omega, A=p.A_array, swap_symmetric=True)
    x = np.array([0.0939572, 0.0, 16.0161, 0.134694])
    near, far = x * (1 + 1e-4), x * np.array([1.3, 1.0, 0.7, 1.0])
    local, full = ChannelIntegrator(64, 24), ChannelIntegrator(64, 24)
    local.moments(*x, **kw)
    a, b = local.moments(*near, **kw, local=True), full.moments(*near, **kw)
    for name in ("f2", "M_aa", "M_ab", "M", "ell_prox"):
        assert getattr(a, name) == pytest.approx(getattr(b, name), rel=1e-10, abs=1e-15), name
    local.moments(*x, **kw)
    c, d = local.moments(*far, **kw, local=True), full.moments(*far, **kw)
    assert abs(c.M - d.M) > 1e-8 * abs(d.M)  # measured: 2.4e-6 relative
