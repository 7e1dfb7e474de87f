"""Lazy names of a package (PEP 562): a package lists which submodule holds each heavy name,
and the name is imported on first use, so that importing the package (and `attnphase --help`)
loads no heavy library."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_getattr(package: str, table: dict[str, str]) -> Callable[[str], Any]:
    """The module `__getattr__` of `package`: name -> the attribute of the submodule
    `table[name]` (relative to the package); AttributeError for names not in the table."""

    def __getattr__(name: str) -> Any:
        if name in table:
            return getattr(importlib.import_module(f".{table[name]}", package), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
