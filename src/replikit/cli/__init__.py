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
from .._labels import escape_controls
from ..errors import ReplikitError
from ._common import (
    RENAMED_FLAGS,
    OutputFormat,
    command_flags,
    epilog,
    flagify,
    simulate_app,
    state,
)
from ._warnings import warning_policy

__all__ = ["app", "main"]

#: The command list of ``replikit --help``, in plain words (at most 64 characters each, so
#: that click shows them whole at 80 columns); a command that sets its own ``short_help``
#: keeps it.
SUMMARIES = {
    "audit": "A full replicability report on one dataset (HTML and JSON).",
    "compare": "Compare models with tests valid on resampled scores.",
    "estimate": "A model's prediction error, honestly estimated by resampling.",
    "generalize": "How many studies until a ranking of models generalizes?",
    "meta": "Meta-analysis of effects and their standard errors.",
    "multistudy": "Is one prediction rule replicable across studies?",
    "crossstudy": "Train on one study, test on another: cross-study validation.",
    "replicate": "Does a replication confirm or contradict the original?",
    "run": "Fit models on every split of a scheme and save their scores.",
    "simulate": "Simulation studies: how well the tests and estimates work.",
}

app = typer.Typer(
    name="replikit",
    help="Will this result hold up elsewhere? Replicability audits for predictive models.",
    epilog=epilog(examples=["replikit audit --quick --open",
                            "replikit audit --data survey.csv --target score --study year"],
                  note="Each command's --help shows its options, examples and the papers its "
                       "methods come from."),
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode=None,  # click's plain help: at 80 columns it wraps text, never cuts a name
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


def _no_type_label_on_flags() -> None:
    """typer >= 0.2x labels on/off flags ``<bool>`` in the help, as if they took a value; show
    no type for flags (a guarded shim: older and newer typers without the method are left
    alone)."""
    from typer import core

    option = getattr(core, "TyperOption", None)
    original = getattr(option, "display_type_rich", None)
    if original is None or getattr(original, "_replikit", False):
        return

    def display_type_rich(self, ctx):
        if getattr(self, "is_flag", False) and self.metavar is None:
            return None
        return original(self, ctx)

    display_type_rich._replikit = True
    option.display_type_rich = display_type_rich


_no_type_label_on_flags()


def _no_broken_words_in_help() -> None:
    """click wraps help text at hyphens and inside long words ("higher-is-" / "better"); keep
    option names, allowed values and paths whole (a guarded shim, like the one above)."""
    try:
        from typer._click import _textwrap
    except ImportError:  # older typer uses click itself
        from click import _textwrap
    base = _textwrap.TextWrapper
    if getattr(base, "_replikit", False):
        return

    class TextWrapper(base):
        _replikit = True

        def __init__(self, *args, **kwargs):
            kwargs.setdefault("break_on_hyphens", False)
            kwargs.setdefault("break_long_words", False)
            super().__init__(*args, **kwargs)

    _textwrap.TextWrapper = TextWrapper


_no_broken_words_in_help()


def _register_commands() -> None:
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(app)
    app.add_typer(simulate_app, name="simulate", short_help=SUMMARIES["simulate"])
    for command in app.registered_commands:
        name = command.name or getattr(command.callback, "__name__", "")
        if command.short_help is None and name in SUMMARIES:
            command.short_help = SUMMARIES[name]


_register_commands()


def _fail(message: str) -> None:
    # one line; a character that does not print (a NUL or an escape sequence from a label the
    # message quotes as it is) is written as its escape, so it cannot act on the terminal
    message = escape_controls(" ".join(str(message).split()))
    typer.echo(f"replikit: error: {message}", err=True)
    sys.exit(2)


_GLOBAL_FLAGS = ("--debug", "--quiet", "-q")
_GLOBAL_VALUED = ("--format",)


def _hoist_global_options(args: list[str]) -> list[str]:
    """Move the global options ``--format X``, ``--debug`` and ``--quiet`` to the front, so
    ``replikit audit --format json`` works like ``replikit --format json audit``.

    Only tokens after the command name are moved, and nothing after a ``--`` separator; no
    subcommand defines options of these names.
    """
    front: list[str] = []
    rest: list[str] = []
    i = 0
    seen_command = False
    while i < len(args):
        a = args[i]
        if a == "--":
            rest.extend(args[i:])
            break
        if not seen_command and not a.startswith("-"):
            seen_command = True
            rest.append(a)
        elif seen_command and a in _GLOBAL_FLAGS:
            front.append(a)
        elif seen_command and a in _GLOBAL_VALUED and i + 1 < len(args):
            front.extend(args[i:i + 2])
            i += 1
        elif seen_command and any(a.startswith(f + "=") for f in _GLOBAL_VALUED):
            front.append(a)
        else:
            if not seen_command and a in _GLOBAL_VALUED and i + 1 < len(args):
                rest.extend(args[i:i + 2])  # a global option given before the command
                i += 2
                continue
            rest.append(a)
        i += 1
    return front + rest


def _command_path(args: list[str]) -> str:
    """The command of ``args`` as a path (``"compare"``, ``"simulate tests"``), or ``""``."""
    words = []
    skip = False
    for a in args:
        if a == "--":
            break
        if skip:
            skip = False
            continue
        if a in _GLOBAL_VALUED:
            skip = True
            continue
        if a.startswith("-"):
            continue
        words.append(a)
        if a != "simulate" or len(words) == 2:
            break
    return " ".join(words[:2]) if words[:1] == ["simulate"] else " ".join(words[:1])


def _rename_flags(args: list[str]) -> list[str]:
    """Old flag names (``--seed``) to their new names, with one warning line each."""
    command = _command_path(args)
    renames = {**RENAMED_FLAGS.get("", {}), **RENAMED_FLAGS.get(command, {})}
    if not renames:
        return args
    out = []
    for a in args:
        if a == "--":
            out.append(a)
            continue
        name, eq, value = a.partition("=")
        new = renames.get(name)
        if new is not None and not (out and out[-1] == "--"):
            if "--quiet" not in args and "-q" not in args:
                typer.echo(f"replikit: warning: `{name}` is now `{new}`; the old name will stop "
                           "working in replikit 0.3.", err=True)
            a = new + eq + value
        out.append(a)
    return out


def _flagify(message: str, args: list[str]) -> str:
    """The message of a library error with the running command's flags for the parameters it
    names (:func:`_common.flagify`)."""
    if "`" not in message:
        return message
    try:
        import typer.main

        path = _command_path(args)
        node = typer.main.get_command(app)
        for word in path.split():
            node = getattr(node, "commands", {}).get(word)
            if node is None:
                return message
        return flagify(message, command_flags(node, path))
    except Exception:  # the message is still right, only less specific
        return message


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``replikit`` script and ``python -m replikit``."""
    args = _hoist_global_options(sys.argv[1:] if argv is None else list(argv))
    args = _rename_flags(args)
    debug = "--debug" in args
    try:
        # replikit's warnings one line each, a note per model whose fits did not converge,
        # the other libraries' warnings quiet unless --debug (cli/_warnings.py)
        with warning_policy(debug, quiet=lambda: state.quiet, render=flagify):
            code = app(args=args, prog_name="replikit", standalone_mode=False)
    except ReplikitError as exc:
        if debug:
            raise
        _fail(_flagify(str(exc), args))
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
