"""The histogram task's settings and their cost estimate, without torch."""

import pytest

from attnphase.cli.common import LONG_SECONDS, UsageError
from attnphase.cli.histogram import WARN_SECONDS, _check_cost
from attnphase.histogram.config import SETUP_SECONDS, HistogramConfig


def test_the_cost_grows_with_runs_epochs_and_sequences_and_falls_with_the_batch():
    """The estimate is an upper bound over every epoch: affine in the runs (their steps are
    shared), linear in the models, the epochs of both stages and the sequences; a larger batch
    costs less per epoch (fewer steps)."""
    base = HistogramConfig()
    one, two = HistogramConfig(runs=1).seconds(), HistogramConfig(runs=2).seconds()
    assert HistogramConfig(runs=20).seconds() == pytest.approx(one + 19 * (two - one))
    single = HistogramConfig(models=("semantic",)).seconds() - SETUP_SECONDS
    assert base.seconds() - SETUP_SECONDS == pytest.approx(2 * single)
    epochs = HistogramConfig(epochs=10, retrain_epochs=10).seconds() - SETUP_SECONDS
    assert base.seconds() - SETUP_SECONDS == pytest.approx(2 * epochs)
    assert HistogramConfig(batch_size=256).seconds() < base.seconds()
    assert HistogramConfig(n_sequences=100_000).seconds() > base.seconds()


@pytest.mark.parametrize("batch_size, measured", [(4, 177.7), (16, 51.4), (64, 19.5), (1024, 8.3)])
def test_the_estimate_follows_the_measured_times_at_every_batch(batch_size, measured):
    """One run, one epoch of each stage, measured on the 2-core machine (load 1.5): the estimate
    is within 20% of each (measured 0.93-0.97). A cost per sample alone, without the per-step
    cost, gave 48 s for the 178 s at batch 4."""
    cfg = HistogramConfig(
        runs=1, epochs=1, retrain_epochs=1, batch_size=batch_size, target_accuracy=None
    )
    assert cfg.seconds() == pytest.approx(measured, rel=0.2)


def test_quick_runs_without_a_word_the_default_warns_and_a_huge_request_is_refused(capsys):
    """Quick mode (about 30 s measured, estimated 85 s) stays under the warning; the default
    (10 runs, up to 40 epochs: about 16 min) warns; 10^5 runs are refused naming --runs."""
    assert HistogramConfig.quick().seconds() < WARN_SECONDS < HistogramConfig().seconds()
    _check_cost(HistogramConfig.quick().seconds())
    assert capsys.readouterr().err == ""
    _check_cost(HistogramConfig().seconds())
    assert "warning: up to" in capsys.readouterr().err
    with pytest.raises(UsageError, match="--runs"):
        _check_cost(HistogramConfig(runs=100_000).seconds())
    assert HistogramConfig(runs=100_000).seconds() > LONG_SECONDS
