"""The general state evolution (docs/theory.md §7) against finite-d simulations.

The comparison itself (rotation-invariant quantities, the 1/d positional output term added to the
theory, tolerance 3 combined standard errors + 5%) lives in studies/general_vs_sim.py, which
prints the full table; these tests assert it. Standard errors: the theory's over independent
scramblings, the simulations' over seeds (one teacher and data set per seed). Measured at
d = 1000 (studies/general_vs_sim.py): the L=3 semantic points agree within 1% and 1 combined
error once the 1/d term is added (without it eps_g is 1% and the training loss 0.8% high at
alpha 3); the rank-2 mixed points within 1% (eps_g 4% high without the term).

What is true, and tested, beyond the comparison's list:
- L=3, C = (1, 0, -1): the positional branch exists only below alpha ~ 1.2 (docs/theory.md §7.6), so
  it is tested at alpha 0.8; at alpha 1.5 and 3 the simulations' positional start ends at the
  semantic minimum, which the tests compare with the semantic theory.
- L=2, r=2, t=1: the simulations' semantic start (column 1 = Q*, column 2 small) ends at the
  MIXED minimum (one column semantic, one positional; 5/5 seeds at alpha 1.5 and 3), not at the
  pure semantic point; it is compared with the mixed fixed point, found from an explicit start
  near the simulations' minimum (the engine's own mixed start finds the same point,
  tests/theory/qmc/test_engine.py).
"""

import importlib.util
import math
import sys
from pathlib import Path

import pytest

from attnphase import QMC, solve

_spec = importlib.util.spec_from_file_location(
    "general_vs_sim", Path(__file__).resolve().parents[2] / "studies" / "general_vs_sim.py"
)
gvs = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = gvs  # dataclasses look their module up
_spec.loader.exec_module(gvs)


def _assert_rows(rows, d):
    bad = [r for r in rows if not r.passes(zero_tol=1 / math.sqrt(d))]
    assert not bad, "\n".join(
        f"{r.case} {r.name}: theory {r.theory:.5g} ± {r.theory_err:.2g} (+{r.finite_d:.2g}), "
        f"sims {r.sim:.5g} ± {r.sim_err:.2g}, {r.in_errors:.1f} errors, {r.percent:.1f}%"
        for r in bad
    )


def _run(name, d, seeds, points, randomisations, n_test=10_000):
    case = gvs.CASES[name]
    theory = case.theory(points, randomisations)
    assert theory.converged and theory.kind == case.target, (theory.status, theory.kind)
    sims = gvs.simulate(gvs.sim_config(case, d, n_test), seeds=range(seeds))
    assert all(s.converged for s in sims)
    return case, theory, sims


def test_d300_l3_semantic_eps_g_needs_the_positional_output_term():
    """Cheap (~15 s): L=3 semantic branch at alpha 3, d = 300, 4 seeds, theory 3 x 1024 points.
    The 1/d positional output term is 2.6% of eps_g at d = 300. Measured over three sets of 4
    seeds: the simulations' eps_g lies 0.3-2.1 combined errors from theory + term and 4.6-5.1
    from the bare theory; q and theta are 2-5% low (finite size) and pass 3 errors + 5%."""
    name = "L3 semantic a=3"
    _, theory, sims = _run(name, d=300, seeds=4, points=1024, randomisations=3, n_test=3000)
    rows = {r.name: r for r in gvs.compare(name, theory, sims)}
    _assert_rows(rows.values(), d=300)
    e = rows["eps_g"]
    assert abs(e.deviation) <= 3 * e.combined_err
    assert abs(e.sim - e.theory) > 3 * e.combined_err


@pytest.mark.slow
def test_two_encoding_directions_semantic_branch():
    """L=2 with orthogonal positions p_1 = u_1, p_2 = u_2 (C = I_2, K = 2) at alpha 1.5, theory
    3 x 1024 points (17 s in one process: slow, for the default suite's budget). Here
    ||S C||^2 = ||S||^2 no longer cancels between the tokens: the 1/d positional output term
    is 46% of eps_g and 45% of the training loss at d = 300, 21% and 20% at d = 1000.
    Measured over three seed sets each:
    - d = 1000, 4 seeds (0-3, 4-7, 8-11): every quantity within 3.5% of theory + term (q
      -3.5..+0.5%, theta -3.5..+0.8%, eps_g -2.0..+3.2%, training loss -1.5..+0.7%; M = (m1, m2)
      within 2.4 errors of 0); without the term eps_g is 23-30% and the loss 23-25% high.
    - d = 300, 8 seeds (0-7, 8-15, 16-23): eps_g -0.5..+3.5%, training loss -2.2..0%; q and theta
      are 6-10% low there (the term pulls the minimum toward uniform attention), so d = 300
      checks only eps_g and the loss, where the term is large."""
    name = "L2 K=2 semantic a=1.5"
    case, theory, sims = _run(name, d=1000, seeds=4, points=1024, randomisations=3, n_test=3000)
    rows = gvs.compare(name, theory, sims)
    assert {r.name for r in rows} == {"q", "m1", "m2", "theta", "eps_g", "train loss"}
    _assert_rows(rows, d=1000)
    bare = {r.name: r for r in gvs.compare(name, theory, sims, correct=False)}
    assert not bare["eps_g"].passes() and not bare["train loss"].passes()
    small = gvs.simulate(gvs.sim_config(case, 300, 3000), seeds=range(8))
    assert all(s.converged for s in small)
    rows = gvs.compare(name, theory, small)
    _assert_rows([r for r in rows if r.name in ("eps_g", "train loss")], d=300)


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    [
        "L3 semantic a=1.5",
        "L3 semantic a=3",
        "L3 positional start a=1.5",
        "L3 positional start a=3",
        "L2 r=2 t=1 semantic start a=1.5",
        "L2 r=2 t=1 semantic start a=3",
    ],
)
def test_d1000_simulations_match_the_general_theory(name):
    _, theory, sims = _run(name, d=1000, seeds=5, points=8192, randomisations=4)
    _assert_rows(gvs.compare(name, theory, sims), d=1000)


@pytest.mark.slow
def test_d1000_l3_positional_branch_at_alpha_08():
    """q, theta, eps_g and the training loss agree; m does not (open): theory 0.210 +- 0.001
    (0.211 with 4x the points per scrambling, so not the integration), simulations
    0.271 +- 0.002 at d = 1000, 0.266 +- 0.009 at d = 500 and 0.279, 0.261 at d = 2000 (the
    third d = 2000 seed left for the semantic minimum): no 1/sqrt(d) trend. The theory
    point comes from an explicit start: the engine's own positional start is spurious (below)."""
    name = "L3 positional a=0.8"
    _, theory, sims = _run(name, d=1000, seeds=5, points=8192, randomisations=4)
    rows = gvs.compare(name, theory, sims)
    _assert_rows([r for r in rows if r.name != "m"], d=1000)
    (m,) = [r for r in rows if r.name == "m"]
    if not m.passes():
        pytest.xfail(f"open: m = {m.sim:.3f} in simulations, {m.theory:.3f} in theory")


@pytest.mark.slow
def test_engine_positional_start_at_l3_is_a_fixed_point():
    """Regression: the column frame once forced M > 0, so a map flipping M -> -M passed for a
    fixed point (M = 2.25, -Phi = -0.015 while R/d = 0.091)."""
    res = solve(0.8, gvs.L3, branch="positional", method=QMC(8192))
    assert res.converged and res.kind == "positional"
    v, e = res.values, res.errors
    assert abs(v["train_loss"] - v["train_loss_identity"]) <= 3 * e["train_loss_identity"] + 1e-4
