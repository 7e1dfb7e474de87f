"""The generic fixed-point iteration: damping convention, Anderson, failures."""

import numpy as np
import pytest

from attnphase.theory.iterate import InadmissibleStep, iterate


def _linear_map(x):
    A = np.array([[0.5, 0.2], [-0.1, 0.9]])
    b = np.array([1.0, 2.0])
    return A @ x + b, None


def _exact():
    A = np.array([[0.5, 0.2], [-0.1, 0.9]])
    return np.linalg.solve(np.eye(2) - A, np.array([1.0, 2.0]))


def test_damped_iteration_converges_to_the_fixed_point():
    rep = iterate(_linear_map, np.zeros(2), admissible=lambda x: True, damping=0.5, tol=1e-12)
    assert rep.converged
    np.testing.assert_allclose(rep.x, _exact(), rtol=1e-10)
    assert rep.residual <= 1e-12


def test_damping_weights_the_old_iterate():
    seen = []

    def f(x):
        seen.append(x.copy())
        return np.array([10.0]), None

    iterate(f, np.array([0.0]), admissible=lambda x: True, damping=0.8, max_iter=1)
    assert seen[1][0] == pytest.approx(0.2 * 10.0)


def test_anderson_needs_fewer_iterations():
    plain = iterate(_linear_map, np.zeros(2), admissible=lambda x: True, damping=0.5, tol=1e-10)
    fast = iterate(
        _linear_map, np.zeros(2), admissible=lambda x: True, damping=0.5, tol=1e-10, anderson=3
    )
    assert fast.converged and plain.converged
    assert fast.iterations < plain.iterations / 3
    np.testing.assert_allclose(fast.x, _exact(), rtol=1e-9)


def test_undefined_map_at_start_is_reported():
    def f(x):
        raise InadmissibleStep("lambda + sigma^2 Vhat <= 0")

    rep = iterate(f, np.ones(1), admissible=lambda x: True)
    assert not rep.converged and "undefined at the start" in rep.status


def test_backtracks_when_the_map_becomes_undefined():
    # F(x) = 2 - x/2 is undefined for x > 1.5: the damped step from 0 with mixing 1 lands on 2
    def f(x):
        if x[0] > 1.5:
            raise InadmissibleStep("out of domain")
        return np.array([2.0 - 0.5 * x[0]]), None

    rep = iterate(f, np.zeros(1), admissible=lambda x: True, damping=0.0, tol=1e-12)
    assert rep.converged
    assert rep.x[0] == pytest.approx(4.0 / 3.0)


def test_non_convergence_is_reported():
    rep = iterate(
        lambda x: (-x + 1.0, None), np.zeros(1), admissible=lambda x: True, damping=0.0, max_iter=20
    )
    assert not rep.converged and rep.status == "maximum iterations reached"


def test_bad_damping_rejected():
    with pytest.raises(ValueError, match="damping"):
        iterate(_linear_map, np.zeros(2), admissible=lambda x: True, damping=1.0)


def test_quasi_newton_steps_with_a_jacobian_converge_fast():
    A = np.array([[0.5, 0.2], [-0.1, 0.9]])
    rough = (A - np.eye(2)) * 1.1  # a 10% wrong Jacobian of g(x) = F(x) - x
    rep = iterate(_linear_map, np.zeros(2), admissible=lambda x: True, tol=1e-12, jacobian=rough)
    assert rep.converged and rep.iterations <= 8 and not rep.chord_failed
    np.testing.assert_allclose(rep.x, _exact(), rtol=1e-10)
    # Broyden's update moves the returned Jacobian towards the true one
    assert np.abs(rep.jacobian - (A - np.eye(2))).max() < np.abs(rough - (A - np.eye(2))).max()


def test_singular_jacobian_falls_back_to_damped_steps():
    rep = iterate(
        _linear_map,
        np.zeros(2),
        admissible=lambda x: True,
        damping=0.5,
        tol=1e-10,
        jacobian=np.zeros((2, 2)),
    )
    assert rep.converged and rep.chord_failed


class _TwoModes:
    """F(x) = A x + b globally; the local mode follows a stale branch whose constant is b + shift
    until a global evaluation has been made at the current branch (as a node's prox follows its
    previous minimiser until the full search moves it)."""

    def __init__(self, shift):
        self.local, self.shift, self.global_calls = False, np.asarray(shift, float), 0

    def step(self, x):
        if self.local:
            return _linear_map(x)[0] + self.shift, "local"
        self.global_calls += 1
        self.shift = 0.5 * self.shift  # the full search moves some nodes to the new minimum
        return _linear_map(x)[0], "global"


def test_checked_iteration_ends_at_the_global_maps_fixed_point():
    """A local mode with a different fixed point: every check fails until the shift is below
    tol; the answer is the global map's fixed point and the aux its global evaluation."""
    from attnphase.theory.iterate import iterate_checked

    fmap = _TwoModes([1e-3, -1e-3])
    kw = {"admissible": lambda x: True, "damping": 0.5, "tol": 1e-9, "anderson": 2}
    rep = iterate_checked(fmap, np.zeros(2), **kw)
    assert rep.converged and rep.aux == "global"
    np.testing.assert_allclose(rep.x, _exact(), rtol=1e-8)
    assert fmap.global_calls >= 2  # the first check failed (a bug accepting it fails here)


def test_checked_iteration_accepts_an_exact_local_mode_with_one_check():
    from attnphase.theory.iterate import iterate_checked

    fmap = _TwoModes([0.0, 0.0])
    kw = {"admissible": lambda x: True, "damping": 0.5, "tol": 1e-10, "anderson": 2}
    rep = iterate_checked(fmap, np.zeros(2), **kw)
    assert rep.converged and fmap.global_calls == 1 and rep.aux == "global"
    np.testing.assert_allclose(rep.x, _exact(), rtol=1e-9)


class _Jumps:
    """A global map with jumps: F(x) = 1 + a deterministic jitter of 1e-3 (a node's minimiser
    switching with every move); the local mode is smooth, F(x) = 1, so every local iteration
    converges and every global check fails (the L = 2 check order at lambda 1e-12)."""

    def __init__(self):
        self.local, self.global_calls = False, 0

    def step(self, x):
        if self.local:
            return np.ones_like(x), None
        self.global_calls += 1
        return 1.0 + 1e-3 * np.sin(1e4 * x + self.global_calls), None


def test_a_global_iteration_on_a_plateau_of_jumps_stops_when_it_stalls():
    """It ran to max_iter (300 evaluations at the check order, 30 s); it now stops once
    STALL_ITERATIONS bring no residual 10% below the least before, unconverged, saying why."""
    from attnphase.theory.iterate import CHECK_ROUNDS, STALL_ITERATIONS, iterate_checked

    fmap = _Jumps()
    kw = {"admissible": lambda x: True, "damping": 0.5, "tol": 1e-7, "max_iter": 300}
    rep = iterate_checked(fmap, np.zeros(1), **kw)
    assert not rep.converged and rep.status == "stalled" and rep.unfinished
    assert fmap.global_calls < CHECK_ROUNDS + 3 * STALL_ITERATIONS


def test_a_slow_contraction_is_not_taken_for_a_stall():
    """F(x) = 0.99 x + 0.01 (230 iterations a decade): the stall test leaves it to converge."""
    from attnphase.theory.iterate import iterate_steps, run

    steps = iterate_steps(
        lambda x: (0.99 * x + 0.01, None),
        np.zeros(1),
        admissible=lambda x: True,
        damping=0.0,
        tol=1e-6,
        max_iter=3000,
        stall=40,
    )
    rep = run(steps)
    assert rep.converged and rep.iterations > 500


class _Decaying:
    """F(x) = 1e-3 x (an order parameter decaying to zero, where no relative test converges);
    the step raises `Decayed` below 1e-8, as the exact channel does for q."""

    def __init__(self):
        self.local, self.calls = False, 0

    def step(self, x):
        from attnphase.theory.iterate import Decayed

        self.calls += 1
        if x[0] < 1e-8:
            raise Decayed(f"x = {x[0]:.3g}")
        return 1e-3 * x, None


def test_a_decayed_iterate_ends_the_checked_iteration_at_once():
    """Without the early end the iteration runs its maximum in every local round and then the
    stall window globally (over 300 steps); with it: four evaluations, status DECAYED, and the
    last evaluated point for the caller's finish."""
    from attnphase.theory.iterate import DECAYED, iterate_checked

    fmap = _Decaying()
    kw = {"admissible": lambda x: True, "damping": 0.0, "tol": 1e-7, "max_iter": 300}
    rep = iterate_checked(fmap, np.ones(1), **kw)
    assert not rep.converged and rep.status == DECAYED and not rep.unfinished
    assert fmap.calls == 4 and rep.x[0] == pytest.approx(1e-6)
