"""Bad input: a clear error naming the parameter (ValueError in Python)."""

import math

import pytest

from attnphase import QMC, GaussHermite, learning_curve, solve


@pytest.mark.parametrize("alpha", [0.0, -1.0, math.nan, math.inf])
def test_bad_alpha(alpha):
    with pytest.raises(ValueError, match="^alpha"):
        solve(alpha)
    with pytest.raises(ValueError, match="^alpha"):
        learning_curve([1.0, alpha])


def test_bad_init_order_and_branch():
    with pytest.raises(ValueError, match="branch"):
        solve(1.0, branch="sideways")
    with pytest.raises(ValueError, match="start"):
        solve(1.0, start=(0.1, 0.0, math.nan, 0.0))
    with pytest.raises(ValueError, match="not admissible"):
        solve(1.0, start=(0.01, 0.0, 10.0, 0.5))  # theta^2 > q rho
    with pytest.raises(ValueError, match="order"):
        solve(1.0, method=GaussHermite((1, 8)))
    with pytest.raises(ValueError, match="branch"):
        learning_curve([1.0], branch="sideways")
    with pytest.raises(ValueError, match="estimator"):
        GaussHermite((8, 4), estimator="magic")


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: QMC(points=1000), "^points must be a power of two"),
        (lambda: QMC(points=3), "^points must be a power of two"),
        (lambda: GaussHermite((2000, 2000)), r"^order: the grid of order \(2000, 2000\) needs"),
        (lambda: GaussHermite(check_order=(400, 400)), "^check_order: the grid of order"),
        # too coarse to certify: order 2 lands on the trivial point "converged", 4 points put
        # the positional test error at alpha 2 5.6 error bars from the exact one
        (lambda: GaussHermite(order=(2, 24)), "^order must be an int >= 4"),
        (lambda: GaussHermite(check_order=3), "^check_order must be an int >= 4"),
        (lambda: QMC(points=32), "^points must be >= 64"),
        # 2 or 3 teacher nodes at omega < 1: the semantic solve lands on the trivial point
        (lambda: solve(1.0, method=GaussHermite((16, 2))), "^method: n_y = 2 teacher nodes"),
        (lambda: solve(1.0, method=GaussHermite((16, 8), (8, 3))), "^method: n_y = 3"),
    ],
)
def test_methods_refuse_unbalanced_points_and_grids_larger_than_memory(make, match):
    """A non-power-of-two Sobol sample loses its balance (scipy warns and the error estimate
    is off); a Gauss-Hermite grid of n_xi^2 n_y^2 warm starts beyond the available memory
    would fail with a MemoryError after minutes (2000^4 x 16 bytes = 233 TiB; 400^4 x 16 =
    381 GiB)."""
    with pytest.raises(ValueError, match=match):
        make()


def test_the_semantic_branch_converges_at_very_large_alpha():
    """Near its alpha -> infinity limit the semantic fixed point sits by the boundary q rho =
    theta^2 of the admissible overlaps; the chord Jacobian's difference steps crossed it and
    an internal InadmissibleStep escaped from solve at alpha >= 300. Measured at (32, 12): q
    0.20834 at 300, 0.20885 at 1e7 (+0.24%), test error 3.464e-4 and 3.460e-4 (-0.13%)."""
    far = [solve(a, branch="semantic", method=GaussHermite((32, 12)), errors=False)
           for a in (300.0, 1e7)]  # fmt: skip
    assert all(r.converged and r.kind == "semantic" for r in far)
    assert 0 < far[1].q - far[0].q < 5e-3 * far[0].q  # approaches its limit from below
    assert far[1].test_error == pytest.approx(far[0].test_error, rel=5e-3)
