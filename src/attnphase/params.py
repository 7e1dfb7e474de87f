"""Validated model parameters shared by the theory, the simulations and the CLI."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

STANDARD_A: tuple[tuple[float, float], tuple[float, float]] = ((0.6, 0.4), (0.4, 0.6))
ALTERNATIVE_A: tuple[tuple[float, float], tuple[float, float]] = ((0.3, 0.7), (0.8, 0.2))


def check_finite(name: str, value: float) -> float:
    """Return value as float (-0.0 as 0.0), or raise ValueError naming the parameter if it is not
    finite."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number, got {value!r}") from None
    if not math.isfinite(x):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return x + 0.0  # -0.0 is 0.0: one zero in tables and stores


def check_positive(name: str, value: float) -> float:
    x = check_finite(name, value)
    if x <= 0:
        raise ValueError(f"{name} must be > 0, got {value!r}")
    return x


def check_distinct(name: str, values: list) -> list:
    """`values` unchanged; ValueError naming `name` and the first value given twice (a list of
    values means each once: a repeat would compute the same thing again)."""
    seen: set = set()
    for v in values:
        if v in seen:
            raise ValueError(f"{name}: {v!r} is given twice; give each value once")
        seen.add(v)
    return values


def check_values(name: str, values: Iterable, check: Callable[[Any], Any]) -> list:
    """A list option of the API: each value through `check`, at least one, none twice
    (`check_distinct`); ValueError naming `name`."""
    out = [check(v) for v in values]
    if not out:
        raise ValueError(f"{name} must not be empty")
    return check_distinct(name, out)


def check_step_size(name: str, value: float, dtype: str) -> float:
    """A learning rate: > 0 and representable in the parameters' `dtype` ("float32" or
    "float64"; an optimiser casts it to that type, and a larger one overflows there)."""
    x = check_positive(name, value)
    largest = float(np.finfo(dtype).max)
    if x > largest:
        raise ValueError(f"{name} must be <= {largest:.3g} (the largest {dtype}), got {value!r}")
    return x


# the largest sample complexity the state evolution takes: beyond it the hats overflow; the
# semantic fixed point's overlaps change by under 1e-4 between alpha 1e4 and 1e7 (its limit)
MAX_ALPHA = 1e8
DEFAULT_N_TEST = 10_000  # test sequences of a finite-d run (simulations, GAMP, landscapes)


def check_alpha(value: float, name: str = "alpha") -> float:
    """A sample complexity in (0, MAX_ALPHA]; ValueError naming `name` otherwise."""
    x = check_positive(name, value)
    if x > MAX_ALPHA:
        raise ValueError(
            f"{name} must be <= {MAX_ALPHA:g} (the fixed points reach their alpha -> infinity "
            f"limit long before), got {value!r}"
        )
    return x


def check_dimension(d: int, name: str = "d") -> int:
    """The dimension of a finite-d experiment: an integer >= 2 (one bound everywhere)."""
    return check_int(name, d, minimum=2)


def check_nonnegative(name: str, value: float) -> float:
    x = check_finite(name, value)
    if x < 0:
        raise ValueError(f"{name} must be >= 0, got {value!r}")
    return x


def check_damping(damping: float) -> float:
    """A damping (the weight of the old iterate, `attnphase.theory.iterate`) in [0, 1);
    ValueError naming `damping` otherwise."""
    x = check_finite("damping", damping)
    if not 0.0 <= x < 1.0:
        raise ValueError(f"damping must be in [0, 1), got {damping!r}")
    return x


def check_int(name: str, value, minimum: int = 1) -> int:
    """Return value as int, or raise ValueError naming the parameter unless it is an integer
    >= minimum (bools are not integers here)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if not (isinstance(value, (float, np.floating)) and float(value).is_integer()):
            raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_unit_interval(name: str, value: float) -> float:
    x = check_finite(name, value)
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"{name} must lie in [0, 1], got {value!r}")
    return x


MAX_ENTRY = 1e6  # of A: attention weights are O(1); at 1e300 the target's square overflows


def check_sigma(value: float) -> float:
    """A token standard deviation in (0, MAX_ENTRY]; ValueError naming `sigma` otherwise."""
    value = check_positive("sigma", value)
    if value < 1.5e-154:  # rho = sigma^2 would be 0 or subnormal
        raise ValueError(f"sigma must be >= 1.5e-154 (sigma^2 underflows), got {value:g}")
    if value > MAX_ENTRY:
        raise ValueError(
            f"sigma must be <= {MAX_ENTRY:g} (the teacher's logits grow like sigma^2 and "
            f"overflow the channel's integrals), got {value:g}"
        )
    return value


def as_square_matrix(name: str, value) -> tuple[tuple[float, ...], ...]:
    """An L x L matrix (L >= 2) from nested sequences or L*L numbers (row-major), as tuples;
    ValueError names the parameter."""
    arr = None if isinstance(value, str) else np.asarray(value, dtype=float)
    if arr is not None and arr.ndim == 1:
        k = math.isqrt(arr.size)
        arr = arr.reshape(k, k) if k * k == arr.size else None
    if arr is None or arr.ndim != 2 or arr.shape[0] != arr.shape[1] or arr.shape[0] < 2:
        raise ValueError(
            f"{name} must be a square L x L matrix with L >= 2 (or L*L numbers row by row), "
            f"got {value!r}"
        )
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must have finite entries, got {value!r}")
    if np.abs(arr).max() > MAX_ENTRY:
        raise ValueError(
            f"{name} entries must lie in [-{MAX_ENTRY:g}, {MAX_ENTRY:g}] (attention weights are of "
            f"order one), got {np.abs(arr).max():g}"
        )
    return tuple(tuple(float(x) for x in row) for row in arr)


def default_encodings(L: int) -> tuple[tuple[float], ...]:
    """The simulations' positional encodings: K = 1, c_l evenly spaced from +1 to -1
    (L = 2: C = (+1, -1)^T, the paper's p_1 = -p_2 = 1_d/sqrt(d))."""
    return tuple((float(c),) for c in np.linspace(1.0, -1.0, L))


def positional_target(L: int, a: float = 0.6) -> tuple[tuple[float, ...], ...]:
    """The positional target of the family along L (docs/scaling.md): a on the diagonal and
    (1 - a)/(L - 1) elsewhere, rows summing to one (a = 0.6, L = 2: the paper's STANDARD_A)."""
    L = check_int("L", L, minimum=2)
    a = check_finite("a", a)
    off = (1.0 - a) / (L - 1)
    return tuple(tuple(a if i == j else off for j in range(L)) for i in range(L))


def simplex_encodings(L: int) -> tuple[tuple[float, ...], ...]:
    """Encodings on the vertices of a regular simplex (docs/scaling.md): K = L - 1 directions,
    |c_l| = 1 and c_l . c_k = -1/(L - 1) for l != k (L = 2: C = (+1, -1)^T, the paper's). A
    student of rank L - 1 reads them as fields h_l = m c_l whose logits h_l . h_k are equal
    off the diagonal, the smallest rank with that property (the Gram matrix (1 + 1/(L - 1)) I -
    1 1^T / (L - 1) has rank L - 1)."""
    L = check_int("L", L, minimum=2)
    gram = (1.0 + 1.0 / (L - 1)) * np.eye(L) - 1.0 / (L - 1)
    top = np.linalg.cholesky(gram[:-1, :-1])  # vertices 1..L-1, lower triangular: c_1 = u_1
    C = np.vstack([top, -top.sum(axis=0)])  # the vertices sum to zero
    return tuple(tuple(float(x) + 0.0 for x in row) for row in C)


def as_encodings(value, L: int) -> tuple[tuple[float, ...], ...]:
    """Encoding coefficients C (L x K, 1 <= K <= L) from an L x K nested sequence or L numbers
    (K = 1); ValueError names `encodings`."""
    arr = None if isinstance(value, str) else np.asarray(value, dtype=float)
    if arr is not None and arr.ndim == 1:
        arr = arr[:, None]
    if arr is None or arr.ndim != 2 or arr.shape[0] != L or not 1 <= arr.shape[1] <= L:
        raise ValueError(
            f"encodings must be L = {L} numbers (one per token) or an L x K matrix with "
            f"1 <= K <= L, got {value!r}"
        )
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"encodings must have finite entries, got {value!r}")
    if np.abs(arr).max() > MAX_ENTRY:
        raise ValueError(
            f"encodings entries must lie in [-{MAX_ENTRY:g}, {MAX_ENTRY:g}] (positions are of "
            f"order one; the logits grow like their square), got {np.abs(arr).max():g}"
        )
    return tuple(tuple(float(x) for x in row) for row in arr)


MAX_SEQUENCES = 64  # K^L label sequences the mixture theory enumerates (its cost grows with them)


@dataclass(frozen=True)
class Tied:
    """The paper's model: one matrix Q serves as query and key, S = softmax(x Q Q^T x^T / d)."""


@dataclass(frozen=True)
class Untied:
    """Separate query and key matrices Q_Q, Q_K (docs/theory-untied.md); theory at rank 1."""


@dataclass(frozen=True)
class Causal:
    """A causal mask on the tied student (docs/variants.md): token l attends to tokens k <= l,
    S = softmax_row(x Q Q^T x^T / d) with -inf above the diagonal. target True masks the
    teacher's softmax too; then the positional target A must be causal (zero above the
    diagonal, checked by `ModelParams`)."""

    target: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.target, bool):
            raise ValueError(f"target must be True or False, got {self.target!r}")


MAX_HEADS = 16  # heads of the multi-head student (its fields have heads x rank columns)


@dataclass(frozen=True)
class Heads:
    """Several tied heads (docs/variants.md): `heads` H >= 2 matrices Q_1..Q_H of rank r each,
    S = (1/H) sum_a softmax_row(x Q_a Q_a^T x^T / d), every head with its own softmax and the
    heads' attention averaged with fixed equal weights.

    Examples
    --------
    >>> from attnphase import Heads, ModelParams
    >>> ModelParams(variant=Heads(2)).heads
    2
    >>> Heads(1)
    Traceback (most recent call last):
    ...
    ValueError: heads must be an integer >= 2, got 1
    """

    heads: int = 2

    def __post_init__(self) -> None:
        heads = check_int("heads", self.heads, minimum=2)
        if heads > MAX_HEADS:
            raise ValueError(f"heads must be at most {MAX_HEADS}, got {heads}")
        object.__setattr__(self, "heads", heads)


MAX_FREQUENCY = 1e3  # of a rotary pair: angles are taken modulo 2 pi, larger ones are noise


@dataclass(frozen=True)
class Rotary:
    """Rotary positions (docs/variants.md): the student's query and key fields rotated by
    position-dependent angles, pair j of columns (2j, 2j + 1) by l phi_j at token l, so that
    Z_lk = sum_j h_l,j^T R((k - l) phi_j) h_k,j (R the 2 x 2 rotation); `frequencies`
    phi_1, ..., phi_{r/2}, one per pair of the student's r = 2 x (their number) columns. Tied
    query and key; the additive encodings stay (zero encodings: rotations alone).

    Examples
    --------
    >>> from attnphase import ModelParams, Rotary
    >>> Rotary((1.0, 0.25)).pairs
    2
    >>> ModelParams(rank=2, variant=Rotary((1.0,)), encodings=((0.0,), (0.0,))).rotary
    (1.0,)
    """

    frequencies: tuple[float, ...] = (1.0,)

    def __post_init__(self) -> None:
        try:
            values = tuple(float(x) for x in self.frequencies)
        except (TypeError, ValueError):
            raise ValueError(
                f"frequencies must be a sequence of real numbers, got {self.frequencies!r}"
            ) from None
        if not values:
            raise ValueError("frequencies must not be empty (one per pair of student columns)")
        for x in values:
            check_finite("frequencies", x)
            if abs(x) > MAX_FREQUENCY:
                raise ValueError(
                    f"frequencies must lie in [-{MAX_FREQUENCY:g}, {MAX_FREQUENCY:g}] (angles are "
                    f"taken modulo 2 pi), got {x!r}"
                )
        object.__setattr__(self, "frequencies", values)

    @property
    def pairs(self) -> int:
        """Pairs of rotated columns: the student's rank is twice this."""
        return len(self.frequencies)


@dataclass(frozen=True)
class Mixture:
    """Correlated tokens (docs/theory-mixtures.md): `clusters` K >= 2 Gaussian-mixture means of
    norm `cluster_norm`, neighbouring labels with one-hot Pearson correlation
    `label_correlation` in [0, 1] (the names of `SimConfig`); query and key tied."""

    clusters: int = 2
    label_correlation: float = 0.0
    cluster_norm: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "clusters", check_int("clusters", self.clusters, minimum=2))
        rho = check_unit_interval("label_correlation", self.label_correlation)
        object.__setattr__(self, "label_correlation", rho)
        object.__setattr__(
            self, "cluster_norm", check_nonnegative("cluster_norm", self.cluster_norm)
        )

    @property
    def directions(self) -> int:
        """K - 1: the mean directions, extra rows of M."""
        return self.clusters - 1

    def check_length(self, L: int) -> None:
        """ValueError naming `clusters` when the K^L label sequences exceed MAX_SEQUENCES."""
        if self.clusters**L > MAX_SEQUENCES:
            raise ValueError(
                f"clusters: K^L = {self.clusters}^{L} label sequences exceed the "
                f"{MAX_SEQUENCES} the mixture channel enumerates"
            )


Variant = Tied | Untied | Mixture | Causal | Heads | Rotary
TIED = Tied()


def key_start_of(variant: Variant, width: int) -> int:
    """The column where the key fields start in fields of `width` columns (`attnphase.ops`):
    width/2 for `Untied()` (the query fields, then the key fields), 0 otherwise (the key is
    the query)."""
    return width // 2 if isinstance(variant, Untied) else 0


MASKS = ("none", "causal")


def variant_of(
    untied: bool,
    clusters: int = 1,
    label_correlation: float = 0.0,
    cluster_norm: float = 1.0,
    mask: str = "none",
    target_mask: str = "none",
    heads: int = 1,
    rotary: tuple[float, ...] | None = None,
) -> Variant:
    """The variant of a flat description (the simulations', the sweeps' and the CLI's options):
    `Untied()` for untied, a `Mixture` for clusters >= 2, `Causal(target)` for mask "causal"
    (target: target_mask "causal"), `Tied()` otherwise. The mixture's options are checked even
    at clusters = 1, where they have no effect. A model has one variant: ValueError naming
    `clusters` for correlated tokens with untied query and key, `mask` for a mask with either,
    `target_mask` for a masked target under an unmasked student; `Heads(heads)` for heads >= 2
    (tied, Gaussian tokens, no mask: `heads` named otherwise); `Rotary(rotary)` for rotary
    frequencies (tied, Gaussian tokens, one head, no mask: `rotary` named otherwise)."""
    clusters = check_int("clusters", clusters)
    heads = check_int("heads", heads)
    if rotary is not None:
        if untied or clusters > 1 or mask != "none" or heads > 1:
            raise ValueError(
                "rotary: rotary positions go with tied query and key, Gaussian tokens, one head "
                "and no mask, not untied, clusters >= 2, several heads or a causal mask"
            )
        return Rotary(tuple(rotary))
    mixture = Mixture(max(clusters, 2), label_correlation, cluster_norm)
    for name, value in (("mask", mask), ("target_mask", target_mask)):
        if value not in MASKS:
            raise ValueError(f"{name} must be one of {MASKS}, got {value!r}")
    if target_mask == "causal" and mask != "causal":
        raise ValueError("target_mask: a causal target goes with a causal student (mask causal)")
    if heads > 1:
        if untied or clusters > 1 or mask != "none":
            raise ValueError(
                "heads: several heads go with tied query and key, Gaussian tokens and no mask, "
                "not untied, clusters >= 2 or a causal mask"
            )
        return Heads(heads)
    if mask == "causal":
        if untied or clusters > 1:
            raise ValueError(
                "mask: the causal mask goes with tied query and key and Gaussian tokens only, "
                "not untied or clusters >= 2"
            )
        return Causal(target=target_mask == "causal")
    if clusters == 1:
        return Untied() if untied else Tied()
    if untied:
        raise ValueError(
            "clusters: correlated tokens (clusters >= 2) go with tied query and key only, "
            "not untied"
        )
    return mixture


@dataclass(frozen=True)
class ModelParams:
    """The model of docs/theory.md §1 and §7: target mix omega in [0, 1], token std sigma > 0,
    ridge lam >= 0, the L x L positional target A (which fixes L), student rank r = `rank`,
    teacher rank t = `teacher_rank`, and the positional-encoding coefficients C (L x K,
    p_l = sum_k C_lk u_k; default `default_encodings(L)`), and the `variant`: `Tied()` (the
    paper's model), `Untied()` query and key, correlated tokens (`Mixture`) or a causal mask
    (`Causal`), several heads (`Heads`, each of rank `rank`) or rotary positions (`Rotary`).

    The teacher's field covariance is rho = sigma^2 I_t (teacher entries N(0, 1)).

    Examples
    --------
    >>> from attnphase import Heads, ModelParams, Rotary
    >>> p = ModelParams(omega=0.3, sigma=0.5, lam=0.01)
    >>> p.L, p.K, p.rho, p.is_l2
    (2, 1, 0.25, True)
    >>> ModelParams(variant=Heads(2)).heads
    2
    >>> ModelParams(rank=2, variant=Rotary((1.0,))).rotary
    (1.0,)
    >>> ModelParams(omega=1.5)
    Traceback (most recent call last):
    ...
    ValueError: omega must lie in [0, 1], got 1.5
    """

    omega: float = 0.3
    sigma: float = 0.5
    lam: float = 0.01
    A: tuple[tuple[float, ...], ...] = field(default=STANDARD_A)
    rank: int = 1
    teacher_rank: int = 1
    encodings: tuple[tuple[float, ...], ...] | None = None
    variant: Variant = field(default_factory=Tied)

    def __post_init__(self) -> None:
        object.__setattr__(self, "omega", check_unit_interval("omega", self.omega))
        object.__setattr__(self, "sigma", check_sigma(self.sigma))
        object.__setattr__(self, "lam", check_nonnegative("lam", self.lam))
        object.__setattr__(self, "A", as_square_matrix("A", self.A))
        object.__setattr__(self, "rank", check_int("rank", self.rank))
        object.__setattr__(self, "teacher_rank", check_int("teacher_rank", self.teacher_rank))
        enc = default_encodings(self.L) if self.encodings is None else self.encodings
        object.__setattr__(self, "encodings", as_encodings(enc, self.L))
        if not isinstance(self.variant, Tied | Untied | Mixture | Causal | Heads | Rotary):
            raise ValueError(
                "variant must be Tied(), Untied(), a Mixture(...), Causal(...), Heads(...) or "
                f"Rotary(...), got {self.variant!r}"
            )
        if isinstance(self.variant, Rotary) and self.rank != 2 * self.variant.pairs:
            raise ValueError(
                f"rank: rotary positions rotate pairs of columns, rank = 2 x {self.variant.pairs} "
                f"frequencies = {2 * self.variant.pairs}, got rank={self.rank}"
            )
        if self.causal_target and np.any(np.triu(self.A_array, 1) != 0.0):
            raise ValueError(
                "A: a causal target (Causal(target=True)) needs A zero above the diagonal, "
                f"got {self.A}"
            )

    def with_value(self, name: str, value: float) -> ModelParams:
        """A copy with the scalar parameter `name` (omega, sigma or lam: a parameter path's
        coordinate) set to value, validated as every ModelParams."""
        changes: dict[str, Any] = {name: value}
        return replace(self, **changes)

    @property
    def untied(self) -> bool:
        """Separate query and key matrices (variant `Untied`)."""
        return isinstance(self.variant, Untied)

    @property
    def is_tied_gaussian(self) -> bool:
        """The paper's variant: tied query and key, Gaussian tokens."""
        return isinstance(self.variant, Tied)

    @property
    def causal_target(self) -> bool:
        """The teacher's softmax is masked as the student's (`Causal(target=True)`)."""
        return isinstance(self.variant, Causal) and self.variant.target

    @property
    def mask(self) -> str:
        """The student's attention mask, "causal" (`Causal`) or "none" (`variant_of`'s name)."""
        return "causal" if isinstance(self.variant, Causal) else "none"

    @property
    def target_mask(self) -> str:
        """The teacher's attention mask, "causal" (`Causal(target=True)`) or "none"."""
        return "causal" if self.causal_target else "none"

    @property
    def heads(self) -> int:
        """Attention heads: H for `Heads(H)`, 1 otherwise."""
        return self.variant.heads if isinstance(self.variant, Heads) else 1

    @property
    def rotary(self) -> tuple[float, ...]:
        """The rotary frequencies (`Rotary`), () otherwise."""
        return self.variant.frequencies if isinstance(self.variant, Rotary) else ()

    def attention_columns(self) -> dict[str, Any]:
        """The attention variant's table columns where it differs from one unmasked head:
        mask and target_mask, heads, rotary (the columns the theory and GAMP records add)."""
        out: dict[str, Any] = {}
        if self.mask != "none":
            out.update(mask=self.mask, target_mask=self.target_mask)
        if self.heads > 1:
            out.update(heads=self.heads)
        if self.rotary:
            out.update(rotary=list(self.rotary))
        return out

    @property
    def mixture(self) -> Mixture | None:
        """The token mixture of a correlated-token model, None otherwise."""
        return self.variant if isinstance(self.variant, Mixture) else None

    @property
    def L(self) -> int:
        """Sequence length (the size of A)."""
        return len(self.A)

    @property
    def K(self) -> int:
        """Number of encoding directions (columns of C)."""
        assert self.encodings is not None  # __post_init__ fills in the default
        return len(self.encodings[0])

    @property
    def rho(self) -> float:
        return self.sigma**2

    @property
    def A_array(self) -> np.ndarray:
        return np.asarray(self.A, dtype=float)

    @property
    def C_array(self) -> np.ndarray:
        return np.asarray(self.encodings, dtype=float)

    @property
    def is_l2(self) -> bool:
        """The paper's case that the exact L=2 channel solves: tied, L = 2, r = t = 1,
        C = (+1, -1)."""
        return (
            isinstance(self.variant, Tied)
            and self.L == 2
            and self.rank == 1
            and self.teacher_rank == 1
            and self.encodings == ((1.0,), (-1.0,))
        )
