"""`attnphase transition`: bad input exits 2 with one line naming the option before
anything is computed or written; output rows and the plot from a (patched) line table."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from typer.testing import CliRunner

from attnphase.cli import app

runner = CliRunner()


@pytest.fixture
def no_compute(monkeypatch):
    """Any attempt to compute fails the test."""
    import attnphase.transitions.table as table

    def boom(*a, **k):
        raise AssertionError("computed despite bad input")

    monkeypatch.setattr(table, "transition_table", boom)


@pytest.mark.parametrize(
    "args, option",
    [
        (["--omega", "0.1,1.5"], "--omega"),
        (["--omega", "0.1:0.5"], "--omega"),
        (["--omega", "0.1,0.2", "--sigma", "0.4,0.5"], "only one of"),
        (["--sigma", "-1"], "--sigma"),
        (["--method", "bisect"], "--method"),
        (["--lines", "alpha_c,alpha_x"], "--lines"),
        (["--alpha-min", "2", "--alpha-max", "1"], "--alpha-min"),
        (["--num", "2"], "--num"),
        (["--workers", "0"], "--workers"),
        (["--order", "1,2"], "--order"),
        (["--format", "xml"], "--format"),
        (["--plot", "FILE/lines.png"], "--plot: cannot write"),
        (["--plot", "DIR/lines.xyz"], "--plot: cannot tell the image format"),
        (["--store", "DIR"], "--store"),
    ],
)
def test_bad_options_exit_2_naming_the_option(args, option, no_compute, tmp_path):
    (tmp_path / "FILE").write_text("")
    args = [a.replace("FILE", str(tmp_path / "FILE")).replace("DIR", str(tmp_path)) for a in args]
    res = runner.invoke(app, ["transition", *args])
    assert res.exit_code == 2, res.output
    assert option in res.stderr and res.stderr.count("\n") == 1


def test_a_corrupt_store_exits_2_and_is_left_alone(no_compute, tmp_path):
    store = tmp_path / "lines.sqlite"
    store.write_text("not a database")
    res = runner.invoke(app, ["transition", "--store", str(store)])
    assert res.exit_code == 2 and "--store" in res.stderr
    assert store.read_text() == "not a database"


def fake_table(p, values, *, parameter, **kw):
    rows = []
    for s in values:
        row = {parameter: s, "status": "converged"}
        for name in ("alpha_c", "alpha_l", "spinodal_semantic", "spinodal_positional"):
            ended = name == "spinodal_positional"
            row[name] = math.nan if ended else 1.0 + s
            row[f"{name}_err"] = math.nan if ended else 1e-4
            reason = "line ended at 0.2: alpha 2.6 left the window"
            row[f"{name}_status"] = reason if ended else "converged"
        rows.append(row)
    df = pd.DataFrame(rows)
    for k in ("omega", "sigma", "lam"):
        if k != parameter:
            df[k] = getattr(p, k)
    return df


def test_rows_per_value_and_the_plot(monkeypatch, tmp_path):
    import attnphase.transitions.table as table

    seen = {}

    def spy(p, values, **kw):
        seen.update(kw, values=values, p=p)
        return fake_table(p, values, **kw)

    monkeypatch.setattr(table, "transition_table", spy)
    plot = tmp_path / "lines.png"
    res = runner.invoke(
        app, ["transition", "--lam", "0.01:0.03:3", "--format", "json", "--plot", str(plot)]
    )
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in res.stdout.splitlines()]
    assert [r["lam"] for r in rows] == [0.01, 0.02, 0.03]
    assert rows[0]["spinodal_positional"] is None  # NaN as null
    assert seen["parameter"] == "lam" and seen["values"] == [0.01, 0.02, 0.03]
    # the lines start from the middle value: started at the first, `--omega 0.02:0.5:25
    # --lines alpha_c` found no alpha_c in the start scan at 0.02 and lost the whole line
    assert seen["p"].lam == 0.02
    assert plot.stat().st_size > 5_000 and plot.with_suffix(".pdf").exists()
