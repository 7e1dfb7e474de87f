"""GAMP on a finite data set (docs/theory.md §8, the paper's Appendix B, Algorithm 1) for any L, r,
t.

State: the estimate Qh (d x r), the conjugate Vhat (r x r, V = s2 (lambda I + s2 Vhat)^{-1})
and the last outputs F (n x L x r, F = 0 first). One iteration is steps 1-6 of §8 with the
per-sample loss of `attnphase.ops` (K = x~ x~^T/d, Cm = y x~^T/d, c = |y|^2/(2d)),
the global prox of `attnphase.prox` (probe search plus Newton from w, 0 and the previous
minimiser, the settings of the state evolution) and its implicit derivative for D.

Cost: the fields x~ Qh/sqrt(d) are formed once per iteration (R and dg/dh follow from them)
and one back-projection of [dg/dh, F] gives grad R and step 5's sum. In the geometric tail of
the run (relative change of Qh <= WARM_CHANGE), where the fields move little from one step to
the next, two shortcuts apply: the back-projection reads the tokens once (`passes`: BLAS
takes as long as one pass per column), and each sample's prox minimiser is followed in its
basin by Newton from its linear prediction h_prev + J (w - w_prev) (1-2 Newton steps, against
~50 us a sample for the global search). The global prox still runs every `check_every`
iterations, after any step in which a minimiser switched basin, and for the step that leads to
any stop; and the damped steps are Anderson-mixed (`accelerate`: 175 -> 81 iterations at
d = 500, seed 0), history dropped at any basin switch. A stop counts only when the step that
led to it was a plain damped step with the global prox, so the fixed point and the stopping
rules are those of the unapproximated algorithm (tests/gamp/test_speed.py). Before the tail
(from the semantic start ~25 iterations, where basins switch) every step is the plain one with
the global prox and BLAS, as is every step with check_every=1.

Damping (docs/theory.md §8.1: damp the outputs, not only the estimate): with the convention of
`attnphase.theory.iterate`, damping weights the OLD value,
    x <- (1 - damping) x_new + damping x_old,
applied with one factor to F (before it enters both the Onsager term of the next step and the
Qh update), to Vhat (V follows from the damped Vhat) and to Qh. Undamped GAMP oscillates like
the undamped state evolution (§8.1: 1 - damping must stay below ~0.36 on the positional branch).
The default 0.75 (1 - damping = 0.25), L=2, alpha 1.5: from the semantic start 190-225
iterations to the default tolerances (d = 4000; 3 of 5 seeds, the other 2 cycle with one
sample); from the positional start the cycling floor of §8.1 (d = 2000: 5-6 samples,
|grad R|/sqrt(d) ~ 1e-4, in 80-90 iterations).

Stopping: converged when the relative change of Qh is <= tol AND the RMS risk gradient
|grad R(Qh)|_F/sqrt(d r) is <= gtol (GAMP fixed points are critical points of R, §8; the
default 1e-9 is ~2e-7 of |lambda Qh|, either of the two halves that cancel in grad R). When
the gradient's best value has not halved over `patience` iterations the run stops as
"cycling: k samples switch prox minima" if the prox minimisers of k samples jumped between
basins in that window (`basin_switches`; §8.1: no exact fixed point exists when some sample's
field at the critical point is not its global prox minimiser), else "stalled".
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace

import numpy as np
import torch

from .._core.progress import progress_bar
from ..ops.tensor import back_project, fields, loss_derivatives
from ..params import (
    DEFAULT_N_TEST,
    ModelParams,
    Variant,
    check_alpha,
    check_damping,
    check_dimension,
    check_int,
)
from ..prox import PROBE, attention_form, global_prox, prox_jacobian
from ..prox.replicon import replicon_terms
from ..run_options import check_gtol
from ..sim import INITS, minimise, pick_device
from ..theory.attention import attention_map
from ..theory.branches import START_V
from ..theory.method import check_tol
from ..theory.overlaps import MatrixOverlaps
from . import equations as eq
from .accelerate import Anderson
from .passes import back_project_once
from .problem import Problem, build_problem
from .result import GampResult, GampStep, plain

DEFAULT_DAMPING = 0.75
FROZEN_ABS, FROZEN_REL = 1e-5, 1e-3  # overlaps frozen over the patience window (`frozen`)
CHECK_EVERY = 20  # in the tail, the global prox every CHECK_EVERY iterations (docstring)
WARM_CHANGE = 5e-3  # the tail: relative change of Qh per iteration at most WARM_CHANGE
JUMP_TOL = 1e-2  # relative jump of a prox minimiser beyond its linear response: a switch


def check_init(init, d: int, r: int):
    """A start name of `attnphase.sim` or a finite (d, r) matrix; ValueError names `init`."""
    if isinstance(init, str):
        if init not in INITS:
            raise ValueError(f"init must be one of {INITS} or a (d, r) matrix, got {init!r}")
        return init
    Q0 = np.asarray(init, dtype=float)
    if Q0.shape != (d, r):
        raise ValueError(f"init: a start matrix must have shape (d, r) = {(d, r)}, got {Q0.shape}")
    if not np.isfinite(Q0).all():
        raise ValueError("init: the start matrix must be finite (found NaN or inf)")
    return Q0


def check_V0(V0, r: int) -> np.ndarray:
    """V0 as an r x r symmetric positive-definite matrix (a number means V0 I)."""
    V = np.asarray(V0, dtype=float)
    V = V * np.eye(r) if V.ndim == 0 else V
    if V.shape != (r, r) or not np.isfinite(V).all() or not np.allclose(V, V.T):
        raise ValueError(f"V0 must be a positive number or a symmetric {r} x {r} matrix: {V0!r}")
    if np.linalg.eigvalsh(V)[0] <= 0:
        raise ValueError(f"V0 must be positive definite, got {V0!r}")
    return V


def basin_switches(h_hat, previous, jac_previous, w, w_previous) -> torch.Tensor:
    """Samples whose prox minimiser jumped: |dh_hat - J dw| > JUMP_TOL (1 + |h_hat|), J the
    previous implicit derivative dh_hat/dw. A move within one basin leaves a residual of
    second order in dw (~1e-7 near convergence); a switch to another minimum leaves O(0.1)."""
    if previous is None:
        return torch.zeros(w.shape[0], dtype=torch.bool, device=w.device)
    dw = (w - w_previous).flatten(1)
    linear = (jac_previous @ dw.unsqueeze(-1)).squeeze(-1)
    residual = ((h_hat - previous).flatten(1) - linear).norm(dim=1)
    return residual > JUMP_TOL * (1.0 + h_hat.flatten(1).norm(dim=1))


@dataclass(frozen=True)
class _State:
    """GAMP's state between iterations: the estimate Qh, V (from the damped Vhat), the damped
    outputs F, and the previous prox minimisers, fields and implicit derivatives (None first)."""

    Q: torch.Tensor
    V: torch.Tensor
    Vhat: torch.Tensor
    F: torch.Tensor
    h_hat: torch.Tensor | None = None
    w: torch.Tensor | None = None
    jac: torch.Tensor | None = None
    V_prox: torch.Tensor | None = None  # the V of the prox that gave h_hat and jac


def variant_of_problem(prob: Problem) -> Variant:
    """The student's attention (its variant): the prox, its derivatives and the loss use its
    form (`attnphase.prox.attention_form`)."""
    return prob.cfg.params.variant


def prox_step(prob: Problem, w: torch.Tensor, Vinv: torch.Tensor, previous: torch.Tensor | None):
    """h_hat (§8 step 2): the global minimiser, by the probe search plus Newton from w, 0 and
    the previous minimiser (the settings of the state evolution)."""
    starts = torch.stack([w, torch.zeros_like(w)] + ([previous] if previous is not None else []), 1)
    variant = variant_of_problem(prob)
    res = global_prox(w, Vinv, prob.K, prob.Cm, prob.c, starts, probe=PROBE, variant=variant)
    return res.h.to(w.device)


def warm_prox_step(prob: Problem, w: torch.Tensor, Vinv: torch.Tensor, st: _State):
    """h_hat (§8 step 2) followed in its basin: Newton from the previous minimiser moved by its
    linear response, h_prev + J (w - w_prev). Samples where that Newton run ends off a
    stationary point get the global prox (`prox_step`)."""
    assert st.h_hat is not None and st.jac is not None and st.w is not None
    guess = st.h_hat + (st.jac @ (w - st.w).flatten(1).unsqueeze(-1)).reshape(w.shape)
    variant = variant_of_problem(prob)
    res = global_prox(w, Vinv, prob.K, prob.Cm, prob.c, guess[:, None], variant=variant)
    h_hat = res.h.to(w.device)
    lost = torch.nonzero(~res.stationary.to(w.device)).squeeze(-1)
    if lost.numel():
        wl, K, Cm, c = w[lost], prob.K[lost], prob.Cm[lost], prob.c[lost]
        starts = torch.stack([wl, torch.zeros_like(wl), st.h_hat[lost]], 1)
        found = global_prox(wl, Vinv, K, Cm, c, starts, probe=PROBE, variant=variant)
        h_hat[lost] = found.h.to(w.device)
    return h_hat


@dataclass(frozen=True)
class _Outputs:
    """Steps 1-4 of one iteration: the fields w, prox minimisers, implicit derivatives, damped
    outputs F and conjugate Vhat, the basin switches, and whether the prox was the global one."""

    w: torch.Tensor
    h_hat: torch.Tensor
    jac: torch.Tensor
    F: torch.Tensor
    Vhat: torch.Tensor
    switched: torch.Tensor
    global_prox: bool


def output_step(prob: Problem, st: _State, h: torch.Tensor, damping: float, glob: bool):
    """Steps 1-4 of docs/theory.md §8 with damped outputs (module docstring), given the fields
    h = x~ Qh/sqrt(d); the global prox when `glob` (or at the first iteration), else the prox
    followed in its basin (`warm_prox_step`)."""
    keep = damping
    Vinv = torch.linalg.inv(st.V)
    w = eq.onsager_fields(h, st.F, st.V)  # step 1
    glob = glob or st.h_hat is None
    if glob:
        h_hat = prox_step(prob, w, Vinv, st.h_hat)  # step 2
    else:
        h_hat = warm_prox_step(prob, w, Vinv, st)  # step 2, in the previous basin
    f = eq.outputs(h_hat, w, Vinv)  # step 3: f
    jac = prox_jacobian(h_hat, Vinv, prob.K, prob.Cm, prob.c, variant=variant_of_problem(prob))
    D = eq.output_jacobian_blocks(jac, Vinv)  # step 3: D
    switched = basin_switches(h_hat, st.h_hat, st.jac, w, st.w)
    F = (1 - keep) * f + keep * st.F  # damped outputs
    Vhat = (1 - keep) * eq.conjugate_variance(D, prob.d) + keep * st.Vhat  # step 4, damped
    return _Outputs(w=w, h_hat=h_hat, jac=jac, F=F, Vhat=Vhat, switched=switched, global_prox=glob)


def estimate_step(
    prob: Problem, st: _State, out: _Outputs, back: torch.Tensor, damping: float, lam: float
) -> _State:
    """Steps 5-6 of docs/theory.md §8, damped, given back = sum x~^T F^T/sqrt(d) of the damped
    outputs; raises ArithmeticError where lambda I + s2 Vhat is not positive definite."""
    s2, keep, Vhat = prob.s2, damping, out.Vhat
    if torch.linalg.eigvalsh(eq.prior_matrix(Vhat, s2=s2, lam=lam))[0] <= 0:
        raise ArithmeticError("lambda I + s2 Vhat is not positive definite")
    Q_new = eq.estimate_update(st.Q, back, Vhat, s2=s2, lam=lam)  # step 5
    Q = (1 - keep) * Q_new + keep * st.Q  # damped estimate
    V = eq.variance_update(Vhat, s2=s2, lam=lam)  # step 6
    return _State(Q=Q, V=V, Vhat=Vhat, F=out.F, h_hat=out.h_hat, w=out.w, jac=out.jac, V_prox=st.V)


def mixed_state(mixer: Anderson, st: _State, new: _State, s2: float, lam: float):
    """`new` = G(st) moved by Anderson mixing of (Qh, F, Vhat) (`accelerate`), with V from the
    mixed Vhat (step 6); None where lambda I + s2 Vhat is not positive definite."""
    x = torch.cat([st.Q.flatten(), st.F.flatten(), st.Vhat.flatten()])
    gx = torch.cat([new.Q.flatten(), new.F.flatten(), new.Vhat.flatten()])
    y = mixer.mix(x, gx)
    Q, F, Vhat = torch.split(y, [st.Q.numel(), st.F.numel(), st.Vhat.numel()])
    Vhat = Vhat.reshape(st.Vhat.shape)
    if torch.linalg.eigvalsh(eq.prior_matrix(Vhat, s2=s2, lam=lam))[0] <= 0:
        return None
    V = eq.variance_update(Vhat, s2=s2, lam=lam)  # step 6
    return replace(new, Q=Q.reshape(st.Q.shape), F=F.reshape(st.F.shape), Vhat=Vhat, V=V)


def gamp_step(prob: Problem, st: _State, h: torch.Tensor, damping: float, lam: float):
    """One iteration, steps 1-6 of docs/theory.md §8 with damped outputs and the global prox,
    given the fields h = x~ Qh/sqrt(d). Returns the new state and the mask of basin switches;
    raises ArithmeticError where lambda I + s2 Vhat is not positive definite."""
    out = output_step(prob, st, h, damping, glob=True)
    back = back_project(prob.x_pos, out.F)
    return estimate_step(prob, st, out, back, damping, lam), out.switched


class _Monitor:
    """Per-iteration history, the stopping rules and the stall/cycling detector."""

    def __init__(self, prob: Problem, tol: float, gtol: float, patience: int):
        self.prob, self.tol, self.gtol, self.patience = prob, tol, gtol, patience
        self.steps: list[GampStep] = []
        self.switches: list[torch.Tensor] = []

    def record(self, Q, V, R: float, grad: torch.Tensor, change: float, switched) -> None:
        q, M, theta = self.prob.overlaps(Q)
        d, r = Q.shape
        self.switches.append(switched)
        del self.switches[: -self.patience]  # only the last window is ever looked at
        self.steps.append(
            GampStep(
                iteration=len(self.steps),
                overlaps=MatrixOverlaps(q=q, M=M, theta=theta, V=V.cpu().numpy()),
                grad_norm=float(grad.norm()) / math.sqrt(d * r),
                train_loss=R / d,
                change=change,
                switched=int(switched.sum()),
            )
        )

    def frozen(self) -> bool:
        """The overlaps (q, M, theta) moved by at most FROZEN_ABS + FROZEN_REL |x| over the last
        `patience` iterations (docs/theory.md §8.1: a cycle or stall has frozen overlaps AND a flat
        gradient; below alpha ~ 1 the gradient flattens while theta still drifts by ~1e-3 per
        iteration towards another minimum)."""
        a, b = self.steps[-1 - self.patience].overlaps, self.steps[-1].overlaps
        for name in ("q", "M", "theta"):
            x, y = np.asarray(getattr(a, name)), np.asarray(getattr(b, name))
            if np.any(np.abs(y - x) > FROZEN_ABS + FROZEN_REL * np.abs(y)):
                return False
        return True

    def status(self) -> str | None:
        """The stopping status ("converged", diverged, stalled or cycling), or None to go on."""
        last = self.steps[-1]
        if not (math.isfinite(last.grad_norm) and math.isfinite(last.train_loss)):
            return "diverged: non-finite risk or gradient"
        if last.iteration > 0 and last.change <= self.tol and last.grad_norm <= self.gtol:
            return "converged"
        p = self.patience
        if len(self.steps) <= 2 * p:
            return None
        grads = [s.grad_norm for s in self.steps]
        if min(grads[-p:]) < 0.5 * min(grads[:-p]) or not self.frozen():
            return None
        moved = torch.stack(self.switches[-p:]).any(0)
        k = int(moved.sum())
        g = f"|grad R|/sqrt(dr) ~ {min(grads[-p:]):.1e} for {p} iterations"
        if k:
            who = f"{k} samples switch" if k > 1 else "1 sample switches"
            return f"cycling: {who} prox minima ({g})"
        return f"stalled: {g}, no prox basin switches"


def _lbfgs_polish(prob: Problem, Q: torch.Tensor) -> dict:
    """L-BFGS (`attnphase.sim.minimise`, the simulations' default RMS gradient 1e-8: its floor
    is ~1e-9) from GAMP's end point on the same data."""
    rep = minimise(prob.risk, Q[None].clone(), "lbfgs")
    Qp = rep.Q[0]
    q, M, theta = prob.overlaps(Qp)
    with torch.no_grad():
        R = float(prob.risk(Qp[None])[0])
    return {
        "label": "L-BFGS polish from GAMP's end point",
        "q": plain(q),
        "m": plain(M),
        "theta": plain(theta),
        "train_loss": R / prob.d,
        "grad_norm": rep.grad_rms[0],
        "test_error": prob.test_error(Qp),
        "converged": rep.converged[0],
        "steps": rep.steps[0],
    }


def replicon_factor(st: _State, prob: Problem) -> float:
    """docs/theory.md §9's smooth factor (alpha/r) mean_mu ||Jt_mu - I||_F^2 at the last prox."""
    if st.jac is None:
        return float("nan")
    assert st.V_prox is not None  # `gamp_step` sets it together with jac
    V = st.V_prox.cpu().numpy()
    terms = replicon_terms(st.jac.cpu().numpy(), V, st.jac.shape[-1] // V.shape[0])
    return float(prob.n / prob.d * terms.mean())


def run_gamp(
    params: ModelParams | None = None,
    d: int = 1000,
    alpha: float = 1.5,
    *,
    init="semantic",
    seed: int = 0,
    damping: float = DEFAULT_DAMPING,
    max_iter: int = 1000,
    tol: float = 1e-6,
    gtol: float = 1e-9,
    V0=None,
    patience: int | None = None,
    polish: bool = False,
    check_every: int = CHECK_EVERY,
    accelerate: bool = True,
    n_test: int = DEFAULT_N_TEST,
    device: str = "auto",
    progress: bool = False,
) -> GampResult:
    """GAMP (docs/theory.md §8) on the data set that `attnphase.simulate` draws for
    `SimConfig(params=params, d=d, alpha=alpha, init=init)` and `seed`.

    init: "semantic" (Qh = Q*), "positional" (Qh along 1_d with m = 0.2), "random" (small
    Gaussian), as the simulations start, or an explicit (d, r) matrix. V0: the V of the first
    prox (default: the state evolution's starting V, `START_V` I). The state before the first
    iteration is (Qh, Vhat, F) = (start, the Vhat of V0, 0), which damping mixes with the
    first outputs. damping: weight of the old value (module docstring). patience: iterations
    without progress of the gradient before the run is declared stalled/cycling (default
    max(20, 10/(1 - damping))). polish: run L-BFGS from the end point when GAMP does not
    converge (reported in `polish`). check_every: iterations between global prox searches
    (module docstring; 1: at every iteration). accelerate: Anderson mixing in the tail
    (`accelerate`; off with check_every=1). n_test: size of the simulation's test set for
    test_error. Non-convergence is never silent: `converged` and `status` say what happened.
    """
    p = params if params is not None else ModelParams()
    if p.untied:
        raise ValueError(
            "params: GAMP runs tied query and key (any attention map of the tied fields: masks, "
            f"heads, rotations, correlated tokens), got variant={p.variant}"
        )
    width = attention_map(p.variant).field_width(p.rank)
    form = attention_form(p.variant, width)
    d = check_dimension(d)
    alpha = check_alpha(alpha)
    if int(round(alpha * d)) < 1:
        raise ValueError(f"alpha: n = round(alpha d) must be >= 1, got alpha={alpha}, d={d}")
    init = check_init(init, d, width)
    seed = check_int("seed", seed, minimum=0)
    damping = check_damping(damping)
    max_iter = check_int("max_iter", max_iter)
    tol = check_tol(tol)  # the state evolution's bound: a looser test certifies nothing
    gtol = check_gtol(gtol)
    V0 = check_V0(START_V * np.eye(width) if V0 is None else V0, width)
    patience = max(20, math.ceil(10 / (1 - damping))) if patience is None else patience
    patience = check_int("patience", patience)
    n_test = check_int("n_test", n_test)
    check_every = check_int("check_every", check_every)
    accelerate = bool(accelerate) and check_every > 1
    t0 = time.perf_counter()
    dev = pick_device(device)
    prob = build_problem(p, d, alpha, init, seed, dev, n_test=n_test)
    V = torch.as_tensor(V0, dtype=prob.x_pos.dtype, device=dev)
    st = _State(
        Q=prob.Q0.clone(),
        V=V,
        Vhat=eq.start_conjugate(V, s2=prob.s2, lam=p.lam),
        F=torch.zeros(prob.n, p.L, width, dtype=V.dtype, device=dev),  # F = 0 first
    )
    mon = _Monitor(prob, tol, gtol, patience)
    change, switched = float("nan"), torch.zeros(prob.n, dtype=torch.bool, device=dev)
    bar = None
    if progress:
        bar = progress_bar(total=max_iter, desc=f"GAMP d={d} alpha={alpha}", enabled=True)
    status = "maximum iterations reached"
    x, r = prob.x_pos, width
    recheck = False  # the last step switched a basin: the global prox again
    last_exact = True  # the step that gave the current estimate: global prox, not mixed
    since = 0  # iterations since the last global prox
    mixer = Anderson()
    for it in range(max_iter + 1):
        h = fields(x, st.Q)  # x~ Qh/sqrt(d): the one pass over the data forward
        g, dg, _ = loss_derivatives(h, prob.K, prob.Cm, prob.c, hessian=False, form=form)
        R = float(g.sum()) + 0.5 * p.lam * float(st.Q.pow(2).sum())  # R (§1 in the form of §8)
        tail = check_every > 1 and change <= WARM_CHANGE  # False at first (change is NaN)
        out = None
        if it < max_iter:
            glob = not tail or recheck or since + 1 >= check_every
            out = output_step(prob, st, h, damping, glob)
            since = 0 if out.global_prox else since + 1
        G = dg if out is None else torch.cat([dg, out.F], -1)
        back = (back_project_once if tail else back_project)(x, G)  # grad R and step 5's sum
        mon.record(st.Q, st.V, R, back[..., :r] + p.lam * st.Q, change, switched)
        stop = mon.status()
        forced = stop is not None and not stop.startswith("diverged") and not last_exact
        if forced:  # a stop counts after a plain step with the global prox only: redo this one
            stop = None
            if out is not None and not out.global_prox:
                out, since = output_step(prob, st, h, damping, True), 0
                back = torch.cat([back[..., :r], back_project(x, out.F)], -1)
        if bar is not None and it > 0:
            bar.update(1)
            bar.set_postfix(grad=f"{mon.steps[-1].grad_norm:.1e}")
        if stop is not None or it == max_iter:
            status = stop or status
            break
        assert out is not None  # it < max_iter
        recheck = bool(out.switched.any())
        try:
            new = estimate_step(prob, st, out, back[..., r:], damping, p.lam)
        except ArithmeticError as err:
            status = f"diverged at iteration {it + 1}: {err}"
            break
        mixed = None
        if accelerate and tail and not forced and not recheck:
            mixed = mixed_state(mixer, st, new, prob.s2, p.lam)
        if mixed is None:
            mixer.reset()
        new = mixed or new
        change = float((new.Q - st.Q).norm() / st.Q.norm().clamp_min(1e-300))
        switched, last_exact, st = out.switched, out.global_prox and mixed is None, new
    if bar is not None:
        bar.close()
    last = mon.steps[-1]
    converged = status == "converged"
    finite = math.isfinite(last.grad_norm)
    o = last.overlaps
    return GampResult(
        d=d,
        n=prob.n,
        alpha=alpha,
        params=p,
        init=prob.cfg.init_name,
        seed=seed,
        damping=damping,
        q=plain(o.q),
        m=plain(o.M),
        theta=plain(o.theta),
        V=plain(o.V),
        test_error=prob.test_error(st.Q) if finite else float("nan"),
        train_loss=last.train_loss,
        grad_norm=last.grad_norm,
        change=last.change,
        converged=converged,
        iterations=last.iteration,
        status=status,
        seconds=time.perf_counter() - t0,
        rho=plain(prob.teacher_overlap()),
        rs_stability=replicon_factor(st, prob),
        history=tuple(mon.steps),
        Q=st.Q.cpu().numpy(),
        polish=_lbfgs_polish(prob, st.Q) if polish and finite and not converged else None,
    )
