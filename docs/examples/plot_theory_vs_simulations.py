"""
Theory against simulations
==========================

The finite-d model (theory §1) trained by L-BFGS from the semantic and the positional start,
beside the state evolution's fixed points of the same branches. At d = 200 and two seeds the
simulations scatter by a few per cent around the theory; the d = 1000 comparisons are in the
test suite and the studies.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np

from attnphase import GaussHermite, ModelParams, SimConfig, learning_curve, simulate

p = ModelParams(omega=0.3)
alphas = [1.0, 1.5, 2.0]
runs = {
    init: [simulate(SimConfig(params=p, d=200, alpha=a, init=init), seeds=(0, 1)) for a in alphas]
    for init in ("semantic", "positional")
}
fast = GaussHermite(order=(32, 12), check_order=(24, 8))
theory = {b: learning_curve(alphas, p, branch=b, method=fast) for b in runs}

# %%
# The overlaps theta (semantic) and m (positional) and the training loss: seed means with
# their spread, against the theory.
colors = {"semantic": "tab:blue", "positional": "tab:orange"}
fig, axes = plt.subplots(1, 2, figsize=(9, 3.2), layout="constrained")
for branch, per_alpha in runs.items():
    key = "theta" if branch == "semantic" else "m"
    for ax, k in zip(axes, (key, "train_loss"), strict=True):
        sim = np.array([[getattr(r, k) for r in seeds] for seeds in per_alpha])
        ax.errorbar(alphas, sim.mean(1), yerr=sim.std(1), fmt="o", color=colors[branch])
        ax.plot(
            alphas,
            [getattr(r, k) for r in theory[branch]],
            "-",
            color=colors[branch],
            label=f"{branch}: theory (line), d = 200 (points)",
        )
axes[0].set_ylabel(r"$\theta$ (semantic), $m$ (positional)")
axes[1].set_ylabel("training loss $R/d$")
for ax in axes:
    ax.set_xlabel(r"$\alpha$")
axes[1].legend(frameon=False, fontsize=8)
plt.show()
