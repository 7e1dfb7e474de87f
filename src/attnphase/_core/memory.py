"""Memory a request would need, checked before any work: a request larger than the machine's
available memory is refused with the estimate, naming the parameter that makes it large."""

from __future__ import annotations

import psutil


def gib(nbytes: float) -> str:
    """Bytes as GiB (or TiB, PiB for the absurd), two significant digits."""
    for unit, scale in (("PiB", 2**50), ("TiB", 2**40)):
        if nbytes >= scale:
            return f"{nbytes / scale:.3g} {unit}"
    return f"{nbytes / 2**30:.3g} GiB"


def check_memory(name: str, need: float, what: str) -> None:
    """ValueError naming `name` when `need` bytes (for `what`) exceed the available memory."""
    available = psutil.virtual_memory().available
    if need > available:
        raise ValueError(
            f"{name}: {what} needs about {gib(need)}, more than the {gib(available)} available"
        )


def data_bytes(d: int, n: int, n_test: int, L: int, itemsize: int = 8) -> float:
    """A lower bound of the memory a finite-d run needs: its n training and n_test test
    sequences of L tokens in dimension d, twice (the data and the fields and gradients computed
    from them)."""
    return 2.0 * (n + n_test) * L * d * itemsize


def data_text(d: int, n: int, n_test: int, L: int) -> str:
    """The data of `data_bytes` in words, for the refusal."""
    return f"d = {d} with n = {n} training and {n_test} test sequences of L = {L} tokens"


def data_option(n: int, n_test: int) -> str:
    """The setting that sizes a run's data for its refusal: the test set ("n_test") where it
    holds more sequences than the training set, d (which also sets n = alpha d) otherwise."""
    return "n_test" if n_test > n else "d"


def check_data_memory(d: int, n: int, n_test: int, L: int, itemsize: int = 8) -> None:
    """`check_memory` of a finite-d run's data (`data_bytes`), naming `data_option`."""
    need = data_bytes(d, n, n_test, L, itemsize)
    check_memory(data_option(n, n_test), need, data_text(d, n, n_test, L))
