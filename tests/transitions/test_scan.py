"""Transition finder (docs/theory.md §5): synthetic crossings and the paper's setting. The
general engine's transitions against the L=2 engine's are in
tests/validation/test_qmc_vs_gauss_hermite.py."""

import math

import numpy as np
import pytest
from typer.testing import CliRunner

from attnphase import GaussHermite, ModelParams, TheoryResult, find_transitions, transitions
from attnphase.cli import app
from attnphase.theory import replicas
from attnphase.transitions import bracket_sign_changes, refine_or_interpolate, refine_root


def test_crossing_of_two_synthetic_branches_is_recovered():
    """Two smooth 'training loss' branches crossing at alpha = 1.2345 by construction."""

    def branch_a(a):
        return 0.002 * a + 0.0001 * np.sin(a)

    def branch_b(a):
        return 0.002 * a + 0.0001 * np.sin(a) + 3e-5 * (1.2345 - a) * (1 + a**2)

    alphas = np.linspace(0.3, 2.5, 12)
    gaps = [branch_a(a) - branch_b(a) for a in alphas]
    ((i, j),) = bracket_sign_changes(alphas, gaps)
    root = refine_root(lambda a: branch_a(a) - branch_b(a), alphas[i], alphas[j], xtol=1e-8)
    assert root == pytest.approx(1.2345, abs=1e-7)


def test_sign_change_brackets_skip_missing_points():
    assert bracket_sign_changes([0, 1, 2, 3], [1.0, math.nan, -1.0, -2.0]) == []
    assert bracket_sign_changes([0, 1, 2, 3], [1.0, 0.5, -1.0, 2.0]) == [(1, 2), (2, 3)]


# the paper's model on a window holding both transitions and the semantic spinodal
PAPER_WINDOW = dict(alpha_min=0.6, alpha_max=2.0, num=8, method=GaussHermite((32, 12), (24, 8)))


@pytest.fixture(scope="module")
def paper_transitions():
    return find_transitions(ModelParams(), **PAPER_WINDOW, approach="scan")


def test_paper_setting_matches_theory_md_within_the_reported_error(paper_transitions):
    """docs/theory.md §5: alpha_c ~ 1.24 and alpha_l ~ 1.45 from a coarse quadrature, alpha_l
    shifting
    up by ~0.04 when converged; a converged solver differs by a few per cent."""
    t = paper_transitions
    assert t.alpha_c_err < 0.01 and t.alpha_l_err < 0.01
    assert not t.alpha_c_interpolated and not t.alpha_l_interpolated  # Brent-refined roots
    assert abs(t.alpha_c - 1.24) <= 0.03 * 1.24 + t.alpha_c_err
    assert abs(t.alpha_l - (1.45 + 0.04)) <= 0.02 + t.alpha_l_err
    assert t.alpha_c < t.alpha_l  # attention beats the baseline only after the switch


def test_semantic_spinodal_lies_below_alpha_c(paper_transitions):
    t = paper_transitions
    assert 0.65 < t.spinodal_semantic < 0.85
    assert math.isnan(t.spinodal_positional)  # the positional branch extends over the range


def test_the_direct_solve_finds_the_scans_roots(paper_transitions):
    """The same model, window and orders solved directly (one coarse scan, then Newton on each
    transition's defining system) against the scan (curves, then Brent between grid points):
    measured differences 2.9e-7 (alpha_c) and 1.8e-8 (alpha_l), errors equal to 4e-5 of
    themselves, the semantic spinodal 8e-5 from the scan's, whose bisection resolves a 64th of
    the grid step (0.0031). Tolerances 1e-5 on the roots and 1% on their errors: a root solved
    at the check order, or on the wrong branch, moves by the error itself (4e-4)."""
    scan = paper_transitions
    direct = find_transitions(ModelParams(), **PAPER_WINDOW, approach="direct")
    for name in ("alpha_c", "alpha_l"):
        assert abs(getattr(direct, name) - getattr(scan, name)) < 1e-5, name
        assert getattr(direct, f"{name}_err") == pytest.approx(getattr(scan, f"{name}_err"), 0.01)
    assert abs(direct.spinodal_semantic - scan.spinodal_semantic) < 0.2 / 64
    assert math.isnan(direct.spinodal_positional)
    assert direct.method == scan.method


def test_transition_cli_json_keys_and_bad_input():
    runner = CliRunner()
    res = runner.invoke(app, ["transition", "--omega", "1.5"])
    assert res.exit_code == 2 and "--omega" in res.output
    res = runner.invoke(app, ["transition", "--alpha-min", "2", "--alpha-max", "1"])
    assert res.exit_code == 2 and "--alpha-min" in res.output


def test_refinement_falls_back_to_interpolation_where_the_branch_cannot_be_solved():
    def gap(a):
        return math.nan if 0.9 < a < 1.1 else a - 1.0

    root, bound = refine_or_interpolate(gap, 0.5, 2.0, -0.5, 1.0)
    assert root == pytest.approx(1.0) and bound == pytest.approx(1.0)  # root in [0.5, 2.0]
    root, bound = refine_or_interpolate(lambda a: a - 1.0, 0.5, 2.0, -0.5, 1.0)
    assert root == pytest.approx(1.0, abs=1e-4) and bound == 0.0


# Synthetic branches on the grid linspace(0.6, 2.0, 8) (step 0.2): the training losses cross at
# ROOT_C[order] (gap -1e-3 (alpha^2 - root^2), so linear interpolation between 1.2 and 1.4 misses
# it), the semantic test error crosses eps_lin = 0.005 at ROOT_L[order].
ORDERS = ((32, 12), (24, 8))
ROOT_C = {(32, 12): 1.3, (24, 8): 1.31}
ROOT_L = {(32, 12): 1.7, (24, 8): 1.69}
EPS_LIN = 0.005


def _synthetic(alpha: float, branch: str, order, converged: bool = True) -> TheoryResult:
    pos_loss = 0.01 * alpha
    if branch == "semantic":
        train = pos_loss - 1e-3 * (alpha**2 - ROOT_C[order] ** 2)
        test = EPS_LIN + 1e-2 * (ROOT_L[order] ** 2 - alpha**2)
    else:
        train, test = pos_loss, 2 * EPS_LIN
    nan = math.nan
    sem = branch == "semantic"
    values = dict(
        q=0.1 if converged else nan, M=(0.0 if sem else 0.2) if converged else nan, V=10.0,
        theta=(0.1 if sem else 0.0) if converged else nan, qhat=nan, Mhat=nan, Vhat=nan,
        thetahat=nan, test_error=test if converged else nan,
        train_loss=train if converged else nan,
    )  # fmt: skip
    return TheoryResult(
        alpha=alpha, params=ModelParams(omega=0.3, sigma=0.5, lam=0.01), branch=branch,
        method=GaussHermite(order), values={k: np.array([[v]]) for k, v in values.items()},
        errors={}, linear_test_error=EPS_LIN, linear_test_error_err=nan,
        converged=converged, iterations=1, residuals=(0.0,),
        status="converged" if converged else "left the branch",
    )  # fmt: skip


@pytest.mark.parametrize("branch_solvable_inside_brackets", [True, False])
def test_interpolated_roots_are_flagged_and_their_error_counted(
    monkeypatch, branch_solvable_inside_brackets
):
    """find_transitions on synthetic branches (learning_curve, solve and the baseline replaced
    in the replicas' module): when the
    re-solves inside the brackets succeed, Brent finds the exact roots and nothing is flagged;
    when they leave the branch, each root is the linear interpolation x of its bracket (lo, hi),
    flagged, and its error is |x - x_check| + 2 b + b_check with b = max(x - lo, hi - x)."""
    grid = np.linspace(0.6, 2.0, 8)

    def curve(alphas, p, *, branch, method, errors=True):
        return [_synthetic(a, branch, method.order) for a in alphas]

    def resolve(alpha, p, *, start, method, branch, errors=True):
        on_grid = np.isclose(alpha, grid, rtol=0, atol=1e-12).any()
        return _synthetic(alpha, branch, method.order, branch_solvable_inside_brackets or on_grid)

    monkeypatch.setattr(replicas, "learning_curve", curve)
    monkeypatch.setattr(replicas, "solve", resolve)
    monkeypatch.setattr(replicas, "linear_test_error", lambda p: EPS_LIN)
    t = find_transitions(
        alpha_min=0.6,
        alpha_max=2.0,
        num=8,
        method=GaussHermite(ORDERS[0], ORDERS[1]),
        approach="scan",
    )
    if branch_solvable_inside_brackets:
        assert t.alpha_c == pytest.approx(1.3, abs=1e-4) and t.alpha_l == pytest.approx(
            1.7, abs=1e-4
        )
        assert t.alpha_c_err == pytest.approx(0.01, abs=2e-4)
        assert t.alpha_l_err == pytest.approx(0.01, abs=2e-4)
        assert not t.alpha_c_interpolated and not t.alpha_l_interpolated
        return

    def interpolation(lo, hi, f):
        x = lo - f(lo) * (hi - lo) / (f(hi) - f(lo))
        return x, max(x - lo, hi - x)

    for name, bracket, fn in (
        ("alpha_c", (1.2, 1.4), lambda o: lambda a: a**2 - ROOT_C[o] ** 2),
        ("alpha_l", (1.6, 1.8), lambda o: lambda a: ROOT_L[o] ** 2 - a**2),
    ):
        (x, b), (x2, b2) = (interpolation(*bracket, fn(o)) for o in ORDERS)
        assert b > 0.08 and abs(x - (ROOT_C if name == "alpha_c" else ROOT_L)[ORDERS[0]]) > 1e-3
        assert getattr(t, name) == pytest.approx(x, abs=1e-12)
        assert getattr(t, f"{name}_err") == pytest.approx(abs(x - x2) + 2 * b + b2, abs=1e-12)
        assert getattr(t, f"{name}_interpolated")
    assert t.as_dict()["alpha_c_interpolated"] is True


def test_transition_cli_engine_options_are_checked_before_any_work(monkeypatch):
    def unreachable(*args, **kwargs):
        raise AssertionError("find_transitions reached")

    monkeypatch.setattr(transitions, "find_transitions", unreachable)
    runner = CliRunner()
    for args, name in (
        (["--engine", "gauss-hermite", "--A", "0.6,0.2,0.2,0.2,0.6,0.2,0.2,0.2,0.6"], "--engine"),
        (["--engine", "foo"], "--engine"),
        (["--engine", "qmc", "--points", "1"], "--points"),
        (["--rank", "0"], "--rank"),
        (["--encoding", "1,0,-1"], "--encoding"),
    ):
        res = runner.invoke(app, ["transition", *args])
        assert res.exit_code == 2 and name in res.output, (args, res.output)
        assert len(res.output.strip().splitlines()) == 1


def test_qmc_branch_ends_are_averaged_over_the_scramblings_that_find_them():
    """A record took the first scrambling's ends: here 1.0 for the positional end, where the
    mean over the two scramblings that find it is 1.1 (the third ends beyond the window)."""
    import math

    from attnphase import ModelParams
    from attnphase.transitions.scan import _record

    class Ends:
        def __init__(self, end):
            self.end = end

        def spinodal(self, lower):
            return self.end

    replicas = [{"semantic": Ends(0.7), "positional": Ends(end)} for end in (1.0, 1.2, math.nan)]
    rec = _record(
        ModelParams(),
        [0.1, 16.0],
        replicas,
        alpha_c=1.0,
        alpha_c_err=0.0,
        alpha_l=1.0,
        alpha_l_err=0.0,
        alpha_c_interpolated=False,
        alpha_l_interpolated=False,
        method=None,
    )
    assert rec.spinodal_positional == pytest.approx(1.1)
    assert rec.spinodal_semantic == pytest.approx(0.7)
