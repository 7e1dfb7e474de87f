"""The names of the paper's figures and the files each writes: known without loading the
numerical libraries, so that a command line naming a wrong figure is refused at once."""

from __future__ import annotations

FIGURES = ("fig2", "fig3", "finite-size", "fig7", "fig8", "fig9", "histogram", "extensions")
# `figure all`: every figure but the histogram task (`figure histogram`) and the extensions'
# phase diagrams (`figure extensions`)
ALL = ("fig2", "fig3", "finite-size", "fig7", "fig8", "fig9")
HISTOGRAM_CHECKPOINTS = "histogram-checkpoints"  # the demo's, so the two share checkpoints


def output_stems(name: str) -> list[str]:
    """The file stems (PNG and PDF each) that figure `name` ("all" for ALL) writes."""
    if name == "all":
        return [stem for n in ALL for stem in output_stems(n)]
    if name == "histogram":
        return ["histogram_attention", "histogram_training"]
    return [name.replace("-", "_")]
