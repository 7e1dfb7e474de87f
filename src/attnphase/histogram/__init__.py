"""The histogram (counting) task of the paper's Appendix A: a one-layer transformer with a
positional and a semantic solution (`run_histogram`), and a mechanism score for any attention
map (`mechanism_scores`)."""

from .data import EXAMPLES, HistogramData, histogram_labels, make_dataset
from .mechanism import MechanismScores, mechanism_scores
from .model import MODES, StackedTransformer
from .run import HistogramConfig, HistogramResult, ModelResult, config_from, run_histogram
from .train import CheckpointError, History, TrainConfig, evaluate, train

__all__ = [
    "EXAMPLES",
    "MODES",
    "CheckpointError",
    "HistogramConfig",
    "HistogramData",
    "HistogramResult",
    "History",
    "MechanismScores",
    "ModelResult",
    "StackedTransformer",
    "TrainConfig",
    "config_from",
    "evaluate",
    "histogram_labels",
    "make_dataset",
    "mechanism_scores",
    "run_histogram",
    "train",
]
