"""The typer application every subcommand module registers with. Its command group reports every
usage error click finds (a value of the wrong type, a misspelt option or command, a missing
value) as one line `error: --option: ...`, exit code 2, like the commands' own checks."""

from __future__ import annotations

import errno
import os
import shutil
import sys
import warnings
from collections.abc import Sequence
from typing import Annotated, Any, NoReturn

import typer
from typer.core import MarkupMode, TyperCommand, TyperGroup

from .. import __version__
from .._core.interrupt import Interrupted, interrupt_requested, sigterm_as_interrupt
from .._core.orphans import warning_line
from .._core.progress import close_bars
from .common import SETTINGS
from .help import COMMANDS

# the click that typer runs on (its own copy in recent versions): its exceptions' module, found
# through the one exception typer exports
errors = sys.modules[typer.BadParameter.__module__]


GLOBAL_OPTIONS = ("-q", "--quiet", "--progress", "--version")


def _option_name(param: Any) -> str:
    """--name of an option (its longest spelling), NAME of an argument."""
    if param is None:
        return ""
    if param.param_type_name == "option":
        return max(param.opts, key=len)
    return (param.metavar or param.name or "").upper()


def _did_you_mean(possibilities: Sequence[str] | None) -> str:
    return f" (did you mean {' or '.join(possibilities)}?)" if possibilities else ""


def one_line(err: Any) -> str:
    """click's usage error as `--option: what is wrong` on one line."""
    if isinstance(err, errors.NoSuchOption):
        if err.option_name in GLOBAL_OPTIONS:
            return (
                f"{err.option_name}: an option of attnphase itself, given before the command "
                f"(attnphase {err.option_name} COMMAND ...)"
            )
        return f"{err.option_name}: no such option{_did_you_mean(err.possibilities)}"
    if isinstance(err, errors.MissingParameter):
        return f"{_option_name(err.param)}: missing (required)"
    if isinstance(err, errors.BadParameter) and err.param is not None:
        message = err.message.split(", unable to parse")[0]  # typer's number parsing
        return f"{_option_name(err.param)}: {message[:1].lower()}{message[1:]}"
    if isinstance(err, errors.BadOptionUsage):
        message = err.message.replace(f"Option '{err.option_name}' requires an argument", "")
        return f"{err.option_name}: {message.strip('. ') or 'needs a value'}"
    message = err.format_message()
    return message[:1].lower() + message[1:]


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A Python warning as one readable line on stderr: `warning: message`."""
    typer.secho(warning_line(message), err=True, fg="yellow")


# standard output that cannot take the results: a closed pipe, a full disk, a closed descriptor
OUTPUT_ERRORS = (errno.EPIPE, errno.ENOSPC, errno.EBADF)


def _output_failed(err: OSError) -> NoReturn:
    """One line on stderr and exit 1 when the results could not be written to standard output
    (standard output is then replaced by /dev/null, so that Python's exit flush stays quiet)."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    typer.secho(
        f"error: the results could not be written to standard output ({err.strerror}); "
        "write them where there is room (--format csv > FILE)",
        err=True,
        fg="red",
    )
    sys.exit(1)


def _interrupt_line(what: str = "") -> None:
    """The interrupt's one line, after the last line of any bar it left open."""
    close_bars()
    typer.secho(f"interrupted: {what}" if what else "interrupted", err=True, fg="red")


def _interrupted(what: str = "") -> NoReturn:
    _interrupt_line(what)
    jit = sys.modules.get("attnphase._core.jit")  # loaded with numba: not imported for this
    if jit is not None and jit.compiling():  # LLVM still busy in a worker thread: no finalising
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)
    sys.exit(130)


# below this many columns rich's option table cuts long option names, defaults and paths with
# an ellipsis; click's plain help wraps them instead
RICH_HELP_COLUMNS = 80


def _help_markup() -> MarkupMode:
    """rich's help on a terminal at least RICH_HELP_COLUMNS wide, click's plain help otherwise."""
    return "rich" if shutil.get_terminal_size().columns >= RICH_HELP_COLUMNS else None


class OneLineErrors(TyperGroup):
    """A typer group whose usage errors are one line (`one_line`) and whose interrupt (Ctrl-C
    outside a command's own handling) is one line too; `--help` lists the commands in the order
    of `help.COMMANDS`, and is plain text on a narrow terminal (`_help_markup`)."""

    def list_commands(self, ctx: Any) -> list[str]:
        names = super().list_commands(ctx)
        order = list(COMMANDS)
        return sorted(names, key=lambda n: order.index(n) if n in order else len(order))

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        if isinstance(command, TyperCommand):
            command.rich_markup_mode = _help_markup()
        return command

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self.rich_markup_mode = _help_markup()
        super().format_help(ctx, formatter)

    def main(  # type: ignore[override]
        self, args: Sequence[str] | None = None, prog_name: str | None = None, **extra: Any
    ) -> Any:
        standalone = extra.pop("standalone_mode", True)
        run = {"args": args, "prog_name": prog_name, "standalone_mode": False, **extra}
        if not standalone:
            return super().main(**run)
        try:
            with warnings.catch_warnings(), sigterm_as_interrupt():
                warnings.showwarning = _show_warning
                code = super().main(**run)
        except Interrupted as err:
            _interrupted(str(err))
        except errors.NoArgsIsHelpError as err:
            err.show()
            sys.exit(err.exit_code)
        except errors.ClickException as err:
            typer.secho(f"error: {' '.join(one_line(err).split())}", err=True, fg="red")
            sys.exit(2 if isinstance(err, errors.UsageError) else err.exit_code)
        except typer.Abort:
            _interrupted()
        except OSError as err:
            if err.errno in OUTPUT_ERRORS:
                _output_failed(err)
            if not interrupt_requested():
                raise
            _interrupted()
        except Exception:
            if not interrupt_requested():  # a library that lost the interrupt fails another way
                raise
            _interrupted()
        if code == 130:
            _interrupt_line()
        try:
            sys.stdout.flush()  # a full disk or a closed pipe shows here, not at exit
        except OSError as err:
            _output_failed(err)
        sys.exit(code if isinstance(code, int) else 0)


app = typer.Typer(
    cls=OneLineErrors,
    help="Positional vs semantic learning in a solvable model of dot-product attention.",
    no_args_is_help=True,
    add_completion=False,
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"attnphase {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="print the version and exit"
        ),
    ] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet/--progress", "-q", help="no progress lines on stderr")
    ] = False,
) -> None:
    """Positional vs semantic learning in a solvable model of dot-product attention."""
    SETTINGS["progress"] = not quiet
