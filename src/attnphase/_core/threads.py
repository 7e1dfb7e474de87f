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


# local worker processes per usable core: each loads numpy, scipy and torch (a few hundred MB)
# and beyond a few per core they only wait for one another
PROCESSES_PER_CORE = 4


def check_threads(name: str, threads: int) -> int:
    """`threads` when it is an integer in [1, usable_cores()]; ValueError naming `name` otherwise
    (more threads than cores slow every job beside this one)."""
    if isinstance(threads, bool) or not isinstance(threads, int):
        raise ValueError(f"{name}: must be an integer, got {threads!r}")
    if threads < 1:
        raise ValueError(f"{name}: must be >= 1, got {threads}")
    cores = usable_cores()
    if threads > cores:
        raise ValueError(f"{name}: {threads} threads on {cores} usable core(s); at most {cores}")
    return threads


def check_processes(name: str, workers: int) -> int:
    """`workers` when it is an integer in [1, PROCESSES_PER_CORE * usable_cores()]; ValueError
    naming `name` otherwise."""
    if isinstance(workers, bool) or not isinstance(workers, int):
        raise ValueError(f"{name}: must be an integer, got {workers!r}")
    if workers < 1:
        raise ValueError(f"{name}: must be >= 1, got {workers}")
    cores = usable_cores()
    if workers > PROCESSES_PER_CORE * cores:
        raise ValueError(
            f"{name}: {workers} local processes on {cores} usable core(s); at most "
            f"{PROCESSES_PER_CORE * cores} ({PROCESSES_PER_CORE} a core: each loads the numerical "
            "libraries, and more only wait for one another)"
        )
    return workers


def size_thread_pools() -> None:
    """Set the pool variables the user left unset to `usable_cores()` and OpenMP's wait policy
    to passive; call before torch, numba or numpy load."""
    cores = str(usable_cores())
    for name in POOL_VARIABLES:
        os.environ.setdefault(name, cores)
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
