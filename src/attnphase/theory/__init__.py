"""High-dimensional theory of low-rank dot-product attention (docs/theory.md §2-§7, §9).

One entry point (`solve`, `solve_batch`, `learning_curve`, `learning_curves` in `engine`) and
one result record (`TheoryResult`) for every model; the integration method (`GaussHermite`: the
exact L = 2 channel, `gauss_hermite`; `QMC`: any model, `qmc`) chooses the channel. Branches
and their continuation are in `branches`, the fixed-point loop (and its batch axis) in
`iterate`, the equations of §7 in `overlaps`, the linear baseline in `baseline`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._core.lazy import lazy_getattr
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

if TYPE_CHECKING:
    from .engine import (
        BRANCHES,
        fill_unconverged,
        learning_curve,
        learning_curves,
        solve,
        solve_batch,
    )

# the engine (numba, scipy) loads on first use: importing the package for its method and
# result types (the CLI's option defaults) stays light
_LAZY = {
    name: "engine"
    for name in (
        "BRANCHES",
        "fill_unconverged",
        "learning_curve",
        "learning_curves",
        "solve",
        "solve_batch",
    )
}


__getattr__ = lazy_getattr(__name__, _LAZY)


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
    "TheoryResult",
    "fill_unconverged",
    "learning_curve",
    "learning_curves",
    "resolve_method",
    "solve",
    "solve_batch",
]
