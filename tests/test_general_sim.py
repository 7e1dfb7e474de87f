"""The general state evolution (THEORY.md §7) against finite-d simulations (issue 10).

The comparison itself (rotation-invariant quantities, the 1/d positional output term added to the
theory, tolerance 3 combined standard errors + 5%) lives in benchmarks/general_vs_sim.py, which
prints the full table; these tests assert it. Standard errors: the theory's over independent
scramblings, the simulations' over seeds (one teacher and data set per seed).

At L=3 with the default encodings C = (1, 0, -1) the positional branch exists only below
alpha ~ 1.2 (THEORY.md §7.6): it is tested at alpha 0.8; at alpha 1.5 and 3 the tests assert
what happens instead (the theory's positional start ends at the trivial point, the simulations'
at the semantic minimum). The mixed start (r = 2) is not tested: the general engine does not yet
converge it.
"""

import importlib.util
import math
import sys
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location(
    "general_vs_sim", Path(__file__).resolve().parents[1] / "benchmarks" / "general_vs_sim.py"
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


def _run(name, d, seeds, points, randomisations):
    case = gvs.CASES[name]
    theory = gvs.solve_general(
        case.alpha, case.params, init=case.target, points=points, randomisations=randomisations
    )
    assert theory.converged and theory.kind == case.target, (theory.status, theory.kind)
    sims = gvs.simulate(gvs.sim_config(case, d), seeds=range(seeds))
    assert all(s.converged for s in sims)
    return case, theory, sims


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    [
        "L3 semantic a=1.5",
        "L3 semantic a=3",
        "L3 positional a=0.8",
        "L3 positional start a=1.5",
        "L3 positional start a=3",
        "L2 r=2 t=1 semantic a=1.5",
        "L2 r=2 t=1 semantic a=3",
    ],
)
def test_d1000_simulations_match_the_general_theory(name):
    case, theory, sims = _run(name, d=1000, seeds=5, points=8192, randomisations=4)
    _assert_rows(gvs.compare(name, theory, sims), d=1000)
    if case.init_kind is not None:
        other = gvs.solve_general(case.alpha, case.params, init=case.init, points=8192)
        assert other.converged and other.kind == case.init_kind
