"""Result records as tables: one record (`to_frame`) or a list of them (`frame`), from the
record's own flat `as_dict`, the one source of every table, CSV and JSON line."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


class Tabular:
    """A record with a flat `as_dict`: `to_frame()` is its one-row table, `frame(records)` a
    curve's or a grid's table (one row per record, in order)."""

    def as_dict(self) -> dict[str, Any]:
        raise NotImplementedError

    def to_frame(self) -> pd.DataFrame:
        """The record as a one-row pandas DataFrame (the columns of `as_dict`)."""
        return type(self).frame([self])

    @classmethod
    def frame(cls, records: Iterable[Tabular]) -> pd.DataFrame:
        """A DataFrame with one row per record (a curve, a grid), the columns of `as_dict`."""
        import pandas as pd

        return pd.DataFrame([r.as_dict() for r in records])
