"""A stack of independent one-layer transformers for the histogram task (paper, Appendix A).

Run r of the stack is the model

    x_t   = E_tok[s_t] + E_pos[t]                            (width 64)
    A     = softmax_k( (x W_Q)(x W_K)^T / sqrt(64) )          [query, key]
    h     = LayerNorm(x + A x W_V)
    logit = W_2 ReLU(W_1 h + b_1) + b_2                       (11 classes)

Every parameter carries a leading run axis, so R independent models train in one batched pass
(the loss is the sum of the runs' losses, hence each run sees exactly its own gradient, and
Adam/SGD act elementwise). Restriction (`positional` / `semantic`): the token embedding lives in
the first half of the coordinates, the positional embedding in the second, and W_Q, W_K read only
the positional (resp. token) half; the hidden entries are zero and masked in the forward pass,
so their gradients vanish and they stay zero. `free` has no restriction.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import nn

from .config import MODES
from .data import N_CLASSES, SEQ_LEN, VOCAB

WIDTH = 64
HIDDEN = 128


def _masks(mode: str, width: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(token-embedding, positional-embedding, query/key input) coordinate masks for a mode."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    ones = torch.ones(width)
    if mode == "free":
        return ones, ones, ones
    half = torch.arange(width) < width // 2
    tok, pos = half.float(), (~half).float()
    return tok, pos, (pos if mode == "positional" else tok)


def _uniform(shape: Sequence[int], fan_in: int, gen: torch.Generator) -> torch.Tensor:
    bound = 1.0 / math.sqrt(fan_in)
    return (torch.rand(*shape, generator=gen) * 2.0 - 1.0) * bound


class StackedTransformer(nn.Module):
    """R independent histogram transformers; `modes[r]` and `seeds[r]` define run r."""

    # registered in __init__ (register_buffer / register_parameter), declared here for the
    # type checker: nn.Module.__getattr__ would otherwise type them as `Tensor | Module`
    modes: tuple[str, ...]
    tok_mask: torch.Tensor  # buffers, [R, 1, D], [R, 1, D], [R, D, 1]
    pos_mask: torch.Tensor
    qk_mask: torch.Tensor
    tok: nn.Parameter  # parameters, each with a leading run axis R
    pos: nn.Parameter
    wq: nn.Parameter
    wk: nn.Parameter
    wv: nn.Parameter
    ln_w: nn.Parameter
    ln_b: nn.Parameter
    w1: nn.Parameter
    b1: nn.Parameter
    w2: nn.Parameter
    b2: nn.Parameter

    def __init__(
        self,
        modes: Sequence[str],
        seeds: Sequence[int],
        width: int = WIDTH,
        hidden: int = HIDDEN,
        vocab: int = VOCAB,
        seq_len: int = SEQ_LEN,
        n_classes: int = N_CLASSES,
    ) -> None:
        super().__init__()
        if len(modes) == 0 or len(modes) != len(seeds):
            raise ValueError("modes and seeds must be non-empty and of equal length")
        if width < 2 or width % 2:
            raise ValueError(f"width must be an even integer >= 2, got {width}")
        self.modes = tuple(modes)
        masks = [_masks(m, width) for m in self.modes]
        self.register_buffer("tok_mask", torch.stack([m[0] for m in masks])[:, None, :])
        self.register_buffer("pos_mask", torch.stack([m[1] for m in masks])[:, None, :])
        self.register_buffer("qk_mask", torch.stack([m[2] for m in masks])[:, :, None])
        init = [self._init_run(int(s), width, hidden, vocab, seq_len, n_classes) for s in seeds]
        for name in init[0]:
            self.register_parameter(name, nn.Parameter(torch.stack([p[name] for p in init])))
        with torch.no_grad():  # hidden entries start (and stay) at zero
            self.tok.mul_(self.tok_mask)
            self.pos.mul_(self.pos_mask)
            self.wq.mul_(self.qk_mask)
            self.wk.mul_(self.qk_mask)

    @staticmethod
    def _init_run(
        seed: int, width: int, hidden: int, vocab: int, seq_len: int, n_classes: int
    ) -> dict[str, torch.Tensor]:
        g = torch.Generator().manual_seed(seed)
        return {
            "tok": torch.randn(vocab, width, generator=g),
            "pos": torch.randn(seq_len, width, generator=g),
            "wq": _uniform((width, width), width, g),
            "wk": _uniform((width, width), width, g),
            "wv": _uniform((width, width), width, g),
            "ln_w": torch.ones(width),
            "ln_b": torch.zeros(width),
            "w1": _uniform((width, hidden), width, g),
            "b1": _uniform((hidden,), width, g),
            "w2": _uniform((hidden, n_classes), hidden, g),
            "b2": _uniform((n_classes,), hidden, g),
        }

    @property
    def runs(self) -> int:
        return len(self.modes)

    @property
    def width(self) -> int:
        return self.tok.shape[-1]

    def tables(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Per-run rows [E_tok; E_pos] as the model sees them: (embedding, query/key input),
        each [R, vocab + seq_len, D]. Every x_t is the sum of two rows, x_t = C[s_t] + C[V+t]."""
        emb = torch.cat([self.tok * self.tok_mask, self.pos * self.pos_mask], 1)
        return emb, emb * self.qk_mask.transpose(1, 2)

    def _tokens(self, tokens: torch.Tensor) -> torch.Tensor:
        """Validated tokens as [R, B, T] ([B, T] is shared by all runs)."""
        vocab, max_len = self.tok.shape[1], self.pos.shape[1]
        if tokens.dim() == 2:
            tokens = tokens.expand(self.runs, *tokens.shape)
        if tokens.dim() != 3 or tokens.shape[0] != self.runs:
            raise ValueError(f"tokens must have shape [B, T] or [{self.runs}, B, T]")
        if tokens.shape[-1] > max_len or tokens.min() < 0 or tokens.max() >= vocab:
            raise ValueError(f"tokens must lie in [0, {vocab}) with at most {max_len} positions")
        return tokens

    def one_hot(self, tokens: torch.Tensor) -> torch.Tensor:
        """Row selector [R, B, T, vocab + seq_len] with ones at s_t and vocab + t: x = sel @ C."""
        tokens = self._tokens(tokens)
        vocab, T = self.tok.shape[1], tokens.shape[-1]
        pos = torch.arange(vocab, vocab + T, device=tokens.device).expand_as(tokens)
        sel = self.tok.new_zeros(*tokens.shape, vocab + self.pos.shape[1])
        return sel.scatter_(-1, tokens[..., None], 1.0).scatter_(-1, pos[..., None], 1.0)

    def forward(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(logits [R, B, T, classes], attention maps [R, B, T, T]) for tokens [R|-, B, T].

        Exact rewriting of the model above: x_t = C[s_t] + C[V+t] is linear in the table rows
        C, so the projections x W_V and x W_Q W_K^T x^T are computed once per table row (25 per
        run) and selected by dense products with the one-hot rows instead of once per token."""
        emb, qk_in = self.tables()
        sel = self.one_hot(tokens)
        R, B, T, n = sel.shape
        flat = sel.reshape(R, B * T, n)
        gram = torch.bmm(torch.bmm(qk_in, self.wq), torch.bmm(qk_in, self.wk).transpose(1, 2))
        u = torch.bmm(flat, gram / math.sqrt(self.width)).reshape(R * B, T, n)
        scores = torch.bmm(u, sel.reshape(R * B, T, n).transpose(1, 2))
        attn = torch.softmax(scores, dim=-1)
        x = torch.bmm(flat, emb)
        v = torch.bmm(flat, torch.bmm(emb, self.wv)).reshape(R * B, T, -1)
        h = x + torch.bmm(attn, v).reshape(R, B * T, -1)
        h = nn.functional.layer_norm(h, (self.width,)) * self.ln_w[:, None] + self.ln_b[:, None]
        h = torch.relu(torch.baddbmm(self.b1[:, None], h, self.w1))
        logits = torch.baddbmm(self.b2[:, None], h, self.w2)
        return logits.reshape(R, B, T, -1), attn.reshape(R, B, T, T)

    def reference_forward(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The model as written (per-token projections); equals `forward` up to rounding."""
        tokens = self._tokens(tokens)
        R, B, T = tokens.shape
        D = self.width
        x = (self.tok * self.tok_mask)[torch.arange(R)[:, None, None], tokens]
        x = x + (self.pos * self.pos_mask)[:, None, :T]
        xq = x * self.qk_mask.transpose(1, 2)[:, None]
        q, k = xq @ self.wq[:, None], xq @ self.wk[:, None]
        attn = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(D), dim=-1)
        h = nn.functional.layer_norm(x + attn @ (x @ self.wv[:, None]), (D,))
        h = h * self.ln_w[:, None, None] + self.ln_b[:, None, None]
        h = torch.relu(h @ self.w1[:, None] + self.b1[:, None, None])
        return h @ self.w2[:, None] + self.b2[:, None, None], attn

    def loss(self, tokens: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        """Per-run mean cross-entropy over all positions: [R]."""
        logits, _ = self(tokens)
        if labels.dim() == 2:
            labels = labels.expand(self.runs, *labels.shape)
        ce = nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), reduction="none"
        )
        return ce.reshape(self.runs, -1).mean(1)

    def unrestricted(self) -> StackedTransformer:
        """The same functions as `free` models (exact copy of every parameter, masks lifted)."""
        free = StackedTransformer.__new__(StackedTransformer)
        nn.Module.__init__(free)
        free.modes = ("free",) * self.runs
        for name in ("tok_mask", "pos_mask", "qk_mask"):
            free.register_buffer(name, torch.ones_like(getattr(self, name)))
        for name, p in self.named_parameters():
            free.register_parameter(name, nn.Parameter(p.detach().clone()))
        return free

    def flat(self) -> torch.Tensor:
        """All parameters of each run as one vector: [R, n_params]."""
        return torch.cat([p.detach().reshape(self.runs, -1) for p in self.parameters()], 1)
