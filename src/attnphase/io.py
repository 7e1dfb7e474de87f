"""The one atomic writer of attnphase and the output-location checks made before any work.

`atomic_output(path)` yields a private temporary path in the target's directory; on success the
file is fsynced and renamed over `path` (and the directory entry fsynced), on failure it is
removed, so a reader sees the old file or the whole new one, never a partial one.
`check_output_file` / `check_output_dir` raise a ValueError naming the option when a location
cannot be written (a parent that is a file, a directory that is not writable, a file where a
directory is wanted), without creating anything.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def atomic_output(path: str | Path) -> Iterator[Path]:
    """Yield a unique temporary path beside `path`; rename it over `path` once the block ends."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp files are private; results are not
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def write_atomic(path: str | Path, data: str | bytes) -> None:
    """Write text (a newline is appended if missing) or bytes to `path` atomically."""
    if isinstance(data, str):
        data = (data if data.endswith("\n") else data + "\n").encode()
    with atomic_output(path) as tmp:
        tmp.write_bytes(data)


def _nearest_existing(path: Path) -> Path:
    for candidate in (path, *path.parents):
        if candidate.exists() or candidate.is_symlink():
            return candidate
    return Path(".")


def _check_creatable(directory: Path, path: Path, option: str) -> None:
    """`directory` exists or can be created: its nearest existing ancestor is a writable
    directory (`path` is what the message names). Writable is tried, not read from the mode
    bits, which a superuser, a read-only mount or a virtual file system (/proc) contradict: a
    scratch directory is made in the ancestor and removed at once."""
    anchor = _nearest_existing(directory)
    if not anchor.is_dir():
        raise ValueError(f"{option}: cannot write {path}: {anchor} is not a directory")
    if not os.access(anchor, os.W_OK | os.X_OK):
        raise ValueError(f"{option}: cannot write {path}: {anchor} is not writable")
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".attnphase-check-", dir=anchor))
    except OSError as err:
        raise ValueError(
            f"{option}: cannot write {path}: {anchor} is not writable ({err.strerror})"
        ) from None


def check_output_file(path: str | Path, option: str) -> Path:
    """Raise ValueError naming `option` unless a file can be written at `path`."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{option}: {path} is a directory, expected a file path")
    if path.exists() and not os.access(path, os.W_OK):
        raise ValueError(f"{option}: cannot write {path}: the file is not writable")
    _check_creatable(path.parent, path, option)
    return path


def check_output_dir(path: str | Path, option: str) -> Path:
    """Raise ValueError naming `option` unless `path` is, or can be created as, a writable
    directory."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ValueError(f"{option}: {path} is a file, expected a directory")
    _check_creatable(path, path, option)
    return path
