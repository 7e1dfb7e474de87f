"""
Learning curves and the linear baseline
=======================================

The state evolution's fixed points along the sample complexity alpha for the paper's model:
the semantic branch (the student aligns with the teacher, theta != 0) and the positional branch
(it aligns with the positional encodings, m != 0), with the test error of the linear
positional baseline (theory §3-§4).
"""

# %%
# Both branches along alpha. A curve is followed with warm starts; past the end of a branch
# it follows the fixed point it ran into, and ``kind`` says which.
import matplotlib.pyplot as plt
import numpy as np

from attnphase import GaussHermite, ModelParams, learning_curve, linear_test_error

p = ModelParams(omega=0.3, sigma=0.5, lam=0.01)
alphas = list(np.linspace(0.4, 2.4, 6))
# a coarser quadrature than the default (64, 24) keeps the tutorial under a minute
fast = GaussHermite(order=(32, 12), check_order=(24, 8))
curves = {b: learning_curve(alphas, p, branch=b, method=fast) for b in ("semantic", "positional")}
eps_lin = linear_test_error(p)
for r in curves["semantic"][:3]:
    print(f"alpha {r.alpha:.2f}: {r.kind:10s} theta {r.theta:.4f} ± {r.theta_err:.1e}")

# %%
# Each result carries its own error (the change between two quadrature orders). A point that
# is not on its branch is drawn hollow.
colors = {"semantic": "tab:blue", "positional": "tab:orange"}
fig, axes = plt.subplots(1, 3, figsize=(11, 3.2), layout="constrained")
for branch, curve in curves.items():
    on = np.array([r.kind == branch for r in curve])
    a = np.array([r.alpha for r in curve])
    for ax, key in zip(axes, ("theta", "m", "test_error"), strict=True):
        y = np.array([getattr(r, key) for r in curve])
        ax.plot(a[on], y[on], "o-", color=colors[branch], label=branch)
        ax.plot(a[~on], y[~on], "o", mfc="none", color=colors[branch])
axes[2].axhline(eps_lin, color="k", ls="--", label=r"linear baseline $\epsilon_{lin}$")
for ax, label in zip(axes, (r"$\theta$", "$m$", r"$\epsilon_g$"), strict=True):
    ax.set_xlabel(r"$\alpha$")
    ax.set_ylabel(label)
axes[2].legend(frameon=False)
plt.show()

# %%
# The global minimum is the branch with the lower training loss.
gap = [s.train_loss - q.train_loss for s, q in zip(*curves.values(), strict=True)]
print(["semantic" if g < 0 else "positional" for g in gap])
