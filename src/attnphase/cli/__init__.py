"""Command-line interface `attnphase` (typer): one module per subcommand group. Each command
parses its options, calls the library and prints; bad input exits with code 2 and one line
naming the option, before anything is computed or written."""

from . import (  # noqa: F401  (register commands)
    figure,
    gamp,
    histogram,
    landscape,
    outcomes,
    scaling,
    simulate,
    sweep,
    theory,
    transition,
    trust,
)
from .app import app
from .common import UsageError, parse_alphas

__all__ = ["UsageError", "app", "parse_alphas"]
