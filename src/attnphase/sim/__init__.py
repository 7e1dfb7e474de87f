"""Finite-d simulations of tied low-rank dot-product attention (PyTorch), docs/theory.md §1."""

from .config import INITS, SimConfig, pick_device
from .data import (
    cluster_means,
    default_positions,
    encoded_positions,
    encoding_basis,
    generator,
    sample_labels,
    targets,
)
from .grid import iter_grid, run_grid, torch_threads
from .linear import fit_linear, linear_risk, train_linear
from .models import Layout, attention_maps, attention_output, naive_risk
from .problem import SeedProblem
from .result import SimResult
from .risk import StructuredRisk
from .run import SimulationWarning, simulate
from .train import OPTIMIZERS, Diverged, TrainReport, minimise

__all__ = [
    "INITS",
    "OPTIMIZERS",
    "Diverged",
    "Layout",
    "SimConfig",
    "SeedProblem",
    "SimResult",
    "SimulationWarning",
    "StructuredRisk",
    "TrainReport",
    "attention_maps",
    "attention_output",
    "cluster_means",
    "default_positions",
    "encoded_positions",
    "encoding_basis",
    "fit_linear",
    "generator",
    "linear_risk",
    "minimise",
    "naive_risk",
    "pick_device",
    "iter_grid",
    "run_grid",
    "sample_labels",
    "simulate",
    "targets",
    "torch_threads",
    "train_linear",
]
