"""The record of one simulation run (`SimResult`) and the model's columns in result tables."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from .._core.records import Tabular
from ..params import Mixture, ModelParams


def mixture_fields(params: ModelParams) -> dict:
    """clusters, label_correlation and cluster_norm as the results and tables report them:
    the `Mixture`'s, or 1, 0.0 and 1.0 (its defaults) for Gaussian tokens (Tied, Untied)."""
    mixture = params.mixture
    if mixture is None:
        off = Mixture()
        return {
            "clusters": 1,
            "label_correlation": off.label_correlation,
            "cluster_norm": off.cluster_norm,
        }
    return {
        "clusters": mixture.clusters,
        "label_correlation": mixture.label_correlation,
        "cluster_norm": mixture.cluster_norm,
    }


@dataclass(frozen=True)
class SimResult(Tabular):
    """Metrics of one run. test_error = eps_g on the test set (eq. 4); train_loss = R(Q)/d;
    train_loss_sum = R(Q); linear_test_error = eps_g of the exact ridge baseline. For
    r = t = K = 1 q, m, theta are numbers; otherwise nested lists (q r x r, m = M K x r,
    theta t x r; with explicit positions m = p_1^T Q/sqrt(d) is r numbers), as in the theory.
    batch_seconds: wall time of the whole `simulate` call that produced this result (data,
    training and test of all `batch_size` seeds, run together), so it is the same for every
    seed of a batch; a per-seed time is not measured (GD and Adam train the seeds jointly).
    Extensions (None when they do not apply): q_query, m_query, theta_query and q_key, ...
    of Q_Q and Q_K (untied; q, m, theta are those of (Q_Q + Q_K)/2); value_norm =
    ‖U W^T‖_F/d (value matrix); column_q, column_m, column_theta (r >= 2, tied query/key):
    per column of Q in its principal frame (eigenvectors of q, each column's sign making its
    theta >= 0), sorted by teacher overlap abs(theta) descending: q of the column, its m (one
    number per encoding direction, a number for K = 1) and theta (a number for t = 1);
    cluster_m (clusters >= 2): mu_k^T Q/sqrt(d) for each cluster mean (of (Q_Q + Q_K)/2 when
    untied), K numbers for r = 1, K x r lists otherwise. mask, target_mask: "causal" for a
    `Causal` student (and target), "none" otherwise. heads: the student's heads (`Heads`), whose
    columns q, m and theta list side by side (head a's r columns from a r). rotary: the student's
    rotary frequencies (`Rotary`), None without."""

    d: int
    n: int
    alpha: float
    omega: float
    sigma: float
    lam: float
    init: str
    seed: int
    optimizer: str
    test_error: float
    train_loss: float
    train_loss_sum: float
    q: object
    m: object
    theta: object
    linear_test_error: float
    converged: bool
    steps: int
    grad_rms: float
    batch_seconds: float
    batch_size: int
    status: str
    untied: bool = False
    value_rank: int = 0
    q_query: object = None
    m_query: object = None
    theta_query: object = None
    q_key: object = None
    m_key: object = None
    theta_key: object = None
    value_norm: float | None = None
    column_q: list | None = None
    column_m: list | None = None
    column_theta: list | None = None
    clusters: int = 1
    label_correlation: float = 0.0
    cluster_norm: float = 1.0
    cluster_m: list | None = None
    mask: str = "none"
    target_mask: str = "none"
    heads: int = 1
    rotary: list | None = None

    def as_dict(self) -> dict:
        return asdict(self)


METRICS = (  # reported as NaN by a diverged run (its linear baseline does not train: kept)
    "test_error",
    "train_loss",
    "train_loss_sum",
    "q",
    "m",
    "theta",
    "grad_rms",
)
