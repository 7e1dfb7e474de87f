"""
Sweeps on local processes and on a Dask cluster
===============================================

A sweep is a grid of theory points or simulations over a fixed base. Every finished point is
stored at once in an SQLite store under the run id of its parameters: a run killed at any
moment keeps what it finished, a rerun computes only what is missing, and two runs on one store
never compute a point twice. The same point function runs in this process, in local worker
processes (which die with their parent) or on a Dask cluster.
"""

# %%
# A theory grid over (alpha, omega), on two local processes.
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt

from attnphase.sweep import SweepSpec, run_sweep

tmp = Path(tempfile.mkdtemp())
spec = SweepSpec(
    "theory",
    grid={"alpha": [1.0, 1.5, 2.0], "omega": [0.2, 0.3], "branch": ["semantic", "positional"]},
    base={"order": [32, 12]},
)
table = run_sweep(spec, tmp / "theory.sqlite", backend="process", workers=2)
print(table.attrs["summary"])

# %%
# Run again: nothing is computed, every point is read back from the store.
again = run_sweep(spec, tmp / "theory.sqlite", backend="serial")
print(again.attrs["summary"])

# %%
# The same sweep on a Dask cluster (a local one here; pass ``scheduler="tcp://host:port"`` for
# a running one) adds only the new points of a larger grid.
bigger = SweepSpec(
    "theory",
    grid={"alpha": [1.0, 1.5, 2.0, 2.5], "omega": [0.2, 0.3], "branch": ["semantic", "positional"]},
    base={"order": [32, 12]},
)
table = run_sweep(bigger, tmp / "theory.sqlite", backend="dask", workers=2)
print(table.attrs["summary"])

fig, ax = plt.subplots(figsize=(4.5, 3.2), layout="constrained")
for (branch, omega), rows in table.sort_values("alpha").groupby(["branch", "omega"]):
    color = "tab:blue" if branch == "semantic" else "tab:orange"
    ax.plot(
        rows["alpha"],
        rows["train_loss"],
        "o-" if omega == 0.3 else "s--",
        color=color,
        label=f"{branch}, omega {omega}",
    )
ax.set_xlabel(r"$\alpha$")
ax.set_ylabel("training loss")
ax.legend(frameon=False, fontsize=8)
plt.show()
