"""Recipes for the paper's figures and the extensions' maps: each computes its tables (theory,
simulations) with a cache keyed by its parameters, then hands them to `attnphase.figures`
to draw; `demo` runs the main job on embedded defaults."""
