"""High-dimensional theory of low-rank dot-product attention (THEORY.md §2-§7, §9).

One entry point (`solve`, `learning_curve`, `learning_curves` in `engine`) and one result record
(`TheoryResult`) for every model; the integration method (`GaussHermite`: the exact L = 2
channel, `l2`; `QMC`: any model, `general`) chooses the channel. The fixed-point loop is
`iterate`; the equations of §7 are in `overlaps`.
"""

from .engine import BRANCHES, learning_curve, learning_curves, solve
from .method import (
    CHECK_ORDER,
    DEFAULT_ORDER,
    DEFAULT_POINTS,
    DEFAULT_RANDOMISATIONS,
    QMC,
    GaussHermite,
    Method,
    resolve_method,
)
from .result import ConvergenceError, NonConvergenceWarning, TheoryResult
from .stability import Stability, with_stability

__all__ = [
    "BRANCHES",
    "CHECK_ORDER",
    "DEFAULT_ORDER",
    "DEFAULT_POINTS",
    "DEFAULT_RANDOMISATIONS",
    "QMC",
    "ConvergenceError",
    "GaussHermite",
    "Method",
    "NonConvergenceWarning",
    "Stability",
    "TheoryResult",
    "learning_curve",
    "learning_curves",
    "resolve_method",
    "solve",
    "with_stability",
]
