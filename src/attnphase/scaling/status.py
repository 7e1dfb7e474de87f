"""What a missing value of the scaling table means, read from its status column: where it lies
(below or beyond the scanned window), or that there is nothing to find."""

from __future__ import annotations


def status_kind(status: str) -> str | None:
    """How a missing value is read from its status: "below" (under the window: a branch that
    exists at alpha_min, a crossing below it), "beyond" (over the window), "none" (nothing to
    find: no branch, no crossing, the branches never coexist), None (not computed or failed)."""
    text = str(status)
    if "below the window" in text or "semantic lower wherever" in text:
        return "below"
    if "beyond the window" in text or "positional lower wherever" in text:
        return "beyond"
    if text.startswith(("not computed", "failed")) or text in ("", "nan"):
        return None
    return "none"
