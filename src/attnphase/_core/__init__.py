"""Machinery under every layer: numba compilation with a cache that cannot go stale (`jit`),
Gauss-Hermite nodes (`quadrature`) and worker processes that die with their parent
(`orphans`). Nothing here knows the model."""
