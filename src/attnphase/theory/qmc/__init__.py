"""The general engine (THEORY.md §7): any L, r, t and encodings, by randomised QMC."""
