"""The QMC channel's device seam: the same fixed point whichever device and prox backend run it,
and a device the machine lacks refused before any work.

Tolerance: two paths that iterate the same map differ only by rounding and by where the
prox's Newton runs stop (gradient below 1e-10), and converge to the same fixed point within the
solver's tolerance (relative residual 1e-5). Measured: the torch backend against the numba one
on the CPU, 1.1e-11 relative; a CUDA device against the CPU, see `DEVICE_RTOL`. A genuine
difference between the paths (a missed term, a wrong start) moves the numbers by 1e-4 or more.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
import torch

from attnphase import QMC, ModelParams
from attnphase.theory import solve
from attnphase.theory.qmc import channel

P3 = ModelParams(A=((0.6, 0.2, 0.2), (0.2, 0.6, 0.2), (0.2, 0.2, 0.6)))
KEYS = ("q", "M", "V", "theta", "test_error", "train_loss")
BACKEND_RTOL = 1e-8
# measured on an H200 against its CPU (benchmarks/bench_device.py, L = 3, 4, 8): at most 1.2e-11
DEVICE_RTOL = 1e-8


def _assert_same(a, b, rtol: float) -> None:
    assert a.converged and b.converged
    for k in KEYS:
        x, y = np.asarray(a.values[k], float), np.asarray(b.values[k], float)
        assert np.max(np.abs(x - y)) <= rtol * np.max(np.abs(x)), k


def test_the_torch_prox_backend_gives_the_numba_backends_fixed_point(monkeypatch):
    """The path a CUDA device takes (the channel in torch, the batched torch prox), on the
    CPU: the same fixed point as the numba prox."""
    method = QMC(256, 2)
    numba = solve(1.5, P3, branch="semantic", method=method)
    monkeypatch.setattr(
        channel, "global_prox", functools.partial(channel.global_prox, backend="torch")
    )
    batched = solve(1.5, P3, branch="semantic", method=method)
    _assert_same(numba, batched, BACKEND_RTOL)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_a_cuda_fixed_point_is_the_cpus():
    cpu = solve(1.5, P3, branch="semantic", method=QMC(256, 2))
    cuda = solve(1.5, P3, branch="semantic", method=QMC(256, 2, device="cuda"))
    _assert_same(cpu, cuda, DEVICE_RTOL)


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA present")
def test_cuda_without_cuda_is_refused_naming_the_device():
    with pytest.raises(ValueError, match="device='cuda': CUDA is not available"):
        QMC(device="cuda")


@pytest.mark.parametrize("device", ["gpu", "cuda:x", "", "CPU"])
def test_a_misspelt_device_is_refused(device):
    with pytest.raises(ValueError, match="device must be 'cpu', 'cuda', 'cuda:N' or 'auto'"):
        QMC(device=device)


def test_the_chunked_eigendecomposition_is_the_whole_batchs(monkeypatch):
    """The torch prox decomposes its Hessians in chunks (cuSOLVER fails on large batches): the
    same eigenpairs as one call, chunk boundaries included."""
    from attnphase.prox import batched

    H = torch.randn(10, 3, 3, dtype=torch.float64)
    H = H + H.transpose(-1, -2)
    monkeypatch.setattr(batched, "EIGH_CHUNK", 4)
    lam, U = batched.eigh(H)
    want_lam, want_U = torch.linalg.eigh(H)
    assert torch.equal(lam, want_lam)
    assert torch.allclose(U.abs(), want_U.abs(), rtol=0, atol=1e-14)
