"""
GAMP on data
============

GAMP (theory §8) runs on exactly the data set a simulation of the same seed draws. Its fixed
points are critical points of the risk; its overlaps follow the state evolution; where the
resolvent jumps it can cycle instead of converging, and says so in its status.
"""

# %%
import matplotlib.pyplot as plt

from attnphase import GaussHermite, ModelParams, run_gamp, solve

p = ModelParams(omega=0.3)
res = run_gamp(p, d=400, alpha=1.5, init="semantic", seed=0, max_iter=300)
theory = solve(1.5, p, branch="semantic", method=GaussHermite(order=(32, 12), check_order=(24, 8)))
print(res.status, res.iterations)
print(f"GAMP: theta {res.theta:.4f}, q {res.q:.4f}, V {res.V:.2f}, R/d {res.train_loss:.5f}")
se = theory
print(f"SE:   theta {se.theta:.4f}, q {se.q:.4f}, V {se.V:.2f}, R/d {se.train_loss:.5f}")

# %%
# The gradient of the risk along the iterations: GAMP's fixed point is a critical point.
history = res.history
fig, ax = plt.subplots(figsize=(4.5, 3.2), layout="constrained")
ax.semilogy([step.grad_norm for step in history], color="tab:blue")
ax.set_xlabel("iteration")
ax.set_ylabel(r"$|\nabla R|_F / \sqrt{d r}$")
plt.show()

# %%
# The trust map puts side by side, at each (alpha, omega), the theory's fixed points with
# their replicon factor and jump mass (theory §9), L-BFGS from both starts and, optionally,
# GAMP, and says where the replica-symmetric answer holds. One small point here.
from attnphase import trust_map

rows = trust_map(p, [1.5], [0.3], d=200, seeds=1, gamp=False, points=512, randomisations=2)
for key in (
    "alpha",
    "omega",
    "verdict",
    "reasons",
    "sem_rs_stability",
    "sem_jump_mass",
    "sim_agree",
):
    print(key, rows[0].get(key))
