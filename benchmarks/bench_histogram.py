"""Speed and accuracy of the histogram experiment.

Baseline, as a straightforward implementation of the authors' protocol: one model at a time
(torch.nn layers, per-token projections), Adam at batch 32; its cost per epoch is measured on
`--steps` minibatches and extrapolated to the 1094 minibatches of an epoch, on one torch thread
and on all threads. Ours: the stacked model (all runs of a model in one batched pass, table
projections), same batch size, cost per run and epoch on all threads. Then the end-to-end
experiment (Adam to the target accuracy, unfreeze + noise + SGD retraining) in `--quick` and
full configuration, with the goals: full < 30 min with >= 99 % for both models,
quick < 3 min with >= 95 %.

    python benchmarks/bench_histogram.py [--steps 300] [--skip-full] [--skip-quick]
"""

from __future__ import annotations

import argparse
import math
import time

import torch
from torch import nn

from attnphase.histogram import HistogramConfig, StackedTransformer, make_dataset, run_histogram
from attnphase.histogram.data import N_CLASSES, SEQ_LEN, VOCAB
from attnphase.histogram.training import make_optimizer

WIDTH, HIDDEN = 64, 128


class NaiveTransformer(nn.Module):
    """The model as a reader would first write it (positional restriction by masks)."""

    def __init__(self) -> None:
        super().__init__()
        self.tok = nn.Embedding(VOCAB, WIDTH)
        self.pos = nn.Embedding(SEQ_LEN, WIDTH)
        self.q = nn.Linear(WIDTH, WIDTH, bias=False)
        self.k = nn.Linear(WIDTH, WIDTH, bias=False)
        self.v = nn.Linear(WIDTH, WIDTH, bias=False)
        self.norm = nn.LayerNorm(WIDTH)
        self.mlp = nn.Sequential(nn.Linear(WIDTH, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, N_CLASSES))
        half = torch.arange(WIDTH) < WIDTH // 2
        self.register_buffer("tok_mask", half.float())
        self.register_buffer("pos_mask", (~half).float())

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(tokens.shape[1])
        x = self.tok(tokens) * self.tok_mask + self.pos(positions) * self.pos_mask
        xq = x * self.pos_mask
        scores = self.q(xq) @ self.k(xq).transpose(1, 2) / math.sqrt(WIDTH)
        h = self.norm(x + torch.softmax(scores, -1) @ self.v(x))
        return self.mlp(h)


def naive_epoch_seconds(data, steps: int, batch: int = 32) -> float:
    model = NaiveTransformer()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.98))
    order = torch.randperm(data.n_train, generator=torch.Generator().manual_seed(0))
    loss_fn = nn.CrossEntropyLoss()
    t0 = time.perf_counter()
    for i in range(steps):
        idx = order[i * batch : (i + 1) * batch]
        logits = model(data.train_x[idx])
        loss = loss_fn(logits.reshape(-1, N_CLASSES), data.train_y[idx].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    return (time.perf_counter() - t0) / steps * math.ceil(data.n_train / batch)


def ours_run_epoch_seconds(data, steps: int, runs: int = 10, batch: int = 32) -> float:
    model = StackedTransformer(["positional"] * runs, range(runs))
    opt = make_optimizer(model, HistogramConfig().adam())
    g = torch.Generator().manual_seed(0)
    t0 = time.perf_counter()
    for _ in range(steps):
        idx = torch.randint(0, data.n_train, (runs, batch), generator=g)
        loss = model.loss(data.train_x[idx], data.train_y[idx])
        opt.zero_grad()
        loss.sum().backward()
        opt.step()
    return (time.perf_counter() - t0) / steps * math.ceil(data.n_train / batch) / runs


def end_to_end(name: str, cfg: HistogramConfig, budget: float, goal: float) -> None:
    t0 = time.perf_counter()
    result = run_histogram(cfg, progress=True)
    wall = time.perf_counter() - t0
    print(
        f"\n{name}: {cfg.runs} runs x {len(cfg.models)} models, wall {wall:.1f} s "
        f"(goal < {budget:.0f} s: {'met' if wall < budget else 'MISSED'})"
    )
    for s in result.summaries():
        ok = s["val_accuracy_min"] >= goal
        print(
            f"  {s['model']:10s} epochs {s['epochs']:3d}  val acc mean {s['val_accuracy_mean']:.4f}"
            f" +- {s['val_accuracy_std']:.4f} min {s['val_accuracy_min']:.4f}"
            f" (goal >= {goal}: {'met' if ok else 'MISSED'})  train {s['train_seconds']:.0f} s"
            f"  retrain {s['retrain_seconds']:.0f} s: acc {s['accuracy_after_mean']:.4f},"
            f" moved {s['distance_mean']:.3f} (noise {s['noise_distance_mean']:.3f},"
            f" |theta| {s['parameter_norm_mean']:.1f})  score {s['mechanism_score_before']:+.3f}"
            f" -> {s['mechanism_score_after']:+.3f}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--skip-quick", action="store_true")
    ap.add_argument("--skip-full", action="store_true")
    args = ap.parse_args()
    data = make_dataset(0)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    naive_1 = naive_epoch_seconds(data, args.steps)
    torch.set_num_threads(threads)
    naive_n = naive_epoch_seconds(data, args.steps)
    cfg = HistogramConfig()
    print(f"cost of one epoch of one run ({threads} threads unless noted):")
    print(f"  straightforward, batch 32, 1 thread : {naive_1:7.2f} s")
    print(f"  straightforward, batch 32           : {naive_n:7.2f} s")
    for batch in sorted({32, cfg.batch_size}):
        t = ours_run_epoch_seconds(data, max(args.steps * 32 // (10 * batch), 10), batch=batch)
        print(
            f"  stacked (10 runs/pass), batch {batch:3d}  : {t:7.2f} s   ratio"
            f" {naive_1 / t:.1f}x vs 1 thread, {naive_n / t:.1f}x vs {threads} threads"
        )
    print(
        f"authors' protocol (200 + 100 epochs x 10 runs x 2 models), straightforward: "
        f"{300 * 20 * naive_1 / 3600:.1f} h on 1 thread"
    )
    if not args.skip_quick:
        end_to_end("quick", HistogramConfig.quick(), 180.0, 0.95)
    if not args.skip_full:
        end_to_end("full", cfg, 1800.0, 0.99)


if __name__ == "__main__":
    main()
