"""
Locating alpha_c and alpha_l
============================

alpha_c is where the semantic branch's training loss falls below the positional one's;
alpha_l is where the global minimum's test error falls below the linear baseline's (theory
§5). ``find_transitions`` scans one model; ``transition_table`` follows the lines along omega
by continuation, resumable through a store.
"""

# %%
# One model: a scan of both branches on a grid of alpha, roots refined by Brent's method,
# errors from a second quadrature order. A coarse order keeps this tutorial fast; the default
# order is (64, 24).
from attnphase import GaussHermite, ModelParams, find_transitions

fast = GaussHermite(order=(32, 12), check_order=(24, 8))
t = find_transitions(ModelParams(omega=0.3), alpha_min=1.0, alpha_max=1.8, num=5, method=fast)
print(f"alpha_c = {t.alpha_c:.4f} ± {t.alpha_c_err:.4f}")
print(f"alpha_l = {t.alpha_l:.4f} ± {t.alpha_l_err:.4f}")

# %%
# The lines in omega, by continuation from one scan (a temporary store here; pass
# ``store=...`` to resume a long run).
import matplotlib.pyplot as plt

from attnphase import transition_table

omegas = [0.25, 0.3, 0.35]
df = transition_table(
    ModelParams(),
    omegas,
    method=fast,
    alpha_min=1.0,
    alpha_max=2.0,
    lines=["alpha_c", "alpha_l"],
    workers=1,
)
print(df[["omega", "alpha_c", "alpha_c_err", "alpha_l", "alpha_l_err"]])

fig, ax = plt.subplots(figsize=(4.5, 3.2), layout="constrained")
ax.errorbar(df["alpha_c"], df["omega"], xerr=df["alpha_c_err"], fmt="o-", label=r"$\alpha_c$")
ax.errorbar(df["alpha_l"], df["omega"], xerr=df["alpha_l_err"], fmt="s--", label=r"$\alpha_l$")
ax.set_xlabel(r"$\alpha$")
ax.set_ylabel(r"$\omega$")
ax.legend(frameon=False)
plt.show()
