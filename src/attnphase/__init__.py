"""attnphase: positional vs semantic learning in a solvable model of dot-product attention.

The public API, importable from here:

- the model: `ModelParams` with its variant `Tied`, `Untied`, `Mixture`, `Causal`, `Heads` or
  `Rotary`; `STANDARD_A`;
- the theory (state evolution): `solve`, `solve_batch`, `learning_curve`, `learning_curves` with an
  integration method `GaussHermite` or `QMC`, returning `TheoryResult`; `ConvergenceError`,
  `NonConvergenceWarning`; `with_stability`; the linear baseline `linear_test_error`;
- the transitions alpha_c, alpha_l and the spinodals: `find_transitions` (`Transitions`) and
  `transition_table`; against the sequence length: `family_model`, `ScanSettings` and
  `scaling_table`;
- finite-d experiments (load torch on first use): `SimConfig`, `simulate`, `run_gamp`,
  `probe_landscape`, `trust_map`, and the histogram task `HistogramConfig`, `run_histogram`,
  `mechanism_scores`.

Everything else lives in the subpackages (`attnphase.theory`, `attnphase.sim`,
`attnphase.gamp`, `attnphase.transitions`, ...).
"""

from typing import TYPE_CHECKING

from ._core.threads import size_thread_pools

size_thread_pools()  # before numpy, torch and numba load their pools

from ._core.lazy import lazy_getattr  # noqa: E402
from .params import (  # noqa: E402
    STANDARD_A,
    Causal,
    Heads,
    Mixture,
    ModelParams,
    Rotary,
    Tied,
    Untied,
)

if TYPE_CHECKING:
    from .gamp import run_gamp
    from .histogram import HistogramConfig, mechanism_scores, run_histogram
    from .scaling import ScanSettings, family_model, scaling_table
    from .sim import SimConfig, simulate
    from .theory import (
        QMC,
        ConvergenceError,
        GaussHermite,
        NonConvergenceWarning,
        TheoryResult,
        learning_curve,
        learning_curves,
        solve,
        solve_batch,
    )
    from .theory.baseline import linear_test_error
    from .transitions import Transitions, find_transitions
    from .transitions.table import transition_table
    from .validity.landscape import probe_landscape
    from .validity.stability import with_stability
    from .validity.trust import trust_map

# everything but the model loads on first use (the theory: scipy, numba, pandas; the finite-d
# experiments: torch), so that `import attnphase` (the CLI's --help) stays light
_LAZY = {
    "QMC": "theory",
    "ConvergenceError": "theory",
    "GaussHermite": "theory",
    "NonConvergenceWarning": "theory",
    "TheoryResult": "theory",
    "learning_curve": "theory",
    "learning_curves": "theory",
    "solve": "theory",
    "solve_batch": "theory",
    "linear_test_error": "theory.baseline",
    "Transitions": "transitions",
    "find_transitions": "transitions",
    "transition_table": "transitions.table",
    "family_model": "scaling",
    "ScanSettings": "scaling",
    "scaling_table": "scaling",
    "with_stability": "validity.stability",
    "SimConfig": "sim",
    "simulate": "sim",
    "HistogramConfig": "histogram",
    "run_histogram": "histogram",
    "mechanism_scores": "histogram",
    "run_gamp": "gamp",
    "probe_landscape": "validity.landscape",
    "trust_map": "validity.trust",
}


__getattr__ = lazy_getattr(__name__, _LAZY)


__all__ = [
    "STANDARD_A",
    "QMC",
    "ConvergenceError",
    "GaussHermite",
    "Causal",
    "Heads",
    "Mixture",
    "ModelParams",
    "NonConvergenceWarning",
    "Rotary",
    "TheoryResult",
    "Tied",
    "Transitions",
    "Untied",
    "find_transitions",
    "learning_curve",
    "learning_curves",
    "linear_test_error",
    "solve",
    "solve_batch",
    "transition_table",
    "family_model",
    "ScanSettings",
    "scaling_table",
    "with_stability",
    "SimConfig",
    "simulate",
    "HistogramConfig",
    "run_histogram",
    "mechanism_scores",
    "run_gamp",
    "probe_landscape",
    "trust_map",
]


def __dir__() -> list[str]:
    return sorted(__all__)


def _version() -> str:
    """The installed distribution's version (pyproject.toml's, the one place it is written); a
    source tree that was never installed reads it from its pyproject.toml."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("attnphase")
    except PackageNotFoundError:
        import tomllib
        from pathlib import Path

        pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
        try:
            return tomllib.loads(pyproject.read_text())["project"]["version"]
        except (OSError, KeyError, tomllib.TOMLDecodeError):
            return "0+unknown"


__version__ = _version()
