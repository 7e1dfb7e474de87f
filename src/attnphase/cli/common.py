"""Shared pieces of the command line: option types, parsers and the usage-error exit (code 2)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Annotated

import numpy as np
import typer

from ..params import ModelParams, check_positive

OmegaOpt = Annotated[float, typer.Option(help="mix of positional target, in [0, 1]")]
SigmaOpt = Annotated[float, typer.Option(help="token standard deviation (> 0)")]
LamOpt = Annotated[float, typer.Option(help="l2 regularisation lambda (>= 0)")]
AOpt = Annotated[str, typer.Option("--A", help="positional target a11,a12,a21,a22")]
FormatOpt = Annotated[str, typer.Option("--format", help="table|csv|json")]
AlphaOpt = Annotated[str, typer.Option(help="value, list a,b,c or start:stop:num")]
STANDARD_A_TEXT = "0.6,0.4,0.4,0.6"


class UsageError(ValueError):
    """Bad command-line input (exit code 2)."""


def _usage(err: ValueError) -> UsageError:
    """A model's ValueError ("name must ...") as a UsageError naming the option --name."""
    name = str(err).split()[0].replace("_", "-")
    return UsageError(f"--{name}: {err}")


def parse_alphas(text: str) -> list[float]:
    """A value, a comma-separated list, or start:stop:num (inclusive, num points)."""
    try:
        if ":" in text:
            start, stop, num = text.split(":")
            n = int(num)
            if n < 1:
                raise ValueError
            values = list(np.linspace(float(start), float(stop), n))
        else:
            values = [float(v) for v in text.split(",")]
    except ValueError:
        raise UsageError(
            f"--alpha must be a value, a comma-separated list or start:stop:num, got {text!r}"
        ) from None
    for v in values:
        try:
            check_positive("alpha", v)
        except ValueError as err:
            raise UsageError(f"--alpha: {err}") from None
    return values


def parse_order(text: str) -> tuple[int, int]:
    """'64,24' -> (64, 24); '32' -> (32, 32)."""
    try:
        parts = [int(v) for v in text.split(",")]
    except ValueError:
        parts = []
    if len(parts) == 1:
        parts *= 2
    if len(parts) != 2 or min(parts) < 2:
        raise UsageError(f"--order must be n or n_xi,n_y with integers >= 2, got {text!r}")
    return parts[0], parts[1]


def parse_matrix(text: str) -> tuple[float, ...]:
    try:
        vals = tuple(float(v) for v in text.split(","))
    except ValueError:
        vals = ()
    if len(vals) != 4:
        raise UsageError(f"--A must be four numbers a11,a12,a21,a22, got {text!r}")
    return vals


def build_params(omega: float, sigma: float, lam: float, A: str) -> ModelParams:
    try:
        return ModelParams(omega=omega, sigma=sigma, lam=lam, A=parse_matrix(A))
    except ValueError as err:
        raise _usage(err) from None


def write_atomic(path: Path, text: str) -> None:
    """Write text to path via a temporary file and a rename: never a partial file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w") as fh:
        fh.write(text + "\n")
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp files are private; results are ordinary files
    os.replace(tmp, path)


def _fail(err: Exception) -> None:
    typer.secho(f"error: {err}", err=True, fg=typer.colors.RED)
    raise typer.Exit(code=2)
