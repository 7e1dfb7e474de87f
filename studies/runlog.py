"""Shared by the studies: the seed-count option and the append-only run log (one JSON line per
finished run) from which a study resumes."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from pathlib import Path


def seeds_option(sizes: Sequence[int]) -> Callable[[str], dict[int, int]]:
    """Parser of "n1,n2,...": one seed count >= 0 per size (0 skips the size), not all 0."""

    def parse(text: str) -> dict[int, int]:
        counts = [int(v) for v in text.split(",")]
        if len(counts) != len(sizes) or min(counts) < 0 or not any(counts):
            raise argparse.ArgumentTypeError(
                f"need {len(sizes)} counts >= 0, not all 0, got {text!r}"
            )
        return dict(zip(sizes, counts, strict=True))

    return parse


def load_runs(path: Path, key: Sequence[str]) -> dict[tuple, dict]:
    """The finished runs of the log, keyed by the values of `key`."""
    if not path.exists():
        return {}
    recs = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return {tuple(r[k] for k in key): r for r in recs}


def save_run(path: Path, rec: dict) -> None:
    with path.open("a") as fh:
        fh.write(json.dumps(rec) + "\n")
