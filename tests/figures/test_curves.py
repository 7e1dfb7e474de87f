"""Figures: each writes non-empty PNG and PDF files and returns the data drawn from its table;
importing and drawing them leaves matplotlib's backend alone."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from attnphase import ModelParams
from attnphase.cli import app
from attnphase.figures.curves import (
    fig3,
    finite_size,
    parameters_text,
    phase_maps,
    theory_line_notes,
)
from attnphase.paper.common import grid
from attnphase.paper.recipes import transition_lines


def _sims():
    rows = []
    for alpha in (0.5, 1.0, 2.0):
        for omega in (0.1, 0.3):
            for seed in (0, 1):
                for init, loss, err in (("semantic", 2.0, 1.0), ("positional", 1.0, 3.0)):
                    sign = 1 if alpha < 1.5 else -1  # semantic wins (lower loss) at alpha = 2
                    rows.append(
                        {
                            "alpha": alpha,
                            "omega": omega,
                            "seed": seed,
                            "init": init,
                            "converged": True,
                            "d": 100,
                            "sigma": 0.5,
                            "lam": 0.01,
                            "train_loss": loss * (sign if init == "semantic" else 1) + seed,
                            "test_error": err + omega,
                            "linear_test_error": 2.5,
                            "theta": 0.1 * (init == "semantic"),
                            "m": 0.2 * (init == "positional"),
                        }
                    )
    return pd.DataFrame(rows)


def test_phase_maps_are_the_seed_means_of_the_table():
    maps = phase_maps(_sims())
    gap = maps["loss_gap"]
    assert gap.loc[0.3, 1.0] == pytest.approx(1.0)  # 2 - 1 at both seeds
    assert gap.loc[0.3, 2.0] == pytest.approx(-3.0)  # -2 - 1
    gain = maps["gain"]
    # alpha = 1: positional has the lower loss, eps_g = 3 + omega; alpha = 2: semantic, 1 + omega
    assert gain.loc[0.1, 1.0] == pytest.approx(2.5 - 3.1)
    assert gain.loc[0.1, 2.0] == pytest.approx(2.5 - 1.1)


def test_fig3_and_finite_size_write_files_and_return_their_data(tmp_path):
    lines = pd.DataFrame({"omega": [0.1, 0.3], "alpha_c": [1.2, 1.3], "alpha_l": [1.4, 1.5]})
    theory = _sims().query("seed == 0").drop(columns="seed").rename(columns={"init": "branch"})
    table = fig3(theory, _sims(), lines, tmp_path / "fig3.png")
    assert len(table) == 6  # one row per (alpha, omega)
    row = table[(table["alpha"] == 2.0) & (table["omega"] == 0.3)].iloc[0]
    assert row["theory_loss_gap"] == pytest.approx(-3.0)  # seed 0: -2 - 1
    assert row["sim_loss_gap"] == pytest.approx(-3.0)  # both seeds: -2 - 1
    assert row["sim_gain"] == pytest.approx(2.5 - 1.3)  # semantic lower: eps_g = 1 + omega
    for suffix in (".png", ".pdf"):
        assert (tmp_path / f"fig3{suffix}").stat().st_size > 5_000
    sims = _sims().assign(d=lambda df: np.where(df["seed"] == 0, 100, 400))
    theory = pd.DataFrame(
        [dict(alpha=a, branch="semantic", kind="semantic", theta=0.1, m=0.0, converged=True)
         for a in (0.5, 1.0, 2.0)]
    )  # fmt: skip
    summary = finite_size(sims, theory, tmp_path / "fs.png")
    row = summary[(summary["init"] == "semantic") & (summary["d"] == 100)].iloc[0]
    assert row[("theta_s2", "mean")] == pytest.approx(0.1 / 0.5**2)  # theta/sigma^2, as Fig. 2
    assert (tmp_path / "fs.pdf").stat().st_size > 5_000


def test_missing_theory_points_are_explained():
    lines = pd.DataFrame(
        {
            "omega": [0.1, 0.3, 0.5, 0.7],
            "alpha_c": [np.nan, 1.25, 1.0, np.nan],
            "alpha_l": [1.4, 2.6, 1.2, np.nan],
            "alpha_min": 0.3,
            "alpha_max": 2.5,
        }
    )
    notes = theory_line_notes(lines, 0.4, 2.4)
    # the NaN alpha_c at 0.1, alpha_l = 2.6 > 2.4 at 0.3, both NaN at 0.7; nothing at 0.5
    assert len(notes) == 3
    assert notes[0].startswith("ω = 0.1: no") and "[0.3, 2.5]" in notes[0]
    assert notes[1].startswith("ω = 0.3:") and "2.6" in notes[1] and "outside" in notes[1]
    assert notes[2].startswith("ω = 0.7: no") and notes[2].count("no ") == 2


def test_parameters_are_stated_from_the_table():
    df = pd.DataFrame(
        [
            {
                "omega": 0.3,
                "sigma": 0.5,
                "lam": 0.01,
                "a11": 0.6,
                "a12": 0.4,
                "a21": 0.4,
                "a22": 0.6,
                "n_xi": 64,
                "n_y": 24,
            }
        ]
    )
    text = parameters_text(df)
    for part in ("= 0.3", "= 0.5", "= 0.01", "A = [[0.6, 0.4], [0.4, 0.6]]", "order (64, 24)"):
        assert part in text
    sweep = pd.DataFrame({"sigma": [0.5], "A": [[[0.3, 0.7], [0.8, 0.2]]]})
    assert parameters_text(sweep) == "$\\sigma$ = 0.5, A = [[0.3, 0.7], [0.8, 0.2]]"


def test_grid_values_print_as_typed():
    assert grid(0.1, 0.5, 3) == [0.1, 0.3, 0.5]  # linspace gives 0.30000000000000004
    assert str(grid(0.1, 2.0, 20)[2]) == "0.3"


def test_importing_and_drawing_leaves_the_backend_alone(tmp_path):
    """plots and histogram.figures use the object API: the caller's backend (here svg, chosen
    through MPLBACKEND) survives importing them and drawing every kind of figure, without a
    display, and pyplot is never imported."""
    code = textwrap.dedent(
        f"""
        import sys
        import matplotlib
        import numpy as np
        import pandas as pd
        import attnphase, attnphase.figures.curves, attnphase.figures.histogram
        from attnphase.histogram import HistogramConfig, HistogramResult, ModelResult
        from attnphase.figures.curves import learning_curves

        rows = [dict(alpha=a, branch=b, kind=b, converged=True, theta=0.1 * (b == "semantic"),
                     m=0.2 * (b == "positional"), sigma=0.5, omega=0.3, lam=0.01,
                     test_error=0.003, linear_test_error=0.002)
                for a in (1.0, 2.0) for b in ("semantic", "positional")]
        learning_curves(pd.DataFrame(rows), r"{tmp_path}/fig2.png")
        maps = np.full((2, 3, 10, 10), 0.1)
        hist = dict(val_accuracy=[[0.5, 0.6], [0.9, 0.95]], train_loss=[[1.0, 1.1], [0.2, 0.3]])
        models = [ModelResult(name, [0.95] * 2, 2, 1.0, [0.9] * 2, [0.95] * 2, [0.1] * 2,
                              [0.15] * 2, [40.0] * 2, {{}}, {{}}, 1.0, hist,
                              dict(val_accuracy=[], train_loss=[]), maps, maps)
                  for name in ("positional", "semantic")]
        result = HistogramResult(HistogramConfig.quick(runs=2), models)
        attnphase.figures.histogram.attention_figure(result, r"{tmp_path}/att.png")
        attnphase.figures.histogram.training_figure(result, r"{tmp_path}/train.png")
        print(matplotlib.get_backend(), "matplotlib.pyplot" in sys.modules)
        """
    )
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"} | {"MPLBACKEND": "svg"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["svg", "False"]
    for name in ("fig2", "att", "train"):
        assert (tmp_path / f"{name}.png").stat().st_size > 5_000
        assert (tmp_path / f"{name}.pdf").stat().st_size > 5_000


def test_figure_command_rejects_unknown_names():
    res = CliRunner().invoke(app, ["figure", "fig5"])
    assert res.exit_code == 2 and "NAME" in res.output


@pytest.mark.slow
def test_figure_transition_lines_reproduce_the_scan_values():
    """The figures' (and the demo's) theory lines, by continuation at the default orders,
    against the scan-and-bisect values (studies/transitions_table.py at (64, 24)/(48, 16):
    alpha_c = 0.7510 +- 0.0006, 1.2516 +- 0.0001, none in [0.2, 2.5] at omega = 0.1, 0.3, 0.5;
    alpha_l = 0.8924 +- 0.0001, 1.4920 +- 0.0002, none): within both errors + 1e-4 (the
    table's rounding); at 0.5 both lines have left the window, with the reason."""
    lines = transition_lines([0.1, 0.3, 0.5], ModelParams())
    assert lines["omega"].tolist() == [0.1, 0.3, 0.5]
    for name, ref, err in (("alpha_c", [0.7510, 1.2516], [6e-4, 1e-4]),
                           ("alpha_l", [0.8924, 1.4920], [1e-4, 2e-4])):  # fmt: skip
        got, got_err = lines[name].iloc[:2].to_numpy(), lines[f"{name}_err"].iloc[:2].to_numpy()
        assert np.all(np.abs(got - ref) <= np.array(err) + got_err + 1e-4), (name, got)
        assert np.isnan(lines[name].iloc[2])
        assert "left the window" in lines[f"{name}_status"].iloc[2]


def test_learning_curves_draw_the_general_engines_error_bars(tmp_path, monkeypatch):
    """General-engine tables (`<name>_err` columns, engine "general"): every branch and eps_lin
    drawn with bars of two standard errors; matrix overlaps (r = 2) by their Frobenius norm;
    the QMC accuracy stated in the title."""
    from matplotlib.container import ErrorbarContainer

    from attnphase.figures import curves as plots

    rows = [
        dict(alpha=a, branch=b, kind=b, converged=True, sigma=0.5, omega=0.3, lam=0.01,
             theta=[[0.1 * (b == "semantic"), 0.0]], theta_err=[[0.001, 0.0]],
             m=[[0.0, 0.2 * (b == "positional")]], m_err=[[0.0, 0.002]],
             test_error=0.003, test_error_err=1e-5, linear_test_error=0.002,
             linear_test_error_err=1e-6, engine="general", points=1024, randomisations=4,
             rank=2, teacher_rank=1)
        for a in (1.0, 2.0) for b in ("semantic", "positional")
    ]  # fmt: skip
    captured = {}
    monkeypatch.setattr(plots, "save", lambda fig, path: captured.setdefault("fig", fig))
    plots.learning_curves(pd.DataFrame(rows), tmp_path / "l3.png")
    fig = captured["fig"]
    axes = fig.axes[:3]
    bars = [c for ax in axes for c in ax.containers if isinstance(c, ErrorbarContainer)]
    assert len(bars) == 2 + 2 + 3  # theta, m per branch; eps_g per branch and eps_lin
    theta_sem = next(c for c in axes[0].containers if c.get_label() == "semantic")
    assert theta_sem.lines[0].get_ydata() == pytest.approx([0.4, 0.4])  # |theta|_F / sigma^2
    title = fig.get_suptitle()
    assert "QMC 4 x 1024 points" in title and "r = 2, t = 1" in title


def test_save_writes_the_image_and_its_pdf_atomically(tmp_path, monkeypatch):
    """style.save writes through attnphase.io's atomic writer: a save that fails half-way
    leaves the previous image whole and no temporary file behind."""
    from pathlib import Path

    from attnphase.figures.style import new_figure, save

    fig, _ = new_figure(1, 1, (2.0, 2.0))
    save(fig, tmp_path / "f.png")
    old = (tmp_path / "f.png").read_bytes()
    assert old.startswith(b"\x89PNG") and (tmp_path / "f.pdf").read_bytes().startswith(b"%PDF")

    def broken(fname, **kwargs):
        Path(fname).write_bytes(b"partial")
        raise OSError("disk full")

    monkeypatch.setattr(fig, "savefig", broken)
    with pytest.raises(OSError, match="disk full"):
        save(fig, tmp_path / "f.png")
    assert (tmp_path / "f.png").read_bytes() == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.pdf", "f.png"]


def test_a_map_cell_without_a_value_is_hatched_not_white(tmp_path):
    """A theory cell whose fixed point did not converge is drawn hatched, with one legend entry,
    and its value in the returned table is NaN; the notes on missing lines go under the legend,
    not into the title."""
    from attnphase.figures.style import MISSING_LABEL, new_figure, phase_mesh

    lines = pd.DataFrame({"omega": [0.1, 0.3], "alpha_c": [np.nan, 1.3], "alpha_l": [1.4, 1.5]})
    theory = _sims().query("seed == 0").drop(columns="seed").rename(columns={"init": "branch"})
    hole = (theory["alpha"] == 1.0) & (theory["omega"] == 0.3)
    theory.loc[hole, "converged"] = False
    table = fig3(theory, _sims(), lines, tmp_path / "fig3.png")
    row = table[(table["alpha"] == 1.0) & (table["omega"] == 0.3)].iloc[0]
    assert np.isnan(row["theory_loss_gap"]) and np.isfinite(row["sim_loss_gap"])
    fig, axes = new_figure(1, 1, (3, 3))
    grid = phase_maps(theory, start="branch")["loss_gap"]
    phase_mesh(axes[0, 0], grid, "viridis", 3.0)
    hatched = [patch for patch in axes[0, 0].patches if patch.get_hatch()]
    assert len(hatched) == 1
    assert axes[0, 0].get_legend_handles_labels()[1] == [MISSING_LABEL]
