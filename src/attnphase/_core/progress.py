"""Progress on stderr, one kind everywhere: a tqdm bar on a terminal; elsewhere (a pipe, a batch
job, nohup) plain lines, one every LINE_SECONDS, starting only once a run has lasted
DELAY_SECONDS, so short runs stay silent and long ones are never silent. A heartbeat thread
keeps a bar alive through a long item (one fixed point of a minute): the terminal's clock
redraws every BEAT_SECONDS, and off a terminal the line is repeated with its elapsed time."""

from __future__ import annotations

import io
import sys
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tqdm import tqdm as _Bar
else:
    _Bar = object  # tqdm loads with the first bar

DELAY_SECONDS = 5.0
LINE_SECONDS = 30.0
BEAT_SECONDS = 1.0


class _Lines(io.TextIOBase):
    """tqdm's carriage-return updates as whole lines on `stream`."""

    def __init__(self, stream):
        self._stream = stream
        self._last = ""

    def write(self, text: str) -> int:
        line = text.replace("\r", "").strip()
        if line and _count(line) != self._last:  # the closing refresh repeats the last count
            self._show(line)
        return len(text)

    def line(self, text: str) -> None:
        """`text` as a line of its own, even where its count was the last one shown."""
        self._show(text.replace("\r", "").strip())

    def _show(self, line: str) -> None:
        self._stream.write(line + "\n")
        self._stream.flush()
        self._last = _count(line)


def _count(line: str) -> str:
    """A bar's line without its time, rate and postfix: its description and count."""
    return line.split("[")[0]


class _Beating(_Bar):
    """A tqdm bar with a heartbeat: a daemon thread calls `beat` every BEAT_SECONDS between
    updates, until the bar closes (the thread then exits without drawing)."""

    def start_beating(self) -> None:
        self._stopped = threading.Event()
        threading.Thread(target=self._beat_loop, name="progress-heartbeat", daemon=True).start()

    def _beat_loop(self) -> None:
        while not self._stopped.wait(BEAT_SECONDS):
            with self.get_lock():
                if self._stopped.is_set() or self.disable:
                    return
                self.beat()

    def beat(self) -> None:
        self.refresh(nolock=True)

    def close(self) -> None:
        stopped = getattr(self, "_stopped", None)
        if stopped is not None:
            stopped.set()
        super().close()


def progress_bar(
    iterable: Iterable | None = None,
    *,
    enabled: bool,
    total: int | None = None,
    desc: str = "",
    unit: str = "it",
    **options: Any,
):
    """A tqdm progress bar (its iterable, `update`, `set_postfix_str`, context manager) on
    stderr when `enabled`: animated on a terminal, plain lines elsewhere."""
    from tqdm.auto import tqdm

    if not enabled:
        return tqdm(iterable, total=total, disable=True)
    if sys.stderr.isatty():

        class Bar(_Beating, tqdm):
            """A terminal's bar whose clock runs through a long item."""

        bar = Bar(iterable, total=total, desc=desc, unit=unit, **options)
        bar.start_beating()
        return bar

    class Lines(_Beating, tqdm):
        """A first line once the run has lasted DELAY_SECONDS, then one every LINE_SECONDS
        (tqdm's own pacing would wait LINE_SECONDS for the first), also within a long item (the
        heartbeat); a postfix waits for the next line (tqdm would print one at every change)."""

        first_shown = False

        def update(self, n=1):
            shown = super().update(n)
            if not self.first_shown and self._time() - self.start_t >= DELAY_SECONDS:
                self.first_shown = True
                self.refresh()
                self.last_print_t = self._time()  # the next line LINE_SECONDS on; shown
            return shown

        def beat(self) -> None:
            now = self._time()
            since = now - (self.last_print_t if self.first_shown else self.start_t)
            if since >= (LINE_SECONDS if self.first_shown else DELAY_SECONDS):
                self.first_shown = True
                self.fp.line(str(self))
                self.last_print_t = now

        def set_postfix(self, ordered_dict=None, refresh=True, **kwargs):
            super().set_postfix(ordered_dict, refresh=False, **kwargs)

        def set_postfix_str(self, s="", refresh=True):
            super().set_postfix_str(s, refresh=False)

    bar = Lines(
        iterable,
        total=total,
        desc=desc,
        unit=unit,
        file=_Lines(sys.stderr),
        mininterval=LINE_SECONDS,
        delay=DELAY_SECONDS,
        ascii=True,
        ncols=100,
        **options,
    )
    bar.start_beating()
    return bar


def close_bars() -> None:
    """Close every bar still open (an interrupt passed through its loop), so that its last line
    and its heartbeat end before the message that follows."""
    from tqdm import tqdm

    for bar in list(getattr(tqdm, "_instances", ())):
        bar.close()
