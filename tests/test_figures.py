"""Figures: each writes non-empty PNG and PDF files and returns the data drawn from its table."""

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from attnphase.cli import app
from attnphase.plots import fig3, finite_size, phase_maps


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
    maps = fig3(_sims(), lines, tmp_path / "fig3.png")
    assert set(maps) == {"loss_gap", "gain"}
    for suffix in (".png", ".pdf"):
        assert (tmp_path / f"fig3{suffix}").stat().st_size > 5_000
    sims = _sims().assign(d=lambda df: np.where(df["seed"] == 0, 100, 400))
    summary = finite_size(sims, {"semantic": {"theta": 0.1, "m": 0.0}}, tmp_path / "fs.png")
    row = summary[(summary["init"] == "semantic") & (summary["d"] == 100)].iloc[0]
    assert row[("theta", "mean")] == pytest.approx(0.1)
    assert (tmp_path / "fs.pdf").stat().st_size > 5_000


def test_figure_command_rejects_unknown_names():
    res = CliRunner().invoke(app, ["figure", "fig9"])
    assert res.exit_code == 2 and "NAME" in res.output
