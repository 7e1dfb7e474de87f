"""Speed of one simulation point: the authors' protocol vs attnphase.sim.

Straightforward implementation, as in the authors' experiment code: the einsum model
f = S((x+p)Q/sqrt d)(x+p) evaluated in full at every step, full-batch gradient descent on the
summed risk (lr 0.15, 5000 steps), and the linear baseline trained with Adam.
Ours: the structured risk (fields and L x L Gram matrices), L-BFGS to an RMS gradient of 1e-8,
and the exact ridge solution for the baseline. Same teacher, data and start; one torch thread.

    python benchmarks/bench_sim.py [--d 1000] [--alpha 1.0] [--init semantic] [--steps 5000]
"""

from __future__ import annotations

import argparse
import time

import torch

from attnphase.sim import SimConfig, naive_risk, simulate
from attnphase.sim.data import default_positions, generator, sample_tokens, targets
from attnphase.sim.linear import linear_risk, train_linear
from attnphase.sim.run import initial_weights


def straightforward(cfg: SimConfig, seed: int, steps: int, baseline_steps: int) -> dict:
    dt, dev = torch.float64, torch.device("cpu")
    p = cfg.params
    A = torch.tensor(p.A, dtype=dt)
    pos = default_positions(cfg.L, cfg.d, dt, dev)
    teacher = torch.randn(1, cfg.d, 1, generator=generator(seed, "teacher", dev), dtype=dt)
    x = sample_tokens(cfg.n, cfg.L, cfg.d, p.sigma, generator(seed, "train", dev), dt, dev)[None]
    y = targets(x, teacher, p.omega, A)
    Q = initial_weights(cfg, teacher, [seed], dt, dev).requires_grad_(True)
    opt = torch.optim.SGD([Q], lr=0.15)
    t = time.perf_counter()
    for _ in range(steps):
        opt.zero_grad()
        naive_risk(x + pos, y, Q, p.lam).sum().backward()
        opt.step()
    B = train_linear(x, y, p.lam, steps=baseline_steps)
    secs = time.perf_counter() - t
    Q = Q.detach()[0]
    with torch.no_grad():
        loss = float(naive_risk(x + pos, y, Q[None], p.lam)) / cfg.d
        base = float(linear_risk(x, y, B, p.lam)) / cfg.d
    return {
        "seconds": secs,
        "train_loss": loss,
        "q": p.sigma**2 * float(Q[:, 0] @ Q[:, 0]) / cfg.d,
        "m": float(Q[:, 0].sum()) / cfg.d,
        "theta": p.sigma**2 * float(teacher[0, :, 0] @ Q[:, 0]) / cfg.d,
        "baseline_train_loss": base,
        "grad_rms": float("nan"),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--d", type=int, default=1000)
    ap.add_argument("--alpha", type=float, default=1.0)
    ap.add_argument("--init", default="semantic")
    ap.add_argument("--steps", type=int, default=5000)
    ap.add_argument("--baseline-steps", type=int, default=2000)
    args = ap.parse_args()
    torch.set_num_threads(1)
    cfg = SimConfig(d=args.d, alpha=args.alpha, init=args.init, n_test=1000)
    naive = straightforward(cfg, 0, args.steps, args.baseline_steps)
    t = time.perf_counter()
    (ours,) = simulate(cfg, seeds=[0])
    ours_secs = time.perf_counter() - t
    print(f"d={cfg.d} alpha={cfg.alpha} n={cfg.n} init={cfg.init_name}, one torch thread")
    print(f"{'':28s}{'seconds':>10}{'train_loss':>14}{'q':>10}{'m':>10}{'theta':>10}")
    print(
        f"{'straightforward (GD 5000)':28s}{naive['seconds']:10.1f}{naive['train_loss']:14.8f}"
        f"{naive['q']:10.5f}{naive['m']:10.5f}{naive['theta']:10.5f}"
    )
    print(
        f"{'attnphase (L-BFGS)':28s}{ours_secs:10.2f}{ours.train_loss:14.8f}"
        f"{ours.q:10.5f}{ours.m:10.5f}{ours.theta:10.5f}"
    )
    print(
        f"speed-up {naive['seconds'] / ours_secs:.0f}x; ours: {ours.steps} L-BFGS iterations, "
        f"RMS gradient {ours.grad_rms:.1e}, test error and baseline included in its time"
    )
    rel = abs(naive["train_loss"] / ours.train_loss - 1)
    print(
        f"relative training-loss difference {rel:.1e} (GD after {args.steps} steps "
        f"{'has' if rel < 1e-6 else 'has not'} reached the L-BFGS minimum)"
    )


if __name__ == "__main__":
    main()
