"""Drawing only: every function here takes tables (pandas DataFrames or records) and returns or
saves a matplotlib figure; none solves or simulates. One style (`style`: the colours of the
branches, sizes, the atomic save) serves every figure; `attnphase.paper` computes the tables."""
