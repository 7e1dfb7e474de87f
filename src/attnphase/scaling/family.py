"""The family of models along the sequence length L of the scaling study (docs/scaling.md §1;
the model of docs/theory.md §1 and §7).

Every member has the paper's sigma, lambda and omega, the positional target `positional_target`
(a on the diagonal, (1 - a)/(L - 1) elsewhere: the paper's A at L = 2, a = 0.6) and one of two
encoding families:

- "linear": the simulations' encodings (`default_encodings`: K = 1, c_l evenly from +1 to -1)
  with a rank-1 student. Its fields h_l = c_l m + noise give logits c_l c_k m^2, which cannot
  be larger on the diagonal than everywhere else for L >= 3 (the middle tokens' c_l are small);
- "simplex": the vertices of a regular simplex (`simplex_encodings`: K = L - 1) with a student
  of rank L - 1, the smallest rank whose fields h_l = m c_l have logits m^2 on the diagonal and
  -m^2/(L - 1) off it for every token: exactly the pattern of the target, with a = its softmax.
At L = 2 both are the paper's model (C = (+1, -1), rank 1).

A variant of the linear family (docs/variants.md): `mask` "causal", a causal student facing a
causal target (`causal_positional_target`: a on the diagonal, 1 - a spread evenly over the
earlier tokens, the first row (1, 0, ...)); or `heads` H >= 2 tied heads of rank 1 each.
"""

from __future__ import annotations

from ..params import (
    MASKS,
    ModelParams,
    Tied,
    Variant,
    check_finite,
    check_int,
    default_encodings,
    positional_target,
    simplex_encodings,
    variant_of,
)

FAMILIES = ("linear", "simplex")
DIAGONAL = 0.6  # the diagonal a of the target: the paper's A at L = 2
MAX_L = 16  # the QMC channel integrates L (r + 1) dimensions; beyond this nothing is affordable


def check_family(family: str) -> str:
    """ValueError naming `encodings` unless `family` is one of FAMILIES."""
    if family not in FAMILIES:
        raise ValueError(f"encodings must be one of {', '.join(FAMILIES)}, got {family!r}")
    return family


def check_length(L: int) -> int:
    """A sequence length 2 <= L <= MAX_L; ValueError naming `L`."""
    L = check_int("L", L, minimum=2)
    if L > MAX_L:
        raise ValueError(f"L must be <= {MAX_L}, got {L}")
    return L


def family_rank(L: int, family: str) -> int:
    """The student's rank in a family: 1 (linear), L - 1 (simplex)."""
    return 1 if check_family(family) == "linear" else check_length(L) - 1


def causal_positional_target(L: int, a: float = DIAGONAL) -> tuple[tuple[float, ...], ...]:
    """The causal analogue of `positional_target`: row 0 is (1, 0, ...) (the first token sees
    only itself), row l has a on the diagonal and (1 - a)/l on each earlier token, zero above."""
    L = check_int("L", L, minimum=2)
    a = check_finite("a", a)
    rows = [tuple(1.0 if j == 0 else 0.0 for j in range(L))]
    rows += [
        tuple(a if j == i else (1.0 - a) / i if j < i else 0.0 for j in range(L))
        for i in range(1, L)
    ]
    return tuple(rows)


def family_variant(family: str, mask: str = "none", heads: int = 1) -> Variant:
    """The variant of a scaling row (module docstring): `Tied()`, `Causal(target=True)` for mask
    "causal" or `Heads(heads)`; ValueError naming `mask`, `heads` or `encodings` for a
    combination the family does not hold (both at once; either with the simplex family, whose
    positional branch is pinned symmetric under token permutations, which a mask breaks and
    several heads multiply)."""
    if mask not in MASKS:
        raise ValueError(f"mask must be one of {', '.join(MASKS)}, got {mask!r}")
    variant = variant_of(False, mask=mask, target_mask=mask, heads=heads)
    if variant != Tied() and check_family(family) == "simplex":
        raise ValueError(
            "encodings: the simplex family goes with one unmasked head; a causal mask or "
            "several heads go with the linear family"
        )
    return variant


def family_model(
    L: int,
    omega: float = 0.3,
    family: str = "linear",
    *,
    a: float = DIAGONAL,
    sigma: float = 0.5,
    lam: float = 0.01,
    mask: str = "none",
    heads: int = 1,
) -> ModelParams:
    """The member of the family at sequence length L (module docstring; docs/scaling.md §1),
    with the variant of `family_variant` (docs/variants.md).

    Examples
    --------
    >>> from attnphase import family_model
    >>> p = family_model(4, 0.3, "simplex")
    >>> p.rank, p.K
    (3, 3)
    >>> family_model(3, 0.3, mask="causal").A
    ((1.0, 0.0, 0.0), (0.4, 0.6, 0.0), (0.2, 0.2, 0.6))
    >>> family_model(3, 0.3, "simplex", heads=2)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: encodings: the simplex family goes with one unmasked head; ...
    """
    L = check_length(L)
    family = check_family(family)
    variant = family_variant(family, mask, heads)
    encodings = default_encodings(L) if family == "linear" else simplex_encodings(L)
    A = causal_positional_target(L, a) if mask == "causal" else positional_target(L, a)
    return ModelParams(
        omega=omega,
        sigma=sigma,
        lam=lam,
        A=A,
        rank=family_rank(L, family),
        encodings=encodings,
        variant=variant,
    )
