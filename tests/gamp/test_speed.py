"""The shortcuts that make GAMP on data fast (docs/theory.md §8) leave its data and its fixed point
where they were: the chunked draw of `build_problem` against the simulations' draw, the prox
followed in its basin between global checks against the global prox at every iteration."""

import numpy as np
import pytest
import torch

from attnphase import ModelParams, SimConfig
from attnphase.gamp import problem as gp
from attnphase.gamp import run_gamp
from attnphase.gamp.problem import build_problem
from attnphase.sim import SeedProblem

CPU = torch.device("cpu")
P = ModelParams()


pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.mark.parametrize("d,alpha,chunk_bytes", [(200, 1.5, None), (300, 1.7, 50_000), (7, 3.0, 1)])
def test_chunked_draw_is_the_simulations_draw(monkeypatch, d, alpha, chunk_bytes):
    """Tokens drawn chunk by chunk (16 samples a chunk at the smallest) are the very numbers
    of `SeedProblem.draw`: x~, K, Cm, c, teacher and start bit for bit; the test error in
    chunks equals the simulations' to rounding (only the order of the sum differs)."""
    if chunk_bytes is not None:
        monkeypatch.setattr(gp, "CHUNK_BYTES", chunk_bytes)
    lean = build_problem(P, d, alpha, "semantic", 3, CPU, n_test=500)
    cfg = SimConfig(params=P, d=d, alpha=alpha, init="semantic", n_test=500, device="cpu")
    ref = SeedProblem.draw(cfg, 3)
    for name in ("x_pos", "K", "Cm", "c", "teacher", "Q0", "positions", "directions", "A"):
        assert torch.equal(getattr(lean, name), getattr(ref, name)), name
    Q = torch.randn(d, 1, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    assert lean.test_error(Q) == pytest.approx(ref.test_error(Q), rel=1e-12)


@pytest.mark.parametrize("seed", [0, 7])
def test_shortcuts_reach_the_global_prox_fixed_point(seed):
    """The default (in the tail: Newton from the previous minimiser's linear prediction, the
    global prox every 20 iterations, after any basin switch and before any stop; Anderson
    mixing; the one-pass back-projection) against check_every=1 (the global prox, BLAS and
    plain damped steps at every iteration, the unapproximated algorithm), d = 500, alpha 1.5.

    Seed 0 converges (175 iterations, 81 with the shortcuts). Measured: q 3.9e-8, theta 5.8e-8,
    V 6.1e-8, test error 8.7e-8 relative, m 1.7e-8 absolute (of 0.029), |Q - Q'|/|Q| 2.8e-7:
    both runs stop at a relative change <= tol = 1e-6, the bound used. Seed 7 has no exact
    fixed point (one sample switches prox minima): the same cycling status (iterations 138
    and 136), end points within the cycle's own spread, measured 1.2e-5 in |Q - Q'|/|Q| and
    at most 2.1e-5 relative in the overlaps (m), bound 1e-4."""
    exact, fast = (
        run_gamp(P, 500, 1.5, seed=seed, check_every=k, n_test=2000, device="cpu") for k in (1, 20)
    )
    assert fast.status == exact.status
    bound = 1e-6 if exact.converged else 1e-4
    for name in ("q", "theta", "V", "test_error"):
        assert getattr(fast, name) == pytest.approx(getattr(exact, name), rel=bound), name
    assert fast.m == pytest.approx(exact.m, abs=0.1 * bound, rel=bound)
    assert np.linalg.norm(fast.Q - exact.Q) / np.linalg.norm(exact.Q) < bound
    if exact.converged:
        assert fast.iterations < exact.iterations


def test_check_every_is_validated():
    with pytest.raises(ValueError, match="check_every must be an integer >= 1"):
        run_gamp(P, 50, 1.0, check_every=0)
