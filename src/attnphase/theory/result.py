"""The one result record of a state-evolution fixed point, for every channel, and the solvers'
errors.

Overlaps and conjugates are stored as matrices (q, V, qhat, Vhat: r x r; M, Mhat: K x r; theta,
thetahat: t x r; docs/theory.md §7 conventions) and read as plain floats where they are 1 x 1 (the
paper's case, docs/theory.md §1-§3: `r.q`, `r.m`, `r.theta`). Every number has a `<name>_err`: the
standard error over independent scramblings for QMC; for Gauss-Hermite its change when the fixed
point is re-solved at the method's check order (NaN with errors=False, or where that re-solve
does not converge).
"""

from __future__ import annotations

import dataclasses
import html
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._core.records import Tabular
from ..params import ModelParams
from .method import QMC, GaussHermite, Method


class ConvergenceError(RuntimeError):
    """Raised by `solve(..., strict=True)` when the fixed point is not reached."""


class NonConvergenceWarning(RuntimeWarning):
    """Emitted when a fixed point is not reached and strict=False."""


OVERLAP_KEYS = ("q", "M", "theta", "V")
HAT_KEYS = ("qhat", "Mhat", "thetahat", "Vhat")
OBSERVABLES = ("test_error", "train_loss", "train_loss_identity")
STABILITY_NAMES = ("rs_stability", "jump_mass", "vhat_smooth")  # NaN until `with_stability`
# the record's names of the overlaps: m and mhat are M and Mhat
NAMES = ("q", "m", "V", "theta", "qhat", "mhat", "Vhat", "thetahat")
_KEY = {"m": "M", "mhat": "Mhat"}


def _with_error(value, err) -> str:
    """A number with its error ("0.00196 ± 1.2e-07"; the error left out where unknown), or a
    matrix by its shape."""
    arr = np.asarray(value)
    if arr.ndim:
        return f"<{'x'.join(map(str, arr.shape))} matrix>"
    e = float(np.asarray(err)) if np.ndim(err) == 0 else math.nan
    known = math.isfinite(e) and not (e == 0 and float(arr) == 0)  # a pinned overlap: 0
    return f"{float(arr):.6g}" + (f" ± {e:.2g}" if known else "")


def plain_value(x) -> float | np.ndarray:
    """A float for a one-element array (r = t = K = 1), the array otherwise."""
    arr = np.asarray(x)
    return float(arr.ravel()[0]) if arr.size == 1 else arr


def _listed(x):
    return x.tolist() if isinstance(x, np.ndarray) else x


def _value_property(name: str, errors: bool):
    key = _KEY.get(name, name)

    def get(self: TheoryResult):
        table = self.errors if errors else self.values
        return plain_value(table[key]) if key in table else float("nan")

    get.__doc__ = f"{'standard error of ' if errors else ''}{name} (float when 1 x 1)"
    return property(get)


@dataclass(frozen=True)
class TheoryResult(Tabular):
    """One fixed point of the state evolution (docs/theory.md §3, §7).

    values / errors: the overlaps q, M, theta, V and conjugates (matrices), the observables
    test_error (eps_g = mse/2), train_loss (R/d = -Phi), train_loss_identity (QMC: alpha
    E[ell] + lambda tr q/(2 sigma^2), equal to train_loss up to the integration error) and,
    once measured by `with_stability`, rs_stability, jump_mass and vhat_smooth (docs/theory.md §9).
    Read them as attributes (`r.q`, `r.q_err`, ...). converged is False with a status saying
    why when the fixed point was not reached; the numbers are then NaN unless the iteration
    merely ran out of steps or stalled (its last iterate's). iterations: the map evaluations
    the fixed point cost in all (a cold start's coarse stage, the Jacobian's differences, the
    global checks; every scrambling for QMC), so it can exceed the method's `max_iter`, which
    bounds each stage of one solve.
    residuals: one number per iteration of the final solve (of the first scrambling for QMC).
    solutions: the fixed point of every scrambling (QMC).
    Untied models: q is 2 x 2 (query, key), M and theta have a query and a key column
    (docs/theory-untied.md). Mixtures: M's last K - 1 rows are the mean overlaps m_mu
    (docs/theory-mixtures.md), with cluster_m and mean_multiplier in values.

    Examples
    --------
    One line with the verdict and the errors; the whole record as a table row:

    >>> from attnphase import GaussHermite, ModelParams, TheoryResult, solve
    >>> r = solve(1.5, ModelParams(), method=GaussHermite((24, 8), (16, 6)))
    >>> r  # doctest: +ELLIPSIS
    TheoryResult(alpha=1.5, branch=semantic, kind=semantic, converged=True, test_error=0.0019...)
    >>> list(r.to_frame().columns[:5])
    ['alpha', 'omega', 'sigma', 'lam', 'branch']
    >>> TheoryResult.frame([r, r]).shape[0]
    2
    """

    alpha: float
    params: ModelParams
    branch: str
    method: Method
    values: Mapping[str, Any]
    errors: Mapping[str, Any]
    linear_test_error: float
    linear_test_error_err: float
    converged: bool
    iterations: int
    status: str
    residuals: tuple[float, ...] = ()
    solutions: tuple = field(default=(), repr=False, compare=False)

    q = _value_property("q", False)
    m = _value_property("m", False)
    V = _value_property("V", False)
    theta = _value_property("theta", False)
    qhat = _value_property("qhat", False)
    mhat = _value_property("mhat", False)
    Vhat = _value_property("Vhat", False)
    thetahat = _value_property("thetahat", False)
    test_error = _value_property("test_error", False)
    train_loss = _value_property("train_loss", False)
    train_loss_identity = _value_property("train_loss_identity", False)
    rs_stability = _value_property("rs_stability", False)
    jump_mass = _value_property("jump_mass", False)
    vhat_smooth = _value_property("vhat_smooth", False)
    mean_multiplier = _value_property("mean_multiplier", False)
    cluster_m = _value_property("cluster_m", False)
    q_err = _value_property("q", True)
    m_err = _value_property("m", True)
    V_err = _value_property("V", True)
    theta_err = _value_property("theta", True)
    qhat_err = _value_property("qhat", True)
    mhat_err = _value_property("mhat", True)
    Vhat_err = _value_property("Vhat", True)
    thetahat_err = _value_property("thetahat", True)
    test_error_err = _value_property("test_error", True)
    train_loss_err = _value_property("train_loss", True)
    train_loss_identity_err = _value_property("train_loss_identity", True)
    rs_stability_err = _value_property("rs_stability", True)
    jump_mass_err = _value_property("jump_mass", True)
    vhat_smooth_err = _value_property("vhat_smooth", True)
    mean_multiplier_err = _value_property("mean_multiplier", True)
    cluster_m_err = _value_property("cluster_m", True)

    @property
    def omega(self) -> float:
        return self.params.omega

    @property
    def sigma(self) -> float:
        return self.params.sigma

    @property
    def lam(self) -> float:
        return self.params.lam

    @property
    def A(self) -> tuple[tuple[float, ...], ...]:
        return self.params.A

    @property
    def residual(self) -> float:
        """The last residual of the final solve (NaN if it made no step)."""
        return self.residuals[-1] if self.residuals else float("nan")

    @property
    def mse(self) -> float:
        """The `mse` column of the reference tables (= 2 eps_g)."""
        return 2.0 * self.test_error

    @property
    def phi(self) -> float:
        """The free entropy Phi of eq. 14 (= -train_loss)."""
        return -self.train_loss

    @property
    def kind(self) -> str:
        """Which fixed point this is: semantic (theta != 0), positional (the positional rows of
        M != 0), mixed (both), trivial (neither); with correlated tokens clustered where the
        mean rows m_mu are != 0 and the positional rows are 0, mixed where both are; "none"
        when not converged. Non-zero: above the method's `on_branch` (QMC: plus three standard
        errors of the mean over scramblings)."""
        if not self.converged:
            return "none"
        significant = self.method.significant
        M, M_err = np.asarray(self.values["M"]), np.asarray(self.errors.get("M", 0.0))
        K = self.params.K
        sem = significant(self.values["theta"], self.errors.get("theta", 0.0))
        pos = significant(M[:K], M_err[:K] if M_err.ndim else M_err)
        if significant(M[K:], M_err[K:] if M_err.ndim else M_err):
            return "mixed" if pos else "clustered"
        if sem and pos:
            return "mixed"
        return "semantic" if sem else "positional" if pos else "trivial"

    def _headline(self) -> list[tuple[str, str]]:
        """(name, text) of what a reader looks at first: the point, its verdict, the test error
        and the overlaps with their integration errors (matrices by their shape)."""
        items = [
            ("alpha", f"{self.alpha:g}"),
            ("branch", self.branch),
            ("kind", self.kind),
            ("converged", str(self.converged)),
        ]
        if self.values:
            names = ("test_error", "q", "m", "theta", "V")
            for name in names:
                value, err = getattr(self, name), getattr(self, f"{name}_err")
                items.append((name, _with_error(value, err)))
        settings = ", ".join(f"{k}={v}" for k, v in self.method.settings().items())
        items.append(("method", f"{self.method.name}({settings})"))
        return items

    def __repr__(self) -> str:
        """One line: alpha, branch, kind, converged, the test error and overlaps with their
        errors, the method (the full record: `as_dict`, `to_frame`)."""
        return f"TheoryResult({', '.join(f'{k}={v}' for k, v in self._headline())})"

    def _repr_html_(self) -> str:
        """The headline as a small HTML table (notebooks)."""
        rows = "".join(
            f"<tr><th>{k}</th><td>{html.escape(v)}</td></tr>" for k, v in self._headline()
        )
        return f"<table><caption>TheoryResult</caption>{rows}</table>"

    def with_values(self, values: Mapping[str, Any], errors: Mapping[str, Any]) -> TheoryResult:
        """The same record with further values and errors (e.g. the stability measures)."""
        return dataclasses.replace(
            self, values={**self.values, **values}, errors={**self.errors, **errors}
        )

    def as_dict(self) -> dict:
        """Flat record for tables and JSON. Gauss-Hermite: the paper's scalars with their
        `<name>_err` (the order difference), A as a11..a22, the orders as n_xi, n_y. QMC:
        overlaps as scalars for r = t = K = 1 (nested lists otherwise) with `<name>_err`, L,
        rank, teacher_rank, A, encodings, points, randomisations, and the variant's columns."""
        if isinstance(self.method, GaussHermite):
            return self._exact_dict()
        return self._qmc_dict()

    def _exact_dict(self) -> dict:
        d: dict[str, Any] = {
            "alpha": self.alpha,
            "omega": self.omega,
            "sigma": self.sigma,
            "lam": self.lam,
            "branch": self.branch,
        }
        for name in (*NAMES, "test_error", "train_loss"):
            d[name] = getattr(self, name)
            d[f"{name}_err"] = getattr(self, f"{name}_err")
        d.update(
            linear_test_error=self.linear_test_error,
            converged=self.converged,
            iterations=self.iterations,
            residual=self.residual,
            status=self.status,
        )
        for name in STABILITY_NAMES:
            d[name] = getattr(self, name)
            d[f"{name}_err"] = getattr(self, f"{name}_err")
        (d["a11"], d["a12"]), (d["a21"], d["a22"]) = self.A
        assert isinstance(self.method, GaussHermite)
        d["n_xi"], d["n_y"] = self.method.order
        d["kind"] = self.kind
        d["method"] = "gauss-hermite"
        return d

    def _qmc_dict(self) -> dict:
        p = self.params
        assert isinstance(self.method, QMC)
        assert p.encodings is not None  # ModelParams.__post_init__ fills in the default
        d: dict[str, Any] = {
            "alpha": self.alpha,
            "omega": p.omega,
            "sigma": p.sigma,
            "lam": p.lam,
            "branch": self.branch,
        }
        for name in (*NAMES, *OBSERVABLES, *STABILITY_NAMES):
            d[name] = _listed(getattr(self, name)) if self.values else float("nan")
            d[f"{name}_err"] = (
                _listed(getattr(self, f"{name}_err")) if self.values else float("nan")
            )
        d.update(
            linear_test_error=self.linear_test_error,
            linear_test_error_err=self.linear_test_error_err,
            converged=self.converged,
            iterations=self.iterations,
            status=self.status,
            kind=self.kind,
            method="qmc",
            untied=p.untied,
            L=p.L,
            rank=p.rank,
            teacher_rank=p.teacher_rank,
            A=[list(row) for row in p.A],
            encodings=[list(row) for row in p.encodings],
            points=self.points,
            randomisations=self.randomisations,
        )
        d.update(p.attention_columns())
        if p.untied and self.values:
            d.update(self._query_key())
        if p.mixture is not None:
            d.update(self._mixture_fields())
        return d

    @property
    def points(self) -> int | None:
        """Sobol points per scrambling (QMC), before their antithetic images."""
        return self.method.points if isinstance(self.method, QMC) else None

    @property
    def randomisations(self) -> int | None:
        """Scramblings solved (QMC)."""
        return self.method.randomisations if isinstance(self.method, QMC) else None

    def _mixture_fields(self) -> dict:
        """Correlated tokens: the mixture's parameters, m (positional rows of M), m_mean (the
        mean rows) and cluster_m (per cluster), with errors (NaN when not converged)."""
        mix = self.params.mixture
        assert mix is not None
        out = {
            "mean_multiplier": self.values.get("mean_multiplier", float("nan")),
            "mean_multiplier_err": self.errors.get("mean_multiplier", float("nan")),
            "clusters": mix.clusters,
            "label_correlation": mix.label_correlation,
            "cluster_norm": mix.cluster_norm,
        }
        K = self.params.K
        for table, suffix in ((self.values, ""), (self.errors, "_err")):
            if not self.values:
                out.update({f"{k}{suffix}": float("nan") for k in ("m", "m_mean", "cluster_m")})
                continue
            M = np.asarray(table["M"])
            out[f"m{suffix}"] = _listed(plain_value(M[:K]))
            out[f"m_mean{suffix}"] = _listed(plain_value(M[K:]))
            out[f"cluster_m{suffix}"] = _listed(
                np.asarray(table["cluster_m"])[:, 0] if M.shape[1] == 1 else table["cluster_m"]
            )
        return out

    def _query_key(self) -> dict:
        """Untied: the overlaps of Q_Q (column 0 of the field) and Q_K (column 1) by the names
        the simulations report (q_query, m_query, theta_query, q_key, ...), with errors."""
        out = {}
        for name, key in (("q", "q"), ("m", "M"), ("theta", "theta")):
            for table, suffix in ((self.values, ""), (self.errors, "_err")):
                block = np.asarray(table[key])
                for col, role in enumerate(("query", "key")):
                    part = block[col, col] if key == "q" else block[:, col]
                    out[f"{name}_{role}{suffix}"] = _listed(plain_value(part))
        return out
