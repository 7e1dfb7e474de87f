"""--mask and --target-mask in theory, simulate, transition and the sweeps: bad input exits 2 with
one line naming the option before any work; good input reports the mask it ran."""

from __future__ import annotations

import io

import pandas as pd
import pytest
from typer.testing import CliRunner

from attnphase.cli import app
from attnphase.sweep import run_id
from attnphase.sweep.spec import canonical_point, theory_model

runner = CliRunner()
CAUSAL_A = "1,0,0.4,0.6"


@pytest.mark.parametrize("command", ["theory", "simulate", "transition"])
@pytest.mark.parametrize(
    "args,message",
    [
        (["--mask", "diagonal"], "--mask: mask must be one of ('none', 'causal'), got 'diagonal'"),
        (["--target-mask", "causal"], "--target-mask: a causal target goes with a causal student"),
        (
            ["--mask", "causal", "--target-mask", "causal"],
            "--A: a causal target (Causal(target=True)) needs A zero above the diagonal",
        ),
    ],
)
def test_bad_masks_exit_2_naming_the_option(command, args, message):
    res = runner.invoke(app, [command, *args])
    assert res.exit_code == 2
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: " + message)


def test_a_causal_theory_run_reports_its_masks():
    args = ["theory", "--mask", "causal", "--target-mask", "causal", "--A", CAUSAL_A]
    args += ["--alpha", "1", "--branch", "positional", "--points", "256"]
    args += ["--randomisations", "2", "--format", "csv"]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    # stdout alone: under load the progress line (stderr, after 5 s) joins the output
    row = pd.read_csv(io.StringIO(res.stdout)).iloc[0]
    assert (row["mask"], row["target_mask"], row["method"]) == ("causal", "causal", "qmc")
    assert row["converged"]


def test_transition_follows_no_line_for_a_mask():
    res = runner.invoke(app, ["transition", "--mask", "causal", "--method", "continuation"])
    assert res.exit_code == 2
    assert res.output.startswith("error: --method: continuation follows the tied model with one")


def test_a_sweep_point_takes_the_mask_and_the_unmasked_run_id_is_unchanged():
    base = {"alpha": 1.0, "method": "qmc"}
    masked = canonical_point("theory", {**base, "mask": "causal"})
    assert theory_model(masked).mask == "causal"
    assert run_id("theory", {**base, "mask": "none"}) == run_id("theory", base)
    assert run_id("theory", {**base, "mask": "causal"}) != run_id("theory", base)
    with pytest.raises(ValueError, match="exact L=2 engine needs"):
        canonical_point("theory", {"alpha": 1.0, "mask": "causal"})
