"""Worker processes that die with their parent, even when it is killed by SIGKILL, and the one
pool of them (`worker_pool`) that the sweep backends and the simulation grid use.

`close_pool` ends a pool: after finished work it waits for the workers to exit; on an interrupt
or an error it stops them at once (a worker runs until its task ends otherwise, which can be a
minute when only the parent got the signal, as from `kill -INT`).

On Linux the kernel sends the worker SIGKILL when its parent dies (prctl(PR_SET_PDEATHSIG));
on any system a daemon thread exits the worker once its parent is gone. A parent that died
while the worker was still starting (importing torch can take seconds on a loaded machine) is
caught by the check right after prctl.
"""

from __future__ import annotations

import ctypes
import multiprocessing as mp
import os
import signal
import sys
import threading
import time
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


def _start_worker(parent_pid: int, threads: int | None) -> None:
    die_with_parent(parent_pid)
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


STOP_SECONDS = 2.0  # a stopped worker's grace before SIGKILL
STOP_POLL_SECONDS = 0.2


def close_pool(pool: ProcessPoolExecutor, finished: bool) -> None:
    """Shut `pool` down: waiting for its workers when the work `finished`, else cancelling what
    is queued and interrupting the tasks that run (SIGINT: the task ends with KeyboardInterrupt
    and its worker exits cleanly), SIGKILL for a worker still busy after STOP_SECONDS."""
    workers = list((getattr(pool, "_processes", None) or {}).values())  # no public handle
    if not finished:
        pool.shutdown(wait=False, cancel_futures=True)
        deadline = time.monotonic() + STOP_SECONDS
        while time.monotonic() < deadline and any(w.is_alive() for w in workers):
            for worker in workers:  # again: a worker may have taken a call already queued
                if worker.is_alive() and worker.pid is not None:
                    os.kill(worker.pid, signal.SIGINT)
            for worker in workers:
                worker.join(STOP_POLL_SECONDS)
        for worker in workers:
            if worker.is_alive():
                worker.kill()
                worker.join()
    pool.shutdown(wait=True, cancel_futures=True)
