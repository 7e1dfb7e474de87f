"""The numba kernels' parallel loops (prange) give the same numbers on one thread and on two.

Under `make test` every xdist worker runs numba on one thread (conftest), so without this test
a race or a dependence between loop iterations would go unseen. Tolerance: 1e-12 relative, the
rounding of the same sums split into per-thread partial sums.
"""

import dataclasses

import numba
import numpy as np
import pytest

from attnphase import ModelParams
from attnphase.prox.closed_form import prox
from attnphase.theory import overlaps as ge
from attnphase.theory.gauss_hermite.channel import ChannelIntegrator
from attnphase.theory.qmc.channel import QMCChannel

P = ModelParams()
GENERAL_MOMENTS = ("ff", "Ma", "yf", "fxi", "M", "ell_prox", "ell_free")
pytestmark = pytest.mark.skipif(
    numba.config.NUMBA_NUM_THREADS < 2, reason="numba was started with one thread"
)


def on_threads(n: int, fn):
    """fn() with n numba threads; the caller's count restored."""
    before = numba.get_num_threads()
    numba.set_num_threads(n)
    try:
        return fn()
    finally:
        numba.set_num_threads(before)


def test_general_channel_global_prox_kernel():
    o = ge.MatrixOverlaps(
        q=np.array([[0.15]]), M=np.array([[0.12]]), theta=np.array([[0.1]]), V=np.array([[6.0]])
    )
    kw = dict(C=P.C_array, sigma=P.sigma, omega=P.omega, A=P.A_array)
    one, two = (
        on_threads(n, lambda: QMCChannel(P.L, 1, 1, 512, 3).moments(o, **kw)) for n in (1, 2)
    )
    for k in GENERAL_MOMENTS:
        assert np.allclose(getattr(one, k), getattr(two, k), rtol=1e-12, atol=1e-15), k


def test_l2_channel_moments_kernel():
    kw = dict(rho=P.rho, sigma2=P.sigma**2, omega=P.omega, A=P.A_array)
    one, two = (
        on_threads(n, lambda: ChannelIntegrator(24, 12).moments(0.2, 0.15, 8.0, 0.1, **kw))
        for n in (1, 2)
    )
    for k, a in dataclasses.asdict(one).items():
        assert a == pytest.approx(getattr(two, k), rel=1e-12, abs=1e-15), k


def test_l2_vectorised_prox():
    rng = np.random.default_rng(0)
    w, c = rng.normal(size=(500, 2)), rng.normal(size=(500, 2)) * 0.5
    one, two = (on_threads(n, lambda: prox(w, c, 5.0, P.sigma**2)) for n in (1, 2))
    for a, b in zip(one, two, strict=True):
        assert np.array_equal(a, b)
