"""attnphase: positional vs semantic learning in a solvable model of dot-product attention.

Theory (state evolution, THEORY.md §2-§6) for tied rank-1 attention with two tokens, the
linear positional baseline, finite-d simulations (`attnphase.sim`, PyTorch), the histogram
task of the paper's Appendix A (`attnphase.histogram`), and the command-line interface. The
torch-based names (`SimConfig`, `simulate`, `HistogramConfig`, `run_histogram`,
`mechanism_scores`) are importable from here and load torch on first use.
"""

from .baseline import linear_baseline_matrix, linear_test_error
from .params import ALTERNATIVE_A, STANDARD_A, Mixture, ModelParams, Tied, Untied
from .theory import (
    BRANCHES,
    QMC,
    ConvergenceError,
    GaussHermite,
    NonConvergenceWarning,
    TheoryResult,
    learning_curve,
    learning_curves,
    solve,
    with_stability,
)
from .theory.l2.equations import Hats, Overlaps
from .transitions import Transitions, find_transitions
from .transitions.table import transition_table

_LAZY = {
    "SimConfig": "sim",
    "SimResult": "sim",
    "simulate": "sim",
    "HistogramConfig": "histogram",
    "run_histogram": "histogram",
    "mechanism_scores": "histogram",
    "run_gamp": "gamp",
    "GampResult": "gamp",
    "state_evolution_trace": "gamp",
    "trace_of_run": "gamp",
    "probe_landscape": "landscape",
    "LandscapeResult": "landscape",
    "trust_map": "trust",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module 'attnphase' has no attribute {name!r}")


__all__ = [
    "SimConfig",
    "SimResult",
    "simulate",
    "HistogramConfig",
    "run_histogram",
    "mechanism_scores",
    "run_gamp",
    "GampResult",
    "state_evolution_trace",
    "trace_of_run",
    "probe_landscape",
    "LandscapeResult",
    "trust_map",
    "ALTERNATIVE_A",
    "BRANCHES",
    "STANDARD_A",
    "ConvergenceError",
    "GaussHermite",
    "QMC",
    "Tied",
    "Untied",
    "Mixture",
    "Hats",
    "ModelParams",
    "NonConvergenceWarning",
    "Overlaps",
    "TheoryResult",
    "Transitions",
    "find_transitions",
    "transition_table",
    "learning_curve",
    "learning_curves",
    "linear_baseline_matrix",
    "linear_test_error",
    "solve",
    "with_stability",
]
__version__ = "0.2.0.dev0"
