"""A store whose lock another process holds: the wait is said at once (a warning, one line on
the command line), and past BUSY_TIMEOUT the write, or the check before a run, fails with the
store's name."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from attnphase.sweep import store as st


@pytest.fixture
def quick(monkeypatch):
    monkeypatch.setattr(st, "BUSY_POLL", 0.1)
    monkeypatch.setattr(st, "BUSY_TIMEOUT", 0.45)


def _locked(path):
    st.ResultStore(path).close()
    lock = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    lock.execute("BEGIN IMMEDIATE")  # as another run's transaction holds it
    return lock


def test_a_lock_held_past_the_timeout_fails_naming_the_store(tmp_path, quick):
    path = tmp_path / "s.sqlite"
    lock = _locked(path)
    try:
        with pytest.warns(st.StoreWaitWarning, match="waiting for another process's lock"):
            with pytest.raises(st.StoreError, match=r"s\.sqlite: locked by another process"):
                st.ResultStore(path)
    finally:
        lock.execute("ROLLBACK")
        lock.close()


def test_a_lock_released_in_time_is_waited_for_with_one_warning(tmp_path, quick):
    path = tmp_path / "s.sqlite"
    lock = _locked(path)
    release = threading.Timer(0.2, lambda: lock.execute("ROLLBACK"))
    release.start()
    try:
        with pytest.warns(st.StoreWaitWarning) as caught:
            st.ResultStore(path).close()
        assert len(caught) == 1
    finally:
        release.join()
        lock.close()


def test_the_check_before_a_run_waits_for_an_exclusive_lock_and_says_so(tmp_path, quick):
    """An exclusive lock keeps readers out too: `check_store`, which runs before any point, used
    to wait for it silently (up to a minute); now it says so, and fails past the timeout."""
    path = tmp_path / "s.sqlite"
    st.ResultStore(path).close()
    lock = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    lock.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.warns(st.StoreWaitWarning, match="waiting for another process's lock"):
            with pytest.raises(st.StoreError, match=r"s\.sqlite: locked by another process"):
                st.check_store(path)
        release = threading.Timer(0.2, lambda: lock.execute("ROLLBACK"))
        release.start()
        with pytest.warns(st.StoreWaitWarning) as caught:
            st.check_store(path)
        release.join()
        assert len(caught) == 1
    finally:
        lock.close()


def _full(*args, **kwargs):
    raise sqlite3.OperationalError("database or disk is full")


def test_a_full_device_at_creation_says_so_and_leaves_no_file(tmp_path, monkeypatch):
    """SQLite's "database or disk is full" while a new store is created: the error names the
    device, not the store's soundness, and the half-created file is removed (it would pass
    for an empty store)."""
    path = tmp_path / "s.sqlite"
    monkeypatch.setattr(st, "_check_layout", _full)
    with pytest.raises(st.StoreError, match="no space left on its device.*not created"):
        st.ResultStore(path)
    assert not path.exists()


def test_a_full_device_later_keeps_the_store_and_says_what_to_do(tmp_path, monkeypatch):
    path = tmp_path / "s.sqlite"
    st.ResultStore(path).close()
    size = path.stat().st_size
    monkeypatch.setattr(st, "_check_layout", _full)
    with pytest.raises(st.StoreError, match="no space left.*stored before are kept.*rerun"):
        st.ResultStore(path)
    assert path.stat().st_size == size


@pytest.mark.parametrize(
    "message, says",
    [
        ("disk I/O error", "cannot write"),
        ("attempt to write a readonly database", "cannot write"),
        ("file is not a database", "is not a sound attnphase sweep store"),
    ],
)
def test_sqlite_errors_are_told_apart(tmp_path, message, says):
    err = st.store_error(tmp_path / "s.sqlite", sqlite3.OperationalError(message))
    assert says in str(err)
