"""`python -m attnphase` runs the command-line interface."""

from .cli import app

app(prog_name="attnphase")
