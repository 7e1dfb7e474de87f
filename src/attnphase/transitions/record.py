"""The result record of the transition finders (docs/theory.md §5)."""

from __future__ import annotations

from dataclasses import dataclass, fields

from ..theory.method import Method


@dataclass(frozen=True)
class Transitions:
    """alpha_c, alpha_l with error estimates, and the spinodals (NaN where not in the range).

    alpha_c is NaN when the training losses do not cross where both branches exist (e.g. the
    semantic branch is already the lower one where it appears, at its spinodal); an error is NaN
    when it cannot be estimated. Errors (`method`): Gauss-Hermite, the change of each root
    between two quadrature orders (`order`, `check_order`); QMC, the standard error of the
    roots found on `randomisations` independent scramblings of `points` points each (the
    integration error), combined with eps_lin's own integration error for alpha_l.
    The spinodals carry no error estimate. spinodal_semantic: smallest alpha where the
    semantic branch exists; spinodal_positional: largest alpha where the positional branch
    exists. Solved directly (Gauss-Hermite's default), each is the end of its branch solved by
    Newton (a fold, or the bifurcation where the branch meets the trivial fixed point). Scanned,
    it is where the fixed-point iteration still finds the branch, by bisection to 1/64 of the
    grid step (QMC: the mean over the scramblings where it lies in the window); the iteration
    loses a branch before its end, so the scan's spinodals lie inside the direct ones (omega
    0.3: 0.7203 against 0.7185; omega 0.1: 0.5766 against 0.5550 and 1.2234 against 1.2820,
    order (64, 24)), and they move with the accuracy and the grid (omega 0.3, 24-point grid on
    [0.2, 2.5]: 0.7266 at order (24, 8), 0.7219 at (32, 12), 0.7203 at (64, 24);
    `studies/transitions_table.py`).

    alpha_c_interpolated / alpha_l_interpolated: a root is a linear interpolation between grid
    points (Brent's refinement could not solve the branch inside the bracket). Its error bound
    b, the distance to the far end of its bracket, is then part of the error (Gauss-Hermite:
    err = abs(root - root_check) + 2 b + b_check; QMC: the largest b is added).
    """

    omega: float
    sigma: float
    lam: float
    alpha_c: float
    alpha_c_err: float
    alpha_l: float
    alpha_l_err: float
    alpha_c_interpolated: bool
    alpha_l_interpolated: bool
    spinodal_semantic: float
    spinodal_positional: float
    alpha_min: float
    alpha_max: float
    method: Method

    def as_dict(self) -> dict:
        """Flat record: the method's name ("gauss-hermite" or "qmc") and its settings, orders as
        n_xi, n_y, check_n_xi, check_n_y, or points, randomisations and seed."""
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "method"}
        return d | self.method.columns()
