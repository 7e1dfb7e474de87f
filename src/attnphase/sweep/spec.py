"""What a sweep computes: the parameters of each kind, their validation, canonical run ids.

Every point is completed with the defaults of `ModelParams`, its variants, the integration
methods and the Gauss-Hermite solver (theory) or `ModelParams`, `Mixture` and `SimConfig`
(simulation), its values are put in one canonical form (integers as int, reals as float, so
alpha=1 and alpha=1.0 are one point; `order` as [n_xi, n_y]; `A` as a nested list) and checked
by the same validators `theory` and `simulate` use. Its run id is the sha256 of the canonical
JSON of (kind, point): giving a default explicitly does not change it. The simulation's
extension parameters (`untied`, `value_rank`, `clusters`, `label_correlation`, `cluster_norm`,
docs/theory.md §10) are left out of the hashed point when at their defaults, so a tied-model point
keeps the run id it had before they existed (and stores written then still resume). With
clusters = 1 the mixture's label_correlation and cluster_norm have no effect: they are stored
as the Mixture's defaults, so such points are one point with the tied model's run id. A
simulation point is flat (`r`, `t` for ModelParams' rank and teacher_rank, the variant as for
theory); `sim_config` builds its ModelParams and SimConfig. Theory points
give the model's variant the same way (untied, clusters, label_correlation, cluster_norm) and
the integration method by name (`method`: gauss-hermite, the default, with `order` and the
solver options; qmc with `points`, `randomisations`, `qmc_seed` and the `device` it runs on);
the variant and the QMC fields are hashed only away from their defaults, and the options of the
method not chosen must stay at their defaults. A theory point's `precision` (none by default,
hashed only when given) solves it again with finer integration until it is met, as `solve`
does; the result's integration columns say what answered.

Text syntax (the CLI's --grid/--set): `name=v1,v2` or `name=start:stop:num` for one-number
parameters; for the multi-valued ones (`order`, `A`, `encodings`) a comma list is ONE value and
several values are separated by ';' (`order=32,12;64,24`, `A=0.6,0.4,0.4,0.6`).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..params import (
    Mixture,
    ModelParams,
    Variant,
    check_alpha,
    check_finite,
    variant_of,
)
from ..theory.method import METHODS, QMC, GaussHermite, Method

if TYPE_CHECKING:
    from ..sim import SimConfig

# a theory point's name of each QMC field (its seed is qmc_seed: a theory point has no seed of
# the simulations' kind, and --seeds does not apply to it)
QMC_FIELDS = {f: "qmc_seed" if f == "seed" else f for f in QMC().settings()}

KINDS = ("theory", "simulation")

# name -> value type; the defaults come from ModelParams/solve and SimConfig (see `defaults`).
# `solve`'s `strict` and `branch` (explicit-overlap starts) and SimConfig's array-valued
# `positions` are not sweep parameters; theory's `branch` is the name of the start (solve's init).
PARAMETERS: dict[str, dict[str, str]] = {
    "theory": {
        "alpha": "real",
        "omega": "real",
        "sigma": "real",
        "lam": "real",
        "A": "matrix",
        "rank": "integer",
        "teacher_rank": "integer",
        "encodings": "numbers or none",
        "branch": "name",
        "order": "order",
        "tol": "real",
        "damping": "real",
        "anderson": "integer",
        "max_iter": "integer",
        "estimator": "name",
        "untied": "boolean",
        "clusters": "integer",
        "label_correlation": "real",
        "cluster_norm": "real",
        "mask": "name",
        "target_mask": "name",
        "heads": "integer",
        "rotary": "numbers or none",
        "method": "name",
        "points": "integer",
        "randomisations": "integer",
        "qmc_seed": "integer",
        "device": "name",
        "precision": "real or none",
    },
    "simulation": {
        "d": "integer",
        "alpha": "real",
        "omega": "real",
        "sigma": "real",
        "lam": "real",
        "A": "matrix",
        "r": "integer",
        "t": "integer",
        "encodings": "numbers or none",
        "init": "name",
        "init_m": "real",
        "init_scale": "real",
        "optimizer": "name",
        "lr": "real or none",
        "steps": "integer or none",
        "gtol": "real",
        "lam_linear": "real or none",
        "n_test": "integer",
        "dtype": "name",
        "device": "name",
        "untied": "boolean",
        "value_rank": "integer",
        "clusters": "integer",
        "label_correlation": "real",
        "cluster_norm": "real",
        "mask": "name",
        "target_mask": "name",
        "heads": "integer",
        "rotary": "numbers or none",
        "seed": "integer",
    },
}
MULTI_VALUED = ("order", "matrix", "numbers or none")
# parameters hashed only when not at these values (see the module docstring)
_VARIANT_OFF = {
    "untied": False,
    "clusters": 1,
    "label_correlation": 0.0,
    "cluster_norm": 1.0,
    "mask": "none",
    "target_mask": "none",
    "heads": 1,
    "rotary": None,
}
_HASHED_WHEN_ON = {
    "simulation": {**_VARIANT_OFF, "value_rank": 0},
    "theory": {
        **_VARIANT_OFF,
        "method": GaussHermite.name,
        **{name: getattr(QMC(), field) for field, name in QMC_FIELDS.items()},
        "device": QMC().device,
        "precision": None,
    },
}
# theory: the integration method's name and the options that apply to it alone
THEORY_METHODS = METHODS
SOLVER_OPTIONS = ("order", "tol", "damping", "anderson", "max_iter", "estimator")
_NUMERIC = ("real", "integer", "real or none", "integer or none")
# the fields of ModelParams a theory point sets directly (the variant is built from untied and
# the cluster parameters, as in the simulations)
MODEL_FIELDS = tuple(f.name for f in dataclasses.fields(ModelParams) if f.name != "variant")
# a simulation point's names of ModelParams' fields (the others keep theirs)
SIM_MODEL_NAMES = {"rank": "r", "teacher_rank": "t"}


def _check_kind(kind: str) -> dict[str, str]:
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    return PARAMETERS[kind]


def check_names(kind: str, names) -> None:
    """ValueError listing the valid names if any of `names` is not a parameter of `kind`."""
    table = _check_kind(kind)
    unknown = [n for n in names if n not in table]
    if unknown:
        raise ValueError(
            f"unknown {kind} parameter {', '.join(map(repr, unknown))}; valid: {', '.join(table)}"
        )


@functools.cache
def _defaults(kind: str) -> dict[str, Any]:
    if kind == "theory":
        exact = GaussHermite()
        out = {f.name: f.default for f in dataclasses.fields(ModelParams) if f.name in MODEL_FIELDS}
        out.update({k: getattr(exact, k) for k in SOLVER_OPTIONS})
        out["branch"] = "semantic"
        out.update(_VARIANT_OFF, method=GaussHermite.name)
        out.update({name: getattr(QMC(), field) for field, name in QMC_FIELDS.items()})
        out["device"] = QMC().device
        out["precision"] = None
        return out
    from ..sim import SimConfig

    out = {}
    for f in dataclasses.fields(SimConfig):
        if f.name in PARAMETERS["simulation"]:
            factory = f.default_factory
            out[f.name] = factory() if factory is not dataclasses.MISSING else f.default
    model = {f.name: f.default for f in dataclasses.fields(ModelParams) if f.name in MODEL_FIELDS}
    out.update({SIM_MODEL_NAMES.get(k, k): v for k, v in model.items()})
    out["untied"] = ModelParams().untied
    out["clusters"] = 1  # Gaussian tokens (Tied or Untied): no mixture
    out["mask"] = out["target_mask"] = "none"
    out["heads"] = 1
    out["rotary"] = None
    out.update({f.name: f.default for f in dataclasses.fields(Mixture) if f.name != "clusters"})
    out["seed"] = 0
    return {name: out[name] for name in PARAMETERS["simulation"]}


def defaults(kind: str) -> dict[str, Any]:
    """The value each parameter of `kind` takes when a sweep does not give it (theory's alpha
    has none)."""
    _check_kind(kind)
    return dict(_defaults(kind))


# ---- one canonical form per value type ---------------------------------------------------


def _real(name: str, value) -> float:
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    return check_finite(name, value) + 0.0  # + 0.0 turns -0.0 into 0.0


def _integer(name: str, value) -> int:
    if not isinstance(value, bool):
        if isinstance(value, (int, np.integer)):
            return int(value)
        if isinstance(value, str):
            try:
                return int(value)  # "12"; "12.0" and "1e3" below
            except ValueError:
                pass
        try:
            x = float(value)  # 12.0, "1e3"
        except (TypeError, ValueError):
            x = math.nan
        if math.isfinite(x) and x.is_integer():
            return int(x)
    raise ValueError(f"{name} must be an integer, got {value!r}")


def _boolean(name: str, value) -> bool:
    """True/False, also as text (true/false, yes/no, 1/0) or the integers 1/0."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    text = str(value).strip().lower() if isinstance(value, (str, int, np.integer)) else None
    if text in ("true", "yes", "1"):
        return True
    if text in ("false", "no", "0"):
        return False
    raise ValueError(f"{name} must be true or false, got {value!r}")


def _name(name: str, value) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a name (a string), got {value!r}")
    return value


def _optional(convert):
    def coerce(name: str, value):
        if value is None or (isinstance(value, str) and value.lower() == "none"):
            return None
        return convert(name, value)

    return coerce


def _items(value) -> list:
    """A comma-separated text or a sequence as a flat list of items."""
    if isinstance(value, str):
        return value.split(",")
    return list(np.ravel(np.asarray(value, dtype=object)))


def _order(name: str, value) -> list[int]:
    from ..theory.method import MIN_ORDER, check_order

    try:
        parts = [_integer(name, v) for v in _items(value)]
        order = list(check_order(name, parts[0] if len(parts) == 1 else tuple(parts)))
        if min(order) < MIN_ORDER:  # a point's omega may be below 1: both axes, as the CLI's
            raise ValueError(name)
        return order
    except (ValueError, TypeError, IndexError):
        raise ValueError(
            f"{name} must be n or n_xi,n_y with integers >= {MIN_ORDER}, got {value!r}"
        ) from None


def _matrix(name: str, value) -> list[list[float]]:
    """A square matrix, nested or as k*k numbers row by row (4 numbers a11,a12,a21,a22)."""
    try:
        if isinstance(value, str):
            arr = np.array([float(v) for v in value.split(",")])
        else:
            arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        arr = np.empty((0, 0))
    k = math.isqrt(arr.size)
    if (
        arr.size == 0
        or k * k != arr.size
        or arr.ndim not in (1, 2)
        or arr.ndim == 2
        and arr.shape != (k, k)
    ):
        raise ValueError(
            f"{name} must be a square matrix given row by row (a11,a12,a21,a22 for L = 2), "
            f"got {value!r}"
        )
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} must have finite entries, got {value!r}")
    return (arr.reshape(k, k) + 0.0).tolist()


def _numbers(name: str, value) -> list | None:
    """Numbers as a (nested) list, their shape left to the model's validator; None stays."""
    if value is None or (isinstance(value, str) and value.lower() == "none"):
        return None
    try:
        if isinstance(value, str):
            return [_real(name, v) for v in value.split(",")]
        return (np.asarray(value, dtype=float) + 0.0).tolist()
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be numbers (a comma list), got {value!r}") from None


_COERCE = {
    "real": _real,
    "integer": _integer,
    "boolean": _boolean,
    "name": _name,
    "real or none": _optional(_real),
    "integer or none": _optional(_integer),
    "order": _order,
    "matrix": _matrix,
    "numbers or none": _numbers,
}


# ---- the validators of theory and simulate -----------------------------------------------


def _nested_lists(rows) -> list:
    return [list(row) for row in rows]


def point_variant(p: dict) -> Variant:
    """The variant of a theory or simulation point (`variant_of` its flat options)."""
    return variant_of(
        p["untied"],
        p["clusters"],
        p["label_correlation"],
        p["cluster_norm"],
        p["mask"],
        p["target_mask"],
        p["heads"],
        p["rotary"],
    )


def theory_method(p: dict) -> Method:
    """The integration method of a theory point: its `method` by name, with `order` or the
    QMC fields."""
    if p["method"] == GaussHermite.name:
        options = {k: p[k] for k in SOLVER_OPTIONS if k != "order"}
        return GaussHermite(tuple(p["order"]), **options)
    return QMC(**{field: p[name] for field, name in QMC_FIELDS.items()}, device=p["device"])


def theory_model(p: dict) -> ModelParams:
    """The model of a (canonical) theory point."""
    return ModelParams(**{k: p[k] for k in MODEL_FIELDS}, variant=point_variant(p))


def _keep_defaults(p: dict, names, method: str) -> None:
    """ValueError naming the first of `names` set away from its default: it does not apply to
    `method`."""
    defaults, table = _defaults("theory"), PARAMETERS["theory"]
    for name in names:
        if p[name] != _COERCE[table[name]](name, defaults[name]):
            raise ValueError(f"{name}: applies to another method than {method}")


def _validate_theory(p: dict) -> None:
    """Checks, and puts the model's fields in ModelParams' own normal form (default encodings
    filled in). Options of the other method must stay at their defaults; with clusters = 1 the
    mixture's label_correlation and cluster_norm are stored as their defaults."""
    from ..theory.attention import attention_map, valid_branches

    if p["method"] not in THEORY_METHODS:
        raise ValueError(f"method must be one of {THEORY_METHODS}, got {p['method']!r}")
    point_variant(p)  # the mixture's options are checked even where clusters = 1 drops them
    if p["clusters"] == 1:
        p["label_correlation"], p["cluster_norm"] = 0.0, 1.0
    model = theory_model(p)
    if p["method"] == GaussHermite.name:
        _keep_defaults(p, (*QMC_FIELDS.values(), "device"), GaussHermite.name)
        if not model.is_l2:
            raise ValueError(
                "the exact L=2 engine needs L = 2, rank = teacher_rank = 1 and encodings "
                f"(+1, -1); got L={model.L}, rank={model.rank}, teacher_rank={model.teacher_rank}, "
                f"encodings={model.encodings}, variant={model.variant} (use method=qmc)"
            )
    else:
        _keep_defaults(p, SOLVER_OPTIONS, "qmc")
        attention_map(model.variant).check(model)
    method = theory_method(p)  # the method validates its own settings and solver options
    if p["precision"] is not None:
        from ..theory.precision import check_precision

        p["precision"] = check_precision(p["precision"], method.tol)
    p.update({k: getattr(model, k) for k in MODEL_FIELDS})
    p["A"], p["encodings"] = _nested_lists(model.A), _nested_lists(model.encodings)
    check_alpha(p["alpha"])
    valid = valid_branches(model.variant, model.rank)
    if p["method"] == GaussHermite.name:
        valid = GaussHermite.branches
    if p["branch"] not in valid:
        raise ValueError(f"branch must be one of {valid}, got {p['branch']!r}")
    if p["branch"] in ("positional", "mixed") and not model.C_array.any():
        raise ValueError(f"branch: {p['branch']} needs non-zero encodings, got all zero")


def sim_config(p: dict) -> SimConfig:
    """The `SimConfig` of a (canonical) simulation point: its ModelParams (rank = r,
    teacher_rank = t; the variant `Untied()` for untied, a `Mixture` for clusters >= 2, `Tied()`
    otherwise) and the training options (the point's seed is not part of it). ValueError naming
    the parameter (by ModelParams, Mixture or SimConfig) for an invalid point."""
    from ..sim import SimConfig

    variant = point_variant(p)
    names = {SIM_MODEL_NAMES.get(k, k): k for k in MODEL_FIELDS}
    try:
        model = ModelParams(**{k: p[name] for name, k in names.items()}, variant=variant)
    except ValueError as err:  # name the point's parameter: r, t for rank, teacher_rank
        head, sep, rest = str(err).partition(" ")
        name = head.rstrip(":")
        if name in SIM_MODEL_NAMES:
            raise ValueError(SIM_MODEL_NAMES[name] + head[len(name) :] + sep + rest) from None
        raise
    model_names = {*names, *_VARIANT_OFF, "seed"}
    return SimConfig(params=model, **{k: v for k, v in p.items() if k not in model_names})


def _validate_simulation(p: dict) -> None:
    from ..sim.run import mixture_fields

    if p["seed"] < 0:
        raise ValueError(f"seed must be an integer >= 0, got {p['seed']}")
    model = sim_config(p).params
    p["encodings"] = _nested_lists(model.encodings)  # default filled in: one run id per model
    # no effect with clusters = 1: the Mixture's defaults, so such a point is the tied model's
    p.update(mixture_fields(model))


_VALIDATE = {"theory": _validate_theory, "simulation": _validate_simulation}


def canonical_point(kind: str, params: dict) -> dict:
    """`params` completed with the defaults, in canonical form and validated (by ModelParams,
    solve's checks or SimConfig); ValueError (one line naming the parameter) otherwise."""
    table = _check_kind(kind)
    check_names(kind, params)
    merged = {**_defaults(kind), **params}
    missing = [n for n in table if n not in merged]
    if missing:
        raise ValueError(f"{', '.join(missing)} must be given in a {kind} sweep (no default)")
    point = {n: _COERCE[table[n]](n, merged[n]) for n in table}
    _VALIDATE[kind](point)
    return point


def point_hash(kind: str, point: dict) -> str:
    """The run id (`runner.point_id`) of a canonical point, its switched-off extensions and
    default QMC fields left out."""
    from .runner import point_id  # the store and its backends: not needed to read the spec

    off = _HASHED_WHEN_ON[kind]
    return point_id(kind, {k: v for k, v in point.items() if k not in off or v != off[k]})


def run_id(kind: str, params: dict) -> str:
    """sha256 of the canonical JSON of (kind, canonical point): defaults filled in, 1 == 1.0."""
    return point_hash(kind, canonical_point(kind, params))


@dataclass(frozen=True)
class SweepSpec:
    """kind: "theory" (one `solve` per point; `branch` names the start) or "simulation" (one
    `simulate` per point and seed). grid: parameter -> list of values (the Cartesian product is
    swept); base: fixed parameters. Every point is validated and canonicalised here, so a spec
    that constructs is a spec whose points all run; points with one run id are one point."""

    kind: str
    grid: dict[str, list] = field(default_factory=dict)
    base: dict[str, Any] = field(default_factory=dict)
    _runs: tuple = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        _check_kind(self.kind)
        for name, values in self.grid.items():
            if not isinstance(values, (list, tuple)) or not values:
                raise ValueError(f"grid values for {name!r} must be a non-empty list")
        overlap = set(self.grid) & set(self.base)
        if overlap:
            raise ValueError(f"parameters both in grid and base: {sorted(overlap)}")
        check_names(self.kind, [*self.grid, *self.base])
        names = sorted(self.grid)
        runs: dict[str, dict] = {}
        for combo in itertools.product(*(self.grid[n] for n in names)):
            point = canonical_point(
                self.kind, {**self.base, **dict(zip(names, combo, strict=True))}
            )
            runs.setdefault(point_hash(self.kind, point), point)
        object.__setattr__(self, "_runs", tuple(runs.items()))

    def points(self) -> list[dict]:
        """The distinct canonical points, in grid order."""
        return [dict(p) for _, p in self._runs]

    def runs(self) -> list[tuple[str, dict]]:
        """(run id, canonical point) of each distinct point."""
        return [(rid, dict(p)) for rid, p in self._runs]


# ---- text syntax of --grid and --set -------------------------------------------------------


def _split_item(item: str) -> tuple[str, str]:
    name, _, text = item.partition("=")
    name, text = name.strip(), text.strip()
    if not name or not text:
        raise ValueError(f"expected name=value, got {item!r}")
    return name, text


def _linspace(name: str, text: str) -> list[float]:
    start, stop, num = text.split(":")
    try:
        n = int(num)
        a, b = float(start), float(stop)
    except ValueError:
        n = 0
    if n < 1:
        raise ValueError(f"{name}: start:stop:num needs numbers and num >= 1, got {text!r}")
    return [float(f"{v:.12g}") for v in np.linspace(a, b, n)]


def parse_grid(items, kind: str) -> dict[str, list]:
    """["name=v1,v2", "name=start:stop:num", "order=32,12;64,24"] -> {name: [values]}.

    Values stay text (numbers from start:stop:num are floats rounded to 12 digits); the spec
    converts and validates them."""
    table = _check_kind(kind)
    grid: dict[str, list] = {}
    for item in items:
        name, text = _split_item(item)
        check_names(kind, [name])
        if name in grid:
            raise ValueError(f"{name} given twice")
        values: list[str] | list[float]
        if table[name] in MULTI_VALUED:
            values = text.split(";")
        elif table[name] in _NUMERIC and text.count(":") == 2:
            values = _linspace(name, text)
        else:
            values = text.split(",")
        if any(isinstance(v, str) and not v.strip() for v in values):
            raise ValueError(f"{name}: empty value in {text!r}")
        grid[name] = [v.strip() if isinstance(v, str) else v for v in values]
        seen: set[str] = set()
        for value in grid[name]:  # as every list option: a repeat would be the same points
            key = repr(_COERCE[table[name]](name, value))
            if key in seen:
                raise ValueError(f"{name}: {value!r} is given twice; give each value once")
            seen.add(key)
    return grid


def parse_set(items, kind: str) -> dict[str, str]:
    """["name=value", "order=24,8"] -> {name: value}: one value per parameter (for `order` and
    `A` the comma list is that one value)."""
    table = _check_kind(kind)
    fixed: dict[str, str] = {}
    for item in items:
        name, text = _split_item(item)
        check_names(kind, [name])
        if name in fixed:
            raise ValueError(f"{name} given twice")
        if table[name] not in MULTI_VALUED and "," in text:
            raise ValueError(
                f"{name} takes one value here, got {text!r} (several values belong in a grid)"
            )
        fixed[name] = text
    return fixed
