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


def test_unstructured_map_scores_zero(tokens):
    rng = np.random.default_rng(2)
    P = rng.random((len(tokens), 2, 10, 10))
    s = mechanism_scores(P / P.sum(-1, keepdims=True), tokens)
    assert np.all(s.positional < 0.01) and np.all(s.semantic < 0.01)


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
