"""Newton's method of the transitions, with the local/global check of `checked_solve`."""

import numpy as np

from attnphase.transitions.newton import checked_solve, newton_broyden


class _Mode:
    local = False


class _System:
    """F(z) = z^2 - 2 (componentwise); in local mode F(z) = z^2 - 2 - shift, another root (a
    branch map whose prox follows stale minimisers)."""

    def __init__(self, shift: float):
        self.map, self.shift = _Mode(), shift
        self.branch_maps = (self.map,)
        self.modes: list[bool] = []

    def __call__(self, z):
        self.modes.append(self.map.local)
        return z * z - 2.0 - (self.shift if self.map.local else 0.0)


def test_a_root_of_the_local_residual_alone_is_solved_again_globally():
    """The local root misses the global residual's bound: the answer is sqrt(2), found in
    global mode after the local solve (a version that trusted the local root returns
    sqrt(2.01) and fails)."""
    system = _System(shift=0.01)
    rep = checked_solve(system, np.array([1.0, 1.5]))
    assert rep.converged
    np.testing.assert_allclose(rep.z, np.sqrt(2.0), rtol=1e-9)
    assert system.modes[0] and not system.modes[-1]


def test_an_exact_local_residual_costs_one_global_evaluation():
    system = _System(shift=0.0)
    rep = checked_solve(system, np.array([1.0, 1.5]))
    assert rep.converged and system.modes.count(False) == 1
    np.testing.assert_allclose(rep.z, np.sqrt(2.0), rtol=1e-9)
    assert rep.evaluations == newton_broyden(_System(0.0), np.array([1.0, 1.5])).evaluations + 1
