"""The extensions' phase diagrams (the paper's Fig. 14): the empirical transition read off a
loss-gap map, and `attnphase figure extensions` end to end on a tiny grid (files, the extension
each store sweeps, a rerun that computes nothing, bad input)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import attnphase.paper.extensions as E
from attnphase.cli import app
from attnphase.figures import extensions as extensions_plot
from attnphase.paper import recipes as F
from attnphase.paper.empirical import SAME_MINIMUM, empirical_transitions
from attnphase.sweep import ResultStore

ALPHAS = [0.1, 0.5, 0.9, 1.3, 1.7, 2.1, 2.5]


def _map(rows: dict[float, list[float]], alphas=ALPHAS) -> pd.DataFrame:
    return pd.DataFrame(rows, index=alphas).T.rename_axis(index="omega", columns="alpha")


def test_a_planted_linear_sign_change_is_recovered_exactly():
    # gap = c (alpha_0 - alpha) is linear: the interpolation between the two grid points around
    # alpha_0 is exact, so alpha_t = alpha_0 to rounding; off-grid and on-grid alpha_0 alike
    planted = {0.1: 0.62, 0.2: 1.0, 0.3: 1.4999, 0.4: 2.31}
    rows = {w: [3e-3 * (a0 - a) for a in ALPHAS] for w, a0 in planted.items()}
    t = empirical_transitions(_map(rows)).set_index("omega")
    np.testing.assert_allclose(t["alpha_t"], list(planted.values()), rtol=0, atol=1e-12)
    assert (t["status"] == "crossing").all() and (t["sign_changes"] == 1).all()


def test_unsorted_columns_and_missing_gaps():
    # columns in any order; a NaN (no converged pair) is skipped: the crossing is interpolated
    # between its neighbours 0.5 (gap 4e-4) and 1.3 (gap -4e-4), so at 0.9
    gaps = [8e-4, 4e-4, np.nan, -4e-4, -8e-4, -1.2e-3, -1.6e-3]
    shuffled = [6, 2, 0, 5, 1, 4, 3]
    gap = _map({0.3: [gaps[i] for i in shuffled]}, [ALPHAS[i] for i in shuffled])
    t = empirical_transitions(gap).iloc[0]
    assert t["alpha_t"] == pytest.approx(0.9, abs=1e-12) and t["status"] == "crossing"


def test_one_minimum_for_both_starts_counts_as_zero():
    # both starts in one minimum: gaps of +-1e-15 (measured <= 7.7e-15, SAME_MINIMUM) are no
    # sign change; the first real negative gap, at 1.3 after the "zero" at 0.9: alpha_t = 0.9
    row = [2e-4, -1e-15, 1e-15, -5e-4, -6e-4, 1e-15, -7e-4]
    t = empirical_transitions(_map({0.2: row})).iloc[0]
    assert t["alpha_t"] == pytest.approx(0.9, abs=1e-12) and t["sign_changes"] == 1
    strict = empirical_transitions(_map({0.2: row}), tol=0.0).iloc[0]
    assert strict["alpha_t"] == pytest.approx(0.5, abs=1e-9) and strict["sign_changes"] == 5
    assert SAME_MINIMUM < 3.7e-8  # below the smallest measured gap between distinct minima


def test_noisy_rows_and_transitions_outside_the_grid():
    rows = {
        0.1: [1e-4, -2e-4, 3e-4, -1e-4, 1e-4, -1e-4, -2e-4],  # noisy: the first crossing
        0.2: [-1e-4] * 7,  # negative from the smallest alpha
        0.3: [1e-4] * 7,  # never negative
        0.4: [np.nan] * 7,
    }
    t = empirical_transitions(_map(rows)).set_index("omega")
    assert t.loc[0.1, "alpha_t"] == pytest.approx(0.1 + 0.4 * 1 / 3, abs=1e-12)
    assert t.loc[0.1, "sign_changes"] == 5
    assert t["status"].tolist() == [
        "crossing", "negative from the smallest alpha", "no negative gap", "no data",
    ]  # fmt: skip
    assert t.loc[[0.2, 0.3, 0.4], "alpha_t"].isna().all()
    with pytest.raises(ValueError, match="tol"):
        empirical_transitions(_map(rows), tol=-1.0)


TINY = dict(alphas=[0.5, 2.0], omegas=[0.3], d=40, seeds=1)
SWITCHED_ON = {  # the column of each extension's store that says it was on
    "tied": lambda s: (
        (~s["untied"]) & (s["value_rank"] == 0) & (s["r"] == 1) & (s["clusters"] == 1)
    ),
    "untied": lambda s: s["untied"],
    "value": lambda s: s["value_rank"] == 1,
    "rank2": lambda s: s["r"] == 2,
    "correlated": lambda s: (s["clusters"] == 2) & (s["label_correlation"] == 0.8),
}


def _attempts(out) -> int:
    total = 0
    for name in E.EXTENSIONS:
        with ResultStore(out / f"extensions_{name}_d40.sqlite") as db:
            total += len(db.attempts())
    return total


def test_figure_extensions_end_to_end_and_a_rerun_computes_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(E, "sizes", lambda quick: TINY)
    solves = []
    lines = pd.DataFrame({"omega": [0.2, 0.3], "alpha_c": [1.0, 1.25], "n_xi": 64, "n_y": 24})
    monkeypatch.setattr(
        E, "theory_alpha_c", lambda w, p, k, store=None: solves.append(list(w)) or lines
    )
    out = tmp_path / "figs"
    args = ["figure", "extensions", "--out", str(out), "--workers", "1"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert (out / "extensions.png").stat().st_size > 20_000 and (out / "extensions.pdf").exists()
    assert solves == [[0.3]]  # the theory line at the simulated omegas
    for name, on in SWITCHED_ON.items():
        with ResultStore(out / f"extensions_{name}_d40.sqlite") as db:
            runs = db.frame()
        assert len(runs) == 2 * 2 and on(runs).all(), name  # alpha x start
        t = pd.read_csv(out / f"extensions_{name}_transitions.csv")
        assert t["omega"].tolist() == [0.3] and (t["extension"] == name).all()
    table = pd.read_csv(out / "extensions_transitions.csv")
    assert len(table) == 5 and table["alpha_c_theory"].eq(1.25).all()  # the line's row at 0.3
    np.testing.assert_allclose(table["shift"], table["alpha_t"] - table["alpha_t_tied"])
    n = _attempts(out)
    assert n == 5 * 4
    monkeypatch.setattr(extensions_plot, "save", lambda fig, path: None)  # the rerun: data only
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0 and _attempts(out) == n and len(solves) == 1
    summaries = res.stderr.strip().splitlines()
    assert len(summaries) == 5 and all(s.startswith("0 computed,") for s in summaries)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--workers", "0"], "--workers"),
        (["--out", "{file}"], "--out"),
        (["--out", "{dir}"], "--out"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path, monkeypatch, args, message):
    def computed(*args, **kwargs):
        raise AssertionError("computation started before the input was rejected")

    monkeypatch.setitem(F.MAKERS, "extensions", computed)
    afile = tmp_path / "a_file"
    afile.write_text("x")
    blocked = tmp_path / "blocked"
    (blocked / "extensions.pdf").mkdir(parents=True)  # the figure's PDF cannot be written
    args = [a.format(file=afile, dir=blocked) for a in args]
    if "--out" not in args:
        args += ["--out", str(tmp_path / "new")]
    before = sorted(tmp_path.rglob("*"))
    res = CliRunner().invoke(app, ["figure", "extensions", *args])
    assert res.exit_code == 2
    assert message in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert sorted(tmp_path.rglob("*")) == before
