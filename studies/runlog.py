"""Shared by the studies: the seed-count option and the resumable run of a study's points
(through attnphase's runner, into a store under the git-ignored results/ folder)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path

from attnphase.sweep import point_id, run_points

RESULTS = Path(__file__).resolve().parent / "results"


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


def run_study(name: str, points: Sequence[dict], fn: Callable[[dict], dict]) -> list[dict]:
    """The record fn(params) of every point (a dict of its parameters), in order, computed
    through attnphase's runner in this process and kept in results/<name>.sqlite: a rerun
    computes only the missing points and two concurrent runs never compute one twice."""
    keyed = [(point_id(name, params), name, params) for params in points]
    summary = run_points(
        keyed, lambda kind, params: fn(params), store=RESULTS / f"{name}.sqlite", desc=name
    )
    records = []
    for rid, _, params in keyed:
        status, record, error = summary.outcomes[rid]
        if status != "ok" or record is None:
            raise RuntimeError(f"{name} at {params} failed: {error}")
        records.append(record)
    return records
