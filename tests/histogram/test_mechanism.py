"""Mechanism score: separates hand-built positional and same-token maps; rejects bad input."""

import numpy as np
import pytest
import torch

from attnphase.histogram import make_dataset, mechanism_scores


@pytest.fixture(scope="module")
def tokens():
    return make_dataset(seed=0, n_sequences=2000).val_x[:400].numpy()


def _positional(n: int, T: int = 10, heads: int = 1, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    pattern = rng.random((heads, T, T)) ** 4
    pattern /= pattern.sum(-1, keepdims=True)
    return np.broadcast_to(pattern, (n, heads, T, T)).copy()


def _same_token(tokens: np.ndarray, sharpness: float | None = None) -> np.ndarray:
    same = (tokens[:, :, None] == tokens[:, None, :]).astype(float)
    P = same if sharpness is None else np.exp(sharpness * same)
    return (P / P.sum(-1, keepdims=True))[:, None]


def test_pure_maps_are_separated(tokens):
    previous = np.eye(10, k=-1)
    previous[0, 0] = 1.0
    for P in (_positional(len(tokens)), np.broadcast_to(previous, (len(tokens), 1, 10, 10))):
        pos = mechanism_scores(P, tokens)
        assert pos.positional[0] == pytest.approx(1.0, abs=1e-12)
        assert pos.semantic[0] < 0.01
        assert pos.score[0] < -0.99
    for P in (_same_token(tokens), _same_token(tokens, sharpness=2.0)):
        sem = mechanism_scores(P, tokens)
        # < 1 only through rows whose same-token count no other sequence shares (left out)
        assert sem.semantic[0] > 0.99
        assert sem.positional[0] < 0.01
        assert sem.score[0] > 0.99


def _centred_offdiagonal(P: np.ndarray) -> np.ndarray:
    """D of the module docstring: off-diagonal cells, each row centred; [B, H, T, T-1]."""
    B, H, T, _ = P.shape
    D = P[:, :, ~np.eye(T, dtype=bool)].reshape(B, H, T, T - 1)
    return D - D.mean(-1, keepdims=True)


def _loo_positional_fraction(P: np.ndarray) -> np.ndarray:
    """Closed form of the leave-one-out positional fraction, per head, before clipping.

    With S = sum_b D_b and N = sum_b |D_b|^2, the template (S - D_b)/(B - 1) leaves the residual
    sum_b |B D_b - S|^2/(B - 1)^2 = (B^2 N - B |S|^2)/(B - 1)^2, so the fraction is
    (B |S|^2/N - (2B - 1))/(B - 1)^2. An in-sample fit (template S/B) gives |S|^2/(B N) instead.
    """
    D = _centred_offdiagonal(P)
    B = D.shape[0]
    S2 = (D.sum(0) ** 2).sum((1, 2))
    N = (D**2).sum((0, 2, 3))
    return (B * S2 / N - (2 * B - 1)) / (B - 1) ** 2


def _loo_same_token_fraction(P: np.ndarray, tokens: np.ndarray) -> np.ndarray:
    """The leave-one-out same-token fraction by explicit loops over cells (reference version of
    the vectorised template): each cell's template is the mean of D over the cells of the OTHER
    sequences with the same head, same-token count of the row and same/other label."""
    D = _centred_offdiagonal(P)
    B, H, T, K = D.shape
    keys = [[k for k in range(T) if k != q] for q in range(T)]
    out = np.empty(H)
    for h in range(H):
        sums: dict = {}
        per_seq: dict = {}
        for b in range(B):
            for q in range(T):
                same = [tokens[b, k] == tokens[b, q] for k in keys[q]]
                count = sum(same)
                for j in range(K):
                    g = (count, same[j])
                    sums[g] = sums.get(g, np.zeros(2)) + (D[b, h, q, j], 1.0)
                    per_seq[b, g] = per_seq.get((b, g), np.zeros(2)) + (D[b, h, q, j], 1.0)
        resid = 0.0
        for b in range(B):
            for q in range(T):
                same = [tokens[b, k] == tokens[b, q] for k in keys[q]]
                for j in range(K):
                    g = (sum(same), same[j])
                    total, n = sums[g] - per_seq[b, g]
                    template = total / n if n > 0 else 0.0
                    resid += (D[b, h, q, j] - template) ** 2
        out[h] = 1.0 - resid / (D[:, h] ** 2).sum()
    return out


def test_unstructured_map_scores_exactly_zero(tokens):
    """Leave-one-out templates cannot explain noise: for independent random maps the positional
    fraction before clipping is (B |S|^2/N - (2B - 1))/(B - 1)^2 ~ -1/(B - 1) < 0 (see
    `_loo_positional_fraction`), likewise for the same-token template, so both clip to exactly
    0. In-sample templates would score ~1/B = 2.5e-3 (positional) and ~1e-4 (same-token)."""
    rng = np.random.default_rng(2)
    for _ in range(3):
        P = rng.random((len(tokens), 2, 10, 10))
        P /= P.sum(-1, keepdims=True)
        s = mechanism_scores(P, tokens)
        assert np.all(_loo_positional_fraction(P) < 0)
        np.testing.assert_allclose(s.positional, 0.0, rtol=0, atol=1e-12)
        np.testing.assert_allclose(s.semantic, 0.0, rtol=0, atol=1e-12)
        np.testing.assert_allclose(s.score, 0.0, rtol=0, atol=1e-12)


def test_fractions_equal_their_leave_one_out_definitions(tokens):
    """A noisy mixture of a positional pattern, a same-token map and noise, where both raw
    fractions lie inside (0, 1): the scores equal the closed form of the positional fraction and
    a loop-by-loop evaluation of the same-token one to 1e-12 (in-sample fits differ by ~1e-3)."""
    rng = np.random.default_rng(5)
    tok = tokens[:60]
    noise = rng.random((len(tok), 1, 10, 10))
    noise /= noise.sum(-1, keepdims=True)
    P = 0.6 * noise + 0.2 * _positional(len(tok)) + 0.2 * _same_token(tok)
    s = mechanism_scores(P, tok)
    pos, sem = _loo_positional_fraction(P), _loo_same_token_fraction(P, tok)
    assert np.all((0.05 < pos) & (pos < 0.95)) and np.all((0.05 < sem) & (sem < 0.95))
    np.testing.assert_allclose(s.positional, pos, rtol=0, atol=1e-12)
    np.testing.assert_allclose(s.semantic, sem, rtol=0, atol=1e-12)


def test_heads_are_scored_separately_and_mixtures_lie_between(tokens):
    P = np.concatenate([_positional(len(tokens)), _same_token(tokens)], axis=1)
    s = mechanism_scores(torch.tensor(P), torch.tensor(tokens))  # torch input accepted
    assert s.score[0] < -0.99 and s.score[1] > 0.99
    mix = 0.5 * _positional(len(tokens)) + 0.5 * _same_token(tokens)
    m = mechanism_scores(mix, tokens)
    assert -0.9 < m.score[0] < 0.9
    assert 0.2 < m.positional[0] < 0.9 and 0.2 < m.semantic[0] < 0.9
    assert m.positional[0] + m.semantic[0] == pytest.approx(1.0, abs=0.05)


def test_token_pair_map_that_is_not_same_token_is_not_semantic(tokens):
    rng = np.random.default_rng(1)
    table = rng.normal(size=(15, 15)) * 3
    scores = table[tokens[:, :, None], tokens[:, None, :]]
    P = np.exp(scores)
    P = (P / P.sum(-1, keepdims=True))[:, None]
    s = mechanism_scores(P, tokens)
    assert s.semantic[0] < 0.4 and s.positional[0] < 0.05


def test_uniform_map_has_no_mechanism(tokens):
    s = mechanism_scores(np.full((len(tokens), 1, 10, 10), 0.1), tokens)
    assert np.isnan(s.score[0])


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda P, t: (P[0], t), "attention must have shape"),
        (lambda P, t: (P, t[:, :5]), "tokens must have shape"),
        (lambda P, t: (P[:1], t[:1]), "batch >= 2"),
        (lambda P, t: (-P, t), "must be non-negative"),
        (lambda P, t: (np.where(P > 0.5, np.nan, P), t), "must be finite"),
        (lambda P, t: (2 * P, t), "sum to 1"),
        (lambda P, t: (P, t + 0.5), "integers"),
        (lambda P, t: (P[:, :, :, :5], t), "square"),
    ],
)
def test_bad_input(make, match, tokens):
    P = _same_token(tokens)
    with pytest.raises(ValueError, match=match):
        mechanism_scores(*make(P, tokens.astype(float)))
