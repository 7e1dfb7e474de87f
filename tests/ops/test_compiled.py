"""One set of model operations (docs/theory.md §7.1, §8): the numba (`attnphase.ops.compiled`)
and numpy (`attnphase.ops.array`) operations agree with the torch ones, tied and untied.
Tolerance: the same formulas summed in another order agree to ~1e-15."""

import numpy as np
import pytest
import torch

from attnphase.ops import array, compiled, tensor
from attnphase.params import TIED, Causal, Untied
from attnphase.prox import attention_form

DT = torch.float64
UNTIED = Untied()
CAUSAL = Causal()


@pytest.mark.parametrize(
    "L,width,variant",
    [(2, 1, TIED), (3, 2, TIED), (2, 2, UNTIED), (3, 4, UNTIED), (3, 1, CAUSAL), (4, 2, CAUSAL)],
)
def test_operations_agree_across_array_libraries(L, width, variant):
    """attention, g and its gradient and Hessian: torch, numpy and numba on the same fields."""
    key = attention_form(variant, width)
    g = torch.Generator().manual_seed(L + 10 * width)
    h = torch.randn(5, L, width, generator=g, dtype=DT)
    X = torch.randn(5, L, 6, generator=g, dtype=DT)
    K = X @ X.transpose(-1, -2) / 6
    Cm = torch.randn(5, L, L, generator=g, dtype=DT)
    c = torch.rand(5, generator=g, dtype=DT)
    S = tensor.attention(h, key)
    assert np.abs(array.attention(h.numpy(), key) - S.numpy()).max() < 1e-15
    value, grad, H = tensor.loss_derivatives(h, K, Cm, c, form=key)
    n = L * width
    for b in range(5):
        hb, Kb, Cb = (x[b].numpy() for x in (h, K, Cm))
        Sb, Pb, gb, Hb = np.empty((L, L)), np.empty((L, L)), np.empty(n), np.empty((n, n))
        assert compiled.loss(hb, Kb, Cb, float(c[b]), Sb, key) == pytest.approx(
            float(value[b]), abs=1e-14
        )
        assert np.abs(Sb - S[b].numpy()).max() < 1e-15
        compiled.loss_derivatives(hb, Kb, Cb, Sb, Pb, gb, Hb, key)
        assert np.abs(gb - grad[b].reshape(-1).numpy()).max() < 1e-13
        assert np.abs(Hb - H[b].numpy()).max() < 1e-13
