"""The deviation statistics of the GAMP tracking study (studies/gamp_study.py, on the path
through conftest)."""

import numpy as np
import pytest
from gamp_study import deviation_summary, scaling_fit, trace_deviations

from attnphase.gamp import run_gamp, trace_of_run


def synthetic_rows(law, sizes=(2000, 5000, 10000), seeds=3, iterations=(1, 2, 3)):
    """Deviations +-law(d, it) alternating over seeds; the first iterate is each run's start
    (left out of the summary)."""
    return [
        {
            "d": d, "init": "semantic", "seed": s, "iteration": it, "overlap": "q",
            "deviation": (-1) ** s * law(d, it), "se_err": 1e-5,
        }
        for d in sizes for s in range(seeds) for it in iterations
    ]  # fmt: skip


def test_power_law_slopes_are_recovered():
    """rms = c(t) d^-1/2 gives slope -0.5 with zero standard error (an exact line); a constant
    gap gives slope 0; the iterate window matters (iterate 3 alone carries d^-1)."""
    law = lambda d, it: (0.3 * d**-0.5) if it == 2 else 5.0 / d  # noqa: E731
    summary = deviation_summary(synthetic_rows(law))
    fit = scaling_fit(summary, [2]).iloc[0]
    assert fit["slope"] == pytest.approx(-0.5, abs=1e-12)
    assert fit["slope_err"] == pytest.approx(0.0, abs=1e-9)
    assert fit["rms_d5000"] == pytest.approx(0.3 / np.sqrt(5000), rel=1e-12)
    assert scaling_fit(summary, [3]).iloc[0]["slope"] == pytest.approx(-1.0, abs=1e-12)
    flat = scaling_fit(deviation_summary(synthetic_rows(lambda d, it: 0.01)), [2, 3]).iloc[0]
    assert flat["slope"] == pytest.approx(0.0, abs=1e-12)


def test_summary_separates_bias_from_spread():
    """Deviations (1, 2, 3) at one point: rms sqrt(14/3), mean 2 (the bias), sd 1; pooling two
    iterates with equal seed counts averages the squares. Each run's first iterate (the trace's
    start) is left out: seed 2 starts one iterate later, so iterate 1 has two seeds."""
    rows = [
        {"d": 100, "init": "positional", "seed": s, "iteration": it, "overlap": "m",
         "deviation": 0.0 if it == start else v * it, "se_err": 1e-4 * it}
        for s, (v, start) in enumerate(((1.0, 0), (2.0, 0), (3.0, 1)))
        for it in (0, 1, 2) if it >= start
    ]  # fmt: skip
    s = deviation_summary(rows)
    assert sorted(s["iteration"]) == [1, 2]
    one, two = s[s["iteration"] == 1].iloc[0], s[s["iteration"] == 2].iloc[0]
    assert (one["seeds"], one["mean"]) == (2, 1.5)
    assert (two["seeds"], two["mean"], two["sd"]) == (3, 4.0, 2.0)
    assert two["rms"] == pytest.approx(2 * np.sqrt(14 / 3), rel=1e-14)
    assert two["se_err"] == pytest.approx(2e-4)
    pooled = scaling_fit(s, [1, 2]).iloc[0]
    assert pooled["rms_d100"] == pytest.approx(np.sqrt((2 * 2.5 + 3 * 56 / 3) / 5), rel=1e-14)
    assert np.isnan(pooled["slope"])  # one size: no slope


def test_trace_deviations_line_up_with_the_run():
    """A d = 100 undamped run and its trace: rows from the trace's start (iterate 1, the
    informed start cannot seed it) to the run's end, four overlaps each; zero deviation at the
    start (the trace begins at the run's own overlaps), GAMP's values are its history."""
    res = run_gamp(None, 100, 1.5, damping=0.0, max_iter=3, n_test=100, device="cpu")
    tr = trace_of_run(res, points=256, randomisations=2)
    rows = trace_deviations(res, tr)
    assert [r["iteration"] for r in rows] == [1] * 4 + [2] * 4 + [3] * 4
    assert [r["overlap"] for r in rows[:4]] == ["q", "m", "theta", "V"]
    assert all(abs(r["deviation"]) < 1e-12 for r in rows[:4])
    q3 = next(r for r in rows if r["iteration"] == 3 and r["overlap"] == "q")
    assert q3["gamp"] == pytest.approx(float(res.history[3].overlaps.q[0, 0]), rel=1e-15)
    assert q3["deviation"] == pytest.approx(q3["gamp"] - tr.rows()[2]["q"], rel=1e-12)
    assert any(abs(r["deviation"]) > 1e-6 for r in rows[4:])


def test_overlap_number_keeps_the_sign_of_a_scalar_overlap():
    """Deviations of m (semantic start) and theta (positional start) sit near zero, where |x|
    would turn GAMP - SE = -0.25 - (-0.24) into +0.01."""
    from attnphase.gamp.result import overlap_number

    assert overlap_number(np.array([[-0.25]])) == -0.25
    assert overlap_number(-0.25) == -0.25
    assert overlap_number(np.array([[3.0, 4.0]])) == 5.0
    assert np.isnan(overlap_number(None))
