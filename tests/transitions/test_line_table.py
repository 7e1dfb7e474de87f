"""Transition lines through a sweep store: resume without recomputation, a failed
segment keeps the finished points, the start scan is stored, and the table's columns; the
lines themselves are the synthetic closed-form ones of test_continuation (patched in for the
L=2 systems, serial backend), so that only the bookkeeping is under test here."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnphase import ModelParams
from attnphase.sweep import StoreError
from attnphase.transitions import line_table
from attnphase.transitions.continuation import LineFollower
from tests.transitions.test_continuation import Synthetic, exact


class Counter:
    scans = 0
    evaluations = 0
    fail_at: float | None = None


@pytest.fixture
def synthetic(monkeypatch):
    """alpha_c and alpha_l follow the closed-form line alpha(s) = sqrt(1 + s^2); both spinodal
    lines have no start; every residual evaluation and every scan is counted."""
    Counter.scans, Counter.evaluations, Counter.fail_at = 0, 0, None

    def starts(lines, s, alpha_min, alpha_max):
        Counter.scans += 1
        z0 = np.array([math.sin(s) * exact(s), exact(s) + 0.01])
        return {
            "alpha_c": (z0,),
            "alpha_l": (z0,),
            "spinodal_semantic": "synthetic: no semantic end",
            "spinodal_positional": "synthetic: no positional end",
        }

    class Counted(Synthetic):
        def __call__(self, z):
            if Counter.fail_at is not None and self.s == Counter.fail_at:
                raise RuntimeError("injected failure")
            Counter.evaluations += 1
            return super().__call__(z)

    def follower(name, lines, start, window):
        f = LineFollower(Counted, None if start is None else start[0], alpha_window=window)
        if isinstance(start, str):
            f.ended = start
        return f

    monkeypatch.setattr(line_table, "line_starts", starts)
    monkeypatch.setattr(line_table, "line_follower", follower)


def table(values, store):
    return line_table.stored_lines(
        ModelParams(), values, store=store, backend="serial", workers=1, alpha_max=5.0
    )


def test_lines_are_followed_and_a_rerun_computes_nothing(synthetic, tmp_path):
    store = tmp_path / "lines.sqlite"
    df = table([0.1, 0.3, 0.5], store)
    assert list(df["omega"]) == [0.1, 0.3, 0.5]
    for name in ("alpha_c", "alpha_l"):
        assert np.allclose(df[name], [exact(s) for s in df["omega"]], atol=1e-8)
        assert (df[f"{name}_status"] == "converged").all()
    assert df["spinodal_semantic_status"].eq("synthetic: no semantic end").all()
    assert np.isnan(df["spinodal_positional"]).all()
    # the start scan at 0.3, then both ends, looking for the spinodal lines' starts
    assert Counter.scans == 3 and Counter.evaluations > 0
    Counter.scans, Counter.evaluations = 0, 0
    again = table([0.1, 0.3, 0.5], store)
    assert Counter.scans == 0 and Counter.evaluations == 0  # scan and points from the store
    assert again[["alpha_c", "alpha_l"]].equals(df[["alpha_c", "alpha_l"]])


def test_a_longer_range_computes_only_the_new_values(synthetic, tmp_path):
    store = tmp_path / "lines.sqlite"
    table([0.1, 0.3, 0.5], store)
    Counter.evaluations = 0
    df = table([0.1, 0.3, 0.5, 0.7], store)
    # one new point per line, warm from the stored ones: a few residuals each
    assert 0 < Counter.evaluations <= 2 * 12
    assert abs(df["alpha_c"].iloc[-1] - exact(0.7)) < 1e-8


def test_a_failing_segment_keeps_its_finished_points_and_a_rerun_completes(synthetic, tmp_path):
    store = tmp_path / "lines.sqlite"
    Counter.fail_at = 0.5
    with pytest.raises(StoreError, match="injected failure"):
        table([0.1, 0.3, 0.5], store)
    Counter.fail_at, Counter.evaluations, Counter.scans = None, 0, 0
    df = table([0.1, 0.3, 0.5], store)
    assert Counter.scans == 0  # the scan was stored by the failed run
    assert np.allclose(df["alpha_c"], [exact(s) for s in (0.1, 0.3, 0.5)], atol=1e-8)
    assert 0 < Counter.evaluations <= 2 * 12  # only omega = 0.5 of both lines


def test_bad_lines_and_ranges_are_refused_before_a_store_is_created(tmp_path):
    store = tmp_path / "lines.sqlite"
    with pytest.raises(ValueError, match="lines must be"):
        line_table.stored_lines(ModelParams(), [0.3], store=store, names=["alpha_x"])
    with pytest.raises(ValueError, match="alpha_min"):
        line_table.stored_lines(ModelParams(), [0.3], store=store, alpha_min=2, alpha_max=1)
    assert not store.exists()


def test_alpha_l_below_alpha_c_becomes_the_jump_at_alpha_c():
    """The semantic branch's eps_lin crossing below alpha_c is not alpha_l: the global
    minimum is positional there, and its eps_g jumps below eps_lin at alpha_c."""
    import pandas as pd

    from attnphase.transitions.table import _global_minimum_alpha_l

    df = pd.DataFrame(
        {
            "alpha_c": [0.9, 1.2, math.nan],
            "alpha_c_err": [1e-3, 2e-4, math.nan],
            "alpha_l": [0.8, 1.4, 1.0],
            "alpha_l_err": [1e-4, 1e-4, 1e-4],
            "alpha_l_status": ["converged"] * 3,
        }
    )
    out = _global_minimum_alpha_l(df)
    assert out["alpha_l"].tolist()[:2] == [0.9, 1.4] and out["alpha_l_err"][0] == 1e-3
    assert out["alpha_l_status"][0].startswith("converged (= alpha_c")
    assert out["alpha_l"][2] == 1.0 and out["alpha_l_status"][1] == "converged"


def test_qmc_lines_run_on_every_scrambling_and_combine(synthetic, tmp_path):
    """With QMC every scrambling is a replica: its own start scan, its own stored points (ids
    differ by scrambling), and a row combines them (mean and standard error; the synthetic
    line is the same on both, so the error is 0). A rerun computes nothing."""
    from attnphase.theory import QMC

    store = tmp_path / "lines.sqlite"
    kw = dict(store=store, backend="serial", method=QMC(64, 2), names=["alpha_c"])
    df = line_table.stored_lines(ModelParams(omega=0.3), [0.3, 0.4], **kw)
    assert Counter.scans == 2
    for s, alpha, err, status in zip(
        df["omega"], df["alpha_c"], df["alpha_c_err"], df["alpha_c_status"], strict=True
    ):
        assert status == "converged" and err == 0.0
        assert alpha == pytest.approx(exact(s), rel=1e-9)
    evaluations = Counter.evaluations
    again = line_table.stored_lines(ModelParams(omega=0.3), [0.3, 0.4], **kw)
    assert (
        Counter.evaluations == evaluations and again["alpha_c"].tolist() == df["alpha_c"].tolist()
    )


@pytest.mark.slow  # 90 s
def test_qmc_lines_through_a_store_equal_the_in_process_lines(tmp_path):
    """QMC continuation through the store against `transition_lines` in one process, the real
    systems at 256 points x 2 scramblings. The stored run builds each scrambling's channel
    afresh for the scan and for the segment, so the prox warm starts differ; measured
    difference 0.0 (alpha_c 1.24832, both), the tolerance 1e-9 leaves the map's repeatability
    (~6e-10, ScramblingLines.newton_tol) while a wrong combination or replica fails."""
    from attnphase.theory import QMC
    from attnphase.transitions.lines import transition_lines

    p, store = ModelParams(omega=0.3), tmp_path / "lines.sqlite"
    kw = dict(alpha_min=1.0, alpha_max=1.6, method=QMC(256, 2), names=["alpha_c"])
    df = line_table.stored_lines(p, [0.3], store=store, backend="serial", **kw)
    (pt,) = transition_lines(p, [0.3], **kw)["alpha_c"]
    row = df.iloc[0]
    assert row["alpha_c_status"] == pt.status == "converged", row["alpha_c_status"]
    assert row["alpha_c"] == pytest.approx(pt.alpha, rel=1e-9)
    assert row["alpha_c_err"] == pytest.approx(pt.alpha_err, rel=1e-6)
    assert 0 < row["alpha_c_err"] < 0.2  # two scramblings of 256 points: a spread, not zero


def test_an_interrupt_says_how_many_line_points_the_store_keeps(tmp_path, monkeypatch):
    """Ctrl-C anywhere in the continuation (here in the first scan for the starts, in this
    process) ends with one line counting the line points stored, not with the runner's generic
    count of segments or a traceback."""
    from attnphase._core.interrupt import Interrupted

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(line_table, "line_starts", interrupted)
    store = tmp_path / "lines.sqlite"
    with pytest.raises(Interrupted, match=r"^0 of 6 line points stored in .*lines\.sqlite; rerun"):
        line_table.stored_lines(
            ModelParams(), [0.2, 0.3, 0.4], parameter="omega", names=("alpha_c", "alpha_l"),
            store=store,
            backend="serial", workers=1,
        )  # fmt: skip
