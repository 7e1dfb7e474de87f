"""
The histogram (counting) task
=============================

The paper's Appendix A: a one-layer transformer counts, for every token of a sequence, how
often it occurs. A positional solution and a semantic solution both exist; restricting the
attention to one kind of input trains each (``positional``, ``semantic``), and the
unfreeze-and-retrain check asks whether a solution stays where it is once both inputs are
available.

Training is the slow part (about 50 s for the quick mode on a quiet 2-core machine, minutes
beside other jobs), so this tutorial reads what one documented command wrote instead of
training while the documentation builds::

    attnphase histogram --quick --format csv --plot docs/histogram_quick \\
        > docs/histogram_quick/summary.csv

(three runs per model, at most six Adam epochs, stopping at 95% validation accuracy, then two
epochs of SGD; it took 49 s at a load average of 0.5-0.9). In Python the same run is
``run_histogram(HistogramConfig.quick())``, whose ``summaries()`` are the table's rows.
"""

# %%
from pathlib import Path

import pandas as pd

here = Path(__file__).resolve().parent if "__file__" in globals() else Path.cwd()
folder = here.parent / "histogram_quick"
table = pd.read_csv(folder / "summary.csv")
print(table[["model", "runs", "epochs", "val_accuracy_mean", "accuracy_after_mean"]])

# %%
# The mechanism scores say which input the trained attention uses: -1 purely positional,
# +1 purely semantic, before and after the unfreeze-and-retrain stage.
print(table[["model", "mechanism_score_before", "mechanism_score_after"]])

# %%
# The attention maps of one run of each model on the same sequences, as the command drew
# them (the paper's Fig. 1).
import matplotlib.image as mpimg
import matplotlib.pyplot as plt

fig, ax = plt.subplots(figsize=(9, 4), layout="constrained")
ax.imshow(mpimg.imread(folder / "histogram_attention.png"))
ax.set_axis_off()
plt.show()
