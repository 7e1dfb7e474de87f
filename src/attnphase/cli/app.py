"""The typer application every subcommand module registers with."""

from __future__ import annotations

from typing import Annotated

import typer

from .. import __version__

app = typer.Typer(
    help="Positional vs semantic learning in a solvable model of dot-product attention.",
    no_args_is_help=True,
    add_completion=False,
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"attnphase {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="print the version and exit"
        ),
    ] = False,
) -> None:
    """Positional vs semantic learning in a solvable model of dot-product attention."""
