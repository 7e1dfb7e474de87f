"""Shared fixtures: the authors' reference tables (vendored in tests/data, see its README) and the
learning curves at their alphas."""

from pathlib import Path

import pandas as pd
import pytest

from attnphase import ModelParams, learning_curve

DATA = Path(__file__).resolve().parent / "data"
# Order used in the test suite; benchmarks/reference_deviation.py measures its accuracy.
TEST_ORDER = (32, 12)


def reference_table(branch: str) -> pd.DataFrame:
    """The authors' fixed points on one branch; a missing file is an error, never a skip."""
    return pd.read_csv(DATA / f"theory_{branch}_omega0.3_sigma0.5_lambda0.01.csv", index_col=0)


@pytest.fixture(scope="session")
def reference_curves():
    """Both branches at the reference alphas, omega=0.3, sigma=0.5, lambda=0.01, standard A."""
    out = {}
    for branch in ("semantic", "positional"):
        ref = reference_table(branch)
        out[branch] = (
            ref,
            learning_curve(ref["alpha"].to_numpy(), ModelParams(), branch=branch, order=TEST_ORDER),
        )
    return out
