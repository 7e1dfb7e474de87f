"""How the positional-to-semantic transition scales with the sequence length L (docs/scaling.md):
the family of models along L (`family`), the scan's settings (`settings.ScanSettings`), one point
of the scan (`point.scaling_point`) and the resumable table over L, omega and the encoding
family (`table.scaling_table`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._core.lazy import lazy_getattr
from .family import DIAGONAL, FAMILIES, family_model, family_rank
from .settings import ScanSettings

if TYPE_CHECKING:
    from .point import scaling_point
    from .table import scaling_table

# the engines (numba, scipy, pandas) load on first use
_LAZY = {"scaling_point": "point", "scaling_table": "table"}


__getattr__ = lazy_getattr(__name__, _LAZY)


__all__ = [
    "DIAGONAL",
    "FAMILIES",
    "ScanSettings",
    "family_model",
    "family_rank",
    "scaling_point",
    "scaling_table",
]
