"""Output of result records: table, CSV and JSON (one object per point)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

FORMATS = ("table", "csv", "json")


def to_frame(records: Iterable[dict]) -> pd.DataFrame:
    """Tidy table, one row per point."""
    import pandas as pd

    return pd.DataFrame(list(records))


def _json_value(v):
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def render(records: list[dict], fmt: str, columns: list[str] | None = None) -> str:
    """Text of the records in one of FORMATS; JSON has one object per line (NaN -> null)."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}, got {fmt!r}")
    if fmt == "json":
        return "\n".join(json.dumps({k: _json_value(v) for k, v in rec.items()}) for rec in records)
    df = to_frame(records)
    if fmt == "csv":
        return df.to_csv(index=False).rstrip("\n")
    view = df[columns] if columns else df
    return view.to_string(index=False, float_format=lambda x: f"{x:.6g}")
