"""The SQLite store of a sweep: results, leases (claims) and the history of attempts.

Tables: `meta` (format name and version: what marks a file as an attnphase store), `results`
(one row per finished point, status "ok" or "error"), `claims` (one lease per point being
computed: owner, host, pid and the owner process's start time, expiry) and `attempts` (every
computation ever started, with its outcome; a retried point keeps its earlier errors here).

A point is claimed in the same IMMEDIATE transaction that checks it is neither finished nor
claimed by a live owner, so two runs sharing the file never compute it both. A claim whose owner
is dead (same host, pid gone or reused) or whose lease expired (other hosts; renewed by the
owner's `Heartbeat`) is taken over. Every write is one transaction: a run killed at any moment
loses only the points it was computing.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import psutil

FORMAT = "attnphase sweep store"
VERSION = 2
_SCHEMA = {
    "meta": "key TEXT PRIMARY KEY, value TEXT NOT NULL",
    "results": "run_id TEXT PRIMARY KEY, kind TEXT NOT NULL, params TEXT NOT NULL, "
    "status TEXT NOT NULL, result TEXT, error TEXT, finished REAL NOT NULL",
    "claims": "run_id TEXT PRIMARY KEY, owner TEXT NOT NULL, host TEXT NOT NULL, "
    "pid INTEGER NOT NULL, born REAL NOT NULL, expires REAL NOT NULL, attempt INTEGER NOT NULL",
    "attempts": "attempt INTEGER PRIMARY KEY, run_id TEXT NOT NULL, owner TEXT NOT NULL, "
    "host TEXT NOT NULL, pid INTEGER NOT NULL, started REAL NOT NULL, finished REAL, "
    "status TEXT NOT NULL, error TEXT",
}
_COLUMNS = {t: {c.split()[0] for c in cols.split(", ")} for t, cols in _SCHEMA.items()}
_LEGACY_COLUMNS = {"run_id", "kind", "params", "result", "status", "error"}
BUSY_TIMEOUT = 60.0  # seconds a write waits for another run's transaction
BUSY_POLL = 2.0  # seconds between the tries of a write's lock, the first wait said in a warning

DONE, BUSY, CLAIMED = "done", "busy", "claimed"
SQLITE_HEADER = b"SQLite format 3\x00"


class SweepError(RuntimeError):
    """A sweep cannot run: its store or its backend is unusable (the CLI exits with code 2)."""


class StoreWaitWarning(UserWarning):
    """A write waits for the lock another process holds on the store."""


class StoreError(SweepError):
    """The results file is not a readable attnphase sweep store."""


@dataclass(frozen=True)
class Owner:
    """One running sweep: a unique token and the process (host, pid, start time) behind it."""

    token: str
    host: str
    pid: int
    born: float

    @classmethod
    def current(cls) -> Owner:
        return cls(uuid.uuid4().hex, socket.gethostname(), os.getpid(), _start_time(os.getpid()))


def _start_time(pid: int) -> float:
    return psutil.Process(pid).create_time()


def _alive(pid: int, born: float) -> bool:
    """The process pid exists, is not a zombie and is the one started at `born` (not a reuse)."""
    try:
        proc = psutil.Process(pid)
        return abs(proc.create_time() - born) < 0.01 and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


# SQLite's messages for a device that refuses to write: the store is intact, the machine is not
_DEVICE_ERRORS = ("database or disk is full", "disk I/O error", "attempt to write a readonly")


def store_error(path: Path, err: sqlite3.Error, creating: bool = False) -> StoreError:
    """The StoreError for a failed SQLite operation on the store at `path`: a full or failing
    device says so (the store keeps every point stored before; one being created is not left
    behind); anything else is a store that is not sound."""
    text = str(err)
    if "database or disk is full" in text:
        kept = (
            "the store was not created"
            if creating
            else "the points stored before are kept: free space and rerun the same command"
        )
        return StoreError(f"{path}: no space left on its device ({text}); {kept}")
    if any(kind in text for kind in _DEVICE_ERRORS):
        return StoreError(f"{path}: cannot write ({text})")
    return StoreError(f"{path} is not a sound attnphase sweep store: {text}")


def _connect(path: Path, read_only: bool = False) -> sqlite3.Connection:
    if read_only:
        uri = f"{path.resolve().as_uri()}?mode=ro"
        return sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT, isolation_level=None)
    return sqlite3.connect(path, timeout=BUSY_TIMEOUT, isolation_level=None)


def _check_layout(db: sqlite3.Connection, path: Path) -> bool:
    """True for an empty database, False for an attnphase store of this version; StoreError
    for anything else."""
    tables = {
        name: {row[1] for row in db.execute(f"PRAGMA table_info({name})")}
        for (name,) in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        ).fetchall()
    }
    if not tables:
        return True
    if "meta" not in tables:
        if set(tables) == {"results"} and tables["results"] == _LEGACY_COLUMNS:
            raise StoreError(
                f"{path} is a sweep store of an older attnphase (format 1: run ids computed "
                "without defaults); use a new store file"
            )
        raise StoreError(
            f"{path} is not an attnphase sweep store (it holds the tables "
            f"{', '.join(sorted(tables))}); use a new store file"
        )
    meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
    if meta.get("format") != FORMAT:
        raise StoreError(f"{path} is not an attnphase sweep store (format {meta.get('format')!r})")
    if meta.get("version") != str(VERSION):
        raise StoreError(
            f"{path} is an attnphase sweep store of format version {meta.get('version')}; "
            f"this attnphase reads version {VERSION}"
        )
    if tables != _COLUMNS:
        raise StoreError(
            f"{path}: unexpected tables or columns {sorted(tables)} in an attnphase sweep store"
        )
    return False


def _while_locked(db: sqlite3.Connection, path: Path, action: Callable[[], object]) -> None:
    """`action()`, tried every BUSY_POLL seconds while another process holds a lock on the
    store: the first wait is said (a StoreWaitWarning), and after BUSY_TIMEOUT a StoreError
    names the store."""
    db.execute(f"PRAGMA busy_timeout = {int(BUSY_POLL * 1000)}")
    waited, said = 0.0, False
    try:
        while True:
            try:
                action()
                return
            except sqlite3.OperationalError as err:
                if "locked" not in str(err) and "busy" not in str(err):
                    raise
            waited += BUSY_POLL
            if waited >= BUSY_TIMEOUT:
                raise StoreError(
                    f"{path}: locked by another process for {BUSY_TIMEOUT:g} s; rerun when it "
                    "is done"
                )
            if not said:
                warnings.warn(
                    f"{path}: waiting for another process's lock on the store (at most "
                    f"{BUSY_TIMEOUT:g} s)",
                    StoreWaitWarning,
                    stacklevel=2,
                )
                said = True
    finally:
        db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT * 1000)}")


def _check_integrity(db: sqlite3.Connection, path: Path) -> None:
    report = [row[0] for row in db.execute("PRAGMA quick_check")]
    if report != ["ok"]:
        raise StoreError(f"{path} is damaged: {report[0]}")


def check_store(path: str | Path) -> None:
    """Raise StoreError unless `path` is missing, empty, or a sound attnphase store; never
    creates or changes anything."""
    path = Path(path)
    if not path.exists() or (path.is_file() and path.stat().st_size == 0):
        return
    if path.is_file():
        with path.open("rb") as fh:  # SQLite treats a file shorter than its header as empty
            if fh.read(len(SQLITE_HEADER)) != SQLITE_HEADER:
                raise StoreError(
                    f"{path} is not a sound attnphase sweep store: file is not a database "
                    "(no SQLite header)"
                )
    try:
        db = _connect(path, read_only=True)
    except sqlite3.Error as err:
        raise StoreError(f"{path}: cannot open ({err})") from None

    def check() -> None:
        _check_layout(db, path)
        _check_integrity(db, path)

    try:  # a store another process holds locked: waited for, and said
        _while_locked(db, path, check)
    except sqlite3.DatabaseError as err:
        raise store_error(path, err) from None
    finally:
        db.close()


class ResultStore:
    """An attnphase sweep store, created (empty, with its format marked) if the file is new."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        new = not self.path.exists()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = _connect(self.path)
        except (OSError, sqlite3.Error) as err:
            raise StoreError(f"{self.path}: cannot open ({err})") from None
        try:
            with self._write() as db:
                if _check_layout(db, self.path):
                    for name, cols in _SCHEMA.items():
                        db.execute(f"CREATE TABLE {name} ({cols})")
                    db.executemany(
                        "INSERT INTO meta VALUES (?, ?)",
                        [("format", FORMAT), ("version", str(VERSION))],
                    )
            _check_integrity(self._db, self.path)
        except BaseException as err:
            self._db.close()
            if not new:
                raise
            for leftover in (self.path, Path(f"{self.path}-journal")):
                leftover.unlink(missing_ok=True)  # a store this call began leaves nothing
            cause = err.__context__ if isinstance(err, StoreError) else err
            if isinstance(cause, sqlite3.Error):
                raise store_error(self.path, cause, creating=True) from None
            raise

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _begin(self) -> None:
        """BEGIN IMMEDIATE, waiting for another process's write lock (`_while_locked`)."""
        _while_locked(self._db, self.path, lambda: self._db.execute("BEGIN IMMEDIATE"))

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One IMMEDIATE transaction (the write lock is taken at BEGIN, `_begin`)."""
        try:
            self._begin()
            try:
                yield self._db
            except BaseException:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
        except sqlite3.DatabaseError as err:
            raise store_error(self.path, err) from None

    def claim(
        self, rid: str, owner: Owner, *, retry: bool, lease: float, now: float | None = None
    ) -> tuple[str, int | None]:
        """(DONE, None) if the point is stored (ok, or failed and `retry` is False); (BUSY, None)
        if a live owner computes it; else (CLAIMED, attempt id): the lease and a new attempt
        are written in the transaction that checked the point was free."""
        now = time.time() if now is None else now
        with self._write() as db:
            row = db.execute("SELECT status FROM results WHERE run_id = ?", (rid,)).fetchone()
            if row is not None and (row[0] == "ok" or not retry):
                return DONE, None
            held = db.execute(
                "SELECT owner, host, pid, born, expires, attempt FROM claims WHERE run_id = ?",
                (rid,),
            ).fetchone()
            if held is not None:
                token, host, pid, born, expires, attempt = held
                live = expires > now and (host != owner.host or _alive(pid, born))
                if live and token != owner.token:
                    return BUSY, None
                db.execute(
                    "UPDATE attempts SET status = 'abandoned', finished = ? "
                    "WHERE attempt = ? AND status = 'running'",
                    (now, attempt),
                )
            cur = db.execute(
                "INSERT INTO attempts (run_id, owner, host, pid, started, status) "
                "VALUES (?, ?, ?, ?, ?, 'running')",
                (rid, owner.token, owner.host, owner.pid, now),
            )
            db.execute(
                "INSERT OR REPLACE INTO claims VALUES (?, ?, ?, ?, ?, ?, ?)",
                (rid, owner.token, owner.host, owner.pid, owner.born, now + lease, cur.lastrowid),
            )
            return CLAIMED, cur.lastrowid

    def finish(
        self,
        rid: str,
        kind: str,
        params: dict,
        attempt: int,
        owner: Owner,
        outcome: tuple[str, dict | None, str | None],
    ) -> None:
        """Store the outcome of `attempt`, close it and drop the lease, in one transaction. A
        result already stored as "ok" (by a run that took over an expired lease) is kept."""
        status, result, error = outcome
        now = time.time()
        with self._write() as db:
            db.execute(
                "UPDATE attempts SET status = ?, finished = ?, error = ? WHERE attempt = ?",
                (status, now, error, attempt),
            )
            db.execute(
                "INSERT INTO results VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(run_id) DO UPDATE "
                "SET status = excluded.status, result = excluded.result, "
                "error = excluded.error, finished = excluded.finished "
                "WHERE results.status != 'ok'",
                (
                    rid,
                    kind,
                    json.dumps(params, sort_keys=True),
                    status,
                    None if result is None else json.dumps(result, default=_json_default),
                    error,
                    now,
                ),
            )
            db.execute("DELETE FROM claims WHERE run_id = ? AND owner = ?", (rid, owner.token))

    def release(self, owner: Owner) -> None:
        """Drop every lease of `owner` (its running attempts become "released")."""
        with self._write() as db:
            db.execute(
                "UPDATE attempts SET status = 'released', finished = ? "
                "WHERE owner = ? AND status = 'running'",
                (time.time(), owner.token),
            )
            db.execute("DELETE FROM claims WHERE owner = ?", (owner.token,))

    def result(self, rid: str) -> tuple[str, dict | None, str | None] | None:
        """(status, result, error) of a stored point, None if it is not stored."""
        rows = self._query_args(
            "SELECT status, result, error FROM results WHERE run_id = ?", (rid,)
        )
        if not rows:
            return None
        status, result, error = rows[0]
        try:
            return status, None if result is None else json.loads(result), error
        except json.JSONDecodeError as err:
            raise StoreError(f"{self.path}: unreadable result of {rid} ({err})") from None

    def _query_args(self, sql: str, args: tuple) -> list[tuple]:
        try:
            return self._db.execute(sql, args).fetchall()
        except sqlite3.DatabaseError as err:
            raise store_error(self.path, err) from None

    def _query(self, sql: str) -> list[tuple]:
        return self._query_args(sql, ())

    def frame(self, run_ids: Collection[str] | None = None) -> pd.DataFrame:
        """Tidy table, one row per point (of `run_ids` only, when given): run_id, run_kind,
        run_status ("ok" or "error"), run_error, run_attempts (computations started, failed
        ones included), the point's parameters and its results."""
        rows = []
        for rid, kind, params, result, status, error, attempts in self._query(
            "SELECT run_id, kind, params, result, status, error, "
            "(SELECT COUNT(*) FROM attempts a WHERE a.run_id = r.run_id) "
            "FROM results r ORDER BY rowid"
        ):
            if run_ids is not None and rid not in run_ids:
                continue
            row = {
                "run_id": rid,
                "run_kind": kind,
                "run_status": status,
                "run_error": error,
                "run_attempts": attempts,
            }
            try:
                row.update(json.loads(params))
                if result is not None:
                    row.update(json.loads(result))
            except json.JSONDecodeError as err:
                raise StoreError(f"{self.path}: unreadable result of {rid} ({err})") from None
            rows.append(row)
        return pd.DataFrame(rows)

    def attempts(self) -> pd.DataFrame:
        """Every computation started: attempt, run_id, owner, host, pid, started, finished,
        status (running, ok, error, abandoned: owner died or lease expired, released: owner
        interrupted) and error."""
        cols = ["attempt", "run_id", "owner", "host", "pid", "started", "finished"]
        cols += ["status", "error"]
        rows = self._query(f"SELECT {', '.join(cols)} FROM attempts ORDER BY attempt")
        return pd.DataFrame(rows, columns=cols)


def _json_default(value):
    """Arrays and tensors as lists (json itself writes floats, NaN included)."""
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"not serialisable: {type(value).__name__}")


class Heartbeat:
    """Renews the leases of `owner` every lease/3 seconds from a thread (own connection)."""

    def __init__(self, path: Path, owner: Owner, lease: float):
        self._path, self._owner, self._lease = path, owner, lease
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sweep-heartbeat", daemon=True)

    def _run(self) -> None:
        db = _connect(self._path)
        try:
            while not self._stop.wait(self._lease / 3):
                try:
                    db.execute(
                        "UPDATE claims SET expires = ? WHERE owner = ?",
                        (time.time() + self._lease, self._owner.token),
                    )
                except sqlite3.OperationalError:
                    pass  # busy beyond the timeout: the next beat renews
        finally:
            db.close()

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
