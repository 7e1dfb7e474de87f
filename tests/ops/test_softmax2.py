"""The closed forms of `attnphase.ops.softmax2` (L = 2, r = 1): the diagonal of the matrix
softmax and the Frobenius loss up to the teacher-only constant (docs/theory.md §2, §6)."""

import numpy as np
import pytest

from attnphase.ops.softmax2 import reduced_loss, softmax_diag, target_centres


def _softmax_rows(h):
    s = np.outer(h, h)
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_softmax_closed_form_matches_matrix_softmax():
    rng = np.random.default_rng(1)
    for h in rng.normal(scale=2.0, size=(50, 2)):
        s1, s2 = softmax_diag(*h)
        S = _softmax_rows(h)
        assert S[0, 0] == pytest.approx(s1, rel=1e-12)
        assert S[1, 1] == pytest.approx(s2, rel=1e-12)


def test_reduced_loss_equals_frobenius_loss_up_to_teacher_constant():
    rng = np.random.default_rng(2)
    omega, sigma2 = 0.3, 0.25
    A = np.array([[0.3, 0.7], [0.8, 0.1]])  # rows not summing to one: kappa != 0
    kappa = sigma2 / 4 * omega**2 * ((1 - A[0].sum()) ** 2 + (1 - A[1].sum()) ** 2)
    for _ in range(30):
        h, hs = rng.normal(size=2), rng.normal(size=2)
        T = (1 - omega) * _softmax_rows(hs) + omega * A
        full = sigma2 / 2 * np.sum((_softmax_rows(h) - T) ** 2)
        c1, c2 = target_centres(*hs, omega, *A.ravel())
        assert reduced_loss(*h, c1, c2, sigma2) + kappa == pytest.approx(full, rel=1e-12, abs=1e-15)
