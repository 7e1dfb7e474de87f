"""numba compilation with an on-disk cache that cannot go stale.

numba's own cache (`njit(cache=True)`) is keyed by the source file of the decorated function
only: when a jitted callee in ANOTHER module changes (an edit, a `git pull`, an upgrade), the
cached kernel keeps the old callee compiled in and silently returns old numbers. `njit_cached`
keys every cache entry by a digest of all Python sources of the package the function belongs
to (here: every `*.py` under `attnphase/`), so any source change recompiles every kernel of
the package once, and nothing stale is ever loaded. Cache files live where numba puts them
(NUMBA_CACHE_DIR, `__pycache__` beside the sources, or the user's cache directory); where none
of these can be written (a read-only install run by a user without a writable home) they go
to a private directory under the system's temporary directory, and where even that fails the
kernels are compiled without a cache: importing the package never fails for want of a cache.
A first call compiles in a worker thread (`_interruptible`), so that Ctrl-C is not held up by
LLVM for the seconds a compilation takes.
"""

from __future__ import annotations

import hashlib
import inspect
import os
import tempfile
import threading
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


class _TempDir(_PackageStamped, UserProvidedCacheLocator):
    """The last resort: a per-user directory under the system's temporary directory."""

    def __init__(self, py_func, py_file):
        super().__init__(py_func, py_file)
        root = Path(tempfile.gettempdir()) / f"attnphase-numba-{os.getuid()}"
        self._cache_path = str(root / self.get_suitable_cache_subpath(py_file))

    @classmethod
    def from_function(cls, py_func, py_file):
        # numba's source-file locator (skipping UserProvided's "only with NUMBA_CACHE_DIR"):
        # None where the file is missing or the directory cannot be written
        return super(UserProvidedCacheLocator, cls).from_function(py_func, py_file)


class _PackageCacheImpl(CompileResultCacheImpl):
    _locator_classes = [_UserProvided, _InTree, _UserWide, _TempDir]


class _PackageFunctionCache(FunctionCache):
    _impl_class = _PackageCacheImpl


_compiling = 0  # compilations running in worker threads (`compiling`)


def compiling() -> bool:
    """Whether a compilation is running in a worker thread (one a Ctrl-C left behind): the
    command line then exits at once, since finalising the interpreter under LLVM's feet could
    abort the process."""
    return _compiling > 0


def _interruptible(compile_for_args: Callable) -> Callable:
    """A dispatcher's compilation (numba's `_compile_for_args`, called on the first call with new
    argument types) run in a worker thread while the main thread waits in short joins: LLVM's
    passes release the GIL but hold the main thread in C for seconds, so a Ctrl-C waited for the
    whole compilation (23 s under load); now it reaches the caller within 0.05 s."""

    def compile_in_thread(*args, **kws):
        if threading.current_thread() is not threading.main_thread():
            return compile_for_args(*args, **kws)
        out: dict = {}

        def run() -> None:
            global _compiling
            _compiling += 1
            try:
                out["value"] = compile_for_args(*args, **kws)
            except BaseException as err:  # handed to the caller below
                out["error"] = err
            finally:
                _compiling -= 1

        worker = threading.Thread(target=run, name="numba-compile", daemon=True)
        worker.start()
        while worker.is_alive():
            worker.join(0.05)
        if "error" in out:
            raise out["error"]
        return out["value"]

    return compile_in_thread


def njit_cached(**options) -> Callable:
    """Like `numba.njit(cache=True, **options)`, with the package-wide freshness stamp, and
    compiled where a Ctrl-C can interrupt the wait (`_interruptible`)."""

    def decorate(func: Callable):
        dispatcher = numba.njit(cache=False, **options)(func)
        dispatcher._compile_for_args = _interruptible(dispatcher._compile_for_args)
        if inspect.getsourcefile(func):  # interactive definitions have no file to key on
            try:
                dispatcher._cache = _PackageFunctionCache(dispatcher.py_func)
            except RuntimeError:  # no writable cache location at all: compile on every run
                pass
        return dispatcher

    return decorate
