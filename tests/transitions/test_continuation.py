"""Transition lines by continuation: the Newton-Broyden corrector and the line
follower on synthetic systems with closed-form lines, and the L=2 engine's lines against the
scan-and-bisect values of `studies/transitions_table.py` (slow)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnphase.transitions.continuation import follow, solve_root
from attnphase.transitions.newton import OffDomain, newton_broyden


class Synthetic:
    """F(z; s) = [x - sin(s) alpha, alpha^2 - (1 + s^2) - shift]: the line alpha(s) =
    sqrt(1 + s^2 + shift), x = sin(s) alpha; `order` (0 or 1) sets shift = 1e-6 order, so the
    reported error is the known root difference. OffDomain beyond s = s_end."""

    def __init__(self, s: float, order=(0,), s_end: float = math.inf):
        self.s, self.shift, self.s_end = s, 1e-6 * order[0], s_end
        self.evaluations = 0

    def __call__(self, z: np.ndarray) -> np.ndarray:
        self.evaluations += 1
        if self.s > self.s_end:
            raise OffDomain("past the end of the synthetic branch")
        x, a = z
        return np.array([x - math.sin(self.s) * a, a * a - (1 + self.s**2) - self.shift])

    def states(self, z: np.ndarray) -> dict:
        return {"x": z[:1]}


def exact(s: float, shift: float = 0.0) -> float:
    return math.sqrt(1 + s * s + shift)


def check(s, z, J):
    """The root at the second 'order' (shift 1e-6), re-solved from the converged point."""
    return solve_root(Synthetic(s, (1,)), z, J)


def test_newton_broyden_solves_a_nonlinear_system_to_tolerance():
    rep = newton_broyden(Synthetic(0.7, (0,)), np.array([0.0, 2.0]))
    assert rep.converged
    assert rep.z[1] == pytest.approx(exact(0.7), abs=1e-12)
    assert rep.z[0] == pytest.approx(math.sin(0.7) * exact(0.7), abs=1e-12)


def test_follow_tracks_a_closed_form_line_to_1e8_with_the_order_difference_as_error():
    s_values = np.linspace(0.0, 2.0, 9)
    z0 = np.array([0.0, 1.05])  # approximate root at s = 0
    pts = follow(Synthetic, z0, s_values, alpha_window=(0.5, 5.0), check=check)
    for pt in pts:
        assert pt.status == "converged"
        assert abs(pt.alpha - exact(pt.s)) < 1e-8
        # error = |root(order) - root(check_order)| = sqrt(1 + s^2 + 1e-6) - sqrt(1 + s^2)
        assert pt.alpha_err == pytest.approx(exact(pt.s, 1e-6) - exact(pt.s), rel=1e-3)
        assert pt.evaluations > 0
    # the carried Jacobian makes later points cheap: a few residuals per point
    assert max(pt.evaluations for pt in pts[2:]) <= 12


def test_line_ends_with_a_reason_when_alpha_leaves_the_window():
    pts = follow(
        Synthetic,
        np.array([0.0, 1.0]),
        [0.0, 0.5, 1.0, 1.5],
        alpha_window=(0.5, 1.3),
        check=check,
    )
    assert [p.status == "converged" for p in pts] == [True, True, False, False]
    assert "left the window" in pts[2].status and pts[3].status == pts[2].status
    assert math.isnan(pts[2].alpha) and math.isnan(pts[3].alpha_err)
    # predicted inside the window (1.24 < 1.3), the root beyond it is confirmed from one half
    # step (inside) and the whole step again: 23 residuals, where halving the step towards the
    # window's edge took 47
    assert pts[2].status.startswith("line ended at 1:") and pts[2].evaluations <= 30


def test_line_ends_with_a_reason_where_the_system_stops_existing():
    def make(s):
        return Synthetic(s, s_end=0.55)

    pts = follow(
        make,
        np.array([0.0, 1.0]),
        [0.0, 0.25, 0.5, 0.75, 1.0],
        alpha_window=(0.5, 5.0),
        check=check,
    )
    assert [p.status for p in pts[:3]] == ["converged"] * 3
    assert pts[3].status.startswith("line ended before")
    assert "off domain" in pts[3].status and math.isnan(pts[4].alpha)


@pytest.mark.slow
def test_l2_lines_reproduce_the_scan_values():
    """studies/transitions_table.py (scan and brentq, orders (64, 24)/(48, 16)): omega 0.3:
    alpha_c 1.2516 +- 0.0001, alpha_l 1.4920 +- 0.0002; omega 0.1: 0.7510 +- 0.0006,
    0.8924 +- 0.0001. Continued from 0.3 down to 0.1 in steps of 0.1 (the benchmark's steps
    are 0.025); agreement within the two errors + 1e-4 (the scan's values are rounded to
    1e-4 in the table). A wrong defining system or a line that jumps to another root misses
    by far more (alpha_c moves by 0.3 between these omegas)."""
    from attnphase import ModelParams
    from attnphase.transitions.lines import transition_lines

    lines = transition_lines(ModelParams(), [0.3, 0.2, 0.1], names=["alpha_c", "alpha_l"])
    ref = {
        ("alpha_c", 0.3): (1.2516, 1e-4),
        ("alpha_l", 0.3): (1.4920, 2e-4),
        ("alpha_c", 0.1): (0.7510, 6e-4),
        ("alpha_l", 0.1): (0.8924, 1e-4),
    }
    for (name, omega), (value, err) in ref.items():
        pt = next(p for p in lines[name] if p.s == omega)
        assert pt.status == "converged", (name, omega, pt.status)
        assert abs(pt.alpha - value) <= err + pt.alpha_err + 1e-4, (name, omega, pt.alpha)


@pytest.mark.slow
def test_the_semantic_branch_ends_where_the_trivial_point_loses_stability():
    """omega = 0.3: alpha(theta) on the semantic branch decreases all the way to theta -> 0, so
    the branch ends by bifurcating from the trivial fixed point. There the residual Jacobian
    dG/dx has an eigenvalue 0 (to 1e-6; it grows like theta^2, measured 1.3e-4 at theta =
    1e-3), and the branch exists 0.01 above the end and not 0.01 below (solves from the
    semantic start). The scan's bisection of the iteration (0.720, README) lies 0.0014 above:
    near the end the damped iteration contracts theta by only ~1 - 0.2 |lambda| per step."""
    import warnings

    from attnphase import GaussHermite, ModelParams, solve
    from attnphase.transitions.gauss_hermite_lines import GaussHermiteLines
    from attnphase.transitions.lines import parameter_path, transition_lines

    p = ModelParams()
    (end,) = transition_lines(p, [0.3], names=["spinodal_semantic"])["spinodal_semantic"]
    assert end.status == "converged (bifurcation, t -> 0)"
    system = GaussHermiteLines(parameter_path(p), GaussHermite()).fold("semantic", 0.3, end.t)
    eig = np.linalg.eigvals(system.state_jacobian(end.z))
    assert np.min(np.abs(eig)) < 1e-6, eig
    assert np.sort(np.abs(eig))[1] > 0.1  # one zero mode, not a singular map
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        above = solve(end.alpha + 0.01, p, branch="semantic")
        below = solve(end.alpha - 0.01, p, branch="semantic")
    assert above.kind == "semantic" and above.theta > 0.01
    assert below.kind == "trivial"
    assert abs(end.alpha - 0.720) < 0.005


class SyntheticFold:
    """alpha(t; s) = a(s) + (t - t*(s))^2 + c (t - t*(s))^3 as the root of F(z) = [z - alpha(t)]:
    a fold (minimum over t) at t ~ t*(s) = 0.1 + 0.05 s, alpha ~ a(s) = 0.7 + 0.2 s^2; with
    t* = 0 the branch ends where it bifurcates (alpha(t) = a + t^2 decreases to t -> 0)."""

    def __init__(self, s: float, t: float, c: float = 0.1, t_star=None):
        self.s, self.t, self.c = s, t, c
        self.t_star = 0.1 + 0.05 * s if t_star is None else t_star
        self.evaluations = 0

    def alpha(self, t: float) -> float:
        u = t - self.t_star
        return 0.7 + 0.2 * self.s**2 + u * u + self.c * u**3

    def __call__(self, z):
        self.evaluations += 1
        return np.array([z[0] - self.alpha(self.t)])

    def states(self, z):
        return {"x": np.array([self.t])}


def test_fold_follower_finds_the_minimum_of_alpha_t_along_s():
    from scipy.optimize import minimize_scalar

    from attnphase.transitions.folds import FoldFollower

    follower = FoldFollower(
        lambda s, t: SyntheticFold(s, t), 1.0, 0.13, np.array([1.0]), alpha_window=(0.1, 5.0)
    )
    for s in np.linspace(0.0, 1.0, 5):
        pt = follower.step(float(s))
        truth = minimize_scalar(lambda t, s=s: SyntheticFold(s, t).alpha(t), bracket=(0.05, 0.3))
        assert pt.status == "converged"
        # three samples a factor sqrt(2) apart and the vertex of their parabola: the cubic
        # term moves the vertex by ~c h^2 ~ 1e-4 in t, i.e. ~1e-8 in alpha
        assert abs(pt.alpha - truth.fun) < 1e-7
        assert abs(pt.t - truth.x) < 0.01


def test_fold_on_reports_a_bifurcation_when_alpha_decreases_to_t_zero():
    from attnphase.transitions.folds import BIFURCATION_T, fold_on

    fold = fold_on(lambda t: SyntheticFold(0.0, t, c=0.0, t_star=0.0), np.array([1.0]), 0.05, 1.0)
    assert fold.status == "converged (bifurcation, t -> 0)"
    assert fold.t == BIFURCATION_T
    assert abs(fold.z[-1] - 0.7) <= BIFURCATION_T**2 * 1.0001  # alpha(0) + t^2


def test_a_positional_fold_is_a_maximum_and_ends_outside_the_window():
    from attnphase.transitions.folds import FoldFollower

    class Upside(SyntheticFold):
        def alpha(self, t):
            return 3.0 - super().alpha(t)

    follower = FoldFollower(
        lambda s, t: Upside(s, t), -1.0, 0.1, np.array([2.0]), alpha_window=(2.2, 5.0)
    )
    pts = [follower.step(s) for s in (0.0, 0.5, 1.0, 1.5)]
    assert [p.ok for p in pts] == [True, True, False, False]  # 2.3 - 0.2 s^2 < 2.2 at s ~ 0.7
    assert abs(pts[1].alpha - (2.3 - 0.2 * 0.25)) < 1e-7
    assert "left the window" in pts[2].status and pts[3].status == pts[2].status


class FullStepFails(Synthetic):
    """The synthetic line, but the corrector fails whenever the step reaches s_bad: every half
    step towards it succeeds and the whole step never does (the corrector at omega 0.12 of the
    L=2 alpha_c line behaved so, with a Newton failure costing up to ~200 evaluations)."""

    s_bad = 1.0

    def __call__(self, z: np.ndarray) -> np.ndarray:
        if self.s >= self.s_bad:
            self.evaluations += 1
            raise OffDomain("the full step fails")
        return super().__call__(z)


def test_a_step_whose_whole_length_always_fails_ends_the_line_after_max_halvings():
    """A reset of the halving count after every successful half step retried the whole step
    forever (the gap halving each time, until floating point): the failures of one step are
    counted in all, so the line ends there with its reason, after a bounded number of tries."""
    from attnphase.transitions.continuation import MAX_HALVINGS

    pts = follow(FullStepFails, np.array([0.0, 1.0]), [0.0, 0.5, 1.0, 1.5], alpha_window=(0.5, 5))
    assert [p.status == "converged" for p in pts] == [True, True, False, False]
    assert "line ended before" in pts[2].status and "the full step fails" in pts[2].status
    # at most MAX_HALVINGS + 1 corrector runs at the full step, each ending at once off domain
    assert pts[2].evaluations < 20 * (MAX_HALVINGS + 1)


class JumpLine(Synthetic):
    """The synthetic line whose first residual component jumps by 2 x 2e-6 across zero at the
    root (no exact root), as the L=2 alpha_c system's positional q residual does at omega
    0.12: it jumps from +1.8e-6 to -3.1e-6 within 2e-8 in q of the corrector's point, where
    the global prox minimum of two mirrored quadrature nodes switches (h moves by 0.48)."""

    jump = 2e-6

    def __call__(self, z: np.ndarray) -> np.ndarray:
        f = super().__call__(z)
        f[0] += math.copysign(self.jump, f[0]) if f[0] != 0 else 0.0
        return f


def test_newton_stops_at_the_noise_floor_of_a_residual_that_jumps_across_zero():
    """A residual that jumps across zero by 2 x 2e-6 has no step below the step tolerance
    (1e-10) except by chance: without the noise-floor rule 26 of these 69 solves ran into
    'maximum iterations reached', and line points took up to 493 evaluations (halvings).
    With it every solve converges, measured: alpha within 3.3e-8 of the root of the smooth
    part (x carries the jump), at most 52 evaluations per solve and 55 per line point;
    bounds 1e-7 and 100 evaluations."""
    for s in np.linspace(0.9, 2.0, 23):
        for alpha0 in (1.2, 1.5, 2.0):
            rep = newton_broyden(JumpLine(s), np.array([0.5, alpha0]))
            assert rep.converged, (s, alpha0, rep.reason)
            assert abs(rep.z[1] - exact(s)) < 1e-7
            assert abs(rep.z[0] - math.sin(s) * rep.z[1]) < 1e-7
            assert rep.evaluations < 100

    pts = follow(JumpLine, np.array([0.0, 1.0]), [0.0, 0.5, 1.0, 1.5], alpha_window=(0.5, 5))
    assert [p.status for p in pts] == ["converged"] * 4
    assert max(abs(p.alpha - exact(p.s)) for p in pts) < 1e-7
    assert max(p.evaluations for p in pts) < 100


# the alpha_c system's unknowns (q, V, theta semantic; q, m, V positional; alpha) at omega 0.12,
# the corrector's point on the line followed from omega 0.16 through 0.14 and 0.13
# (transition_lines, default orders)
Z_ALPHA_C_012 = [
    0.06313879654332362, 21.74856280634819, 0.08610931231191123,
    0.04973776999399566, 0.19447702381096504, 20.95290225213603, 0.7849000224062508,
]  # fmt: skip


@pytest.mark.slow  # ~20 s (26 SE map evaluations at order (64, 24))
def test_the_l2_alpha_c_corrector_stops_at_the_jump_next_to_its_root_at_omega_012():
    """At omega 0.12 the positional q residual jumps across zero within 2e-8 in q of the root
    (two mirrored nodes switch global prox minimum): no root exists, and from this point the
    corrector without the noise-floor rule ran into 'maximum iterations reached' (161
    evaluations, |F| 1.8e-6; so did it from the secant predictor of omega 0.16 and 0.14, 144
    evaluations, where the rule now stops after 53). It now stops here: measured 26
    evaluations, alpha moved by < 1e-9; bounds 60 evaluations and 1e-7 (alpha_c's error at
    this order is ~1e-3)."""
    from attnphase import GaussHermite, ModelParams
    from attnphase.transitions.gauss_hermite_lines import GaussHermiteLines
    from attnphase.transitions.lines import parameter_path

    system = GaussHermiteLines(parameter_path(ModelParams()), GaussHermite()).crossing(0.12)
    z = np.array(Z_ALPHA_C_012)
    up = z.copy()
    up[3] += 2e-8
    assert system(z)[3] > 1e-6 and system(up)[3] < -1e-6  # the jump across zero
    rep = newton_broyden(system, z)
    assert rep.converged, rep.reason
    assert abs(rep.z[-1] - z[-1]) < 1e-7
    assert rep.evaluations < 60


def test_a_bifurcation_costs_three_solves_and_a_fold_below_the_ladder_is_still_found():
    """alpha(t) = 0.7 + t^2 falls down the ladder (0.05, 0.00625) to its end: three solves
    (the sqrt(2) sampling down to t = 1e-3 that this replaced took fourteen). With the
    minimum at t* = 0.004, between the ladder's last sample and the end, the end lies above
    the last sample, so the fold is bracketed and found (a bug that trusted the ladder alone
    would report alpha(0) = 0.700016)."""
    from attnphase.transitions.folds import BIFURCATION_T, fold_on

    solved: set[float] = set()

    class Recorded(SyntheticFold):
        def __call__(self, z):
            solved.add(self.t)  # the order parameters at which a system is evaluated
            return super().__call__(z)

    fold = fold_on(lambda t: Recorded(0.0, t, c=0.0, t_star=0.0), np.array([1.0]), 0.05, 1.0)
    assert fold.t == BIFURCATION_T and solved == {0.05, 0.00625, BIFURCATION_T}
    below = fold_on(lambda t: SyntheticFold(0.0, t, t_star=0.004), np.array([1.0]), 0.05, 1.0)
    assert below.status == "converged"
    assert abs(below.z[-1] - 0.7) < 1e-7 and abs(below.t - 0.004) < 1e-3


@pytest.mark.slow  # 27-33 s; the fold at omega 0.3 stays in the default suite (test_scan.py)
def test_the_omega_01_semantic_spinodal_is_where_the_branch_starts():
    """At omega 0.1 the sqrt(2) sampling of alpha(t) stopped at a false vertex of its noise,
    0.658 +- 0.10; the branch exists from 0.555 (the alpha scan: 0.560 +- 0.004). The end
    must be where the semantic start stops reaching the branch: semantic 0.01 above it,
    trivial 0.01 below."""
    import warnings

    from attnphase import ModelParams, solve
    from attnphase.transitions.lines import transition_lines

    p = ModelParams(omega=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the positional branch's scan at the start
        (end,) = transition_lines(p, [0.1], names=["spinodal_semantic"])["spinodal_semantic"]
        above = solve(end.alpha + 0.01, p, branch="semantic")
        below = solve(end.alpha - 0.01, p, branch="semantic")
    assert end.ok and end.alpha_err < 0.01
    assert above.kind == "semantic" and below.kind == "trivial"
