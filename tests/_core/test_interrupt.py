"""SIGTERM handled like Ctrl-C, and the progress lines of runs outside a terminal."""

import os
import signal
import sys

import pytest

from attnphase._core import progress
from attnphase._core.interrupt import sigterm_as_interrupt


def test_sigterm_raises_keyboard_interrupt_inside_the_block_only():
    previous = signal.getsignal(signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt):
        with sigterm_as_interrupt():
            os.kill(os.getpid(), signal.SIGTERM)  # delivered at the next bytecode
            sum(range(1000))
    assert signal.getsignal(signal.SIGTERM) == previous


def test_progress_outside_a_terminal_is_plain_lines(monkeypatch, capsys):
    """No carriage returns (a log file gets one line per update), nothing before the delay."""
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False, raising=False)
    monkeypatch.setattr(progress, "DELAY_SECONDS", 0.0)
    monkeypatch.setattr(progress, "LINE_SECONDS", 0.0)
    for _ in progress.progress_bar(range(3), enabled=True, desc="points"):
        pass
    err = capsys.readouterr().err
    assert "\r" not in err and err.count("\n") >= 2 and "points" in err and "3/3" in err
    for _ in progress.progress_bar(range(3), enabled=False, desc="quiet"):
        pass
    assert capsys.readouterr().err == ""
