"""Whether the replica-symmetric answer can be trusted (docs/theory.md §9): its stability
(`stability`: the replicon factor and the jump mass of a fixed point), where gradient descent
ends from starts of varying overlap (`landscape`), which minimum a start reaches and how often
(`outcomes`), and the trust map that puts theory, GAMP and simulations side by side (`trust`)."""

from .stability import Stability, learning_curves_with_stability, with_stability

__all__ = ["Stability", "learning_curves_with_stability", "with_stability"]
