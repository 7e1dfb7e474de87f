"""Shared pieces of the command line: option types, parsers and the usage-error exit (code 2)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, NoReturn, TypeVar

import numpy as np
import typer

from ..io import check_output_dir, check_output_file
from ..params import ModelParams, as_encodings, as_square_matrix, check_alpha, check_distinct

T = TypeVar("T")

OmegaOpt = Annotated[float, typer.Option(help="mix of positional target, in [0, 1]")]
SigmaOpt = Annotated[float, typer.Option(help="token standard deviation (> 0)")]
LamOpt = Annotated[float, typer.Option(help="l2 regularisation lambda (>= 0)")]
AOpt = Annotated[
    str, typer.Option("--A", help="positional target, L*L numbers row by row (L inferred)")
]
FormatOpt = Annotated[str, typer.Option("--format", help="table|csv|json")]
AlphaOpt = Annotated[str, typer.Option(help="value, list a,b,c or start:stop:num")]
RankOpt = Annotated[int, typer.Option(help="student rank r (>= 1)")]
TeacherRankOpt = Annotated[int, typer.Option(help="teacher rank t (>= 1)")]
EncodingOpt = Annotated[
    str | None, typer.Option(help="encoding coefficients c1,...,cL [+1 ... -1]")
]
HeadsOpt = Annotated[
    int, typer.Option(help="tied attention heads, averaged with equal weights (1: one head)")
]
RopeOpt = Annotated[
    str | None,
    typer.Option(
        "--rope",
        help="rotary positions: one frequency per pair of student columns, phi1,phi2,... "
        "(--rank 2 x their number; --encoding 0,...,0 for rotations alone)",
    ),
]
MaskOpt = Annotated[
    str, typer.Option(help="the student's attention mask: none | causal (token l sees k <= l)")
]
TargetMaskOpt = Annotated[
    str, typer.Option(help="the teacher's mask: none | causal (needs --mask causal, causal --A)")
]
ClustersOpt = Annotated[
    int, typer.Option(help="Gaussian-mixture tokens with K clusters (1: Gaussian tokens)")
]
LabelCorrelationOpt = Annotated[
    float,
    typer.Option(help="correlation of neighbouring cluster labels, in [0, 1] (--clusters >= 2)"),
]
ClusterNormOpt = Annotated[float, typer.Option(help="norm of every cluster mean (--clusters >= 2)")]
STANDARD_A_TEXT = "0.6,0.4,0.4,0.6"


# set by the app's --quiet: progress lines on stderr or none
SETTINGS = {"progress": True}


def show_progress() -> bool:
    """Whether the commands show progress (on a terminal a bar, elsewhere a line per 30 s once a
    run has lasted 5 s: `attnphase._core.progress`); --quiet turns it off."""
    return SETTINGS["progress"]


class UsageError(ValueError):
    """Bad command-line input (exit code 2)."""


def _one_line(err: Exception | str) -> str:
    return " ".join(str(err).split())


# library parameters whose option has another name in every command
OPTION_NAMES = {"rotary": "--rope", "frequencies": "--rope"}


def usage(err: ValueError, options: dict[str, str] | None = None) -> UsageError:
    """A library ValueError ("name must ..." or "name: ...") as a UsageError naming the option
    (--name, `OPTION_NAMES[name]` or `options[name]`). A UsageError, already naming its
    option, passes unchanged."""
    if isinstance(err, UsageError):
        return err
    text = _one_line(err)
    head, _, rest = text.partition(" ")
    name = head.rstrip(":").lstrip("-").partition("=")[0]
    if options and name in options:  # an option of many parameters: the parameter's name stays
        return UsageError(f"{options[name]}: {text}")
    option = OPTION_NAMES.get(name, "--" + name.replace("_", "-"))
    return UsageError(f"{option}: {rest}" if head.endswith(":") else f"{option}: {text}")


def check_workers(option: str, workers: int) -> None:
    """UsageError naming `option` for fewer than 1 local worker process, or more than a few per
    core this process may use (`attnphase._core.threads.check_processes`)."""
    from .._core.threads import check_processes

    try:
        check_processes(option, workers)
    except ValueError as err:
        raise UsageError(str(err)) from None


LONG_SECONDS = 48 * 3600.0  # a finite-d request estimated to take longer is refused


def refuse_long(option: str, seconds: float, what: str) -> None:
    """UsageError naming `option` when `what` (the request, in words, with its unit cost) is
    estimated at over LONG_SECONDS; the estimate is in the message."""
    if seconds > LONG_SECONDS:
        raise UsageError(f"{option}: {what} take roughly {seconds / 3600:.3g} h; ask for fewer")


WARN_LONG_SECONDS = 120.0  # a finite-d request estimated to take longer is announced


def warn_long(seconds: float, what: str) -> None:
    """One line on stderr when `what` (the request, in words) is estimated at over
    WARN_LONG_SECONDS; call it once every input is checked (bad input stays one line)."""
    if seconds > WARN_LONG_SECONDS:
        shown = f"{seconds / 3600:.3g} h" if seconds > 3600 else f"{seconds / 60:.3g} min"
        typer.secho(f"warning: {what} take up to roughly {shown}", err=True, fg="yellow")


def given(ctx: typer.Context, name: str) -> bool:
    """Whether the option of parameter `name` was given (on the command line or through its
    environment variable) rather than left at its default."""
    source = ctx.get_parameter_source(name)  # typer's own copy of click's ParameterSource
    return source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP")


def refuse_ignored(ctx: typer.Context, names: Sequence[str], why: str) -> None:
    """UsageError naming the first option of `names` (parameter names) that was given although
    this run would ignore it (`why`, the reason, ends the line)."""
    for name in names:
        if given(ctx, name):
            raise UsageError(f"--{name.replace('_', '-')}: {why}")


def check_cluster_options(clusters: int, label_correlation: float, cluster_norm: float) -> None:
    """--label-correlation and --cluster-norm act on mixtures only: UsageError unless
    --clusters >= 2 when either differs from its default."""
    for name, value, default in (
        ("--label-correlation", label_correlation, 0.0),
        ("--cluster-norm", cluster_norm, 1.0),
    ):
        if clusters == 1 and value != default:
            raise UsageError(
                f"{name}: acts on Gaussian-mixture tokens only, so it needs "
                f"--clusters >= 2, got --clusters {clusters}"
            )


def distinct(values: list[T], option: str) -> list[T]:
    """`values` unchanged; UsageError naming `option` and the first value given twice
    (`attnphase.params.check_distinct`)."""
    try:
        return check_distinct(option, values)
    except ValueError as err:
        raise UsageError(str(err)) from None


def parse_list(text: str, option: str, convert: Callable[[str], T]) -> list[T]:
    """A comma-separated list, each item through `convert` (ValueError: not a valid item),
    with no empty item and no value twice (`distinct`); UsageError naming `option`."""
    items = [item.strip() for item in text.split(",")]
    try:
        if not all(items):
            raise ValueError
        values = [convert(item) for item in items]
    except ValueError:
        raise UsageError(f"{option}: must be a comma-separated list, got {text!r}") from None
    return distinct(values, option)


MAX_VALUES = 100_000  # values of one option's range (each at least one fixed point or run)


def parse_values(text: str, option: str, check: Callable[[float], object]) -> list[float]:
    """A value, a comma-separated list, or start:stop:num (inclusive, num points; one point
    only where start = stop), each passed through `check` (a params validator raising
    ValueError) and none twice; errors name `option`."""
    form = f"{option}: must be a value, a comma-separated list or start:stop:num, got {text!r}"
    if ":" in text:
        try:
            start, stop, num = (float(v) for v in text.split(":"))
            n = int(num)
            if n != num or n < 1:
                raise ValueError
        except ValueError:
            raise UsageError(form) from None
        if n == 1 and start != stop:
            raise UsageError(f"{option}: {text!r} is one point between two ends; num must be >= 2")
        if n > MAX_VALUES:
            raise UsageError(
                f"{option}: {n} values; at most {MAX_VALUES} (each is a fixed point or a run of "
                "its own: a grid this fine would take days)"
            )
        # 12 significant digits: 0.3, not 0.30000000000000004
        values = [float(f"{v:.12g}") for v in np.linspace(start, stop, n)]
    else:
        try:
            values = [float(v) for v in text.split(",")]
        except ValueError:
            raise UsageError(form) from None
    for v in values:
        try:
            check(v)
        except ValueError as err:
            raise UsageError(f"{option}: {err}") from None
    return distinct(values, option)


def parse_frequencies(text: str | None) -> tuple[float, ...] | None:
    """The rotary frequencies of --rope ('1' or '1,0.5'); None without the option."""
    if text is None:
        return None
    try:
        return tuple(float(item) for item in text.split(","))
    except ValueError:
        raise UsageError(
            f"--rope: must be a comma-separated list of numbers, got {text!r}"
        ) from None


def parse_alphas(text: str) -> list[float]:
    """Sample complexities: `parse_values` with alpha > 0."""
    return parse_values(text, "--alpha", check_alpha)


def parse_order(text: str, option: str = "--order") -> tuple[int, int]:
    """'64,24' -> (64, 24); '32' -> (32, 32)."""
    from ..theory.method import MIN_ORDER

    try:
        parts = [int(v) for v in text.split(",")]
    except ValueError:
        parts = []
    if len(parts) == 1:
        parts *= 2
    if len(parts) != 2 or min(parts) < MIN_ORDER:
        raise UsageError(
            f"{option}: must be n or n_xi,n_y with integers >= {MIN_ORDER}, got {text!r}"
        )
    return parts[0], parts[1]


def parse_numbers(text: str, option: str) -> tuple[float, ...]:
    """'a,b,c' -> (a, b, c); UsageError naming the option otherwise."""
    try:
        return tuple(float(v) for v in text.split(","))
    except ValueError:
        raise UsageError(f"{option}: must be comma-separated numbers, got {text!r}") from None


def parse_matrix(text: str) -> tuple[float, ...]:
    """L*L numbers, row by row (L >= 2; L is inferred)."""
    vals = parse_numbers(text, "--A")
    L = math.isqrt(len(vals))
    if L < 2 or L * L != len(vals):
        raise UsageError(
            f"--A: must be L*L numbers row by row (L >= 2: a11,a12,a21,a22 for L = 2), got {text!r}"
        )
    return vals


def build_params(
    omega: float,
    sigma: float,
    lam: float,
    A: str,
    rank: int = 1,
    teacher_rank: int = 1,
    encoding: str | None = None,
) -> ModelParams:
    """The model of the CLI options, validated by ModelParams (errors name the option); the
    numbers of --A and --encoding are put in its matrix form by its own validators."""
    enc = None if encoding is None else parse_numbers(encoding, "--encoding")
    try:
        matrix = as_square_matrix("A", parse_matrix(A))
        return ModelParams(
            omega=omega,
            sigma=sigma,
            lam=lam,
            A=matrix,
            rank=rank,
            teacher_rank=teacher_rank,
            encodings=None if enc is None else as_encodings(enc, len(matrix)),
        )
    except ValueError as err:
        raise usage(err, {"encodings": "--encoding", "teacher_rank": "--teacher-rank"}) from None


def check_outputs(files: dict[str, list[Path]], dirs: dict[str, list[Path]]) -> None:
    """UsageError naming the option unless every file (option -> paths) and directory can be
    written; nothing is created."""
    try:
        for option, paths in dirs.items():
            for path in paths:
                check_output_dir(path, option)
        for option, paths in files.items():
            for path in paths:
                check_output_file(path, option)
    except ValueError as err:
        raise usage(err) from None


STORE_SUFFIXES = (".sqlite", ".sqlite3", ".db")


def check_scheduler_option(scheduler: str | None, option: str = "--scheduler") -> None:
    """UsageError naming `option` unless `scheduler` (when given) is a reachable Dask scheduler
    (`sweep.backends.check_scheduler`): checked with the other options, before any work."""
    if scheduler is None:
        return
    from ..sweep.backends import check_scheduler
    from ..sweep.store import SweepError

    try:
        check_scheduler(scheduler)
    except SweepError as err:
        raise UsageError(f"{option}: {err}") from None


def check_store_option(store: Path, option: str = "--store") -> None:
    """UsageError naming the option unless `store` names an SQLite file (by its suffix) that
    can be written and is missing, empty or a sound attnphase store; nothing is created."""
    from ..sweep import SweepError, check_store

    if store.exists() and not store.is_file() and not store.is_dir():
        raise UsageError(f"{option}: {store} is not a regular file")
    check_outputs({option: [store]}, {})
    if store.suffix.lower() not in STORE_SUFFIXES:
        raise UsageError(
            f"{option}: a store is an SQLite file ending in {', '.join(STORE_SUFFIXES)}, got "
            f"{store} (tables are written with --export or --format)"
        )
    try:
        check_store(store)
    except SweepError as err:
        raise UsageError(f"{option}: {err}") from None


def figure_files(path: Path, option: str = "--plot") -> list[Path]:
    """The files a figure at `path` is written to (the image and its PDF twin), after checking
    that matplotlib can write the format `path` names."""
    from matplotlib.figure import Figure

    formats = Figure().canvas.get_supported_filetypes()
    suffix = path.suffix.lstrip(".").lower()
    if suffix not in formats:
        raise UsageError(
            f"{option}: cannot tell the image format of {path} (end it in .png, .pdf, .svg, ...)"
        )
    return [path, path.with_suffix(".pdf")]


def fail(err: Exception | str, code: int = 2) -> NoReturn:
    """Print one line `error: ...` on stderr and exit (2: bad input)."""
    typer.secho(f"error: {_one_line(err)}", err=True, fg=typer.colors.RED)
    raise typer.Exit(code=code)


def plot_failed(err: Exception, option: str = "--plot") -> NoReturn:
    """A figure could not be written after the results were printed: say so, exit 1."""
    fail(f"{option}: the results above are complete, but the figure failed: {err}", code=1)
