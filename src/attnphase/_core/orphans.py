"""Worker processes that die with their parent, even when it is killed by SIGKILL, and the one
pool of them (`worker_pool`) that the sweep backends and the simulation grid use.

`close_pool` ends a pool: after finished work it waits for the workers to exit; on an interrupt
or an error it stops them at once (a worker runs until its task ends otherwise, which can be a
minute). Workers ignore SIGINT: Ctrl-C at a terminal reaches the whole process group, and the
parent alone answers it.

On Linux the kernel sends the worker SIGKILL when its parent dies (prctl(PR_SET_PDEATHSIG));
on any system a daemon thread exits the worker once its parent is gone. A parent that died
while the worker was still starting (importing torch can take seconds on a loaded machine) is
caught by the check right after prctl.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing as mp
import os
import signal
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor

_PR_SET_PDEATHSIG = 1
POLL_SECONDS = 0.5


def _exit_when_orphaned(parent_pid: int) -> None:
    while True:
        time.sleep(POLL_SECONDS)
        if os.getppid() != parent_pid:
            os._exit(1)


def die_with_parent(parent_pid: int) -> None:
    """Call first in a worker's initializer, with the pid of the process that started it."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent_pid:
        os._exit(1)
    threading.Thread(target=_exit_when_orphaned, args=(parent_pid,), daemon=True).start()


def warning_line(message: Warning | str) -> str:
    """A Python warning as one readable line, as the command line shows it: `warning: ...`."""
    return f"warning: {' '.join(str(message).split())}"


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    sys.stderr.write(warning_line(message) + "\n")


def _start_worker(parent_pid: int, threads: int | None) -> None:
    die_with_parent(parent_pid)
    warnings.showwarning = _show_warning  # one line, as in the parent, not Python's source line
    from tqdm import tqdm

    # tqdm's default lock holds a multiprocessing semaphore, which a worker stopped by
    # `close_pool` never releases (the resource tracker then reports it leaked at exit)
    tqdm.set_lock(threading.RLock())
    # Ctrl-C at a terminal signals the whole process group: the parent alone handles it and
    # stops its workers (`close_pool`), which would otherwise each print a traceback
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if threads is not None:
        import torch

        torch.set_num_threads(threads)


def worker_pool(workers: int, threads: int | None = None) -> ProcessPoolExecutor:
    """`workers` spawned processes that die with this one; with `threads`, each sets its torch
    thread count once at start-up (None: torch is not imported there)."""
    return ProcessPoolExecutor(
        workers,
        mp_context=mp.get_context("spawn"),
        initializer=_start_worker,
        initargs=(os.getpid(), threads),
    )


@contextlib.contextmanager
def children_ignore_interrupts() -> Iterator[None]:
    """Processes started within the block (e.g. a Dask LocalCluster's) ignore SIGINT: an
    ignored signal stays ignored across exec, and Python then installs no handler of its own, so
    Ctrl-C at a terminal, which reaches the whole process group, interrupts the parent alone
    instead of printing a traceback from every worker. Ctrl-C is ignored within the block too
    (only the main thread can change it; elsewhere nothing changes)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


STOP_SECONDS = 2.0  # a stopped worker's grace before SIGKILL
STOP_POLL_SECONDS = 0.2


def close_pool(pool: ProcessPoolExecutor, finished: bool) -> None:
    """Shut `pool` down: waiting for its workers when the work `finished`, else cancelling what
    is queued and stopping the workers (SIGTERM: a worker computes and stores nothing of its
    own, the parent keeps every finished result), SIGKILL for one still alive after
    STOP_SECONDS."""
    workers = list((getattr(pool, "_processes", None) or {}).values())  # no public handle
    if not finished:
        pool.shutdown(wait=False, cancel_futures=True)
        deadline = time.monotonic() + STOP_SECONDS
        while time.monotonic() < deadline and any(w.is_alive() for w in workers):
            for worker in workers:  # again: a worker may have taken a call already queued
                if worker.is_alive() and worker.pid is not None:
                    with contextlib.suppress(ProcessLookupError):  # it exited in between
                        os.kill(worker.pid, signal.SIGTERM)
            for worker in workers:
                worker.join(STOP_POLL_SECONDS)
        for worker in workers:
            if worker.is_alive():
                worker.kill()
                worker.join()
    pool.shutdown(wait=True, cancel_futures=True)
