"""
The extensions
==============

Untied query and key, a value matrix, correlated tokens and random starts.

The paper's appendix studies these by experiment; attnphase simulates all of them and solves
untied query and key and correlated tokens in theory (theory §10). Each is an option of the
one model description, ``ModelParams``, or of the simulation's ``SimConfig``.
"""

# %%
# Untied query and key in theory: the student's field has a query and a key column. Untying
# lowers the positional branch's training loss more than the semantic one's, which moves
# alpha_c to larger alpha.
import matplotlib.pyplot as plt

from attnphase import QMC, GaussHermite, ModelParams, Untied, solve

method = QMC(points=256, randomisations=2)
tied, untied = ModelParams(omega=0.3), ModelParams(omega=0.3, variant=Untied())
rows = []
for branch in ("semantic", "positional"):
    t = solve(1.5, tied, branch=branch, method=GaussHermite(order=(32, 12), check_order=(24, 8)))
    u = solve(1.5, untied, branch=branch, method=method)
    rows.append((branch, t.train_loss, u.train_loss, u.train_loss_err))
    print(
        f"{branch}: tied R/d {t.train_loss:.6f}, untied {u.train_loss:.6f} ± {u.train_loss_err:.1e}"
    )

# %%
# A trainable low-rank value matrix and correlated tokens in simulations (d = 150, one seed).
from attnphase import Mixture, SimConfig, simulate

base = SimConfig(params=tied, d=150, alpha=1.5, init="semantic")
value = SimConfig(params=tied, d=150, alpha=1.5, init="semantic", value_rank=1)
mixture = SimConfig(
    params=ModelParams(omega=0.3, variant=Mixture(clusters=2, label_correlation=0.8)),
    d=150,
    alpha=1.5,
    init="semantic",
)
for name, cfg in (("tied", base), ("value matrix", value), ("correlated tokens", mixture)):
    (r,) = simulate(cfg, seeds=(0,))
    print(
        f"{name}: theta {r.theta:.4f}, training loss {r.train_loss:.6f}, eps_g {r.test_error:.6f}"
    )

# %%
# Random starts trained with Adam: which minimum do they reach, and how often?
from attnphase.validity.outcomes import outcomes

study = outcomes([1.0, 2.0], runs=3, d=100, steps=300)
for row in study.fractions:
    print({k: v for k, v in row.items() if k.startswith(("alpha", "fraction"))})

fig, ax = plt.subplots(figsize=(4.5, 3.2), layout="constrained")
names = [r[0] for r in rows]
ax.bar([0, 3], [r[1] for r in rows], color=["tab:blue", "tab:orange"], label="tied")
ax.bar([1, 4], [r[2] for r in rows], color=["tab:blue", "tab:orange"], alpha=0.5, label="untied")
ax.set_xticks([0.5, 3.5], names)
ax.set_ylabel(r"training loss at $\alpha = 1.5$")
ax.legend(frameon=False)
plt.show()
