"""The untied query/key theory (docs/theory-untied.md): what the engine and `attnphase theory
--untied` refuse, and the untied start. Its fixed points against simulations at d = 1000 (slow):
tests/validation/test_untied_vs_sim.py, with the tolerance of that comparison."""

import numpy as np
import pytest
from typer.testing import CliRunner

from attnphase import QMC, ModelParams, Untied, solve
from attnphase.cli import app
from attnphase.theory.qmc.engine import make_channels, solve_qmc, start_overlaps


def test_untied_theory_refuses_what_it_does_not_solve():
    with pytest.raises(ValueError, match="rank"):
        solve(1.5, ModelParams(rank=2, variant=Untied()))
    with pytest.raises(ValueError, match="channels"):
        solve_qmc(
            1.5,
            ModelParams(variant=Untied()),
            None,
            "semantic",
            QMC(64, 1),
            channels=make_channels(ModelParams(), QMC(64, 1)),
        )
    with pytest.raises(ValueError, match="mixed"):
        solve(1.5, ModelParams(variant=Untied()), branch="mixed", method=QMC(64, 1))


def test_untied_start_is_the_tied_start_in_both_matrices():
    tied = start_overlaps("semantic", ModelParams())
    o = start_overlaps("semantic", ModelParams(variant=Untied()))
    assert o.q.shape == (2, 2) and np.all(np.linalg.eigvalsh(o.q) > 0)
    assert np.allclose(np.diag(o.q), tied.q[0, 0]) and np.allclose(o.theta, tied.theta[0, 0])
    assert np.allclose(o.V, tied.V[0, 0] * np.eye(2))


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--rank", "2"], "--untied"),
        (["--stability"], "--stability"),
        (["--engine", "gauss-hermite"], "--engine"),
        (["--branch", "mixed"], "--branch"),
    ],
)
def test_untied_theory_cli_refuses_bad_options(args, needle):
    res = CliRunner().invoke(app, ["theory", "--untied", "--alpha", "1.5", *args])
    assert res.exit_code == 2
    assert needle in res.output and len(res.output.strip().splitlines()) == 1
