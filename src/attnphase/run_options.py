"""What a finite-d run accepts (the simulations, GAMP, the landscape and outcome studies),
known without loading torch, so that a command line with a wrong choice is refused at once."""

from __future__ import annotations

from .params import check_positive

OPTIMIZERS = ("gd", "adam", "lbfgs")
INITS = ("semantic", "positional", "random", "mixed")
TRACE_METHODS = ("auto", "dense", "hutchinson")  # the landscape's tr(H^-1)

# the largest RMS-gradient tolerance: a run's gradient at its start measured 4.2e-3 to 2.0e-2
# (d = 50 to 1000, alpha 0.5 and 2, both starts), so a tolerance near it stops where it begins
MAX_GTOL = 1e-4


def check_gtol(gtol: float) -> float:
    """An RMS-gradient tolerance in (0, MAX_GTOL]; ValueError naming `gtol` otherwise."""
    gtol = check_positive("gtol", gtol)
    if gtol > MAX_GTOL:
        raise ValueError(
            f"gtol must be at most {MAX_GTOL:g}: a run's RMS gradient at its start is 4e-3 to "
            f"2e-2, so a tolerance of {gtol:g} would call the start converged"
        )
    return gtol
