"""Interruptions: SIGTERM handled like Ctrl-C (the same clean-up runs: leases released, workers
stopped), and `Interrupted`, the exception that says what an interrupted run kept."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class Interrupted(Exception):
    """A run stopped by Ctrl-C or SIGTERM: what it kept and how to go on (its message)."""


class PartialInterrupt(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM) inside a loop of results: a KeyboardInterrupt that carries the results
    the loop finished (`finished`, in order), for the caller to print or store."""

    def __init__(self, finished: list) -> None:
        super().__init__()
        self.finished = finished


def _raise_interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block SIGTERM raises KeyboardInterrupt in the main thread (elsewhere: no
    change); the previous handler is restored after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
