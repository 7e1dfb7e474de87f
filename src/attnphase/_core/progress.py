"""Progress on stderr, one kind everywhere: a tqdm bar on a terminal; elsewhere (a pipe, a batch
job, nohup) plain lines, one every LINE_SECONDS, starting only once a run has lasted
DELAY_SECONDS, so short runs stay silent and long ones are never silent."""

from __future__ import annotations

import io
import sys
from collections.abc import Iterable
from typing import Any

DELAY_SECONDS = 5.0
LINE_SECONDS = 30.0


class _Lines(io.TextIOBase):
    """tqdm's carriage-return updates as whole lines on `stream`."""

    def __init__(self, stream):
        self._stream = stream
        self._last = ""

    def write(self, text: str) -> int:
        line = text.replace("\r", "").strip()
        count = line.split("[")[0]  # the bar and its count, without time, rate and postfix
        if line and count != self._last:  # the closing refresh repeats the last count
            self._stream.write(line + "\n")
            self._stream.flush()
            self._last = count
        return len(text)


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
        return tqdm(iterable, total=total, desc=desc, unit=unit, **options)

    class Lines(tqdm):
        """A first line once the run has lasted DELAY_SECONDS, then one every LINE_SECONDS
        (tqdm's own pacing would wait LINE_SECONDS for the first); a postfix waits for the
        next line (tqdm would print one at every change)."""

        first_shown = False

        def update(self, n=1):
            shown = super().update(n)
            if not self.first_shown and self._time() - self.start_t >= DELAY_SECONDS:
                self.first_shown = True
                self.refresh()
                self.last_print_t = self._time()  # the next line LINE_SECONDS on; shown
            return shown

        def set_postfix(self, ordered_dict=None, refresh=True, **kwargs):
            super().set_postfix(ordered_dict, refresh=False, **kwargs)

        def set_postfix_str(self, s="", refresh=True):
            super().set_postfix_str(s, refresh=False)

    return Lines(
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
