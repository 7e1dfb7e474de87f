"""
Longer sequences and rank two
=============================

Beyond the paper's two tokens the expectations run over ``L (r + t)`` Gaussian variables,
integrated by randomised quasi-Monte Carlo: the fixed point is solved once per independent
scrambling of the points, and every number is the mean with its standard error (theory §7).
"""

# %%
# Three tokens: A = 0.6 on the diagonal and 0.2 off it, encodings (1, 0, -1). The middle
# token carries no positional signal. Few points keep the tutorial fast; the error bars say
# what that costs.
import matplotlib.pyplot as plt
import numpy as np

from attnphase import QMC, ModelParams, learning_curve

A3 = [[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]]
p3 = ModelParams(omega=0.3, A=A3)
method = QMC(points=256, randomisations=3)
alphas = [1.0, 1.5, 2.0, 3.0]
semantic = learning_curve(alphas, p3, branch="semantic", method=method)
for r in semantic:
    print(f"alpha {r.alpha}: theta {r.theta:.4f} ± {r.theta_err:.4f}, eps_g {r.test_error:.5f}")

# %%
# A rank-2 student has a mixed fixed point: one column semantic, the other positional.
from attnphase import solve

p2 = ModelParams(omega=0.3, rank=2)
mixed = solve(1.5, p2, branch="mixed", method=QMC(points=256, randomisations=3))
print(mixed.kind)
print("theta (t x r):", np.round(mixed.theta, 4))
print("m (K x r):", np.round(mixed.m, 4))

fig, ax = plt.subplots(figsize=(4.5, 3.2), layout="constrained")
ax.errorbar(
    alphas,
    [r.theta for r in semantic],
    yerr=[2 * r.theta_err for r in semantic],
    fmt="o-",
    color="tab:blue",
    label="L = 3, semantic (±2 SE)",
)
ax.set_xlabel(r"$\alpha$")
ax.set_ylabel(r"$\theta$")
ax.legend(frameon=False)
plt.show()
