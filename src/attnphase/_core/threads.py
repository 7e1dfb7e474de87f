"""The thread pools of torch, numba and the BLAS, sized once, before any of them loads, from the
cores this process may use (its CPU affinity and its cgroup's CPU quota), never more; with
ATTNPHASE_THREADS to override. Their OpenMP threads sleep when idle instead of spinning, so that
jobs side by side on a few shared cores do not steal each other's time."""

from __future__ import annotations

import math
import os
import warnings
from pathlib import Path

OVERRIDE = "ATTNPHASE_THREADS"
# the variables the libraries read when they load: an explicit setting of the user's wins
POOL_VARIABLES = ("OMP_NUM_THREADS", "NUMBA_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
CPU_MAX = Path("/sys/fs/cgroup/cpu.max")  # cgroup v2: "<quota> <period>" or "max <period>"


def cgroup_cores(cpu_max: Path = CPU_MAX) -> int | None:
    """The cgroup's CPU quota in cores, rounded up; None without a quota (or a readable file)."""
    try:
        quota, period = cpu_max.read_text().split()[:2]
    except (OSError, ValueError):
        return None
    if quota == "max":
        return None
    return max(1, math.ceil(int(quota) / int(period)))


def usable_cores() -> int:
    """ATTNPHASE_THREADS when it is set to an integer >= 1 (a warning otherwise), else the cores
    of this process's affinity mask, capped by its cgroup's quota."""
    text = os.environ.get(OVERRIDE)
    if text is not None:
        if text.strip().isdigit() and int(text) >= 1:
            return int(text)
        warnings.warn(f"{OVERRIDE}={text!r} is not an integer >= 1; ignored", stacklevel=2)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    quota = cgroup_cores()
    return max(1, min(cores or 1, quota or cores or 1))


def size_thread_pools() -> None:
    """Set the pool variables the user left unset to `usable_cores()` and OpenMP's wait policy
    to passive; call before torch, numba or numpy load."""
    cores = str(usable_cores())
    for name in POOL_VARIABLES:
        os.environ.setdefault(name, cores)
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
