"""The family of models along L (docs/scaling.md §1): the target, the two encoding families and
the rank the simplex family needs, checked in closed form."""

import math

import numpy as np
import pytest

from attnphase.ops.array import attention
from attnphase.params import STANDARD_A, Causal, Heads, positional_target, simplex_encodings
from attnphase.scaling import family_model, family_rank
from attnphase.scaling.family import causal_positional_target


def test_target_at_two_tokens_is_the_papers():
    assert positional_target(2, 0.6) == STANDARD_A


@pytest.mark.parametrize("L", range(2, 9))
def test_target_rows_are_attention_rows(L):
    A = np.asarray(positional_target(L, 0.6))
    np.testing.assert_allclose(A.sum(axis=1), 1.0, rtol=0, atol=1e-15)
    np.testing.assert_allclose(np.diag(A), 0.6, rtol=0, atol=0)
    off = A[~np.eye(L, dtype=bool)]
    np.testing.assert_allclose(off, 0.4 / (L - 1), rtol=1e-15)


@pytest.mark.parametrize("L", range(2, 9))
def test_simplex_encodings_are_a_regular_simplex(L):
    C = np.asarray(simplex_encodings(L))
    assert C.shape == (L, L - 1)
    gram = C @ C.T
    expected = (1 + 1 / (L - 1)) * np.eye(L) - 1 / (L - 1)
    np.testing.assert_allclose(gram, expected, rtol=0, atol=1e-14)
    assert np.linalg.matrix_rank(gram) == L - 1  # no smaller rank carries these logits


@pytest.mark.parametrize("L", range(2, 9))
def test_simplex_student_represents_the_target_exactly(L):
    """Fields h_l = m c_l of a rank-(L - 1) student: softmax(h h^T) = A_L(a) at
    m^2 = (L - 1)/L ln(a (L - 1)/(1 - a)) (docs/scaling.md §1)."""
    a = 0.6
    C = np.asarray(simplex_encodings(L))
    m = math.sqrt((L - 1) / L * math.log(a * (L - 1) / (1 - a)))
    S = attention((m * C)[None])[0]
    np.testing.assert_allclose(S, positional_target(L, a), rtol=0, atol=1e-12)


@pytest.mark.parametrize("L", range(3, 9))
def test_linear_rank_one_student_cannot(L):
    """Rank 1, c_l from +1 to -1: a middle token's logits c_l c_k m^2 are all 0 (c_l = 0) or
    largest at the outer token of its sign, never on the diagonal: its diagonal weight stays far
    below a = 0.6 for every m (measured on a grid of m up to 20: 1/3 at L = 3, 0.277 at L = 4,
    falling to 0.128 at L = 8; the bound is L = 3's uniform row)."""
    C = np.asarray(family_model(L, 0.3, "linear").encodings)
    middle = L // 2 if L % 2 else L // 2 - 1
    best = max(attention((m * C)[None])[0][middle, middle] for m in np.linspace(0, 20, 2001))
    assert best <= 1 / 3 + 1e-12


def test_both_families_are_the_papers_model_at_two_tokens():
    for family in ("linear", "simplex"):
        p = family_model(2, 0.3, family)
        assert p.is_l2 and p.A == STANDARD_A and family_rank(2, family) == 1


@pytest.mark.parametrize("L", [3, 5, 8])
def test_family_ranks(L):
    assert family_model(L, 0.3, "linear").rank == 1
    p = family_model(L, 0.3, "simplex")
    assert (p.rank, p.K) == (L - 1, L - 1)


def test_bad_family_and_length():
    with pytest.raises(ValueError, match="encodings"):
        family_model(3, 0.3, "circle")
    with pytest.raises(ValueError, match="L must"):
        family_model(1, 0.3)


@pytest.mark.parametrize("L", range(2, 9))
def test_causal_target_is_a_causal_attention_matrix(L):
    """Rows sum to one, nothing above the diagonal, a on it from the second row, 1 - a spread
    evenly over the earlier tokens, the first row (1, 0, ...)."""
    A = np.asarray(causal_positional_target(L, 0.6))
    np.testing.assert_allclose(A.sum(axis=1), 1.0, rtol=0, atol=1e-15)
    assert np.all(np.triu(A, 1) == 0) and A[0, 0] == 1.0
    np.testing.assert_allclose(np.diag(A)[1:], 0.6, rtol=0, atol=0)
    for i in range(1, L):
        np.testing.assert_allclose(A[i, :i], 0.4 / i, rtol=1e-15)


def test_variant_members():
    p = family_model(3, 0.3, mask="causal")
    assert p.variant == Causal(target=True) and p.A == ((1, 0, 0), (0.4, 0.6, 0), (0.2, 0.2, 0.6))
    q = family_model(4, 0.5, heads=3)
    assert q.variant == Heads(3) and q.rank == 1 and q.A == positional_target(4, 0.6)
    for kwargs, name in [
        (dict(family="simplex", mask="causal"), "encodings"),
        (dict(mask="causal", heads=2), "heads"),
        (dict(mask="full"), "mask"),
    ]:
        with pytest.raises(ValueError, match=f"^{name}"):
            family_model(3, 0.3, **kwargs)
