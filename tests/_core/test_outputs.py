"""Output locations are checked by trying them, before any work: the mode bits alone say
"writable" to a superuser, on a read-only mount or on a virtual file system."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from attnphase.io import check_output_dir, check_output_file


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
def test_a_virtual_file_system_is_no_output_location():
    """/proc reports writable mode bits to root (measured: `attnphase demo --out /proc/x` ran
    38 s before failing to write)."""
    with pytest.raises(ValueError, match="out: cannot write /proc/x: /proc is not writable"):
        check_output_dir("/proc/x", "out")
    with pytest.raises(ValueError, match="store: cannot write /proc/s.sqlite"):
        check_output_file("/proc/s.sqlite", "store")


def test_a_writable_location_passes_and_nothing_is_left(tmp_path):
    target = tmp_path / "a" / "b"
    assert check_output_dir(target, "out") == target
    assert check_output_file(tmp_path / "t.csv", "out") == tmp_path / "t.csv"
    assert os.listdir(tmp_path) == []  # neither the directory nor the scratch check remain


@pytest.mark.skipif(os.geteuid() == 0, reason="a superuser writes anywhere")
def test_a_read_only_directory_is_refused(tmp_path):
    tmp_path.chmod(0o500)
    try:
        with pytest.raises(ValueError, match="out: cannot write .* is not writable"):
            check_output_dir(tmp_path / "x", "out")
    finally:
        tmp_path.chmod(0o700)
