"""Channel expectations of docs/theory.md §7.1-§7.4 for any L, r, t by randomised quasi-Monte Carlo.

The L(r+t) standard Gaussians (xi_l in R^r, y_l in R^t, l = 1..L) are taken at the points of one
scrambled Sobol sequence (scipy.stats.qmc) mapped through the normal quantile, together with
their antithetic images z -> -z. The points are fixed for the integrator's lifetime, so the map
overlaps -> expectations is deterministic and a fixed-point solver can converge it; independent
scramblings (seeds) give independent estimates, whose spread is the integration error.
The global prox of every point is warm-started from its previous minimiser; in local mode
(`QMCChannel.local`) that warm start is its only start, and the first evaluation runs the
analytic starts without the probe (several times cheaper; exact until a point's global
minimiser jumps or hides from those starts, which the solver checks with a global evaluation).
With a `Mixture` (correlated tokens, `mixture.py`) the points are repeated once per label
sequence, each copy with that sequence's encodings and weighted by its probability.
The points live on the channel's `device` (moved there once): fields, starts, prox and
expectations run there in float64 torch (the prox in the numba kernel on the CPU, in batched
torch on CUDA), and only the expectations, r x r matrices, come back to the host.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy.stats import norm, qmc

from ..._core.device import torch_device
from ...ops.array import sym_sqrt
from ...params import TIED, Causal, Mixture, Untied, Variant
from ...prox import PROBE, attention_form, global_prox
from ..overlaps import MatrixMoments, MatrixOverlaps, teacher_covariance
from .mixture import label_law, mixture_encodings

if TYPE_CHECKING:
    import torch


def gaussian_points(n: int, dim: int, seed: int) -> np.ndarray:
    """n scrambled-Sobol points in R^dim mapped to N(0, I) (n a power of two is best), followed
    by their antithetic images: shape (2n, dim)."""
    u = qmc.Sobol(dim, scramble=True, seed=seed).random(n)
    z = norm.ppf(np.clip(u, 1e-15, 1.0 - 1e-15))
    return np.concatenate([z, -z])


class QMCChannel:
    """Expectations over the fixed points of one scrambling, for L tokens, ranks r and t,
    encodings C (L x K) and token variance sigma^2. r is the width of the student field:
    untied (docs/theory-untied.md) it is 2 r_Q, the query fields then the key fields. A
    `Mixture` (correlated tokens): M then has K - 1 further rows, the mean directions."""

    def __init__(
        self,
        L: int,
        r: int,
        t: int,
        n: int,
        seed: int,
        variant: Variant = TIED,
        device: str = "cpu",
    ):
        mixture = variant if isinstance(variant, Mixture) else None
        if isinstance(variant, Untied) and r % 2:
            raise ValueError(f"untied: the student field needs an even width, got r = {r}")
        if mixture is not None:
            mixture.check_length(L)
        self.L, self.r, self.t, self.variant = L, r, t, variant
        self.mixture = mixture
        self.causal_target = isinstance(variant, Causal) and variant.target
        self.z = gaussian_points(n, L * (r + t), seed).reshape(-1, L, r + t)
        copies = 1 if mixture is None else mixture.clusters**L
        z = np.tile(self.z, (copies, 1, 1))  # copy s of every point has label sequence s
        self.xi = z[..., :r]
        self.y = z[..., r:]
        if mixture is None:
            self.weights = np.full(self.n_points, 1.0 / self.n_points)
        else:
            prob = label_law(mixture.clusters, L, mixture.label_correlation)[1]
            self.weights = np.repeat(prob, self.n_points) / self.n_points
        self.device = torch_device(device)
        # the points and weights on the device, moved there once
        self._xi, self._y = self._device_array(self.xi), self._device_array(self.y)
        self._weights = self._device_array(self.weights)
        self._warm: torch.Tensor | None = None  # the previous minimisers, (n, L, r)
        self._enc_key: np.ndarray | None = None
        self._enc: torch.Tensor | None = None
        self.local = False

    @property
    def n_points(self) -> int:
        """The Gaussian points (with their antithetic images), each used once per label
        sequence with a mixture."""
        return self.z.shape[0]

    def encodings(self, C: np.ndarray) -> np.ndarray:
        """The encodings of every integration point, (points, L, K): C itself, or with a
        mixture the label sequence's C(c) (mixture.py), K_pos + K_clusters - 1 columns."""
        if self.mixture is None:
            return np.broadcast_to(C, (self.xi.shape[0], *C.shape))
        enc, _ = mixture_encodings(C, self.mixture)
        return np.repeat(enc, self.n_points, axis=0)

    def fields(self, o: MatrixOverlaps, C: np.ndarray, sigma: float):
        """Student fields w_l = (C M)_l + q^{1/2} xi_l and teacher fields
        h*_l = theta q^{-1/2} xi_l + Gamma^{1/2} y_l (§7.1), rows of (n, L, r) and (n, L, t);
        C the points' encodings (`encodings`); numpy arrays."""
        w, hstar = self._fields(o, self._device_array(C), sigma)
        return w.cpu().numpy(), hstar.cpu().numpy()

    def starts(self, w: np.ndarray, hstar: np.ndarray, o: MatrixOverlaps) -> np.ndarray:
        """w, 0, the teacher-aligned points +-s a, 2 s a (a = h* mapped into student space
        along theta's rows, or the first columns when theta = 0; s = sign(a . w)), the
        shrunken 0.5 w, 0.25 w, and the previous minimisers (§7.6, tests/prox/test_algorithm.py);
        numpy arrays."""
        dev = self._device_array
        return self._starts(dev(w), dev(hstar), o).cpu().numpy()

    def _device_array(self, x: np.ndarray) -> torch.Tensor:
        import torch  # loaded with the first channel, not with attnphase

        return torch.tensor(x, dtype=torch.float64, device=self.device)

    def _fields(
        self, o: MatrixOverlaps, C: torch.Tensor, sigma: float
    ) -> tuple[torch.Tensor, torch.Tensor]:
        xi, y, dev = self._xi, self._y, self._device_array
        rho = sigma**2 * np.eye(self.t)
        w = C @ dev(o.M) + xi @ dev(sym_sqrt(o.q))
        hstar = xi @ dev(sym_sqrt(o.q, -0.5) @ o.theta.T)
        hstar = hstar + y @ dev(sym_sqrt(teacher_covariance(o, rho)))
        return w, hstar

    def _starts(self, w: torch.Tensor, hstar: torch.Tensor, o: MatrixOverlaps) -> torch.Tensor:
        import torch

        norms = np.linalg.norm(o.theta, axis=1, keepdims=True)
        if np.all(norms > 0):
            B = o.theta / norms
        else:
            B = np.eye(self.t, self.r)
        a = hstar @ self._device_array(B)
        s = torch.sign(torch.einsum("nlr,nlr->n", a, w))[:, None, None]
        starts = [w, torch.zeros_like(w), s * a, -s * a, 2 * s * a, 0.5 * w, 0.25 * w]
        if self._warm is not None:
            starts.append(self._warm)
        return torch.stack(starts, 1)

    def resolvent(
        self, o: MatrixOverlaps, *, C: np.ndarray, sigma: float, omega: float, A: np.ndarray
    ) -> np.ndarray:
        """The resolvent h_hat (global minimiser of the Moreau envelope of §7.1) at every point,
        shape (n, L, r), computed as by `moments` (which it runs: same starts, same warm start
        from and update of the previous minimisers)."""
        self.moments(o, C=C, sigma=sigma, omega=omega, A=A)
        assert self._warm is not None  # `moments` stored its minimisers
        return self._warm.cpu().numpy()

    def moments(
        self,
        o: MatrixOverlaps,
        *,
        C: np.ndarray,
        sigma: float,
        omega: float,
        A: np.ndarray,
    ) -> MatrixMoments:
        """All expectations of §7.2-§7.4 at the overlaps o (averages over the points), computed
        on the channel's device; in local mode each point's prox is the minimiser reached from
        its previous one."""
        return moments_many([MomentsRequest(self, o, C, sigma, omega, A)])[0]

    def _prox_problem(self, req: MomentsRequest) -> _ProxProblem:
        """The prox problems of `moments` at req's overlaps: fields, loss and starts (§7.1)."""
        from ...ops.tensor import target

        dev = self._device_array
        o, s2 = req.o, req.sigma**2
        enc = self._encodings_on_device(req.C)
        w, hstar = self._fields(o, enc, req.sigma)
        T = target(hstar, req.omega, dev(req.A), self.causal_target)
        cst = 0.5 * s2 * (T * T).sum((-1, -2))
        warm = self._warm
        if not self.local:
            starts, probe = self._starts(w, hstar, o), PROBE
        elif warm is None:
            starts, probe = self._starts(w, hstar, o), 0
        else:
            starts, probe = warm[:, None], 0
        Vinv = np.linalg.inv(o.V)
        return _ProxProblem(w, Vinv, s2, T, cst, starts.contiguous(), probe, enc)

    def _expectations(
        self, req: MomentsRequest, prob: _ProxProblem, h: torch.Tensor, env: torch.Tensor
    ) -> MatrixMoments:
        """The expectations of §7.2-§7.4 from the prox's minimisers h and envelopes env; the
        minimisers become the next evaluation's warm starts."""
        import torch

        from ...ops.tensor import attention

        dev = self._device_array
        o, s2, T, w, enc = req.o, prob.s2, prob.T, prob.w, prob.enc
        xi, y = self._xi, self._y
        self._warm = h
        f = (h - w) @ dev(prob.Vinv)  # f_l = V^{-1}(h_hat_l - w_l), as rows
        # Stein score of w_l: a_l = q^{-1/2} xi_l - q^{-1} theta^T Gamma^{-1/2} y_l
        rho = s2 * np.eye(self.t)
        gamma_isqrt = sym_sqrt(teacher_covariance(o, rho), -0.5)
        score = xi @ dev(sym_sqrt(o.q, -0.5)) - y @ dev(gamma_isqrt @ o.theta @ np.linalg.inv(o.q))
        Mc = env - prob.cst  # a function of h* alone integrates to zero against the score
        wt = self._weights  # the points' weights (label law / points)
        form = attention_form(self.variant, self.r)

        def host(x: torch.Tensor) -> np.ndarray:
            return x.cpu().numpy()

        return MatrixMoments(
            ff=host(torch.einsum("n,nlr,nls->rs", wt, f, f)),
            Ma=host(torch.einsum("n,nlk,nlr->kr", wt * Mc, enc, score)),
            yf=host(torch.einsum("n,nlt,nlr->tr", wt, y, f)),
            fxi=host(torch.einsum("n,nlr,nls->rs", wt, f, xi)),
            M=float(wt @ env),
            ell_prox=float(0.5 * s2 * wt @ ((attention(h, form) - T) ** 2).sum((-1, -2))),
            ell_free=float(0.5 * s2 * wt @ ((attention(w, form) - T) ** 2).sum((-1, -2))),
        )

    def _encodings_on_device(self, C: np.ndarray) -> torch.Tensor:
        """`encodings(C)` on the device, moved there once per C."""
        C = np.asarray(C, dtype=np.float64)
        if self._enc is None or self._enc_key is None or not np.array_equal(self._enc_key, C):
            self._enc_key = C.copy()
            self._enc = self._device_array(self.encodings(C))
        return self._enc


@dataclass(frozen=True)
class MomentsRequest:
    """One evaluation of a channel's expectations (`QMCChannel.moments`) at overlaps o: what an
    iteration asks for, answered for many at once by `moments_many`."""

    channel: QMCChannel
    o: MatrixOverlaps
    C: np.ndarray
    sigma: float
    omega: float
    A: np.ndarray


@dataclass(frozen=True)
class _ProxProblem:
    """A channel's prox problems at one evaluation: fields w, V^{-1}, sigma^2, the targets T,
    the loss's constant, the starts, the probe and the points' encodings."""

    w: torch.Tensor
    Vinv: np.ndarray
    s2: float
    T: torch.Tensor
    cst: torch.Tensor
    starts: torch.Tensor
    probe: int
    enc: torch.Tensor

    def key(self, channel: QMCChannel) -> tuple:
        """What problems must share to go through one prox call."""
        return (channel.device, channel.variant, tuple(self.starts.shape[1:]), self.probe)


def _joined(tensors: list[torch.Tensor]) -> torch.Tensor:
    """The requests' problems in one tensor: the one request's own (no copy on the path of a
    solve alone), else concatenated."""
    import torch

    return tensors[0] if len(tensors) == 1 else torch.cat(tensors)


def _per_problem(matrices: list[np.ndarray], sizes: list[int], dev) -> torch.Tensor:
    """One matrix for all problems where every request has the same, else one per problem
    (request k's for its sizes[k] problems)."""
    import torch

    if all(np.array_equal(m, matrices[0]) for m in matrices):
        return dev(matrices[0])
    stacked = [dev(m).expand(n, *m.shape) for m, n in zip(matrices, sizes, strict=True)]
    return torch.cat(stacked)


def moments_many(requests: Sequence[MomentsRequest]) -> list[MatrixMoments]:
    """The expectations of every request (`QMCChannel.moments`), each on its own channel and
    overlaps, their prox problems solved together: one `global_prox` call per group of
    requests that share a device, variant, start count and search (each problem with its own
    V; the numba kernel solves each problem alone, so the numbers are those of one request at
    a time). A channel may appear once: its warm starts are its own."""
    channels = [req.channel for req in requests]
    if len({id(c) for c in channels}) < len(channels):
        raise ValueError("moments_many: a channel appears twice in one batch of requests")
    problems = [req.channel._prox_problem(req) for req in requests]
    groups: dict[tuple, list[int]] = {}
    for i, (req, prob) in enumerate(zip(requests, problems, strict=True)):
        groups.setdefault(prob.key(req.channel), []).append(i)
    out: list[MatrixMoments | None] = [None] * len(requests)
    for members in groups.values():
        first = requests[members[0]].channel
        dev = first._device_array
        parts = [problems[i] for i in members]
        sizes = [prob.w.shape[0] for prob in parts]

        K = _per_problem([prob.s2 * np.eye(first.L) for prob in parts], sizes, dev)
        Vinv = _per_problem([prob.Vinv for prob in parts], sizes, dev)
        res = global_prox(
            _joined([p.w for p in parts]),
            Vinv,
            K,
            _joined([p.s2 * p.T for p in parts]),
            _joined([p.cst for p in parts]),
            _joined([p.starts for p in parts]),
            probe=parts[0].probe,
            variant=first.variant,
        )
        h = res.h.to(first.device).split(sizes)
        env = res.envelope.to(first.device).split(sizes)
        for k, i in enumerate(members):
            req = requests[i]
            out[i] = req.channel._expectations(req, problems[i], h[k], env[k])
    return [m for m in out if m is not None]
