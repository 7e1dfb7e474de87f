"""
The histogram (counting) task
=============================

The paper's Appendix A: a one-layer transformer counts, for every token of a sequence, how
often it occurs. A positional solution and a semantic solution both exist; restricting the
attention to one kind of input trains each (``positional``, ``semantic``), and the
unfreeze-and-retrain check asks whether a solution stays where it is once both inputs are
available. This tutorial runs the quick version with two runs per model (at most six epochs,
stopping at 95% validation accuracy).
"""

# %%
import pandas as pd

from attnphase import HistogramConfig, run_histogram

cfg = HistogramConfig.quick(runs=2)
result = run_histogram(cfg)
table = pd.DataFrame(result.summaries())
print(table[["model", "runs", "epochs", "val_accuracy_mean", "accuracy_after_mean"]])

# %%
# The attention maps of one run of each model on the same sequences, and the training
# curves: the figures of the paper's Fig. 1 and Table 1, drawn from the result.
import tempfile
from pathlib import Path

import matplotlib.image as mpimg
import matplotlib.pyplot as plt

from attnphase.figures.histogram import attention_figure

with tempfile.TemporaryDirectory() as tmp:
    path = Path(tmp) / "attention.png"
    attention_figure(result, path)
    image = mpimg.imread(path)
fig, ax = plt.subplots(figsize=(9, 4), layout="constrained")
ax.imshow(image)
ax.set_axis_off()
plt.show()
