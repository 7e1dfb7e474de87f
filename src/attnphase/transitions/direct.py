"""The transitions of one L = 2 model solved directly (docs/theory.md §5): one coarse scan
brackets each transition, then Newton solves its defining system (`systems`: both branches'
fixed-point equations with equal training losses for alpha_c, the semantic branch's with
eps_g = eps_lin for alpha_l, a branch's end for a spinodal) at the working order, and again at
the check order for the error. The same starts and solves as the first point of a line
(`gauss_hermite_lines`), without following the line: a few hundred map evaluations where the
scan's curves and root brackets take thousands.

The coarse scan can miss a transition: a branch not found at one grid alpha between others
where it is (a root of the losses' gap may hide there), or the positional branch as the global
minimum with eps_g below eps_lin (alpha_l may then lie on the positional branch, which the
lines do not follow). The start scan solves again a point where a branch is lost between
two where it is found (`first_point`); where a doubt stays, `direct_transitions` returns it
(`scan_doubts`), and `find_transitions` scans instead.
"""

from __future__ import annotations

import math

from ..params import ModelParams
from ..theory import GaussHermite
from .continuation import LinePoint
from .gauss_hermite_lines import GaussHermiteLines, first_point, gauss_hermite_line_starts
from .gauss_hermite_lines import scan_order as start_order
from .lines import line_follower
from .paths import LINES, parameter_path
from .record import Transitions


def direct_transitions(
    p: ModelParams, method: GaussHermite, alpha_min: float, alpha_max: float
) -> Transitions | str:
    """alpha_c, alpha_l and both spinodals of `p` on [alpha_min, alpha_max] with errors
    |root(order) - root(check_order)| (module docstring); or, where they cannot be trusted
    (a Newton solve that failed from its start, alpha_l possibly on the positional branch),
    the reason."""
    lines = GaussHermiteLines(parameter_path(p, "omega"), method)
    fp = first_point(p, alpha_min, alpha_max, start_order(method.order), method.order)
    if fp.doubts:
        return "on the start scan, " + "; ".join(fp.doubts)
    starts = gauss_hermite_line_starts(lines, p.omega, alpha_min, alpha_max, fp)
    points: dict[str, LinePoint] = {}
    for name in LINES:
        follower = line_follower(name, lines, starts[name], (alpha_min, alpha_max))
        pt = follower.step(p.omega)
        if not isinstance(starts[name], str) and not pt.status.startswith("converged"):
            return f"{name}: {pt.status}"
        points[name] = pt
    alpha_c, alpha_l = points["alpha_c"], points["alpha_l"]
    l_value, l_err = alpha_l.alpha, alpha_l.alpha_err
    if math.isfinite(l_value) and l_value < alpha_c.alpha:
        # the semantic branch crosses eps_lin where the positional one is the global minimum
        # (above eps_lin, as the start scan says): the minimum's eps_g jumps below it at alpha_c
        l_value, l_err = alpha_c.alpha, alpha_c.alpha_err
    return Transitions(
        omega=p.omega,
        sigma=p.sigma,
        lam=p.lam,
        alpha_c=alpha_c.alpha,
        alpha_c_err=alpha_c.alpha_err,
        alpha_l=l_value,
        alpha_l_err=l_err,
        alpha_c_interpolated=False,
        alpha_l_interpolated=False,
        spinodal_semantic=points["spinodal_semantic"].alpha,
        spinodal_positional=points["spinodal_positional"].alpha,
        alpha_min=alpha_min,
        alpha_max=alpha_max,
        method=method,
    )
