"""Interruptions: SIGTERM handled like Ctrl-C (the same clean-up runs: leases released, workers
stopped), and `Interrupted`, the exception that says what an interrupted run kept.

A KeyboardInterrupt raised where a library cannot pass it on (a callback from C, such as
numba's compiler cache) is lost, and the library fails another way; `interrupt_requested`
tells the caller that the failure followed an interrupt."""

from __future__ import annotations

import signal
import sys
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


_requested = threading.Event()


def interrupt_requested() -> bool:
    """Whether Ctrl-C or SIGTERM arrived inside the current `sigterm_as_interrupt` block."""
    return _requested.is_set()


def _raise_interrupt(signum, frame) -> None:
    _requested.set()
    raise KeyboardInterrupt


def _quiet_lost_interrupts(hook):  # type: ignore[no-untyped-def]
    """sys.unraisablehook without the report of an interrupt a C callback could not raise."""

    def quiet(unraisable) -> None:  # type: ignore[no-untyped-def]
        if not (_requested.is_set() and isinstance(unraisable.exc_value, KeyboardInterrupt)):
            hook(unraisable)

    return quiet


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block Ctrl-C and SIGTERM raise KeyboardInterrupt in the main thread and are
    remembered (`interrupt_requested`); elsewhere: no change. The previous handlers are
    restored after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _requested.clear()
    previous = {s: signal.signal(s, _raise_interrupt) for s in (signal.SIGTERM, signal.SIGINT)}
    hook, sys.unraisablehook = sys.unraisablehook, _quiet_lost_interrupts(sys.unraisablehook)
    try:
        yield
    finally:
        sys.unraisablehook = hook
        for number, handler in previous.items():
            signal.signal(number, handler)
