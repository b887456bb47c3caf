"""The ``replikit`` command line (typer). Thin: parse, call the library, print.

Exit codes: 0 success; 2 usage or data error (one line on stderr, no traceback unless
``--debug``); 1 an unexpected internal error (a bug: one line, the traceback with ``--debug``);
130 interrupted.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from typing import Annotated

import typer

try:  # typer >= 0.2x vendors its own click
    from typer._click import exceptions as _cx
except ImportError:  # older typer uses click itself
    import click.exceptions as _cx

from .. import __version__
from ..errors import ReplikitError
from ._common import OutputFormat, simulate_app, state

__all__ = ["app", "main"]

app = typer.Typer(
    name="replikit",
    help="Will this result hold up elsewhere? Replicability audits for predictive models.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"replikit {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    format: Annotated[OutputFormat, typer.Option("--format", help="Output: human text or JSON.")]
    = OutputFormat.human,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks on errors.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress or diagnostics.")]
    = False,
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
) -> None:
    state.format = format
    state.debug = debug
    state.quiet = quiet


def _register_commands() -> None:
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(app)
    app.add_typer(simulate_app, name="simulate")


_register_commands()


def _fail(message: str) -> None:
    message = " ".join(str(message).split())  # one line
    typer.echo(f"replikit: error: {message}", err=True)
    sys.exit(2)


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``replikit`` script and ``python -m replikit``."""
    args = sys.argv[1:] if argv is None else list(argv)
    debug = "--debug" in args
    try:
        code = app(args=args, prog_name="replikit", standalone_mode=False)
    except ReplikitError as exc:
        if debug:
            raise
        _fail(str(exc))
    except _cx.NoArgsIsHelpError:
        sys.exit(0)  # the help text has been printed
    except _cx.UsageError as exc:
        if debug:
            raise
        hint = f" (see `{exc.ctx.command_path} --help`)" if exc.ctx else ""
        _fail(exc.format_message() + hint)
    except _cx.ClickException as exc:
        if debug:
            raise
        _fail(exc.format_message())
    except typer.Exit as exc:
        sys.exit(getattr(exc, "exit_code", 0))
    except (typer.Abort, KeyboardInterrupt):
        typer.echo("replikit: interrupted", err=True)
        sys.exit(130)
    except Exception as exc:  # a bug: one line for the user, the traceback with --debug
        if debug:
            raise
        message = " ".join(f"{type(exc).__name__}: {exc}".split())[:500]
        typer.echo(f"replikit: internal error: {message} (this is a bug in replikit; rerun with "
                   "--debug for the traceback and report it)", err=True)
        sys.exit(1)
    else:
        sys.exit(code if isinstance(code, int) else 0)
