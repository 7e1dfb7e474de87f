"""Precision on demand: a fixed point, or a curve, solved again with finer integration until
its reported errors meet a target, within a budget (docs/trust.md).

The target is relative: every checked number's error (`<name>_err`) at most `precision` times
its size. Checked are the test error, the training loss and the order parameter of the kind
of fixed point reached (theta where it is semantic, the positional rows of M where positional),
so that replicas that disagree on whether a branch exists (a large spread of the order
parameter) fail the target too. Finer integration: QMC doubles its points (up to MAX_POINTS),
Gauss-Hermite steps through ORDER_LADDER with the previous order as its check order, so that
its error is the change between the last two orders. Where the budget ends first, the best
answer is kept and its status says what was reached.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections.abc import Callable, Sequence

import numpy as np

from .method import QMC, GaussHermite, Method
from .result import TheoryResult

MAX_POINTS = 2**16  # QMC points per scrambling, the budget's end
# Gauss-Hermite orders (n_xi, n_y) past the default (64, 24); each step about doubles the cost
ORDER_LADDER = ((64, 24), (96, 32), (128, 48))


class PrecisionWarning(UserWarning):
    """The budget ran out before the errors met the requested precision."""


def check_precision(precision: float, tol: float | None = None) -> float:
    """`precision` as a float in (0, 1), and at least the solver's tolerance `tol` where given
    (no error is certified below the fixed point's own residual: such a target would climb the
    whole ladder to the budget's end); ValueError naming it otherwise."""
    try:
        value = float(precision)
    except (TypeError, ValueError):
        raise ValueError(f"precision must be a number in (0, 1), got {precision!r}") from None
    if not 0.0 < value < 1.0:
        raise ValueError(f"precision must be a number in (0, 1), got {precision!r}")
    if tol is not None and value < tol:
        raise ValueError(
            f"precision must be at least the solver's tolerance tol = {tol:g} (no error is "
            f"certified below the fixed point's own residual), got {precision!r}"
        )
    return value


def ladder(method: Method) -> list[Method]:
    """`method` and every finer integration after it (`finer`) to the budget's end: what a
    precision that is never met runs through."""
    rungs = [method]
    while (nxt := finer(rungs[-1])) is not None:
        rungs.append(nxt)
    return rungs


def finer(method: Method) -> Method | None:
    """The next integration of the ladder: QMC with twice the points, Gauss-Hermite at the next
    order with the current one as its check order; None at the budget's end."""
    if isinstance(method, QMC):
        if method.points * 2 > MAX_POINTS:
            return None
        return dataclasses.replace(method, points=method.points * 2)
    assert isinstance(method, GaussHermite)
    higher = [o for o in ORDER_LADDER if o[0] > method.order[0] and o[1] >= method.order[1]]
    if not higher:
        return None
    return dataclasses.replace(method, order=higher[0], check_order=method.order)


def relative_error(result: TheoryResult) -> float:
    """The largest error / size over the checked numbers (module docstring); inf where an error
    is missing or the point did not converge."""
    if not result.converged:
        return math.inf
    names = ["test_error", "train_loss"]
    kind = result.kind
    if kind in ("semantic", "mixed"):
        names.append("theta")
    worst = 0.0
    for name in names:
        value = np.abs(np.asarray(result.values[name], dtype=float))
        error = np.asarray(result.errors.get(name, np.nan), dtype=float)
        size = float(value.max())
        if size == 0.0:
            continue
        worst = max(worst, float(np.max(np.abs(error))) / size)
    if kind in ("positional", "mixed"):
        K = result.params.K
        M = np.abs(np.asarray(result.values["M"], dtype=float))[:K]
        M_err = np.asarray(result.errors.get("M", np.nan), dtype=float)
        M_err = M_err[:K] if M_err.ndim else M_err
        worst = max(worst, float(np.max(np.abs(M_err))) / float(M.max()))
    return math.inf if math.isnan(worst) else worst


def rung_name(method: Method) -> str:
    """A rung of the ladder in words: "8192 points" (QMC) or "order (96, 32)"."""
    if isinstance(method, QMC):
        return f"{method.points} points"
    assert isinstance(method, GaussHermite)
    return f"order {method.order}"


def _budget_note(results: Sequence[TheoryResult], precision: float, method: Method) -> str:
    reached = max(relative_error(r) for r in results)
    return (
        f"precision {precision:g} not reached: {reached:.2g} at the budget's end "
        f"({rung_name(method)})"
    )


def refine(
    compute: Callable[[Method], list[TheoryResult]], method: Method, precision: float
) -> list[TheoryResult]:
    """compute(method), then compute(finer(method)), ... until every result's
    `relative_error` is at most `precision` or the ladder ends: then the last results, their
    status saying what was reached, and a PrecisionWarning."""
    precision = check_precision(precision, method.tol)
    results = compute(method)
    while max(relative_error(r) for r in results) > precision:
        nxt = finer(method)
        if nxt is None:
            note = _budget_note(results, precision, method)
            warnings.warn(note, PrecisionWarning, stacklevel=3)
            return [dataclasses.replace(r, status=f"{r.status}; {note}") for r in results]
        method = nxt
        results = compute(method)
    return results
