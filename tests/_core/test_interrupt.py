"""SIGTERM handled like Ctrl-C, an interrupt a library loses, worker pools stopped at once,
and the progress lines of runs outside a terminal."""

import ctypes
import os
import signal
import sys
import time

import pytest
import typer

from attnphase._core import progress
from attnphase._core.interrupt import interrupt_requested, sigterm_as_interrupt
from attnphase._core.orphans import STOP_SECONDS, close_pool, worker_pool
from attnphase.cli.app import OneLineErrors


def test_sigterm_raises_keyboard_interrupt_inside_the_block_only():
    previous = signal.getsignal(signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt):
        with sigterm_as_interrupt():
            os.kill(os.getpid(), signal.SIGTERM)  # delivered at the next bytecode
            sum(range(1000))
    assert signal.getsignal(signal.SIGTERM) == previous


def _lost_interrupt_app(interrupt: bool) -> typer.Typer:
    """A command whose library loses the interrupt: SIGTERM arrives inside a callback from C
    (as in numba's compiler cache), which can only report it, and the library then fails."""
    app = typer.Typer(cls=OneLineErrors)

    def callback() -> None:
        if interrupt:
            os.kill(os.getpid(), signal.SIGTERM)
        sum(range(1000))

    @app.command()
    def compile() -> None:
        ctypes.CFUNCTYPE(None)(callback)()
        raise RuntimeError("no compiled object yet")

    @app.command()
    def other() -> None:
        pass

    return app


def test_an_interrupt_a_library_loses_is_still_one_line_and_exit_130(capsys):
    with pytest.raises(SystemExit) as stop:
        _lost_interrupt_app(interrupt=True)(["compile"])
    assert stop.value.code == 130
    err = capsys.readouterr().err
    assert err.strip() == "interrupted", err  # no "Exception ignored", no traceback
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_failure_without_an_interrupt_is_not_called_one():
    with pytest.raises(RuntimeError, match="no compiled object yet"):
        _lost_interrupt_app(interrupt=False)(["compile"])
    assert not interrupt_requested()


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


def test_an_interrupted_pool_stops_its_workers_at_once_not_at_their_tasks_end():
    """Only the parent got the signal (`kill -INT`): the workers' minute-long tasks are
    interrupted, the queued ones cancelled, and no worker outlives `close_pool` (it waited for
    the tasks' end before, 13 s in a transition line)."""
    pool = worker_pool(2)
    futures = [pool.submit(time.sleep, 60) for _ in range(5)]
    deadline = time.monotonic() + 60
    while not (futures[0].running() and futures[1].running()) and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.0)  # the workers in their tasks
    workers = list(pool._processes.values())
    start = time.monotonic()
    close_pool(pool, finished=False)
    assert time.monotonic() - start < STOP_SECONDS + 1.0
    assert workers and not any(w.is_alive() for w in workers)
    assert futures[-1].cancelled()


def test_a_worker_holds_no_semaphore_a_stop_would_leak_and_warns_in_one_line():
    """A worker's progress bars lock with a thread lock: tqdm's default holds a
    multiprocessing semaphore, and two workers stopped by `close_pool` made the resource
    tracker print "2 leaked semaphore objects" after an interrupted `transition`. Its warnings
    are one line, as the parent's (Python's showed the source line)."""
    pool = worker_pool(1)
    try:
        lock = pool.submit(eval, "type(__import__('tqdm').tqdm.get_lock()).__name__").result()
        shown = pool.submit(eval, "__import__('warnings').showwarning.__module__").result()
    finally:
        close_pool(pool, finished=True)
    assert lock == "RLock"
    assert shown == "attnphase._core.orphans"
