"""The histogram task's settings and their cost estimate, without torch."""

import pytest

from attnphase.cli.common import LONG_SECONDS, UsageError
from attnphase.cli.histogram import WARN_SECONDS, _check_cost
from attnphase.histogram.config import HistogramConfig


def test_the_cost_grows_with_runs_epochs_and_sequences_and_falls_with_the_batch():
    """The estimate is an upper bound over every epoch: linear in runs, models, the epochs of
    both stages and the sequences; a larger batch costs less per epoch (fewer steps)."""
    base = HistogramConfig()
    setup = HistogramConfig(runs=1).seconds() * 2 - HistogramConfig(runs=2).seconds()
    assert HistogramConfig(runs=20).seconds() - setup == pytest.approx(2 * (base.seconds() - setup))
    one = HistogramConfig(models=("semantic",)).seconds() - setup
    assert base.seconds() - setup == pytest.approx(2 * one)
    assert HistogramConfig(batch_size=256).seconds() < base.seconds()
    assert HistogramConfig(n_sequences=100_000).seconds() > base.seconds()


def test_quick_runs_without_a_word_the_default_warns_and_a_huge_request_is_refused(capsys):
    """Quick mode (about 30 s measured) stays under the warning; the default (10 runs, up to
    40 epochs: about 13 min) warns; 10^5 runs are refused naming --runs."""
    assert HistogramConfig.quick().seconds() < WARN_SECONDS < HistogramConfig().seconds()
    _check_cost(HistogramConfig.quick().seconds())
    assert capsys.readouterr().err == ""
    _check_cost(HistogramConfig().seconds())
    assert "warning: up to" in capsys.readouterr().err
    with pytest.raises(UsageError, match="--runs"):
        _check_cost(HistogramConfig(runs=100_000).seconds())
    assert HistogramConfig(runs=100_000).seconds() > LONG_SECONDS
