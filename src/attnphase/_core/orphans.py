"""Worker processes that die with their parent, even when it is killed by SIGKILL.

On Linux the kernel sends the worker SIGKILL when its parent dies (prctl(PR_SET_PDEATHSIG));
on any system a daemon thread exits the worker once its parent is gone. A parent that died
while the worker was still starting (importing torch can take seconds on a loaded machine) is
caught by the check right after prctl.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time

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
