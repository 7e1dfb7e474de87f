"""Transitions to a requested precision (`find_transitions(precision=)`): the integration is
refined until both errors meet it, or the budget ends with a warning.

Measured on the paper's model (alpha in [1, 1.8], 5 alphas, 2 scramblings): relative errors of
alpha_c and alpha_l 0.062 and 0.018 at 256 points, 0.034 and 0.019 at 512, 0.014 and 0.0044 at
1024, so a target of 0.03 needs exactly two doublings."""

from __future__ import annotations

import dataclasses
import math
from types import SimpleNamespace

import pytest

from attnphase import QMC, ModelParams, find_transitions, transitions
from attnphase.theory import precision as precision_module
from attnphase.theory.precision import PrecisionWarning
from attnphase.transitions import meets_precision
from attnphase.transitions.paths import LINES
from attnphase.transitions.table import transition_table

WINDOW = dict(alpha_min=1.0, alpha_max=1.8, num=5)


@pytest.mark.slow  # 45-68 s; the refinement loop itself is in the budget test below
def test_the_integration_is_refined_until_both_errors_meet_the_target():
    tr = find_transitions(ModelParams(), **WINDOW, method=QMC(256, 2), precision=0.03)
    assert tr.method.points == 1024
    assert tr.alpha_c_err <= 0.03 * tr.alpha_c and tr.alpha_l_err <= 0.03 * tr.alpha_l


@pytest.fixture(scope="module")
def out_of_budget():
    """A target of 0.01 with the budget capped at 512 points, from 512 points: one scan, then
    the warning (the doubling itself is the slow test's above, and the lines' below); returns
    the answer and the warnings."""
    with pytest.MonkeyPatch.context() as mp, pytest.warns(PrecisionWarning) as caught:
        mp.setattr(precision_module, "MAX_POINTS", 512)
        tr = find_transitions(ModelParams(), **WINDOW, method=QMC(512, 2), precision=0.01)
    return tr, [str(w.message) for w in caught]


def test_the_budget_ends_with_a_warning_and_the_last_answer(out_of_budget):
    tr, warned = out_of_budget
    assert any("precision 0.01 not reached: 0.034" in message for message in warned)
    assert tr.method.points == 512


def test_what_meets_a_precision(out_of_budget):
    tr, _ = out_of_budget  # the scan at 512 points: relative errors 0.034 and 0.019
    assert not meets_precision(tr, 0.03) and meets_precision(tr, 0.04)
    absent = dataclasses.replace(tr, alpha_c=math.nan, alpha_c_err=math.nan)
    assert meets_precision(absent, 0.02)  # nothing to refine where there is no transition
    unknown = dataclasses.replace(tr, alpha_l_err=math.nan)
    assert not meets_precision(unknown, 0.5)
    with pytest.raises(ValueError, match="precision must be a number in"):
        find_transitions(ModelParams(), **WINDOW, method=QMC(256, 2), precision=2.0)


def test_a_table_passes_its_precision_to_each_scan_and_names_what_answered(monkeypatch):
    """The table's part alone (each scan replaced): auto picks the scan when a precision is
    given, every value's scan gets the precision, and each row's integration columns are those
    of the method that answered, not the one the table started from."""
    calls = []

    def scan(p, **kwargs):
        calls.append((p.omega, kwargs["precision"], kwargs["method"].points))
        answered = QMC(1024 if p.omega < 0.25 else 512, 2)
        lines = {name: 1.0 for name in LINES} | {f"{name}_err": 0.01 for name in LINES}
        return SimpleNamespace(**lines, method=answered)

    monkeypatch.setattr(transitions, "find_transitions", scan)
    table = transition_table(ModelParams(), [0.2, 0.3], method=QMC(256, 2), precision=0.04)
    assert calls == [(0.2, 0.04, 256), (0.3, 0.04, 256)]
    assert list(table["points"]) == [1024, 512] and set(table["method"]) == {"scan"}


@pytest.mark.slow
def test_a_table_of_scans_refines_each_value_and_says_with_what():
    """transition_table(precision=) scans (auto picks the scan) and refines each value as
    `find_transitions` does: 512 points meet 0.04 at omega 0.3 (above), and the row's
    integration columns are those that answered, not the 256 it started from (26 s)."""
    table = transition_table(
        ModelParams(), [0.3], **WINDOW, method=QMC(256, 2), precision=0.04, workers=1
    )
    (row,) = table.to_dict("records")
    assert row["points"] == 512 and row["method"] == "scan"
    assert row["alpha_c_err"] <= 0.04 * row["alpha_c"]


def test_lines_are_followed_again_at_finer_orders_until_they_meet_it(monkeypatch, tmp_path):
    """The continuation to a precision, from order (32, 12) checked at (24, 8): relative errors
    3.4e-4 (alpha_c) and 4.9e-4 (alpha_l) there, 1.8e-4 and 3.4e-4 at (64, 24) checked at
    (32, 12) (measured), so 4e-4 takes one step of the ladder and 1e-4 more than the two
    rungs this test allows, which ends with the warning and the last rung's row. The second
    table resumes the first's points from the store."""
    from attnphase import GaussHermite

    monkeypatch.setattr(precision_module, "ORDER_LADDER", ((64, 24),))
    store = tmp_path / "lines.sqlite"
    kw = dict(approach="continuation", method=GaussHermite((32, 12), (24, 8)), workers=1)
    kw |= dict(alpha_min=1.0, alpha_max=1.8, lines=("alpha_c", "alpha_l"), store=store)
    (met,) = transition_table(ModelParams(), [0.3], precision=4e-4, **kw).to_dict("records")
    assert (met["n_xi"], met["n_y"], met["check_n_xi"]) == (64, 24, 32)
    assert met["alpha_l_err"] <= 4e-4 * met["alpha_l"] and met["method"] == "continuation"
    with pytest.warns(PrecisionWarning, match="precision 0.0001 not reached at 0.3"):
        (short,) = transition_table(ModelParams(), [0.3], precision=1e-4, **kw).to_dict("records")
    assert short["alpha_l"] == met["alpha_l"] and short["n_xi"] == 64
