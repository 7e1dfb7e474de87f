"""High-dimensional theory of tied low-rank dot-product attention (THEORY.md §2-§7).

Two channel back-ends share the fixed-point loop (`iterate`) and the result record (`result`):
`l2`, the exact engine for the paper's case (L = 2, r = t = 1: closed forms and Gauss-Hermite
quadrature), and `general`, any L, r, t and encodings (the equations of `overlaps`, THEORY.md
§7, integrated by randomised quasi-Monte Carlo with error bars).
"""

from collections.abc import Sequence

from ..params import ModelParams
from .general.engine import (
    DEFAULT_POINTS,
    DEFAULT_RANDOMISATIONS,
    GENERAL_BRANCHES,
    MIXTURE_BRANCH,
    GeneralResult,
    general_learning_curve,
    solve_general,
)
from .general.mixture import Mixture
from .l2.engine import BRANCHES, DEFAULT_ORDER, branch_curves, learning_curve, solve
from .result import ConvergenceError, NonConvergenceWarning, TheoryResult
from .stability import Stability, with_stability

ENGINES = ("auto", "l2", "general")


def pick_engine(
    engine: str, p: ModelParams, untied: bool = False, mixture: Mixture | None = None
) -> str:
    """ "auto" is the exact engine where it applies (L = 2, r = t = 1, C = (+1, -1), tied,
    Gaussian tokens), the general one otherwise; "l2" for another model is an error naming the
    engine."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    if engine == "auto":
        return "l2" if p.is_l2 and not untied and mixture is None else "general"
    if engine == "l2" and (untied or mixture is not None):
        raise ValueError(
            "engine l2 solves only the tied model with Gaussian tokens (use engine general "
            "for untied query and key or correlated tokens)"
        )
    if engine == "l2" and not p.is_l2:
        raise ValueError(
            f"engine l2 solves only L = 2, rank = teacher_rank = 1, encodings (+1, -1); got "
            f"L={p.L}, rank={p.rank}, teacher_rank={p.teacher_rank} (use engine general)"
        )
    return engine


def theory_curves(
    alphas: Sequence[float],
    p: ModelParams,
    branches: Sequence[str],
    *,
    engine: str = "auto",
    order=DEFAULT_ORDER,
    points: int = DEFAULT_POINTS,
    randomisations: int = DEFAULT_RANDOMISATIONS,
    progress: bool = False,
    stability: bool = False,
    untied: bool = False,
    mixture: Mixture | None = None,
) -> list[TheoryResult | GeneralResult]:
    """Learning curves of the given branches on the chosen engine, branch by branch; with
    `stability`, every fixed point carries THEORY §9's rs_stability and jump_mass (tied model,
    Gaussian tokens only); `untied`: separate query and key (general engine, rank 1,
    docs/theory-untied.md); `mixture`: correlated tokens (general engine,
    docs/theory-mixtures.md)."""
    if (untied or mixture is not None) and stability:
        raise ValueError(
            "stability: measured for the tied model with Gaussian tokens only, not with "
            "untied query and key or correlated tokens"
        )
    if pick_engine(engine, p, untied, mixture) == "l2":
        curves = branch_curves(alphas, p, branches, order, progress)
    else:
        curves = [
            r
            for b in branches
            for r in general_learning_curve(
                alphas,
                p,
                branch=b,
                points=points,
                randomisations=randomisations,
                progress=progress,
                untied=untied,
                mixture=mixture,
            )
        ]
    if not stability:
        return curves
    from tqdm.auto import tqdm

    return [with_stability(r) for r in tqdm(curves, desc="RS stability", disable=not progress)]


__all__ = [
    "BRANCHES",
    "DEFAULT_POINTS",
    "DEFAULT_RANDOMISATIONS",
    "ENGINES",
    "GENERAL_BRANCHES",
    "MIXTURE_BRANCH",
    "GeneralResult",
    "Mixture",
    "general_learning_curve",
    "pick_engine",
    "solve_general",
    "theory_curves",
    "DEFAULT_ORDER",
    "ConvergenceError",
    "NonConvergenceWarning",
    "Stability",
    "TheoryResult",
    "with_stability",
    "branch_curves",
    "learning_curve",
    "solve",
]
