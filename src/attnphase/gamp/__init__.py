"""GAMP on data (docs/theory.md §8, the paper's Appendix B, Algorithm 1) and the state evolution of
the same run (§7), iteration by iteration."""

from .algorithm import DEFAULT_DAMPING, run_gamp
from .report import gamp_runs, trace_table
from .result import GampResult, GampStep
from .trace import StateEvolutionTrace, state_evolution_trace, trace_of_run, trace_start

__all__ = [
    "DEFAULT_DAMPING",
    "GampResult",
    "GampStep",
    "StateEvolutionTrace",
    "gamp_runs",
    "run_gamp",
    "state_evolution_trace",
    "trace_of_run",
    "trace_start",
    "trace_table",
]
