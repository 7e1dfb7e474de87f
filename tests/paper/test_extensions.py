"""The extensions' phase diagrams (the paper's Fig. 14): `attnphase figure extensions` end to end
on a tiny grid (files, the extension each store sweeps, a rerun that computes nothing, bad input).
The empirical transition read off a loss-gap map: tests/paper/test_empirical.py."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import attnphase.paper.extensions as E
from attnphase.cli import app
from attnphase.figures import extensions as extensions_plot
from attnphase.paper import recipes as F
from attnphase.sweep import ResultStore

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
    res = CliRunner().invoke(app, ["--quiet", *args])  # stderr: the summaries alone
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
