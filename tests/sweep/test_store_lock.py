"""A store whose write lock another process holds: the wait is said at once (a warning, one
line on the command line), and past BUSY_TIMEOUT the write fails with the store's name."""

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
