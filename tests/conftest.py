"""Shared fixtures: the authors' reference tables and the learning curves at their alphas."""

from pathlib import Path

import pandas as pd
import pytest

from attnphase import ModelParams, learning_curve

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
REFERENCE = SHARED / "reference"
# Order used in the test suite; the README's convergence table gives its accuracy.
TEST_ORDER = (32, 12)


def reference_table(branch: str) -> pd.DataFrame:
    path = REFERENCE / f"theory_{branch}_omega0.3_sigma0.5_lambda0.01.csv"
    if not path.exists():
        pytest.skip(f"reference table {path} not found (../shared beside the checkout)")
    return pd.read_csv(path, index_col=0)


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
