"""Run the same workload on today's tree and on a baseline revision, in one benchmark run.

`baseline_tree(rev)` checks `rev` out once into a git worktree under the system's temporary
folder (reused by later runs); `measure(tree, code)` runs `code` in a fresh interpreter that
imports attnphase from that tree's `src/` (the numba cache keyed by its sources, so the two trees
never share compiled code) and returns the dict the code prints as its last line of JSON.
`compare` prints baseline, new figure and their ratio, one line per row.

The default baseline is the revision before the speed work (BASELINE below).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

BASELINE = "c73a6e2"
REPO = Path(__file__).resolve().parents[1]


def baseline_tree(rev: str = BASELINE) -> Path:
    """A worktree of `rev` (created on first use, then reused)."""
    full = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--verify", f"{rev}^{{commit}}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    tree = Path(tempfile.gettempdir()) / f"attnphase-baseline-{full[:12]}"
    if not (tree / "src" / "attnphase").is_dir():
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "add", "--detach", "--force", str(tree), full],
            check=True,
            capture_output=True,
        )
    return tree


def measure(tree: Path, code: str, timeout: float = 3600) -> dict:
    """Run `code` with attnphase imported from `tree`; the last stdout line is JSON."""
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        cwd=tempfile.gettempdir(),
    )
    if out.returncode != 0:
        raise RuntimeError(f"workload failed in {tree}:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def compare(name: str, code: str, key: str = "seconds", rev: str = BASELINE) -> tuple[dict, dict]:
    """Run `code` on the baseline tree and on this one; print both values of `key` and the
    ratio baseline / new (above 1: faster now). Returns both result dicts."""
    old = measure(baseline_tree(rev), code)
    new = measure(REPO, code)
    ratio = old[key] / new[key] if new[key] else float("inf")
    print(f"{name:<48} baseline {old[key]:10.3f}  new {new[key]:10.3f}  ratio {ratio:6.2f}x")
    return old, new
