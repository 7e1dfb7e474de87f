"""Recipes for the paper's figures and the extensions' maps: each computes its tables (theory,
simulations) with a cache keyed by its parameters, then hands them to `attnphase.figures`
to draw; `common` holds what the recipes share (grids, the table cache, the simulations of a
grid), `demo` runs the main job on embedded defaults."""
