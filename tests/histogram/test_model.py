"""Histogram task: labels, data splits, restriction, the exact mapping to the unrestricted
model, the table formulation of the forward pass, checkpoints."""

from collections import Counter

import pytest
import torch

from attnphase.histogram import (
    EXAMPLES,
    CheckpointError,
    StackedTransformer,
    TrainConfig,
    evaluate,
    histogram_labels,
    make_dataset,
    train,
)
from attnphase.histogram.data import seed_for
from attnphase.histogram.training import History


@pytest.fixture(scope="module")
def small_data():
    return make_dataset(seed=3, n_sequences=3000)


def test_labels_are_counts():
    x = torch.tensor(EXAMPLES)
    assert histogram_labels(x)[0].tolist() == [6, 6, 2, 2, 2, 2, 6, 6, 6, 6]
    assert histogram_labels(x)[1].tolist() == [1, 4, 1, 4, 4, 4, 1, 2, 2, 1]
    assert histogram_labels(x)[2].tolist() == [1] * 10
    data = make_dataset(seed=1, n_sequences=500)
    for seq, lab in zip(data.train_x.tolist(), data.train_y.tolist(), strict=True):
        counts = Counter(seq)
        assert lab == [counts[t] for t in seq]


def test_dataset_split_dedup_and_seeds():
    a, b, c = make_dataset(seed=0), make_dataset(seed=0), make_dataset(seed=1)
    n = a.n_train + len(a.val_x)
    assert n == 50_000  # a duplicate among 15^10 sequences is unlikely (expected 0.002)
    assert a.n_train == round(0.7 * n)
    everything = torch.cat([a.train_x, a.val_x])
    assert len(torch.unique(everything, dim=0)) == n  # no duplicates, no train/val overlap
    assert 0 <= int(everything.min()) and int(everything.max()) <= 14
    assert torch.equal(a.train_x, b.train_x) and torch.equal(a.val_x, b.val_x)
    assert not torch.equal(a.train_x, c.train_x)
    tiny = make_dataset(seed=0, n_sequences=200, seq_len=3, vocab=2)  # only 8 distinct
    assert tiny.n_train + len(tiny.val_x) == 8
    assert len(torch.unique(torch.cat([tiny.train_x, tiny.val_x]), dim=0)) == 8


def test_bad_dataset_arguments():
    with pytest.raises(ValueError, match="train_fraction"):
        make_dataset(train_fraction=1.0)
    with pytest.raises(ValueError, match="n_sequences"):
        make_dataset(n_sequences=1)
    with pytest.raises(ValueError, match="both splits non-empty"):
        make_dataset(n_sequences=100, seq_len=1, vocab=1)


def _stack(dtype=torch.float64):
    return StackedTransformer(["positional", "semantic", "free"], [1, 2, 3]).to(dtype)


def test_table_forward_equals_the_model_as_written(small_data):
    m = _stack()
    x = small_data.val_x[:64]
    logits, attn = m(x)
    ref_logits, ref_attn = m.reference_forward(x)
    assert torch.allclose(logits, ref_logits, atol=1e-12)
    assert torch.allclose(attn, ref_attn, atol=1e-12)
    assert torch.allclose(attn.sum(-1), torch.ones(()).double())


def test_stacked_runs_equal_single_runs(small_data):
    m = _stack()
    x = small_data.val_x[:32]
    logits, _ = m(x)
    for r, (mode, seed) in enumerate(zip(m.modes, [1, 2, 3], strict=True)):
        single, _ = StackedTransformer([mode], [seed]).double()(x)
        assert torch.allclose(single[0], logits[r], atol=1e-12)


@pytest.mark.parametrize("mode, hidden", [("positional", "tok"), ("semantic", "pos")])
def test_restricted_scores_do_not_see_the_hidden_half(mode, hidden, small_data):
    m = StackedTransformer([mode], [5]).double()
    x = small_data.val_x[:16]
    logits, attn = m(x)
    # the scores (hence the map) have zero gradient w.r.t. the other embedding
    grad = torch.autograd.grad(attn.pow(2).sum(), getattr(m, hidden), retain_graph=True)[0]
    assert torch.count_nonzero(grad) == 0
    # the same holds for the input vectors themselves: scores see only one half of x
    emb, qk_in = m.tables()
    half = m.width // 2
    seen = slice(half, None) if mode == "positional" else slice(0, half)
    unseen = slice(0, half) if mode == "positional" else slice(half, None)
    assert torch.count_nonzero(qk_in[..., unseen]) == 0
    assert torch.count_nonzero(qk_in[..., seen]) > 0
    # whereas the loss uses both embeddings (through the values and the residual)
    m.loss(x, histogram_labels(x)).sum().backward()
    assert torch.count_nonzero(m.tok.grad) > 0 and torch.count_nonzero(m.pos.grad) > 0


def test_restricted_maps_are_positional_or_token_functions():
    x = torch.tensor(EXAMPLES)
    _, pos_attn = StackedTransformer(["positional"], [0])(x)
    assert torch.allclose(pos_attn[0, 0], pos_attn[0, 2])  # same map for every sequence
    _, sem_attn = StackedTransformer(["semantic"], [0])(x)
    perm = torch.randperm(10, generator=torch.Generator().manual_seed(0))
    _, sem_perm = StackedTransformer(["semantic"], [0])(x[:, perm])
    assert torch.allclose(sem_perm[0], sem_attn[0][:, perm][:, :, perm], atol=1e-6)


def test_hidden_entries_stay_zero_under_adam(small_data):
    m = StackedTransformer(["positional", "semantic"], [0, 1])
    cfg = TrainConfig(epochs=1, batch_size=256)
    train(m, small_data, cfg, run_seeds=[0, 1])
    assert torch.count_nonzero(m.tok * (1 - m.tok_mask)) == 0
    assert torch.count_nonzero(m.pos * (1 - m.pos_mask)) == 0
    assert torch.count_nonzero(m.wq * (1 - m.qk_mask)) == 0
    assert torch.count_nonzero(m.wk * (1 - m.qk_mask)) == 0
    assert torch.count_nonzero(m.wq * m.qk_mask) > 0


def test_mapping_to_unrestricted_model_preserves_outputs_exactly(small_data):
    m = StackedTransformer(["positional", "semantic"], [0, 1])
    train(m, small_data, TrainConfig(epochs=1, batch_size=256), run_seeds=[0, 1])
    free = m.unrestricted()
    assert free.modes == ("free", "free")
    x = small_data.val_x[:200]
    a, b = m(x), free(x)
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
    assert torch.equal(m.flat(), free.flat())
    # and the free model can leave the restricted subspace
    free.loss(x, histogram_labels(x)).sum().backward()
    assert torch.count_nonzero(free.tok.grad * (1 - m.tok_mask)) > 0


def test_bad_tokens_rejected():
    m = StackedTransformer(["semantic"], [0])
    with pytest.raises(ValueError, match="tokens must lie"):
        m(torch.tensor([[0, 15, 1]]))
    with pytest.raises(ValueError, match="tokens must lie"):
        m.reference_forward(torch.tensor([[0, -1, 1]]))
    with pytest.raises(ValueError, match="tokens must have shape"):
        m(torch.zeros(2, 4, 10, dtype=torch.long))
    with pytest.raises(ValueError, match="mode must be one of"):
        StackedTransformer(["both"], [0])
    with pytest.raises(ValueError, match="modes and seeds"):
        StackedTransformer(["free"], [0, 1])


def test_checkpoint_resume_equals_uninterrupted_run(tmp_path, small_data):
    cfg = TrainConfig(epochs=3, batch_size=128)
    seeds = [seed_for("run", i) for i in range(2)]

    def fresh():
        return StackedTransformer(["positional", "semantic"], [7, 8])

    whole = fresh()
    h_whole = train(whole, small_data, cfg, seeds)

    def stop_after_two(epoch: int, hist: History) -> None:
        if epoch == 2:
            raise KeyboardInterrupt

    ckpt = tmp_path / "run.pt"
    with pytest.raises(KeyboardInterrupt):
        train(fresh(), small_data, cfg, seeds, ckpt, on_epoch=stop_after_two)
    resumed = fresh()
    h_resumed = train(resumed, small_data, cfg, seeds, ckpt)
    assert h_resumed.epochs == 3
    assert h_resumed.val_accuracy == h_whole.val_accuracy
    assert torch.equal(resumed.flat(), whole.flat())


def test_corrupt_or_foreign_checkpoint_is_an_error(tmp_path, small_data):
    ckpt = tmp_path / "run.pt"
    ckpt.write_bytes(b"not a checkpoint")
    m = StackedTransformer(["semantic"], [0])
    cfg = TrainConfig(epochs=1, batch_size=512)
    with pytest.raises(CheckpointError, match="not a readable attnphase checkpoint"):
        train(m, small_data, cfg, [0], ckpt)
    ckpt.unlink()
    train(m, small_data, cfg, [0], ckpt)
    with pytest.raises(CheckpointError, match="different configuration"):
        train(m, small_data, TrainConfig(epochs=1, batch_size=256), [0], ckpt)


def test_evaluate_counts_positions(small_data):
    m = StackedTransformer(["semantic"], [0])
    loss, acc = evaluate(m, small_data.val_x[:100], small_data.val_y[:100], chunk=7)
    logits, _ = m(small_data.val_x[:100])
    expected = (logits.argmax(-1) == small_data.val_y[:100]).double().mean()
    assert acc.item() == pytest.approx(expected.item(), abs=1e-12)
    assert loss.item() == pytest.approx(
        m.loss(small_data.val_x[:100], small_data.val_y[:100]).item(), rel=1e-6
    )


def test_train_config_errors_name_the_parameter():
    for kwargs, name in [
        ({"epochs": -1}, "epochs"),
        ({"batch_size": 0}, "batch_size"),
        ({"lr": float("nan")}, "lr"),
        ({"optimizer": "rmsprop"}, "optimizer"),
        ({"target_accuracy": 1.5}, "target_accuracy"),
        ({"schedule": "linear"}, "schedule"),
    ]:
        with pytest.raises(ValueError, match=name):
            TrainConfig(**kwargs)


def test_cosine_schedule():
    cfg = TrainConfig(epochs=4, lr=2.0, schedule="cosine")
    assert [cfg.lr_at(e) for e in range(4)] == pytest.approx([2.0, 1.0 + 2**-0.5, 1.0, 1 - 2**-0.5])
    assert TrainConfig(lr=2.0).lr_at(3) == 2.0
    with pytest.raises(ValueError, match="schedule"):
        TrainConfig(schedule="step")


def test_divergence_is_reported(small_data):
    m = StackedTransformer(["semantic"], [0])
    with pytest.raises(FloatingPointError, match="lower lr"):
        train(m, small_data, TrainConfig(epochs=2, optimizer="sgd", lr=1e8, batch_size=256), [0])
