"""Minimisation of the empirical risk: full-batch GD (the authors' protocol), Adam, L-BFGS.

The risk is a SUM over samples (docs/theory.md §1), so a fixed GD learning rate acts larger as
alpha grows; GD with lr=0.15 for 5000 steps reproduces the authors' protocol as-is. GD and Adam
run a batch of independent problems together (the risk is separable); L-BFGS (strong Wolfe line
search) solves them one at a time and is the fast deterministic choice.
Stationarity is measured per problem as the RMS gradient ||grad R||_F / sqrt(d r); in float64
L-BFGS reaches about 1e-9 (R is a difference of large terms), so the default target is 1e-8.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypedDict

import torch

from ..run_options import OPTIMIZERS


class OptimizerDefaults(TypedDict):
    """An optimizer's learning rate and step budget when `minimise` is given none."""

    lr: float
    steps: int


DEFAULTS: dict[str, OptimizerDefaults] = {
    "gd": {"lr": 0.15, "steps": 5000},
    "adam": {"lr": 0.01, "steps": 5000},
    "lbfgs": {"lr": 1.0, "steps": 5000},
}


# a first-order run whose risk grows past this multiple of its start (plus one) has diverged
GROWTH = 1e6


class Diverged(ArithmeticError):
    """The risk became non-finite, or grew GROWTH-fold, during training."""


@dataclass(frozen=True)
class TrainReport:
    """Final weights and, per problem: steps taken, final RMS gradient, converged flag."""

    Q: torch.Tensor
    steps: list[int]
    grad_rms: list[float]
    converged: list[bool]


def _grad_rms(risk: Callable, Q: torch.Tensor) -> torch.Tensor:
    Qr = Q.detach().clone().requires_grad_(True)
    (g,) = torch.autograd.grad(risk(Qr).sum(), Qr)
    return g.pow(2).sum(dim=(1, 2)).sqrt() / math.sqrt(Q.shape[1] * Q.shape[2])


def _first_order(risk, Q0, optimizer, lr, steps, gtol) -> TrainReport:
    Q = Q0.detach().clone().requires_grad_(True)
    opt = torch.optim.Adam([Q], lr=lr) if optimizer == "adam" else torch.optim.SGD([Q], lr=lr)
    done = torch.zeros(Q.shape[0], dtype=torch.bool)
    steps_taken = [steps] * Q.shape[0]
    for step in range(steps):
        opt.zero_grad(set_to_none=True)
        loss = risk(Q)
        if not torch.all(torch.isfinite(loss)):
            raise Diverged(f"risk became non-finite at step {step} ({optimizer}, lr={lr})")
        if step == 0:
            ceiling = GROWTH * (loss.detach().abs() + 1.0)
        elif bool((loss.detach() > ceiling).any()):
            raise Diverged(
                f"risk grew past {GROWTH:.0e} times its start at step {step} ({optimizer}, lr={lr})"
            )
        loss.sum().backward()
        rms = Q.grad.pow(2).sum(dim=(1, 2)).sqrt() / math.sqrt(Q.shape[1] * Q.shape[2])
        newly = (rms <= gtol).cpu() & ~done
        for b in torch.nonzero(newly).flatten().tolist():
            steps_taken[b] = step
        done |= newly
        if bool(done.all()):
            break
        Q.grad[done.to(Q.device)] = 0.0  # converged problems stay where they are
        opt.step()
    Q = Q.detach()
    rms = _grad_rms(risk, Q)
    if not torch.all(torch.isfinite(rms)):
        raise Diverged(f"gradient became non-finite ({optimizer}, lr={lr})")
    return TrainReport(Q, steps_taken, rms.tolist(), (rms <= gtol).tolist())


def _lbfgs(risk, Q0, lr, steps, gtol) -> TrainReport:
    Qs, steps_taken = [], []
    for b in range(Q0.shape[0]):
        single = risk.select(b)
        Q = Q0[b : b + 1].detach().clone().requires_grad_(True)
        opt = torch.optim.LBFGS(
            [Q],
            lr=lr,
            max_iter=steps,
            max_eval=2 * steps,
            history_size=20,
            tolerance_grad=gtol,
            tolerance_change=0.0,
            line_search_fn="strong_wolfe",
        )

        def closure(single=single, Q=Q, opt=opt):
            opt.zero_grad(set_to_none=True)
            loss = single(Q).sum()
            if not torch.isfinite(loss):
                raise Diverged("risk became non-finite (lbfgs)")
            loss.backward()
            return loss

        opt.step(closure)
        Qs.append(Q.detach())
        steps_taken.append(int(opt.state[opt._params[0]]["n_iter"]))
    Q = torch.cat(Qs)
    rms = _grad_rms(risk, Q)
    # the RMS criterion is checked on the final point, whatever stopped L-BFGS
    return TrainReport(Q, steps_taken, rms.tolist(), (rms <= gtol).tolist())


def minimise(
    risk,
    Q0: torch.Tensor,
    optimizer: str = "lbfgs",
    lr: float | None = None,
    steps: int | None = None,
    gtol: float = 1e-8,
) -> TrainReport:
    """Minimise risk(Q) -> [B] from Q0 [B, d, r]; raises Diverged on a non-finite risk."""
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {optimizer!r}")
    lr = DEFAULTS[optimizer]["lr"] if lr is None else float(lr)
    steps = DEFAULTS[optimizer]["steps"] if steps is None else int(steps)
    if not (lr > 0 and math.isfinite(lr)):
        raise ValueError(f"lr must be a positive number, got {lr}")
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    if optimizer == "lbfgs":
        return _lbfgs(risk, Q0, lr, steps, gtol)
    return _first_order(risk, Q0, optimizer, lr, steps, gtol)
