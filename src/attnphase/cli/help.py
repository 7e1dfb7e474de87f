"""What `attnphase --help` lists, in the order a study goes (theory, transitions, experiments,
checks, figures), with each command's one-line summary and the examples its --help ends with."""

from __future__ import annotations

from typing import Any

# name: (one-line summary, examples)
COMMANDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "theory": (
        "State-evolution fixed points along alpha, every branch, with errors.",
        (
            "attnphase theory --alpha 0.2:2.5:24 --plot curves.png",
            "attnphase theory --A 0.6,0.2,0.2,0.2,0.6,0.2,0.2,0.2,0.6 --alpha 1,2 "
            "--branch semantic",
            "attnphase theory --mask causal --target-mask causal --A 1,0,0.4,0.6 --alpha 2",
        ),
    ),
    "transition": (
        "alpha_c, alpha_l and the spinodals, one row per value of omega, sigma or lambda.",
        (
            "attnphase transition --omega 0.1:0.5:5 --store lines.sqlite --plot lines.png",
            "attnphase transition --engine qmc --A 0.6,0.2,0.2,0.2,0.6,0.2,0.2,0.2,0.6",
        ),
    ),
    "scaling": (
        "alpha_c and alpha_l against the sequence length L (the simplex family).",
        ("attnphase scaling --L 2:4 --omega 0.3 --store scaling.sqlite",),
    ),
    "simulate": (
        "Train the finite-d model (L-BFGS, GD, Adam) from both starts, one row per seed.",
        (
            "attnphase simulate --d 1000 --alpha 0.5,1.5 --seeds 5",
            "attnphase simulate --d 500 --alpha 1 --untied --init semantic --plot sims.png",
        ),
    ),
    "gamp": (
        "GAMP on the simulations' data, with its state-evolution trace.",
        ("attnphase gamp --d 2000 --alpha 1.5 --init semantic --trace --plot gamp.png",),
    ),
    "sweep": (
        "A resumable grid of theory points or simulations on processes or a Dask cluster.",
        (
            "attnphase sweep --grid alpha=0.5:2:4 --grid omega=0.1,0.3 --store s.sqlite",
            "attnphase sweep --kind simulation --grid alpha=1,2 --set d=500 --seeds 3 "
            "--store sims.sqlite --workers 2",
        ),
    ),
    "trust": (
        "Where the replica-symmetric answer holds: theory, simulations and GAMP side by side.",
        ("attnphase trust --alpha 1,1.5 --omega 0.3 --d 1000 --store trust.sqlite",),
    ),
    "landscape": (
        "The training landscape from starts of chosen overlap with the teacher.",
        ("attnphase landscape --d 500 --alpha 2 --start-overlap 0:1:6",),
    ),
    "outcomes": (
        "Where training from random starts ends: semantic, positional or elsewhere.",
        ("attnphase outcomes --alpha 0.5,1,2 --runs 20 --d 200 --store outcomes.sqlite",),
    ),
    "histogram": (
        "The histogram (counting) task: positional and semantic transformers compared.",
        ("attnphase histogram --quick --plot histogram/",),
    ),
    "figure": (
        "Draw one of the paper's figures (or all), resuming from the stores in --out.",
        ("attnphase figure fig2 --out figures/", "attnphase figure all --out figures/"),
    ),
    "demo": (
        "The paper in one command: curves, transition lines, a phase diagram, histograms.",
        ("attnphase demo", "attnphase demo --full --out paper/"),
    ),
}


def command_help(name: str) -> dict[str, Any]:
    """The keyword arguments of `app.command` for command `name`: its one-line summary and its
    examples as the help's epilog."""
    summary, examples = COMMANDS[name]
    return {"short_help": summary, "epilog": "Examples:\n\n" + "\n\n".join(examples)}
