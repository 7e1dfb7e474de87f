"""`attnphase scaling` on the command line: bad input is one line and exit code 2 before any
work; a run writes its table, figure and store under --plot and a rerun computes nothing (the
point computation replaced by a fake)."""

import pytest
from typer.testing import CliRunner

from attnphase.cli import app
from attnphase.scaling import table as scaling_module

from .test_table import CALLS, fake_point


def never(*args, **kwargs):
    raise AssertionError("computed despite bad input")


@pytest.mark.parametrize(
    ("args", "option"),
    [
        ("--L 1:3", "--L"),
        ("--L 2:17", "--L"),
        ("--L x", "--L"),
        ("--L 3:2", "--L"),
        ("--omega 1.5", "--omega"),
        ("--encodings linear,circle", "--encodings"),
        ("--num 2", "--num"),
        ("--points 1000", "--points"),
        ("--randomisations 1", "--randomisations"),
        ("--alpha-min 3 --alpha-max 2", "--alpha-min"),
        ("--alpha-min 0", "--alpha-min"),
        ("--sigma 0", "--sigma"),
        ("--lam -1", "--lam"),
        ("--a nan", "--a"),
        ("--time-limit 0", "--time-limit"),
        ("--workers 0", "--workers"),
        ("--format xml", "--format"),
        ("--store s.txt", "--store"),
        ("--mask diagonal", "--mask"),
        ("--heads 0", "--heads"),
        ("--heads 2 --mask causal", "--heads"),
        ("--encodings linear,simplex --mask causal", "--encodings"),
        ("--encodings simplex --heads 2", "--encodings"),
        ("--precision 0", "--precision"),
        ("--precision 1.5", "--precision"),
    ],
)
def test_bad_input(args, option, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(scaling_module, "scaling_table", never)
    res = CliRunner().invoke(app, ["scaling", *args.split()])
    assert res.exit_code == 2
    assert res.stderr.startswith(f"error: {option}") and res.stderr.count("\n") == 1
    assert res.stdout == "" and list(tmp_path.iterdir()) == []


def test_a_fault_of_the_store_in_the_plot_folder_names_plot(monkeypatch, tmp_path):
    """Without --store the store is --plot's folder's scaling.sqlite: a directory there is
    --plot's fault (it named --store, which was never given)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(scaling_module, "scaling_table", never)
    (tmp_path / "pf" / "scaling.sqlite").mkdir(parents=True)
    res = CliRunner().invoke(app, ["scaling", "--L", "2", "--plot", "pf"])
    assert res.exit_code == 2
    assert res.stderr.startswith("error: --plot: ") and "scaling.sqlite" in res.stderr


def test_plot_folder_resumes(monkeypatch, tmp_path):
    CALLS.clear()
    monkeypatch.setattr(scaling_module, "evaluate_point", fake_point)
    out = tmp_path / "out"
    args = ["--quiet", "scaling", "--L", "2:4", "--omega", "0.1,0.3", "--plot", str(out)]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert {p.name for p in out.iterdir()} == {
        "scaling.csv",
        "scaling.png",
        "scaling.pdf",
        "scaling.sqlite",
    }
    assert len(CALLS) == 6 and "no positional branch" in (out / "scaling.csv").read_text()
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0 and len(CALLS) == 6  # all stored
