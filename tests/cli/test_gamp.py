"""`attnphase gamp`: the JSON record per seed, the trace beside the state evolution, bad input."""

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from attnphase.cli import app

runner = CliRunner()

KEYS = {
    "d", "n", "alpha", "omega", "init", "seed", "q", "m", "theta", "V", "test_error",
    "train_loss", "grad_norm", "converged", "iterations", "status", "seconds",
}  # fmt: skip


def test_json_has_one_record_per_seed_with_the_issue_keys():
    """d = 100, alpha 1.5, 2 seeds: each record carries the keys the trust map needs; a converged
    run's grad_norm meets the default gtol 1e-9 (a run that stopped early would not)."""
    res = runner.invoke(app, ["gamp", "--d", "100", "--seeds", "2", "--format", "json"])
    assert res.exit_code == 0, res.output
    recs = [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]
    assert [r["seed"] for r in recs] == [0, 1]
    for r in recs:
        assert KEYS <= set(r), KEYS - set(r)
        assert r["n"] == 150 and r["init"] == "semantic"
        assert r["status"] != "converged" or r["grad_norm"] <= 1e-9


def test_trace_rows_lay_gamp_beside_the_state_evolution():
    """Undamped, 3 iterations: the trace starts at iterate 1 (the informed start Qh = Q* cannot
    seed the state evolution, docs/theory.md §8.1), where it equals GAMP's own overlaps exactly."""
    res = runner.invoke(
        app,
        ["gamp", "--d", "100", "--max-iter", "3", "--damping", "0", "--trace", "--format", "json"],
    )
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]
    assert [r["iteration"] for r in rows][:2] == [0, 1]
    assert rows[0]["se_q"] is None
    assert rows[1]["se_q"] == pytest.approx(rows[1]["q"], rel=1e-12)


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["--d", "0"], "--d"),
        (["--alpha", "-1"], "--alpha"),
        (["--damping", "1.5"], "--damping"),
        (["--init", "sideways"], "--init"),
        (["--seeds", "0"], "--seeds"),
        (["--max-iter", "0"], "--max-iter"),
        (["--format", "xml"], "--format"),
        (["--omega", "2"], "--omega"),
        (["--A", "1,2,3"], "--A"),
    ],
)
def test_bad_input_exits_2_naming_the_option(args, option):
    res = runner.invoke(app, ["gamp", *args])
    assert res.exit_code == 2, res.output
    assert option in res.output and len(res.output.strip().splitlines()) == 1


PLOT_ARGS = ["gamp", "--d", "100", "--seeds", "2", "--max-iter", "3", "--damping", "0"]


def test_plot_writes_the_figure_and_its_pdf_twin(tmp_path):
    """--plot computes the trace (without --trace) and writes the PNG and its PDF twin; the
    per-seed records are still printed."""
    path = tmp_path / "figs" / "gamp.png"
    res = runner.invoke(app, [*PLOT_ARGS, "--format", "json", "--plot", str(path)])
    assert res.exit_code == 0, res.output
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert path.with_suffix(".pdf").read_bytes()[:5] == b"%PDF-"
    recs = [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]
    assert [r["seed"] for r in recs] == [0, 1]


@pytest.mark.parametrize("name", ["blocker/gamp.png", "gamp.xyz", "."])
def test_unwritable_plot_exits_2_before_running(tmp_path, name):
    """A parent that is a file, an unknown image format, a directory: one line naming --plot,
    exit 2, no GAMP output and nothing written."""
    (tmp_path / "blocker").write_text("a file, not a directory")
    before = sorted(tmp_path.rglob("*"))
    res = runner.invoke(app, [*PLOT_ARGS, "--plot", str(tmp_path / name)])
    assert res.exit_code == 2, res.output
    assert "--plot" in res.output and len(res.output.strip().splitlines()) == 1
    assert sorted(tmp_path.rglob("*")) == before


def test_figure_draws_the_trace_table(tmp_path):
    """The plotted table is trace_table's, numbers: the state evolution starts at iterate 1
    (NaN before, the informed start cannot seed it) where it equals GAMP's own q; its ±2 s.e.
    band has positive width after the start (four scramblings disagree) and zero at it."""
    from attnphase.figures.gamp import gamp_trace_figure
    from attnphase.gamp import run_gamp, trace_table

    runs = [run_gamp(None, 100, 1.5, seed=s, damping=0.0, max_iter=3, n_test=100) for s in (0, 1)]
    rows = [row for r in runs for row in trace_table(r)]
    with pytest.raises(ValueError, match="runs: need at least one"):
        gamp_trace_figure([], rows, "unused.png")
    df = gamp_trace_figure(runs, rows, tmp_path / "f.png")
    assert len(df) == 8 and set(df["seed"]) == {0, 1}
    first = df[df["iteration"] == 0]
    assert first["se_q"].isna().all()
    start = df[df["iteration"] == 1]
    assert np.allclose(start["se_q"], start["q"], rtol=1e-12)
    assert (start["se_q_err"] == 0).all()
    assert (df[df["iteration"] >= 2]["se_q_err"] > 0).all()
