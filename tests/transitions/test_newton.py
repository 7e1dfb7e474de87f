"""Newton's method of the transitions, with the local/global check of `checked_solve`."""

import numpy as np

from attnphase.theory.branch_maps import CachedBranchMap
from attnphase.theory.iterate import OffDomain
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


class _Reseeded(CachedBranchMap):
    """G(x) = x^2 - 2 on one free component; in local mode the prox follows the minimisers the
    last global evaluation left, stale (G shifted by 0.01) until there is one."""

    def __init__(self):
        super().__init__("semantic", np.array([True]), 0)
        self.shift = 0.01
        self.modes: list[bool] = []

    def _evaluate(self, xf, alpha):
        self.modes.append(self.local)
        if not self.local:
            self.shift = 0.0
        return xf * xf - 2.0 - (self.shift if self.local else 0.0), 0.0, 0.0


class _ReseededSystem:
    def __init__(self):
        self.map = _Reseeded()
        self.branch_maps = (self.map,)

    def __call__(self, z):
        return self.map.evaluate(z, 1.0)[0]


def test_a_local_root_missed_globally_is_solved_again_locally_from_the_global_minimisers():
    """The global check at the stale local root re-seeds the local mode; a second local solve
    then reaches sqrt(2), and its global check passes: two global evaluations, no global solve.
    A branch map that kept its cached local values after the global evaluation would find the
    stale root again and end in the (several times dearer) global solve."""
    system = _ReseededSystem()
    rep = checked_solve(system, np.array([1.0]))
    assert rep.converged
    np.testing.assert_allclose(rep.z, np.sqrt(2.0), rtol=1e-9)
    assert system.map.modes.count(False) == 2 and not system.map.modes[-1]


class _CheckOffDomain(_Reseeded):
    """The global check at the local root is off domain (the first global evaluation raises)."""

    def _evaluate(self, xf, alpha):
        if not self.local and not self.modes.count(False):
            self.modes.append(False)
            raise OffDomain("the check's overlaps are inadmissible")
        return super()._evaluate(xf, alpha)


def test_a_check_off_domain_goes_to_the_global_solve_at_once():
    """Nothing new reseeds the local mode when the check cannot be evaluated: a second local
    round would repeat the first from its cache, so the global solve follows at once."""
    system = _ReseededSystem()
    system.map = _CheckOffDomain()
    system.branch_maps = (system.map,)
    rep = checked_solve(system, np.array([1.0]))
    assert rep.converged
    np.testing.assert_allclose(rep.z, np.sqrt(2.0), rtol=1e-9)
    first_global = system.map.modes.index(False)
    assert all(not local for local in system.map.modes[first_global:])  # no local round after
