"""Newton's method with a finite-difference Jacobian kept up to date by Broyden's rank-one
updates, for the small augmented systems of the transition continuation.

The Jacobian is carried from one solve to the next along a line, so that a corrector costs
about one residual evaluation per iteration; it is rebuilt by forward differences when the
carried one stops giving progress.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from ..theory.iterate import OffDomain

TOL = 1e-10  # Newton's relative step tolerance (|F| <= sqrt(TOL) at a root)
LOCAL_ROUNDS = 3  # local solves of `checked_solve`, each from the last check's minimisers


@dataclass(frozen=True)
class NewtonReport:
    z: np.ndarray
    jacobian: np.ndarray | None  # None: no Jacobian given and the start off domain
    converged: bool
    evaluations: int
    residual: float
    reason: str


def fd_jacobian(F: Callable, z: np.ndarray, fz: np.ndarray, rel: float = 1e-6) -> np.ndarray:
    """Forward differences, step rel * max(|z_j|, 1e-2) per column."""
    J = np.empty((fz.size, z.size))
    for j in range(z.size):
        h = rel * max(abs(z[j]), 1e-2)
        zp = z.copy()
        zp[j] += h
        J[:, j] = (F(zp) - fz) / h
    return J


def newton_broyden(
    F: Callable[[np.ndarray], np.ndarray],
    z0: np.ndarray,
    jacobian: np.ndarray | None = None,
    *,
    tol: float = TOL,
    max_iter: int = 25,
    rebuild_after: int = 4,
) -> NewtonReport:
    """Solve F(z) = 0 from z0: step -J^{-1} F with backtracking on |F|, Broyden's update of J
    after every step, J rebuilt by forward differences at the start (when not given) and
    after `rebuild_after` steps without a halving of |F|. Converged when the step is below
    tol (1 + |z|) and |F| <= sqrt(tol), or at the residual's noise floor: after J was rebuilt
    where |F| <= sqrt(tol), `rebuild_after` steps in a row did not halve the least |F| (the
    point of least |F| is returned: |F| <= sqrt(tol) there, as at any converged point). Near
    a simple root of a smooth F the first step from a J rebuilt there reduces |F| far more;
    the L=2 map is smooth only piecewise (its global prox switches minimum at some nodes as
    the overlaps move), and where a jump of its residual lies next to the root (~2e-6 at
    omega 0.12 of the alpha_c line) no step gets below the step tolerance except by chance.
    OffDomain from F ends the solve (reason given)."""
    evals = 0

    def f(z):
        nonlocal evals
        evals += 1
        return F(z)

    z = np.asarray(z0, dtype=float).copy()
    try:
        fz = f(z)
    except OffDomain as err:
        return NewtonReport(z, jacobian, False, evals, np.inf, f"start off domain: {err}")
    J = jacobian
    fresh = False
    if J is None:
        J, fresh = fd_jacobian(f, z, fz), True
    stale, best = 0, np.linalg.norm(fz)
    least = (best, z)  # the point of least |F| (returned at the noise floor)
    floor = np.sqrt(tol)
    rebuilt_at_floor = fresh and best <= floor  # J was rebuilt where |F| <= floor
    for _ in range(max_iter):
        try:
            step = -np.linalg.solve(J, fz)
        except np.linalg.LinAlgError:
            step = -np.linalg.lstsq(J, fz, rcond=None)[0]
        t, new = 1.0, None
        for _ in range(8):
            try:
                cand = z + t * step
                fc = f(cand)
                if np.linalg.norm(fc) < np.linalg.norm(fz) or t < 1.0 / 64:
                    new = (cand, fc)
                    break
            except OffDomain:
                pass
            t *= 0.5
        if new is None:
            if fresh:
                return NewtonReport(
                    z, J, False, evals, float(np.linalg.norm(fz)), "no step stays on domain"
                )
            J, fresh = fd_jacobian(f, z, fz), True
            stale, rebuilt_at_floor = 0, np.linalg.norm(fz) <= floor
            continue
        dz, df = new[0] - z, new[1] - fz
        z, fz = new
        if dz @ dz > 0:
            J = J + np.outer(df - J @ dz, dz) / (dz @ dz)  # Broyden's good update
        fresh = False
        res = np.linalg.norm(fz)
        if np.linalg.norm(dz) <= tol * (1.0 + np.linalg.norm(z)) and res <= floor:
            return NewtonReport(z, J, True, evals, float(res), "converged")
        least = min(least, (res, z), key=lambda pair: pair[0])
        if res < 0.5 * best:
            best, stale = res, 0
        else:
            stale += 1
        if stale >= rebuild_after:
            if rebuilt_at_floor and least[0] <= floor:
                res, z = least
                return NewtonReport(
                    z, J, True, evals, float(res), "converged (residual's noise floor)"
                )
            J, fresh = fd_jacobian(f, z, fz), True
            stale, rebuilt_at_floor = 0, res <= floor
    return NewtonReport(z, J, False, evals, float(np.linalg.norm(fz)), "maximum iterations reached")


def checked_solve(system, z0: np.ndarray, jacobian: np.ndarray | None = None, **kw) -> NewtonReport:
    """`newton_broyden` (keywords `kw`) on `system` with its branch maps in local mode (each
    integrand's prox follows its previous minimiser: a smooth residual, several times cheaper
    to evaluate), then the residual at the root in global mode: the root stands when that is
    within the converged bound sqrt(tol) too. Otherwise the global evaluation has left the
    global minimisers as the warm starts, and the local solve is repeated from its root, up to
    LOCAL_ROUNDS solves in all; then (or when a local solve fails, the check is off domain, or a
    round returns the root before it) the system is solved in global mode from the last local
    root (or z0). Systems without `branch_maps` are solved as they are."""
    maps = getattr(system, "branch_maps", ())
    if not maps:
        return newton_broyden(system, z0, jacobian, **kw)
    floor = np.sqrt(kw.get("tol", TOL))
    z, J, evaluations = z0, jacobian, 0
    last: np.ndarray | None = None
    for _ in range(LOCAL_ROUNDS):
        for m in maps:
            m.local = True
        try:
            rep = newton_broyden(system, z, J, **kw)
        finally:
            for m in maps:
                m.local = False
        evaluations += rep.evaluations
        if not rep.converged:
            break
        try:
            residual = float(np.linalg.norm(system(rep.z)))
        except OffDomain:
            residual = np.inf
        evaluations += 1
        if residual <= floor:
            return replace(rep, evaluations=evaluations, residual=residual)
        z, J = rep.z, rep.jacobian
        if not np.isfinite(residual) or (last is not None and np.array_equal(z, last)):
            break  # off domain at the root, or the same root again: nothing new to follow
        last = z
    again = newton_broyden(system, z, J, **kw)
    return replace(again, evaluations=evaluations + again.evaluations)
