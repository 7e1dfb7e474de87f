"""The device a computation runs on: one spelling ("cpu", "cuda", "cuda:N", "auto") checked
once, before any work, and turned into a torch device where the work starts."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

_NAME = re.compile(r"cpu|cuda(:\d+)?|auto")


def check_device(name: str, what: str = "device") -> str:
    """`name` itself when it is "cpu", "auto", or a CUDA device this machine has; ValueError
    naming `what` otherwise."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(f"{what} must be 'cpu', 'cuda', 'cuda:N' or 'auto', got {name!r}")
    if name.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            raise ValueError(f"{what}={name!r}: CUDA is not available on this machine")
        index = int(name.partition(":")[2] or 0)
        if index >= torch.cuda.device_count():
            raise ValueError(
                f"{what}={name!r}: this machine has {torch.cuda.device_count()} CUDA device(s)"
            )
    return name


def torch_device(name: str) -> torch.device:
    """The torch device of a checked name: "auto" is CUDA when available, the CPU otherwise."""
    import torch

    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)
