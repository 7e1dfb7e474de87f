"""`attnphase theory`: state-evolution fixed points (docs/theory.md §3-§4, §7)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer

from .._core.interrupt import Interrupted
from ..params import ModelParams, variant_of
from ..theory import (
    CHECK_ORDER,
    DEFAULT_ORDER,
    DEFAULT_POINTS,
    DEFAULT_RANDOMISATIONS,
    QMC,
    GaussHermite,
    Method,
)
from ..theory.attention import valid_branches
from ..theory.branches import MIXTURE_BRANCH
from ..theory.method import METHODS, exact_refusal
from .app import app
from .common import (
    STANDARD_A_TEXT,
    AlphaOpt,
    AOpt,
    ClusterNormOpt,
    ClustersOpt,
    EncodingOpt,
    FormatOpt,
    HeadsOpt,
    LabelCorrelationOpt,
    LamOpt,
    MaskOpt,
    OmegaOpt,
    RankOpt,
    RopeOpt,
    SigmaOpt,
    TargetMaskOpt,
    TeacherRankOpt,
    UsageError,
    build_params,
    check_cluster_options,
    check_outputs,
    fail,
    figure_files,
    given,
    parse_alphas,
    parse_frequencies,
    parse_order,
    plot_failed,
    refuse_ignored,
    show_progress,
    usage,
)
from .help import command_help
from .tables import FORMATS, render, to_frame

THEORY_COLUMNS = [
    "branch",
    "alpha",
    "q",
    "m",
    "V",
    "theta",
    "test_error",
    "test_error_err",
    "train_loss",
    "train_loss_err",
    "linear_test_error",
    "kind",
    "converged",
    "iterations",
]
STABILITY_COLUMNS = ["rs_stability", "jump_mass", "vhat_smooth"]
UNTIED_COLUMNS = ["q_query", "q_key", "m_query", "m_key", "theta_query", "theta_key"]
MIXTURE_COLUMNS = ["m_mean", "mean_multiplier", "mean_multiplier_err"]
MASK_COLUMNS = ["mask", "target_mask"]
HEADS_COLUMNS = ["heads"]
ROTARY_COLUMNS = ["rotary"]


EngineOpt = Annotated[
    str,
    typer.Option(help="auto (gauss-hermite for L=2, r=t=1, else qmc) | gauss-hermite | qmc"),
]
RandomisationsOpt = Annotated[int, typer.Option(help="qmc: independent scramblings (error bars)")]


PointsOpt = Annotated[int, typer.Option(help="qmc: Sobol points per scrambling (+ antithetic)")]
DeviceOpt = Annotated[
    str, typer.Option(help="qmc: where the channel runs, cpu | cuda | cuda:N | auto (float64)")
]


ENGINES = ("auto", *METHODS)
RENAMED = {"l2": GaussHermite.name, "general": QMC.name}  # the engines' names before 0.2
WARN_SECONDS, REFUSE_SECONDS = 120.0, 3 * 3600.0  # one fixed point's estimated duration


def method_for(
    engine: str,
    p: ModelParams,
    order: tuple[int, int],
    points: int,
    randomisations: int,
    check_order: tuple[int, int] = CHECK_ORDER,
    device: str = "cpu",
) -> Method:
    """The integration method the --engine, --order (--check-order), --points,
    --randomisations and --device options ask for: gauss-hermite, qmc, or auto (gauss-hermite
    where it applies); the old names l2 and general are refused with the new ones."""
    if engine in RENAMED:
        raise UsageError(f"--engine: {engine!r} is now called {RENAMED[engine]!r}")
    if engine not in ENGINES:
        raise UsageError(f"--engine: engine must be one of {ENGINES}, got {engine!r}")
    if points < 2 or randomisations < 2:
        raise UsageError(f"--points/--randomisations: must be >= 2, got {points}, {randomisations}")
    if engine != GaussHermite.name and points & (points - 1):
        raise UsageError(f"--points: must be a power of two (e.g. 1024, 8192), got {points}")
    if engine == "auto":
        engine = GaussHermite.name if p.is_l2 else QMC.name
    exact = engine == GaussHermite.name
    if exact and device != "cpu":
        raise UsageError(
            f"--device: engine {engine} runs on the CPU, got {device!r} (use --engine {QMC.name})"
        )
    refusal = exact_refusal(p) if exact else None
    if refusal is not None:
        raise UsageError(f"--engine: engine {engine} {refusal} (use --engine {QMC.name})")
    try:
        method: Method = (
            GaussHermite(order, check_order)
            if exact
            else QMC(points, randomisations, device=device)
        )
    except ValueError as err:
        raise usage(err) from None
    if method.seconds(p) > REFUSE_SECONDS:
        option = _costliest(p, method)
        raise UsageError(f"{option}: {_duration(p, method)}; lower {option}")
    return method


def ignored_by(ctx: typer.Context, method: Method, orders: Sequence[str] = ("order",)) -> None:
    """UsageError for an option of the other engine: --points, --randomisations and --device
    under Gauss-Hermite, the `orders` options under QMC."""
    exact = method.name == GaussHermite.name
    other = QMC.name if exact else GaussHermite.name
    why = f"applies to --engine {other}; this run uses {method.name}"
    if not given(ctx, "engine"):  # --engine auto chose it
        why += " (--engine auto: " + ("the exact L = 2 model)" if exact else "not the L = 2 model)")
    refuse_ignored(ctx, ("points", "randomisations", "device") if exact else orders, why)


def _costliest(p: ModelParams, method: Method) -> str:
    """The option behind a refused estimate: of --points, --randomisations (against their
    defaults) and --rank (its square), the one that multiplies the QMC cost most; --order for
    Gauss-Hermite, whose cost is its order's (2^40 points were refused naming --rank)."""
    settings = method.columns()
    if "points" not in settings:
        return "--order"
    factors = {
        "--points": settings["points"] / QMC.points,
        "--randomisations": settings["randomisations"] / QMC.randomisations,
        "--rank": float(p.rank) ** 2,
    }
    return max(factors, key=factors.__getitem__)


def _duration(p: ModelParams, method: Method) -> str:
    return (
        f"one fixed point at rank {p.rank}, L = {p.L} takes roughly "
        f"{method.seconds(p) / 60:.3g} min (its cost grows like points x randomisations "
        "x (rank L)^2)"
    )


# a point of a warm-started curve against `Method.seconds`' cold fixed point, measured on 2
# cores: Gauss-Hermite 0.64 s against 2.6 s (L = 2, 24 alphas x 2 branches, default order); QMC
# 6.3 s against 131 s (a scan of 24 alphas x 2 branches, L = 2 causal, 4 x 4096 points)
WARM_FRACTION = {GaussHermite.name: 0.25, QMC.name: 0.05}


def request_seconds(p: ModelParams, method: Method, points: int) -> float:
    """The estimated duration of `points` fixed points along curves (the first of each cold)."""
    return method.seconds(p) * (1 + WARM_FRACTION[method.name] * max(points - 1, 0))


def check_request(p: ModelParams, method: Method, points: int, option: str) -> None:
    """UsageError naming `option` when `points` fixed points are estimated to take over
    REFUSE_SECONDS (`request_seconds`)."""
    seconds = request_seconds(p, method, points)
    if seconds > REFUSE_SECONDS:
        raise UsageError(
            f"{option}: {points} fixed points take roughly {seconds / 3600:.3g} h (about "
            f"{method.seconds(p) * WARM_FRACTION[method.name]:.2g} s each); ask for fewer"
        )


def warn_duration(p: ModelParams, method: Method, points: int = 1) -> None:
    """One line on stderr when the request (`points` fixed points) is estimated to take over
    WARN_SECONDS (those over REFUSE_SECONDS are refused by `method_for` and `check_request`);
    call it once the input is checked."""
    seconds = request_seconds(p, method, points)
    if points == 1 and seconds > WARN_SECONDS:
        typer.secho(f"warning: {_duration(p, method)}", err=True, fg="yellow")
    elif seconds > WARN_SECONDS:
        typer.secho(
            f"warning: {points} fixed points take roughly {seconds / 60:.3g} min",
            err=True,
            fg="yellow",
        )


def warn_ladder(p: ModelParams, method: Method, points: int, precision: float) -> None:
    """One line on stderr when a precision never met (the whole ladder of finer integrations,
    `theory.precision.ladder`) would take over WARN_SECONDS: the worst case, said up front."""
    from ..theory.precision import ladder, rung_name

    rungs = ladder(method)
    seconds = sum(request_seconds(p, rung, points) for rung in rungs)
    if len(rungs) > 1 and seconds > WARN_SECONDS:
        typer.secho(
            f"warning: --precision: should the errors stay above {precision:g}, the integration "
            f"is refined up to {rung_name(rungs[-1])}: up to roughly {seconds / 60:.3g} min in all",
            err=True,
            fg="yellow",
        )


@app.command(**command_help("theory"))
def theory(
    ctx: typer.Context,
    alpha: AlphaOpt = "0.1:2:20",
    omega: OmegaOpt = 0.3,
    sigma: SigmaOpt = 0.5,
    lam: LamOpt = 0.01,
    A: AOpt = STANDARD_A_TEXT,
    rank: RankOpt = 1,
    teacher_rank: TeacherRankOpt = 1,
    encoding: EncodingOpt = None,
    engine: EngineOpt = "auto",
    branch: Annotated[
        str,
        typer.Option(
            help="semantic, positional, trivial, mixed (qmc, rank >= 2 or --heads), clustered "
            "(--clusters) or all"
        ),
    ] = "all",
    order: Annotated[
        str, typer.Option(help="gauss-hermite: orders n_xi,n_y, or n for both")
    ] = ",".join(map(str, DEFAULT_ORDER)),
    points: PointsOpt = DEFAULT_POINTS,
    randomisations: RandomisationsOpt = DEFAULT_RANDOMISATIONS,
    device: DeviceOpt = "cpu",
    precision: Annotated[
        float | None,
        typer.Option(
            help="solve again with finer integration (QMC points doubled, Gauss-Hermite order "
            "raised) until every error is at most this fraction of its number"
        ),
    ] = None,
    format: FormatOpt = "table",
    plot: Annotated[Path | None, typer.Option(help="write the Fig. 2 learning curves here")] = None,
    stability: Annotated[
        bool,
        typer.Option(
            help="measure rs_stability and jump_mass at every fixed point (docs/theory.md §9)"
        ),
    ] = False,
    untied: Annotated[
        bool,
        typer.Option(
            "--untied/--tied",
            help="separate query and key (general engine, rank 1; docs/theory-untied.md)",
        ),
    ] = False,
    clusters: ClustersOpt = 1,
    label_correlation: LabelCorrelationOpt = 0.0,
    cluster_norm: ClusterNormOpt = 1.0,
    mask: MaskOpt = "none",
    target_mask: TargetMaskOpt = "none",
    heads: HeadsOpt = 1,
    rope: RopeOpt = None,
) -> None:
    """State-evolution fixed points along alpha (docs/theory.md §3-§4; §7 for any L, r, t).
    --clusters K --label-correlation RHO [--cluster-norm N]: correlated tokens
    (docs/theory-mixtures.md; the mean overlaps m_mean are solved for, not assumed zero)."""
    from ..theory.attention import attention_map

    try:
        alphas = parse_alphas(alpha)
        p = build_params(omega, sigma, lam, A, rank, teacher_rank, encoding)
        orders = parse_order(order)
        check_cluster_options(clusters, label_correlation, cluster_norm)
        if clusters < 1:
            raise UsageError(f"--clusters: must be an integer >= 1, got {clusters}")
        try:
            variant = variant_of(
                untied,
                clusters,
                label_correlation,
                cluster_norm,
                mask,
                target_mask,
                heads,
                parse_frequencies(rope),
            )
            p = dataclasses.replace(p, variant=variant)
            attention_map(p.variant).check(p)  # untied at rank 1, K^L label sequences
        except ValueError as err:
            raise usage(err) from None
        mixture = p.mixture
        method = method_for(engine, p, orders, points, randomisations, device=device)
        ignored_by(ctx, method)
        if stability:
            from ..validity.stability import check_measurable

            try:
                check_measurable(p)
            except ValueError as err:
                raise usage(err) from None
        valid = tuple(b for b in valid_branches(p.variant, p.rank) if b in method.branches)
        if branch != "all" and branch not in valid:
            why = {
                "semantic": "with --heads the semantic branch is the one-head model at "
                "--lam heads x lam",
                "mixed": "mixed needs --rank >= 2, --heads or --rope, and --engine qmc",
                MIXTURE_BRANCH: f"{MIXTURE_BRANCH} needs --clusters >= 2",
            }
            missing = [why[b] for b in why if b not in valid]
            raise UsageError(
                f"--branch: must be one of {valid + ('all',)} here, got {branch!r}"
                + (f" ({'; '.join(missing)})" if missing else "")
            )
        if format not in FORMATS:
            raise UsageError(f"--format: must be one of {FORMATS}, got {format!r}")
        if precision is not None:
            from ..theory.precision import check_precision

            try:
                check_precision(precision, method.tol)
            except ValueError as err:
                raise usage(err) from None
            if stability:
                raise UsageError("--precision: not with --stability (measured once, at the end)")
        if plot is not None:
            check_outputs({"--plot": figure_files(plot)}, {})
        # heads and rotary pairs: the mixed point (one column positional) is the one to compare
        specialised = p.heads > 1 or bool(p.rotary)
        positional = ("positional", "mixed" if specialised else "") if p.C_array.any() else ()
        every = ("semantic", *positional, "trivial")
        branches = [b for b in every if b in valid] if branch == "all" else [branch]
        check_request(p, method, len(alphas) * len(branches), "--alpha")
    except UsageError as err:
        fail(err)
    warn_duration(p, method, len(alphas) * len(branches))
    if precision is not None:
        warn_ladder(p, method, len(alphas) * len(branches), precision)
    from ..theory import learning_curves
    from ..validity.stability import learning_curves_with_stability

    columns = THEORY_COLUMNS + (STABILITY_COLUMNS if stability else [])
    columns += UNTIED_COLUMNS if p.untied else []
    columns += MIXTURE_COLUMNS if mixture is not None else []
    columns += MASK_COLUMNS if p.mask != "none" else []
    columns += HEADS_COLUMNS if p.heads > 1 else []
    columns += ROTARY_COLUMNS if p.rotary else []
    records: list[dict] = []
    try:
        for b in branches:  # branch by branch, so that an interrupt keeps the finished ones
            if stability:
                curves = learning_curves_with_stability(
                    alphas, p, [b], method=method, progress=show_progress()
                )
            else:
                curves = learning_curves(
                    alphas, p, [b], method=method, progress=show_progress(), precision=precision
                )
            records += [r.as_dict() for r in curves]
    except KeyboardInterrupt as err:
        records += [r.as_dict() for r in getattr(err, "finished", [])]
        total = len(alphas) * len(branches)
        if not records:
            raise Interrupted(f"none of the {total} fixed points finished") from None
        typer.echo(render(records, format, columns))
        raise Interrupted(
            f"{len(records)} of {total} fixed points finished (printed above)"
        ) from None
    typer.echo(render(records, format, columns))
    if not any(r["converged"] for r in records):  # a table of non-answers is not a success
        fail(
            f"none of the {len(records)} fixed points converged (kind none above; the warnings "
            "say why)",
            code=1,
        )
    if plot is not None:
        from ..figures.curves import learning_curves as draw_learning_curves

        try:
            draw_learning_curves(to_frame(records), plot)
        except (OSError, ValueError) as err:
            plot_failed(err)
