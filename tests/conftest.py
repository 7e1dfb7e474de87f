"""Shared fixtures: the authors' reference tables (vendored in tests/data, see its README), the
learning curves at their alphas, and the check that `attnphase simulate` and `attnphase theory`
reject bad input."""

import importlib
import os
import sys
from pathlib import Path

if "PYTEST_XDIST_WORKER" in os.environ:
    # `make test` runs one xdist worker per core (pyproject addopts): one BLAS and torch thread
    # each, set before numpy and torch start their thread pools; numba's below
    for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

import numba  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from attnphase import GaussHermite, ModelParams, learning_curve  # noqa: E402
from attnphase.cli import app  # noqa: E402

if "PYTEST_XDIST_WORKER" in os.environ:
    numba.set_num_threads(1)  # not NUMBA_NUM_THREADS: validation/test_threads.py still runs two

DATA = Path(__file__).resolve().parent / "data"
# the studies' helpers (studies/gamp_study.py, ...) import as top-level modules, as they do
# beside the study scripts
sys.path.append(str(DATA.parent.parent / "studies"))
# Order used in the test suite; studies/reference_deviation.py measures its accuracy.
TEST_ORDER = (32, 12)


def reference_table(branch: str) -> pd.DataFrame:
    """The authors' fixed points on one branch; a missing file is an error, never a skip."""
    return pd.read_csv(DATA / f"theory_{branch}_omega0.3_sigma0.5_lambda0.01.csv", index_col=0)


@pytest.fixture(scope="module")
def one_thread():
    """One torch and one numba thread for a module that asks for it (`pytestmark`), restored
    after: GAMP's problems are small and the machine is shared (two numba threads under a
    load of 4 made GAMP 5x slower)."""
    import torch

    numba_threads, torch_threads = numba.get_num_threads(), torch.get_num_threads()
    numba.set_num_threads(1)
    torch.set_num_threads(1)
    yield
    numba.set_num_threads(numba_threads)
    torch.set_num_threads(torch_threads)


@pytest.fixture(scope="session")
def reference_curves():
    """Both branches at the reference alphas, omega=0.3, sigma=0.5, lambda=0.01, standard A."""
    out = {}
    for branch in ("semantic", "positional"):
        ref = reference_table(branch)
        out[branch] = (
            ref,
            learning_curve(
                ref["alpha"].to_numpy(),
                ModelParams(),
                branch=branch,
                method=GaussHermite(TEST_ORDER),
                errors=False,  # the users compare values, not the order-difference estimates
            ),
        )
    return out


# every place `attnphase simulate` and `attnphase theory` could start computing
ENTRY_POINTS = [
    ("attnphase.sim", "run_grid"),
    ("attnphase.sim.grid", "simulate"),
    ("attnphase.theory", "learning_curves"),  # the commands import it when they compute
]


@pytest.fixture
def rejected(tmp_path, monkeypatch):
    """check(args, start): the CLI exits 2 with one line `error: {start}...` on stderr, nothing
    on stdout, before any computation starts, and writes nothing."""

    def computed(*args, **kwargs):
        raise AssertionError("computation started before the input was rejected")

    for module, name in ENTRY_POINTS:
        monkeypatch.setattr(importlib.import_module(module), name, computed)
    monkeypatch.chdir(tmp_path)

    def check(args: list[str], start: str):
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 2, res.output
        assert res.stdout == ""
        lines = res.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"error: {start}"), res.stderr
        assert list(tmp_path.iterdir()) == []

    return check
