"""The histogram (counting) task of the paper's Appendix A: a one-layer transformer with a
positional and a semantic solution (`run_histogram`), and a mechanism score for any attention
map (`mechanism_scores`). The settings (`HistogramConfig`, `config_from`) load without torch;
everything else on first use."""

from typing import TYPE_CHECKING

from .._core.lazy import lazy_getattr
from .config import MODES, HistogramConfig, TrainConfig, config_from

if TYPE_CHECKING:
    from .data import EXAMPLES, HistogramData, histogram_labels, make_dataset
    from .mechanism import MechanismScores, mechanism_scores
    from .model import StackedTransformer
    from .run import HistogramResult, ModelResult, run_histogram
    from .training import CheckpointError, History, evaluate, train

_LAZY = {
    **dict.fromkeys(("EXAMPLES", "HistogramData", "histogram_labels", "make_dataset"), "data"),
    **dict.fromkeys(("MechanismScores", "mechanism_scores"), "mechanism"),
    "StackedTransformer": "model",
    **dict.fromkeys(("HistogramResult", "ModelResult", "run_histogram"), "run"),
    **dict.fromkeys(("CheckpointError", "History", "evaluate", "train"), "training"),
}

__getattr__ = lazy_getattr(__name__, _LAZY)

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
