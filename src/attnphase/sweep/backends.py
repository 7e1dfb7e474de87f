"""Where points are computed: in the caller's process, in local worker processes, or on Dask.

All three run the same point function; they differ only in where. Workers die with their
parent: local workers are the package's one pool (`attnphase._core.orphans.worker_pool`: the
kernel's PR_SET_PDEATHSIG on Linux and a watchdog thread); Dask's own worker processes
(LocalCluster) exit when the pipe to their parent closes (`distributed.process.AsyncProcess`),
measured to happen within 0.5 s of a SIGKILL of the parent.
Only workers limit torch to one thread (several share the cores); the serial backend leaves the
caller's process as it was.
"""

from __future__ import annotations

import logging
import socket
import struct
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor
from concurrent.futures import wait as wait_futures
from concurrent.futures.process import BrokenProcessPool

from .._core.orphans import children_ignore_interrupts, close_pool, worker_pool
from .._core.threads import check_processes
from .points import BatchFunction, Outcome, PointFunction, run_task
from .store import SweepError

BACKENDS = ("serial", "process", "dask")
CONNECT_CHECK_SECONDS = 3.0  # TCP reachability of a Dask scheduler, before anything is created
CLIENT_TIMEOUT_SECONDS = 10.0  # the Dask handshake once the port answers
_MAX_HANDSHAKE = 1 << 26  # bytes: a Dask handshake frame is ~60


class SchedulerError(SweepError):
    """The Dask scheduler cannot be reached."""


def check_backend(backend: str, workers: int) -> None:
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    if backend == "process":  # local processes: a few per core
        check_processes("workers", workers)
    elif isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers: must be an integer >= 1, got {workers!r}")


def run_in_worker(
    fn: PointFunction, many: BatchFunction | None, kind: str, batch: list[dict]
) -> list[Outcome]:
    """`run_task` in a worker process, with torch on one thread (workers share the cores)."""
    if kind == "simulation":
        import torch

        torch.set_num_threads(1)
    return run_task(fn, many, kind, batch)


def failed(message: str, n: int) -> list[Outcome]:
    """The outcomes of a task of n points that never returned (its worker died)."""
    return [("error", None, message)] * n


class SerialBackend:
    """Tasks (a point, or a batch of points computed together) run one at a time in the
    caller's process; every backend's `outcome` is a task's list of point outcomes."""

    capacity = 1

    def submit(
        self, fn: PointFunction, many: BatchFunction | None, kind: str, batch: list[dict]
    ) -> Future:
        fut: Future = Future()
        fut.set_result(run_task(fn, many, kind, batch))
        return fut

    def wait(self, handles, timeout: float | None) -> set:
        return {h for h in handles if h.done()}

    def outcome(self, handle, n: int) -> list[Outcome]:
        return handle.result()

    def close(self, finished: bool = True) -> None:
        pass


class ProcessBackend:
    """A pool of `workers` spawned local processes that die with their parent; a pool broken by
    a dying worker is replaced and the points it held are recorded as errors."""

    def __init__(self, workers: int):
        self.capacity = workers
        self._pool: ProcessPoolExecutor | None = None

    def submit(
        self, fn: PointFunction, many: BatchFunction | None, kind: str, batch: list[dict]
    ) -> Future:
        if self._pool is None:
            self._pool = worker_pool(self.capacity)
        try:
            return self._pool.submit(run_in_worker, fn, many, kind, batch)
        except BrokenProcessPool:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = worker_pool(self.capacity)
            return self._pool.submit(run_in_worker, fn, many, kind, batch)

    def wait(self, handles, timeout: float | None) -> set:
        done, _ = wait_futures(handles, timeout=timeout, return_when=FIRST_COMPLETED)
        return done

    def outcome(self, handle: Future, n: int) -> list[Outcome]:
        try:
            return handle.result()
        except BrokenProcessPool as err:
            return failed(f"BrokenProcessPool: a worker process died ({err})", n)

    def close(self, finished: bool = True) -> None:
        """Wait for the workers after finished work; stop them at once otherwise."""
        if self._pool is not None:
            close_pool(self._pool, finished)


def check_scheduler(address: str, timeout: float = CONNECT_CHECK_SECONDS) -> None:
    """SchedulerError unless host:port accepts a TCP connection and sends the start of a Dask
    handshake (an 8-byte frame length, which a Dask server writes first on every connection)
    within `timeout` seconds. The Dask client would hang forever on a port that accepts and
    stays silent. Addresses of other protocols are left to the Dask client."""
    scheme, sep, location = address.partition("://")
    if not sep:
        scheme, location = "tcp", address
    if scheme != "tcp":
        return
    host, _, port = location.rpartition(":")
    try:
        port_number = int(port.split("/")[0])
    except ValueError:
        raise SchedulerError(
            f"scheduler address must look like tcp://host:port, got {address!r}"
        ) from None
    try:
        with socket.create_connection((host.strip("[]") or "localhost", port_number), timeout) as s:
            head = b""
            while len(head) < 8:
                chunk = s.recv(8 - len(head))
                if not chunk:
                    break
                head += chunk
    except TimeoutError:
        raise SchedulerError(
            f"{address} sent no Dask handshake within {timeout:g} s (not a Dask scheduler?)"
        ) from None
    except OSError as err:
        raise SchedulerError(f"cannot reach the Dask scheduler at {address}: {err}") from None
    if len(head) < 8 or struct.unpack("<Q", head)[0] > _MAX_HANDSHAKE:
        raise SchedulerError(f"{address} does not speak the Dask protocol (not a Dask scheduler)")


def _quiet_cancelled_tasks() -> None:
    """In a worker of our own LocalCluster: no warning for each task cancelled by an interrupt
    (the parent says in one line what was kept)."""
    logging.getLogger("distributed.worker.state_machine").setLevel(logging.ERROR)


class DaskBackend:
    """Points as Dask tasks: on an existing scheduler, or on a LocalCluster of `workers`
    single-threaded worker processes."""

    def __init__(self, workers: int, scheduler: str | None):
        from distributed import Client, LocalCluster

        self._cluster = None
        if scheduler is not None:
            check_scheduler(scheduler)
            try:
                self._client = Client(scheduler, timeout=CLIENT_TIMEOUT_SECONDS)
            except Exception as err:  # refused, timed out, or not a Dask scheduler at all
                raise SchedulerError(
                    f"cannot connect to the Dask scheduler at {scheduler} "
                    f"({type(err).__name__}: {err})"
                ) from None
        else:
            with children_ignore_interrupts():  # Ctrl-C stops the parent, which closes them
                self._cluster = LocalCluster(
                    n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
                )
            self._client = Client(self._cluster)
            self._client.run(_quiet_cancelled_tasks)
        self.capacity = max(workers, sum(self._client.nthreads().values()))

    def submit(self, fn: PointFunction, many: BatchFunction | None, kind: str, batch: list[dict]):
        return self._client.submit(run_in_worker, fn, many, kind, batch, pure=False)

    def wait(self, handles, timeout: float | None) -> set:
        from distributed import wait

        try:
            return set(wait(list(handles), timeout=timeout, return_when=FIRST_COMPLETED).done)
        except TimeoutError:
            return set()

    def outcome(self, handle, n: int) -> list[Outcome]:
        try:
            return handle.result()
        except Exception as err:  # the worker died (KilledWorker) or the task was lost
            return failed(f"{type(err).__name__}: {err}", n)

    def close(self, finished: bool = True) -> None:
        self._client.close()
        if self._cluster is not None:
            if not finished:  # its workers are busy: the nanny's warning that it kills them
                logging.getLogger("distributed.nanny").setLevel(logging.ERROR)
            self._cluster.close()


def open_backend(backend: str, workers: int, scheduler: str | None):
    """The backend object (submit, wait, outcome, close; `capacity` tasks in flight)."""
    if backend == "serial":
        return SerialBackend()
    if backend == "process":
        return ProcessBackend(workers)
    return DaskBackend(workers, scheduler)
