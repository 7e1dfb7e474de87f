"""High-dimensional theory of tied low-rank dot-product attention (THEORY.md §2-§7).

Two channel back-ends share the fixed-point loop (`iterate`) and the result record (`result`):
`l2`, the exact engine for the paper's case (L = 2, r = t = 1: closed forms and Gauss-Hermite
quadrature), and `general`, any L, r, t and encodings (the equations of `overlaps`, THEORY.md
§7, integrated by randomised quasi-Monte Carlo with error bars).
"""

from .l2.engine import BRANCHES, DEFAULT_ORDER, branch_curves, learning_curve, solve
from .result import ConvergenceError, NonConvergenceWarning, TheoryResult

__all__ = [
    "BRANCHES",
    "DEFAULT_ORDER",
    "ConvergenceError",
    "NonConvergenceWarning",
    "TheoryResult",
    "branch_curves",
    "learning_curve",
    "solve",
]
