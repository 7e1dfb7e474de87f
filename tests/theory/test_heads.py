"""Several tied heads (docs/variants.md): the variant's checks, the heads' loss derivatives in
every backend, the prox, the theory's branches and the simulations.

Tolerances: derivatives against autograd to rounding (1e-12 on O(1) entries, measured 1.2e-15);
prox backends that run the same Newton iterations on the same loss agree to the prox's own
accuracy (gradient below 1e-10, measured 1e-13 on such problems)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from attnphase import QMC, ModelParams, solve
from attnphase.cli import app
from attnphase.ops.form import AttentionForm
from attnphase.params import Heads, Tied, variant_of
from attnphase.prox import PROBE, attention_form, global_prox
from attnphase.sim.models import Layout, penalty, student_map
from attnphase.theory.attention import valid_branches

from .forms import assert_derivatives_match_autograd, assert_prox_backends_agree, channel_problems


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(heads=0), "heads must be an integer >= 1"),
        (dict(heads=2, untied=True), "heads: several heads go with tied query and key"),
        (dict(heads=2, clusters=2), "heads: several heads go with tied query and key"),
        (dict(heads=2, mask="causal"), "heads: several heads go with tied query and key"),
    ],
)
def test_flat_descriptions_of_several_heads_are_checked(kwargs, message):
    with pytest.raises(ValueError, match=message):
        variant_of(**{"untied": False, **kwargs})


def test_one_head_is_the_tied_model_and_heads_are_bounded():
    assert variant_of(False, heads=1) == Tied()
    assert variant_of(False, heads=3) == Heads(3)
    assert ModelParams(variant=Heads(3)).heads == 3 and ModelParams().heads == 1
    with pytest.raises(ValueError, match="heads must be an integer >= 2"):
        Heads(1)
    with pytest.raises(ValueError, match="heads must be at most 16"):
        Heads(17)


@pytest.mark.parametrize("L,H,r,causal", [(2, 2, 1, False), (3, 2, 2, False), (4, 3, 1, True)])
def test_heads_derivatives_match_autograd_in_torch_and_numba(L, H, r, causal):
    """A wrong 1/H, a missing cross-head term J_a K J_b or a head's columns misread would each
    move the Hessian by O(1)."""
    g = torch.Generator().manual_seed(L * H + r)
    h = torch.randn(L, H * r, generator=g, dtype=torch.float64)
    assert_derivatives_match_autograd(h, AttentionForm(0, causal, H), seed=L * H + r + 1)


def test_identical_heads_are_one_head_with_the_ridge_of_every_copy():
    """Q_1 = Q_2 = Q: the heads' mean attention is Q's, and the ridge lambda/2 sum_a |Q_a|^2 is
    the one head's at 2 lambda (the identity behind the semantic branch's refusal)."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(1, 5, 2, 30, generator=g, dtype=torch.float64)
    Q = torch.randn(1, 30, 1, generator=g, dtype=torch.float64)
    two = Layout(2, Heads(2))
    assert torch.allclose(
        student_map(x, torch.cat([Q, Q], -1), two), student_map(x, Q, Layout(1)), atol=1e-15
    )
    assert torch.allclose(penalty(torch.cat([Q, Q], -1), 0.01, two), penalty(Q, 0.02, Layout(1)))
    other = torch.cat([Q, torch.randn(1, 30, 1, generator=g, dtype=torch.float64)], -1)
    assert not torch.allclose(student_map(x, other, two), student_map(x, Q, Layout(1)))


def test_the_prox_backends_agree_on_heads_and_the_form_reads_them():
    problems = channel_problems(40, 3, 2, seed=3)
    heads = assert_prox_backends_agree(problems, Heads(2))
    rank_two = global_prox(*problems, probe=PROBE)  # one head of rank 2
    assert float((rank_two.envelope - heads.envelope).abs().max()) > 1e-3
    w, Vinv, K, Cm, c, starts = problems
    N, L = w.shape[:2]
    assert attention_form(Heads(3), 3).describe() == (0, False, 3, ())
    with pytest.raises(ValueError, match="heads: the fields' width 3 is not a multiple"):
        global_prox(
            w[..., :1].expand(N, L, 3),
            Vinv[:1, :1],
            K,
            Cm,
            c,
            starts[..., :1].expand(N, 2, L, 3),
            variant=Heads(2),
        )


def test_the_heads_branches_and_their_refusals():
    assert valid_branches(Heads(2), 1) == ("positional", "trivial", "mixed")
    with pytest.raises(ValueError, match="the semantic branch is 2 copies of one head"):
        solve(1.5, ModelParams(variant=Heads(2)), branch="semantic", method=QMC(64, 2))


def test_the_specialised_fixed_point_holds_its_pins_and_is_the_lower_one():
    """Two heads, alpha 1.5: head 1 semantic and head 2 positional (mixed) trains lower than one
    positional head beside a trivial one: at 1024 x 2 points 0.003641 against 0.003783, a gap of
    2.8 times its standard error (5.1e-5, the two branches' errors combined)."""
    p = ModelParams(variant=Heads(2))
    method = QMC(1024, 2)
    mixed = solve(1.5, p, branch="mixed", method=method)
    positional = solve(1.5, p, branch="positional", method=method)
    assert mixed.converged and positional.converged
    q, M, theta = np.asarray(mixed.q), np.asarray(mixed.m), np.asarray(mixed.theta)
    assert q[0, 1] == 0.0 and M[0, 0] == 0.0 and theta[0, 1] == 0.0
    assert theta[0, 0] > 0.05 and M[0, 1] > 0.2
    gap = positional.train_loss - mixed.train_loss
    assert gap > 2 * np.hypot(mixed.train_loss_err, positional.train_loss_err)


def test_two_heads_from_the_positional_start_specialise_in_simulations():
    """L-BFGS at d = 300 (one seed): from head 1 positional and head 2 a small random start the
    student ends where the mixed start ends (one head semantic, the other positional), and from
    both heads on the teacher the heads stay identical (q_12 = q_11 to 1%)."""
    from attnphase.sim import SimConfig, simulate

    p = ModelParams(variant=Heads(2))
    runs = {
        init: simulate(SimConfig(params=p, alpha=1.5, d=300, init=init))[0]
        for init in ("positional", "mixed", "semantic")
    }
    assert runs["positional"].train_loss == pytest.approx(runs["mixed"].train_loss, rel=1e-6)
    theta = np.abs(np.ravel(runs["positional"].theta))
    assert theta.max() > 5 * theta.min()  # one semantic head
    q = np.asarray(runs["semantic"].q)
    assert q[0, 1] == pytest.approx(q[0, 0], rel=0.01)
    assert runs["semantic"].heads == 2


def test_the_cli_refuses_what_heads_cannot_do():
    runner = CliRunner()
    res = runner.invoke(app, ["theory", "--heads", "2", "--alpha", "1.5", "--branch", "semantic"])
    assert res.exit_code == 2 and "one-head model at --lam heads x lam" in res.output
    res = runner.invoke(app, ["theory", "--heads", "2", "--untied", "--alpha", "1.5"])
    assert res.exit_code == 2 and "--heads: several heads go with tied" in res.output


def test_heads_keep_a_tied_start_of_rank_h():
    from attnphase.theory.qmc.engine import free_overlaps, start_overlaps

    p = ModelParams(variant=Heads(2))
    start = start_overlaps("mixed", p)
    assert start.q.shape == (2, 2) and start.theta[0, 0] > 0 and start.M[0, 1] > 0
    free = free_overlaps("trivial", 2, 1, 1, Heads(2))
    assert free.q[0, 1] == 0 and free.V[0, 1] == 0
    free = free_overlaps("positional", 2, 1, 1, dataclasses.replace(Heads(2)))
    assert free.M[0, 1] == 0 and free.M[0, 0] == 1


def test_heads_of_rank_two_pin_and_start_head_by_head():
    """Rank 2 per head: the mixed branch's positional column is head 2's first (column 2), not
    head 1's second (a start or pin that kept the tied model's column 1 puts both mechanisms
    in one head); the frame rotates within each head only."""
    from attnphase.theory.attention import attention_map
    from attnphase.theory.qmc.engine import free_overlaps, start_overlaps

    p = ModelParams(rank=2, variant=Heads(2))
    start = start_overlaps("mixed", p)
    assert start.q.shape == (4, 4) and start.M[0, 2] > 0 and not start.M[0, [0, 1, 3]].any()
    assert start.theta[0, 0] > 0 and not start.theta[0, 1:].any()
    free = free_overlaps("mixed", 4, 1, 1, Heads(2))
    assert free.M[0].tolist() == [0, 0, 1, 0] and free.theta[0].tolist() == [1, 0, 0, 0]
    assert not (free.q - np.diag(np.diag(free.q))).any()
    rng = np.random.default_rng(0)
    B = rng.standard_normal((4, 4))
    q = B @ B.T
    o = dataclasses.replace(start, q=q, V=q)
    framed = attention_map(Heads(2)).frame(o)
    for cols in ([0, 1], [2, 3]):  # each head's block diagonal, its eigenvalues kept
        block = framed.q[np.ix_(cols, cols)]
        assert abs(block[0, 1]) < 1e-12
        assert np.allclose(np.sort(np.diag(block)), np.linalg.eigvalsh(q[np.ix_(cols, cols)]))
    assert framed.q[0, 2] != 0  # no rotation mixes the heads
    assert np.isclose(np.trace(framed.q), np.trace(q))


def test_the_specialised_point_of_two_heads_of_rank_two_keeps_each_head_to_its_mechanism():
    """QMC 512 x 2, alpha 1.5: head 1's first column semantic, head 2's first positional, the
    trivial columns held; the other columns are not zero (q diagonal, measured 0.009-0.016 at
    4096 x 4 points), and the training loss is below the rank-1-per-head one (0.003564 against
    0.003641 at 4096 x 4 and 1024 x 2 points: two more columns to fit with)."""
    r = solve(1.5, ModelParams(rank=2, variant=Heads(2)), branch="mixed", method=QMC(512, 2))
    assert r.converged and r.kind == "mixed"
    q, M, theta = np.asarray(r.q), np.asarray(r.m), np.asarray(r.theta)
    assert not (q - np.diag(np.diag(q))).any() and (np.diag(q) > 0.005).all()
    assert M[0, 2] > 0.25 and not M[0, [0, 1, 3]].any()
    assert theta[0, 0] > 0.05 and not theta[0, 1:].any()
    assert r.train_loss < 0.00362


def test_the_mixed_simulation_start_puts_head_two_on_the_positions():
    """Rank 2 per head: column 0 on the teacher, column 2 (head 2's first) at init_m, columns 1
    and 3 random; at rank 1 per head column 1 is head 2's."""
    from attnphase.sim import SimConfig
    from attnphase.sim.problem import initial_weights

    for rank, pos in ((2, 2), (1, 1)):
        cfg = SimConfig(params=ModelParams(rank=rank, variant=Heads(2)), d=50, init="mixed")
        teacher = torch.randn(1, 50, 1, dtype=torch.float64)
        Q0 = initial_weights(cfg, teacher, [0], torch.float64, "cpu")[0]
        assert torch.equal(Q0[:, 0], teacher[0, :, 0])
        assert bool((Q0[:, pos] == cfg.init_m).all())
        others = [c for c in range(2 * rank) if c not in (0, pos)]
        assert all(float(Q0[:, c].std()) > 0 for c in others)
