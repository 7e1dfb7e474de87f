"""attnphase: positional vs semantic learning in a solvable model of dot-product attention.

Theory (state evolution, THEORY.md §2-§6) for tied rank-1 attention with two tokens, the linear
positional baseline, finite-d simulations (`attnphase.sim`, PyTorch; `SimConfig`, `simulate`
are importable from here and load torch on first use), and the command-line interface.
"""

from .baseline import linear_baseline_matrix, linear_test_error
from .equations import Hats, Overlaps
from .params import ALTERNATIVE_A, STANDARD_A, ModelParams
from .theory import (
    BRANCHES,
    DEFAULT_ORDER,
    ConvergenceError,
    NonConvergenceWarning,
    TheoryResult,
    learning_curve,
    solve,
)
from .transitions import Transitions, find_transitions

_SIM_EXPORTS = ("SimConfig", "SimResult", "simulate")


def __getattr__(name: str):
    if name in _SIM_EXPORTS:
        from . import sim

        return getattr(sim, name)
    raise AttributeError(f"module 'attnphase' has no attribute {name!r}")


__all__ = [
    "SimConfig",
    "SimResult",
    "simulate",
    "ALTERNATIVE_A",
    "BRANCHES",
    "DEFAULT_ORDER",
    "STANDARD_A",
    "ConvergenceError",
    "Hats",
    "ModelParams",
    "NonConvergenceWarning",
    "Overlaps",
    "TheoryResult",
    "Transitions",
    "find_transitions",
    "learning_curve",
    "linear_baseline_matrix",
    "linear_test_error",
    "solve",
]
__version__ = "0.1.0"
