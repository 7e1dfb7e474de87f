"""Transitions of docs/theory.md §5: alpha_c (training losses of the semantic and positional
branches
cross), alpha_l (the global minimum's test error equals eps_lin), and the spinodals (where a
branch stops existing along its continuation), with either integration method: Gauss-Hermite
(exact L=2 channel, error from a second quadrature order) or QMC (any L, r, t and encodings,
error from independent scramblings). `find_transitions` scans a grid of alpha at one model
(`scan.scan_alphas`); `lines` and `line_table` follow them along a parameter by continuation.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, cast

import numpy as np

from .._core.lazy import lazy_getattr
from ..params import ModelParams, check_int
from ..theory import QMC, GaussHermite, Method, resolve_method
from .record import Transitions

if TYPE_CHECKING:
    from .roots import bracket_sign_changes, refine_or_interpolate, refine_root

# scipy loads on first use: importing the package for TRANSITION_POINTS or `paths` stays light
_LAZY = {name: "roots" for name in ("bracket_sign_changes", "refine_or_interpolate", "refine_root")}


__getattr__ = lazy_getattr(__name__, _LAZY)


TRANSITION_POINTS = 4096  # per scrambling (QMC): alpha_c to ~1e-3 at L=3, omega=0.3
APPROACHES = ("auto", "direct", "scan")  # of find_transitions


def find_transitions(
    params: ModelParams | None = None,
    *,
    alpha_min: float = 0.2,
    alpha_max: float = 2.5,
    num: int = 24,
    method: Method | str = "auto",
    progress: bool = False,
    precision: float | None = None,
    approach: str = "auto",
) -> Transitions:
    """alpha_c, alpha_l (docs/theory.md §5) and the spinodals on [alpha_min, alpha_max].
    method "auto": `GaussHermite()` for the paper's L=2 case (errors from its `check_order`),
    `QMC(points=TRANSITION_POINTS)` otherwise (errors from the spread over scramblings: at
    least 2). approach "scan": the branches followed on a grid of `num` alphas, each root
    refined between its grid points; "direct" (Gauss-Hermite only): each transition solved by
    Newton on its defining system from one coarse scan (`direct`; several times faster, the
    same roots within their errors), the scan where that cannot be trusted (with a warning);
    "auto": direct with Gauss-Hermite (silently scanning where it cannot be trusted), the scan
    with QMC. precision: solved again with finer integration (`theory.precision.finer`: QMC
    points doubled, Gauss-Hermite orders raised) until alpha_c_err and alpha_l_err are each at
    most this fraction of their transition (`meets_precision`), the method given being the
    first rung; where the ladder ends first, the last answer with a PrecisionWarning (its
    `method` says what was used).

    Examples
    --------
    The paper's model on a narrow window (Gauss-Hermite, solved directly: 5 s on two quiet
    cores once compiled, 16 s on [0.2, 2.5]; `approach="scan"` takes 25 s and 86 s):

    >>> from attnphase import ModelParams, find_transitions
    >>> tr = find_transitions(ModelParams(), alpha_min=1.0, alpha_max=1.8)
    >>> round(tr.alpha_c, 4), round(tr.alpha_l, 4)
    (1.2516, 1.492)
    >>> tr.alpha_c_err < 0.001 * tr.alpha_c
    True
    """
    from ..theory.precision import check_precision
    from .direct import direct_transitions
    from .scan import scan_alphas

    p = params if params is not None else ModelParams()
    if approach not in APPROACHES:
        raise ValueError(f"approach must be one of {APPROACHES}, got {approach!r}")
    if not 0 < alpha_min < alpha_max or not np.isfinite(alpha_max):
        raise ValueError(f"need 0 < alpha_min < alpha_max, got {alpha_min}, {alpha_max}")
    num = check_int("num", num, minimum=3)
    alphas = [float(a) for a in np.linspace(alpha_min, alpha_max, num)]
    m = resolve_method(method, p, QMC(points=TRANSITION_POINTS))
    if precision is not None:
        precision = check_precision(precision, m.tol)
    if m.averages_replicas:
        check_int("randomisations", len(m.replicas()), minimum=2)
        if approach == "direct":
            raise ValueError(
                "approach: 'direct' solves with the Gauss-Hermite method (the exact L = 2 "
                f"channel), got {m.name}; scan instead"
            )

    def compute(method: Method) -> Transitions:
        if approach != "scan" and not method.averages_replicas:
            found = direct_transitions(p, cast(GaussHermite, method), alpha_min, alpha_max)
            if isinstance(found, Transitions):
                return found
            if approach == "direct":
                warnings.warn(f"approach 'direct': {found}; scanned instead", stacklevel=3)
        return scan_alphas(p, alphas, method, progress=progress)

    result = compute(m)
    return result if precision is None else _refined(result, precision, compute)


def above_precision(values: Mapping[str, float], precision: float) -> list[str]:
    """Which of alpha_c and alpha_l (`values` holds them and their `_err`) have an error above
    `precision` times their value; a transition absent from the window (NaN) has nothing to
    refine, a NaN error does not meet it."""
    return [
        name
        for name in ("alpha_c", "alpha_l")
        if np.isfinite(values[name]) and not values[f"{name}_err"] <= precision * abs(values[name])
    ]


def meets_precision(tr: Transitions, precision: float) -> bool:
    """Whether alpha_c and alpha_l each have an error at most `precision` times their value
    (`above_precision`)."""
    return not above_precision(vars(tr), precision)


def _refined(
    result: Transitions, precision: float, scan: Callable[[Method], Transitions]
) -> Transitions:
    """`result`, scanned again with `finer` integration until `meets_precision` (docstring of
    `find_transitions`)."""
    from ..theory.precision import PrecisionWarning, finer

    while not meets_precision(result, precision):
        method = finer(result.method)
        if method is None:
            ratios = [
                err / abs(value) if np.isfinite(err) else np.inf
                for value, err in (
                    (result.alpha_c, result.alpha_c_err),
                    (result.alpha_l, result.alpha_l_err),
                )
                if np.isfinite(value)
            ]
            worst = max(ratios)
            warnings.warn(
                f"precision {precision:g} not reached: {worst:.2g} at the budget's end "
                f"({result.method.settings()})",
                PrecisionWarning,
                stacklevel=3,
            )
            return result
        result = scan(method)
    return result


__all__ = [
    "TRANSITION_POINTS",
    "Transitions",
    "above_precision",
    "bracket_sign_changes",
    "find_transitions",
    "meets_precision",
    "refine_or_interpolate",
    "refine_root",
]
