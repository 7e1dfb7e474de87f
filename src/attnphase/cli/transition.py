"""`attnphase transition`: the transition lines alpha_c, alpha_l and the spinodals (docs/theory.md
§5) at one or many values of omega, sigma or lambda."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from .._core.interrupt import Interrupted
from ..params import (
    Tied,
    check_nonnegative,
    check_sigma,
    check_unit_interval,
    variant_of,
)
from ..theory import CHECK_ORDER, DEFAULT_ORDER, DEFAULT_RANDOMISATIONS
from ..theory.attention import attention_map
from ..transitions import TRANSITION_POINTS
from ..transitions.paths import LINES, VALUE_COLUMNS
from .app import app
from .common import (
    STANDARD_A_TEXT,
    AOpt,
    EncodingOpt,
    FormatOpt,
    HeadsOpt,
    MaskOpt,
    RankOpt,
    RopeOpt,
    TargetMaskOpt,
    TeacherRankOpt,
    UsageError,
    build_params,
    check_outputs,
    check_scheduler_option,
    check_store_option,
    check_workers,
    fail,
    figure_files,
    given,
    parse_frequencies,
    parse_list,
    parse_order,
    parse_values,
    plot_failed,
    refuse_ignored,
    show_progress,
    usage,
)
from .help import command_help
from .tables import FORMATS, render
from .theory import (
    EngineOpt,
    PointsOpt,
    RandomisationsOpt,
    check_request,
    ignored_by,
    method_for,
    warn_duration,
)

ValuesOpt = Annotated[str, typer.Option(help="value, list a,b,c or start:stop:num")]
TABLE_COLUMNS = [*VALUE_COLUMNS, "status"]
# a line's point in warm fixed points: 5.3 s a point (one omega, two lines, 10.6 s) against
# 0.65 s a warm Gauss-Hermite fixed point, on 2 cores
LINE_POINT_COST = 8


def _varied(omega: str, sigma: str, lam: str) -> tuple[str, list[float], dict[str, float]]:
    """(the parameter with several values, its values, the fixed ones): at most one of
    --omega, --sigma, --lam may be a list or range."""
    checks = {  # ModelParams' own checks of each, one value at a time
        "omega": lambda v: check_unit_interval("omega", v),
        "sigma": check_sigma,
        "lam": lambda v: check_nonnegative("lam", v),
    }
    parsed = {
        name: parse_values(text, f"--{name}", checks[name])
        for name, text in (("omega", omega), ("sigma", sigma), ("lam", lam))
    }
    many = [name for name, vals in parsed.items() if len(vals) > 1]
    if len(many) > 1:
        raise UsageError(
            f"--{many[0]}/--{many[1]}: only one of --omega, --sigma, --lam may take several values"
        )
    varied = many[0] if many else "omega"
    return varied, parsed[varied], {k: v[0] for k, v in parsed.items() if k != varied}


@app.command(**command_help("transition"))
def transition(
    ctx: typer.Context,
    omega: ValuesOpt = "0.3",
    sigma: ValuesOpt = "0.5",
    lam: ValuesOpt = "0.01",
    A: AOpt = STANDARD_A_TEXT,
    rank: RankOpt = 1,
    teacher_rank: TeacherRankOpt = 1,
    encoding: EncodingOpt = None,
    engine: EngineOpt = "auto",
    method: Annotated[
        str,
        typer.Option(
            help="auto (continuation with the exact L=2 engine, scan with the general one) "
            "| continuation | scan"
        ),
    ] = "auto",
    alpha_min: Annotated[float, typer.Option(help="lower end of the alpha range")] = 0.2,
    alpha_max: Annotated[float, typer.Option(help="upper end of the alpha range")] = 2.5,
    num: Annotated[int, typer.Option(help="scan: alpha grid points per value")] = 24,
    order: Annotated[
        str, typer.Option(help="gauss-hermite: orders n_xi,n_y, or n for both")
    ] = ",".join(map(str, DEFAULT_ORDER)),
    check_order: Annotated[
        str, typer.Option(help="gauss-hermite: the error estimate's orders (n_xi,n_y or n)")
    ] = ",".join(map(str, CHECK_ORDER)),
    points: PointsOpt = TRANSITION_POINTS,
    randomisations: RandomisationsOpt = DEFAULT_RANDOMISATIONS,
    precision: Annotated[
        float | None,
        typer.Option(
            help="solve again with finer integration until the errors of alpha_c and alpha_l "
            "are at most this fraction of their value (each value scanned again, or every "
            "line followed again)"
        ),
    ] = None,
    store: Annotated[
        Path | None,
        typer.Option(help="continuation: SQLite store to resume from and add to"),
    ] = None,
    lines: Annotated[
        str,
        typer.Option(
            help="continuation: some of " + ", ".join(LINES) + " (comma-separated), or all "
            "(the spinodals cost "
            "2-3 times the two transitions)"
        ),
    ] = "alpha_c,alpha_l",
    workers: Annotated[int, typer.Option(help="continuation: local processes")] = 2,
    scheduler: Annotated[
        str | None, typer.Option(help="continuation: Dask scheduler tcp://host:port")
    ] = None,
    plot: Annotated[Path | None, typer.Option(help="draw the lines here (PNG + PDF)")] = None,
    format: FormatOpt = "table",
    mask: MaskOpt = "none",
    target_mask: TargetMaskOpt = "none",
    heads: HeadsOpt = 1,
    rope: RopeOpt = None,
) -> None:
    """alpha_c (positional -> semantic global minimum), alpha_l (attention beats the linear
    baseline) and the spinodals with error estimates, one row per value of the one parameter
    given as a list or range (docs/theory.md §5): followed by continuation (resumable through
    --store, on every QMC scrambling), or scanned at every value."""
    try:
        parameter, values, fixed = _varied(omega, sigma, lam)
        model = {**fixed, parameter: values[len(values) // 2]}  # the lines start mid-range
        p = build_params(
            model["omega"], model["sigma"], model["lam"], A, rank, teacher_rank, encoding
        )
        try:
            variant = variant_of(
                False,
                mask=mask,
                target_mask=target_mask,
                heads=heads,
                rotary=parse_frequencies(rope),
            )
            p = replace(p, variant=variant)
            amap = attention_map(p.variant)
            amap.check(p)
        except ValueError as err:
            raise usage(err) from None
        if p.variant != Tied() and method == "continuation":
            raise UsageError(
                "--method: continuation follows the tied model with one unmasked head; a "
                "variant (--mask, --heads) is scanned (--method scan)"
            )
        if format not in FORMATS:
            raise UsageError(f"--format: must be one of {FORMATS}, got {format!r}")
        if not 0 < alpha_min < alpha_max < float("inf"):
            raise UsageError(
                f"--alpha-min/--alpha-max: need 0 < min < max, got {alpha_min}, {alpha_max}"
            )
        if num < 3:
            raise UsageError(f"--num: must be >= 3, got {num}")
        orders = parse_order(order), parse_order(check_order, "--check-order")
        integration = method_for(engine, p, orders[0], points, randomisations, orders[1])
        from ..transitions.table import APPROACHES, transition_table  # pandas: from here

        if method not in APPROACHES:
            raise UsageError(f"--method: must be one of {APPROACHES}, got {method!r}")
        ignored_by(ctx, integration, ("order", "check_order"))
        if orders[0] == orders[1] and not integration.averages_replicas:
            same = ",".join(map(str, orders[0]))
            raise UsageError(
                (
                    f"--check-order: equal to --order ({same})"
                    if given(ctx, "check_order")
                    else f"--order: equal to --check-order's default ({same}); give another"
                )
                + "; the error bars are the change between the two orders, which would be 0 "
                "whatever the quadrature's error"
            )
        if precision is not None:
            from ..theory.precision import check_precision

            try:
                check_precision(precision, integration.tol)
            except ValueError as err:
                raise usage(err) from None
        scanned = method == "scan" or (method == "auto" and integration.averages_replicas)
        if scanned:  # two branches at num alphas for every value
            check_request(p, integration, 2 * num * len(values), "--num")
            refuse_ignored(
                ctx,
                ("store", "lines", "workers", "scheduler"),
                "applies to the continuation of the lines; this run scans (--method scan, or "
                "auto with --engine qmc), which follows no line and stores nothing",
            )
        else:
            refuse_ignored(ctx, ("num",), "applies to a scan; this run follows the lines")
        names = list(LINES) if lines == "all" else parse_list(lines, "--lines", str)
        if not set(names) <= set(LINES):
            raise UsageError(f"--lines: must be all or a list of {','.join(LINES)}, got {lines!r}")
        if not scanned:
            cost = LINE_POINT_COST * len(names) * len(values)
            check_request(p, integration, cost, f"--{parameter}")
        check_workers("--workers", workers)
        check_outputs({"--plot": figure_files(plot) if plot else []}, {})
        if store is not None:
            check_store_option(store)
        check_scheduler_option(scheduler)
    except UsageError as err:
        fail(err)
    warn_duration(p, integration)
    try:
        table = transition_table(
            p,
            values,
            parameter=parameter,
            approach=method,
            method=integration,
            alpha_min=alpha_min,
            alpha_max=alpha_max,
            num=num,
            store=store,
            lines=names,
            workers=workers,
            scheduler=scheduler,
            progress=show_progress(),
            precision=precision,
        )
    except KeyboardInterrupt:  # a stored run says what it kept itself (`Interrupted`)
        kept = (
            f"lines finished before are kept in {store}; rerun the same command to resume"
            if store is not None
            else "nothing was stored (--store keeps a continuation's finished lines)"
        )
        raise Interrupted(
            f"no row printed (the table of {len(values)} {parameter} values prints once all are "
            f"done); {kept}"
        ) from None
    typer.echo(render(table.to_dict("records"), format, [parameter] + TABLE_COLUMNS))
    if plot is not None:
        from ..figures.transitions import transition_lines_figure

        try:
            transition_lines_figure(table, parameter, plot)
        except (OSError, ValueError) as err:
            plot_failed(err)
