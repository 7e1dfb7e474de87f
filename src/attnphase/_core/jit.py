"""numba compilation with an on-disk cache that cannot go stale.

numba's own cache (`njit(cache=True)`) is keyed by the source file of the decorated function
only: when a jitted callee in ANOTHER module changes (an edit, a `git pull`, an upgrade), the
cached kernel keeps the old callee compiled in and silently returns old numbers. `njit_cached`
keys every cache entry by a digest of all Python sources of the package the function belongs
to (here: every `*.py` under `attnphase/`), so any source change recompiles every kernel of
the package once, and nothing stale is ever loaded. Cache files live where numba puts them
(`__pycache__`, or NUMBA_CACHE_DIR).
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Callable
from functools import cache
from pathlib import Path

import numba
from numba.core.caching import (
    CompileResultCacheImpl,
    FunctionCache,
    InTreeCacheLocator,
    UserProvidedCacheLocator,
    UserWideCacheLocator,
)


def package_root(py_file: str | Path) -> Path:
    """The top-level package directory holding `py_file` (the highest ancestor with an
    __init__.py); the file's own directory when it is not in a package."""
    root = Path(py_file).resolve().parent
    while (root.parent / "__init__.py").exists():
        root = root.parent
    return root


def _stamp(files: list[Path]) -> tuple:
    return tuple((str(f), f.stat().st_mtime_ns, f.stat().st_size) for f in files)


@cache
def _digest(stamp: tuple) -> str:
    h = hashlib.sha256()
    for name, _, _ in stamp:
        h.update(name.encode())
        h.update(Path(name).read_bytes())
    return h.hexdigest()


def sources_digest(py_file: str | Path) -> str:
    """sha256 over the paths and contents of every .py file of the package of `py_file`
    (memoised on the files' modification times and sizes)."""
    root = package_root(py_file)
    files = sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)
    return _digest(_stamp(files))


class _PackageStamped:
    """Locator mixin: the freshness stamp includes the digest of the whole package."""

    def get_source_stamp(self):
        return (super().get_source_stamp(), sources_digest(self._py_file))


class _UserProvided(_PackageStamped, UserProvidedCacheLocator):
    pass


class _InTree(_PackageStamped, InTreeCacheLocator):
    pass


class _UserWide(_PackageStamped, UserWideCacheLocator):
    pass


class _PackageCacheImpl(CompileResultCacheImpl):
    _locator_classes = [_UserProvided, _InTree, _UserWide]


class _PackageFunctionCache(FunctionCache):
    _impl_class = _PackageCacheImpl


def njit_cached(**options) -> Callable:
    """Like `numba.njit(cache=True, **options)`, with the package-wide freshness stamp."""

    def decorate(func: Callable):
        dispatcher = numba.njit(cache=False, **options)(func)
        if inspect.getsourcefile(func):  # interactive definitions have no file to key on
            dispatcher._cache = _PackageFunctionCache(dispatcher.py_func)
        return dispatcher

    return decorate
