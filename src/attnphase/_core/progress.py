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

    def write(self, text: str) -> int:
        line = text.replace("\r", "").strip()
        if line:
            self._stream.write(line + "\n")
            self._stream.flush()
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
    return tqdm(
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
