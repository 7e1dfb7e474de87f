"""Point functions for the sweep tests: cheap, deterministic, and counting their evaluations.

Each evaluation writes one marker file into $SWEEP_MARKERS (one file per evaluation, named by
alpha, seed and a unique suffix), so tests count what was computed independently of the store.
$SWEEP_SLEEP (seconds) makes each point slow enough to be interrupted; alphas listed in
$SWEEP_FAIL (comma-separated) raise, those in $SWEEP_EXIT end their process at once.
"""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path


def counted(kind: str, params: dict) -> dict:
    alpha = params["alpha"]
    time.sleep(float(os.environ.get("SWEEP_SLEEP", "0")))
    if alpha in _alphas("SWEEP_EXIT"):
        os._exit(3)
    if alpha in _alphas("SWEEP_FAIL"):
        raise ValueError(f"injected failure at alpha={alpha}")
    markers = os.environ.get("SWEEP_MARKERS")
    if markers:
        name = f"{alpha!r}_{params.get('seed', 0)}_{uuid.uuid4().hex}"
        (Path(markers) / name).write_text(str(os.getpid()))
    return {"value": 2.0 * alpha, "pid": os.getpid()}


def _alphas(variable: str) -> list[float]:
    text = os.environ.get(variable, "")
    return [float(a) for a in text.split(",")] if text else []


def torch_threads(kind: str, params: dict) -> dict:
    import torch

    return {"threads": torch.get_num_threads(), "pid": os.getpid()}


def markers(directory) -> dict[float, int]:
    """alpha -> number of evaluations recorded in `directory`."""
    out: dict[float, int] = {}
    for path in Path(directory).iterdir():
        alpha = float(path.name.split("_")[0])
        out[alpha] = out.get(alpha, 0) + 1
    return out


def counted_many(kind: str, batch: list[dict]) -> list[dict]:
    """`counted` at every point of a batch, recording the batch's size in $SWEEP_BATCHES (one
    file per batch, named by its size and a unique suffix)."""
    sizes = os.environ.get("SWEEP_BATCHES")
    if sizes:
        (Path(sizes) / f"{len(batch)}_{uuid.uuid4().hex}").write_text(str(os.getpid()))
    return [counted(kind, params) for params in batch]


def batch_sizes(directory) -> list[int]:
    """The sizes of the batches recorded in `directory`, sorted."""
    return sorted(int(path.name.split("_")[0]) for path in Path(directory).iterdir())
