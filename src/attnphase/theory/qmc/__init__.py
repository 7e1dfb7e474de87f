"""The general engine (docs/theory.md §7): any L, r, t and encodings, by randomised QMC."""
