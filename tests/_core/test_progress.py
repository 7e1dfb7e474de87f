"""Progress off a terminal (`attnphase._core.progress`): silent for a short run, a first line
once the run has lasted DELAY_SECONDS, a line per LINE_SECONDS after, postfixes without lines
of their own, and no line printed twice."""

from __future__ import annotations

import io
import re
import time

import pytest

from attnphase._core import progress


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture
def run(monkeypatch):
    """A bar over 100 steps on a fake stderr and clock: step(seconds) advances the clock,
    updates the bar and sets a postfix."""
    err = io.StringIO()
    monkeypatch.setattr(progress.sys, "stderr", err)
    clock = Clock()
    from tqdm import std

    monkeypatch.setattr(std, "time", clock)
    bar = progress.progress_bar(total=100, desc="x", enabled=True)

    def step(seconds: float) -> None:
        clock.t += seconds
        bar.update()
        bar.set_postfix_str(f"t={clock.t}")

    return bar, step, err


def test_a_short_run_stays_silent(run):
    bar, step, err = run
    for _ in range(4):
        step(1.0)
    bar.close()
    assert err.getvalue() == ""


def test_lines_after_the_delay_then_per_interval_and_none_twice(run):
    bar, step, err = run
    for _ in range(70):  # 70 s, a step a second, each with a new postfix
        step(1.0)
    bar.close()
    lines = err.getvalue().splitlines()
    counts = [int(re.search(r"(\d+)/100", line).group(1)) for line in lines]
    # the first at 5 s; then none closer than LINE_SECONDS; the closing count once
    assert counts[0] == 5 and counts[-1] == 70 and len(set(counts)) == len(counts)
    assert all(b - a >= 30 or b == 70 for a, b in zip(counts, counts[1:], strict=False))
    assert 3 <= len(lines) <= 4  # a line per postfix would have made 70


def _wait_for_lines(err: io.StringIO, n: int) -> list[str]:
    deadline = time.monotonic() + 5.0
    while len(err.getvalue().splitlines()) < n and time.monotonic() < deadline:
        time.sleep(0.01)
    return err.getvalue().splitlines()


def test_a_long_item_is_not_silent_and_a_closed_bar_is(monkeypatch):
    """One item that outlasts the delay and then the line interval (a fixed point of a minute)
    still gets its lines, with the same count and a later clock; nothing after the bar closes.
    Without the heartbeat the first line waited for the item's end."""
    err = io.StringIO()
    monkeypatch.setattr(progress.sys, "stderr", err)
    monkeypatch.setattr(progress, "BEAT_SECONDS", 0.01)
    clock = Clock()
    from tqdm import std

    monkeypatch.setattr(std, "time", clock)
    bar = progress.progress_bar(total=100, desc="x", enabled=True)
    clock.t += 6.0
    first = _wait_for_lines(err, 1)
    clock.t += 31.0
    lines = _wait_for_lines(err, 2)
    assert len(first) == 1 and len(lines) == 2
    assert all(" 0/100 " in line for line in lines)
    assert "00:06" in lines[0] and "00:37" in lines[1]
    bar.close()
    clock.t += 100.0
    time.sleep(0.1)
    assert err.getvalue().splitlines() == lines
