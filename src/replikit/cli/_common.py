"""Shared command-line pieces: global state, option aliases, output helpers.

Each command module in :mod:`replikit.cli` defines ``register(app)``; the package discovers the
modules, so a capability adds its commands without touching a shared file. Commands under
``replikit simulate <study>`` are added to :data:`simulate_app`.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import numbers
import os
import re
import shutil
import sys
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from .._labels import escape_controls
from ..errors import ParameterError, ReplikitError, ReplikitWarning

__all__ = [
    "OutputFormat", "State", "state", "simulate_app", "emit", "info", "DataOpt", "TargetOpt",
    "StudyOpt", "TimeOpt", "EventOpt", "check_outcome_flags", "OutDirOpt", "RandomStateOpt", "NJobsOpt", "TableOpt", "ModelsOpt",
    "output_width", "fmt_number", "fmt_pvalue", "fmt_interval", "frame_table", "render", "progress",
    "epilog", "flagify", "command_flags", "InputArg", "OutOpt", "OverwriteOpt", "flags", "warning_lines", "choice",
    "check_out", "RENAMED_FLAGS", "PARAMETER_FLAGS", "renamed_flags", "parameter_flags",
]


class OutputFormat(StrEnum):
    human = "human"
    json = "json"


@dataclass
class State:
    format: OutputFormat = OutputFormat.human
    debug: bool = False
    quiet: bool = False

    @property
    def progress(self) -> bool:
        """Show progress bars: human output, not quiet, stderr is a terminal."""
        return self.format is OutputFormat.human and not self.quiet and sys.stderr.isatty()


state = State()

simulate_app = typer.Typer(help="Simulation studies: calibration of tests and estimators.",
                           no_args_is_help=True, rich_markup_mode=None)

# ---------------------------------------------------------------------------------------------
# one vocabulary on the command line: flags are the library's parameter names with dashes

#: Old flag -> new flag, per command path (``"compare"``, ``"simulate tests"``; ``""`` for
#: every command). The old flag keeps working for one release and prints a warning line.
RENAMED_FLAGS: dict[str, dict[str, str]] = {"": {"--seed": "--random-state"}}

#: Library parameter -> flag, per command path, where a command's flag is not the parameter's
#: name with dashes (``{"X": "--data", "dataset": "--data"}``). Library errors name
#: parameters in backticks; the command line shows the flag instead.
PARAMETER_FLAGS: dict[str, dict[str, str]] = {}


def renamed_flags(command: str, mapping: dict[str, str]) -> None:
    """Declare old flags of ``command`` (its path, e.g. ``"simulate tests"``) and their new
    names; ``replikit.cli.main`` rewrites them and prints one warning line each."""
    RENAMED_FLAGS.setdefault(command, {}).update(mapping)


def parameter_flags(command: str, mapping: dict[str, str]) -> None:
    """Declare which flag of ``command`` stands for a library parameter named otherwise, so
    an error naming the parameter names the flag on the command line."""
    PARAMETER_FLAGS.setdefault(command, {}).update(mapping)


def command_flags(command, path: str) -> dict[str, str]:
    """Parameter name -> flag of a click ``command``'s options (``n_resamples`` ->
    ``--n-resamples``), with the command's declared exceptions (:data:`PARAMETER_FLAGS`)."""
    flags = {}
    for param in getattr(command, "params", []):
        opts = [o for o in getattr(param, "opts", []) if o.startswith("--")]
        if param.name and opts:
            flags[param.name] = opts[0]
    flags.update(PARAMETER_FLAGS.get(path, {}))
    return flags


def flagify(message: str, flags: dict[str, str] | None = None) -> str:
    """A library message names parameters in backticks (`` `n_resamples` ``); on the command
    line it names the flags (`` `--n-resamples` ``). ``flags`` defaults to those of the
    command running now."""
    if "`" not in message:
        return message
    if flags is None:
        flags = _running_flags()
    if not flags:
        return message
    return re.sub(r"`([A-Za-z_][A-Za-z0-9_]*)`",
                  lambda m: f"`{flags[m.group(1)]}`" if m.group(1) in flags else m.group(0),
                  message)


def _running_flags() -> dict[str, str]:
    try:
        from typer._click.globals import get_current_context
    except ImportError:  # older typer uses click itself
        from click import get_current_context
    ctx = get_current_context(silent=True)
    if ctx is None:
        return {}
    path = " ".join(ctx.command_path.split()[1:])  # without the program name
    return command_flags(ctx.command, path)


def epilog(examples: Iterable[str] = (), references: Iterable[str] = (), note: str = "") -> str:
    """The end of a command's ``--help``: example command lines (kept as written), a note,
    and the papers the command's methods rest on, in full.

    Parameters
    ----------
    examples : iterable of str
        Command lines, each at most 76 characters so that the help fits 80 columns.
    references : iterable of str
        Keys of :data:`replikit._references.BIBTEX`.
    note : str
        A paragraph between the two.

    Returns
    -------
    str
        Text for ``typer``'s ``epilog=`` (click keeps a paragraph after a ``\\b`` line
        unwrapped).
    """
    from .._references import reference_list

    parts = []
    lines = list(examples)
    if lines:
        parts.append("\b\nExamples:\n" + "\n".join(f"  {line}" for line in lines))
    if note:
        parts.append(note)
    refs = reference_list(references)
    if refs:
        parts.append("References:")
        parts.extend(refs)
    return "\n\n".join(parts)

DataOpt = Annotated[Path, typer.Option("--data", help="Input table (CSV, Parquet or DuckDB).")]
TargetOpt = Annotated[str, typer.Option("--target", help="Column holding the outcome.")]
StudyOpt = Annotated[str | None, typer.Option("--study", help="Column holding study labels.")]
TimeOpt = Annotated[str | None, typer.Option(
    "--time", help="A survival outcome: the follow-up time column (with --event, in place of "
    "--target).")]
EventOpt = Annotated[str | None, typer.Option(
    "--event", help="A survival outcome: the event column (1/0, true/false or yes/no: 1 when "
    "the event was seen at that time, 0 when censored), or COLUMN=VALUE for a column of labels "
    "(status=dead).")]


def check_outcome_flags(target, time, event) -> None:
    """The outcome flags of a data table: ``--target``, or ``--time`` and ``--event`` (a
    survival outcome), never both; a one-line error naming the flag otherwise."""
    from ..errors import ParameterError

    if target is None and time is None and event is None:
        raise ParameterError("`--target`: required with `--data` (the outcome column), or "
                             "`--time` and `--event` for a survival outcome.")
    if (time is None) != (event is None):
        missing = "--event" if event is None else "--time"
        raise ParameterError(f"`{missing}`: a survival outcome needs both --time (the "
                             "follow-up time column) and --event (the event column).")
    if target is not None and time is not None:
        raise ParameterError("`--target` and `--time`/`--event` both name the outcome; give "
                             "--target, or --time and --event for a survival outcome.")
TableOpt = Annotated[str | None, typer.Option("--table", help="Table name inside a DuckDB file.")]
TaskOpt = Annotated[str | None, typer.Option(
    "--task", help="regression or classification (default: inferred from the target).")]
OutDirOpt = Annotated[Path, typer.Option("--out", help="Output directory.")]
RandomStateOpt = Annotated[int, typer.Option(
    "--random-state", min=0, help="Makes the run reproducible: the same number gives the same "
    "results (on any number of workers).")]
NJobsOpt = Annotated[int, typer.Option("--n-jobs", "-j", min=1, help="Worker processes.")]
ModelsOpt = Annotated[str | None, typer.Option(
    "--models", help="Comma-separated model aliases: lr, ridge, lasso, enet, lda, rf, gb, svm, "
                     "mlp, knn, tree, dummy.")]


def info(message: str) -> None:
    """A diagnostic line on stderr (never mixed into data on stdout); characters that do not
    print (a NUL, an escape sequence from a label) are written as escapes, line breaks kept."""
    if not state.quiet:
        typer.echo("\n".join(escape_controls(line) for line in str(message).split("\n")),
                   err=True)


def emit(human: Any, data: Any) -> None:
    """Write the command's result to stdout: ``human`` output, or ``data`` as JSON.

    ``human`` is a string (prose, wrapped at word boundaries to the output width), a
    DataFrame or a rich renderable (e.g. from :func:`frame_table`), or a list of those printed one
    after another (see :func:`render`). ``data`` is what ``--format json`` prints; the human
    form never changes it.
    """
    if state.format is OutputFormat.json:
        from ..results import to_jsonable

        typer.echo(json.dumps(to_jsonable(data), indent=2, allow_nan=False))
    else:
        typer.echo(render(human))


# ---------------------------------------------------------------------------------------------
# human output: tables through rich, numbers to significant digits, a width that fits

#: Output width when stdout is not a terminal (pipes, files, tests) and COLUMNS is not set.
DEFAULT_WIDTH = 120
_MIN_WIDTH = 40
MISSING = "–"


def output_width() -> int:
    """Columns available to human output.

    ``COLUMNS`` when it is set to a positive number; otherwise the terminal's width when
    stdout is a terminal, else :data:`DEFAULT_WIDTH` (120), so that a pipe or a file gets the
    same layout on every machine. Never below 40.
    """
    env = os.environ.get("COLUMNS", "").strip()
    if env.isdigit() and int(env) > 0:
        width = int(env)
    elif _isatty(sys.stdout):
        width = shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns
    else:
        width = DEFAULT_WIDTH
    return max(width, _MIN_WIDTH)


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def fmt_number(value: Any, digits: int = 4) -> str:
    """A number to at most ``digits`` significant digits (trailing zeros dropped), without an
    exponent between 1e-4 and 1e6.

    Integers are printed whole; NaN and None as ``–``; anything else as ``str(value)``.

    Examples
    --------
    >>> [fmt_number(v) for v in (0.87594, -0.00097271, 5795.3, 0.1, 12, 7.2e-9, float("nan"))]
    ['0.8759', '-0.0009727', '5795', '0.1', '12', '7.2e-09', '–']
    """
    if value is None:
        return MISSING
    if isinstance(value, bool) or not _is_number(value):
        try:
            import numpy as np

            if isinstance(value, np.bool_):
                return str(bool(value))
        except ImportError:  # pragma: no cover
            pass
        return str(value)
    if isinstance(value, numbers.Integral):
        return str(int(value))
    v = float(value)
    if not math.isfinite(v):
        return MISSING if math.isnan(v) else ("inf" if v > 0 else "-inf")
    if v == 0:
        return "0"
    a = abs(v)
    if 1e-4 <= a < 1e6:
        decimals = max(0, digits - 1 - math.floor(math.log10(a)))
        text = f"{v:.{decimals}f}"
        if "." in text:  # significant digits only: 0.28, not 0.2800
            text = text.rstrip("0").rstrip(".")
        return "0" if float(text) == 0 else text
    return f"{v:.{digits}g}"


def fmt_pvalue(value: Any) -> str:
    """A p-value: four decimals, or three significant digits in scientific form under 1e-4.

    Examples
    --------
    >>> fmt_pvalue(0.31024), fmt_pvalue(7.2e-9), fmt_pvalue(float("nan"))
    ('0.3102', '7.20e-09', '–')
    """
    if not _is_number(value) or not math.isfinite(float(value)):
        return MISSING
    v = float(value)
    return f"{v:.2e}" if 0 < v < 1e-4 else f"{v:.4f}"


def fmt_interval(low: Any, high: Any, digits: int = 4) -> str:
    """``[low, high]`` with :func:`fmt_number`; ``–`` when either end is missing."""
    if not (_is_number(low) and _is_number(high)) or not (
            math.isfinite(float(low)) and math.isfinite(float(high))):
        return MISSING
    return f"[{fmt_number(low, digits)}, {fmt_number(high, digits)}]"


def frame_table(frame, *, title: str | None = None, formats: dict[str, Any] | None = None,
          index: bool = False, digits: int = 4, no_wrap: Iterable[str] = (),
          keep: Iterable[str] = (), max_rows: int | None = None, width: int | None = None):
    """A DataFrame as a rich table for the terminal.

    Numeric cells are formatted to ``digits`` significant digits (:func:`fmt_number`),
    right-aligned and never wrapped; text cells wrap (at spaces, or inside a word longer than
    the column) when the table is wider than the output, so a table fits without splitting a
    number across lines.

    Parameters
    ----------
    frame : pandas.DataFrame
    title : str, optional
        A line above the table.
    formats : dict, optional
        Column name -> ``"p"`` (a p-value, :func:`fmt_pvalue`), an int (significant digits), a
        format string such as ``"{:.2f}"`` or a callable ``value -> str``. A formatted column
        is right-aligned and kept on one line.
    index : bool
        Show the index as the first column (its name as the header).
    digits : int
        Significant digits of the numbers in columns without a format.
    no_wrap : iterable of str
        Text columns kept on one line (e.g. intervals).
    keep : iterable of str
        Text columns narrowed only when the others cannot give more (e.g. names a reader
        scans for).
    max_rows : int, optional
        Show the first rows only, with a last line saying how many more there are.
    width : int, optional
        Columns available (default :func:`output_width`).

    Returns
    -------
    rich.table.Table or rich.console.Group
        The table, in a group with the title line and the "... more rows" line when given;
        print it with :func:`emit` or :func:`render`.

    Examples
    --------
    >>> import pandas as pd
    >>> print(render(frame_table(pd.DataFrame({"model": ["lr", "rf"], "r2": [0.51234, 0.6]}))))
    model      r2
    ─────────────
    lr     0.5123
    rf        0.6
    """
    import pandas as pd
    from rich import box
    from rich.table import Table
    from rich.text import Text

    formats = dict(formats or {})
    no_wrap = set(no_wrap)
    shown = frame
    if index:
        names = [n for n in (frame.index.names or []) if n is not None]
        shown = frame.reset_index()
        if not names:
            shown = shown.rename(columns={shown.columns[0]: ""})
    more = 0
    if max_rows is not None and len(shown) > max_rows:
        more = len(shown) - max_rows
        shown = shown.head(max_rows)
    t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 1),
              collapse_padding=True, header_style="bold")
    cells: list[list[str]] = []
    right: list[bool] = []
    wrap: list[bool] = []
    for col in shown.columns:
        values = shown[col].tolist()
        fmt = formats.get(col, formats.get(str(col)))
        numeric = (pd.api.types.is_numeric_dtype(shown[col])
                   and not pd.api.types.is_bool_dtype(shown[col]))
        if fmt is not None:
            cells.append([_apply(fmt, v) for v in values])
            right.append(True)
            wrap.append(False)
        elif numeric:
            cells.append([fmt_number(v, digits) for v in values])
            right.append(True)
            wrap.append(False)
        else:
            cells.append([fmt_number(v, digits) if _is_number(v) else
                          (MISSING if v is None or (isinstance(v, float) and math.isnan(v))
                           else str(v)) for v in values])
            right.append(bool(values) and all(_is_number(v) for v in values))
            wrap.append(not right[-1] and str(col) not in no_wrap)
    headers = [str(c) for c in shown.columns]
    keep = {str(c) for c in keep}
    widths = _fit_widths(headers, cells, wrap, output_width() if width is None else width,
                         keep=[h in keep for h in headers])
    t.min_width = sum(widths) + _GAP * (len(widths) - 1)  # never squeezed below: see render
    for header, w, r, wr in zip(headers, widths, right, wrap, strict=True):
        t.add_column(Text(_wrap_cell(header, w) if wr else header),
                     justify="right" if r else "left", no_wrap=not wr, overflow="fold",
                     width=w if wr else None, min_width=None if wr else w)
    cells = [[_wrap_cell(c, w) for c in column] if wr else column
             for column, w, wr in zip(cells, widths, wrap, strict=True)]
    for row in zip(*cells, strict=True) if cells else ():
        t.add_row(*(Text(c) for c in row))
    if title is None and not more:
        return t
    from rich.console import Group

    parts: list[Any] = []
    if title is not None:
        parts.append(Text(title))
    parts.append(t)
    if more:
        parts.append(Text(f"... and {more} more row{'s' if more != 1 else ''}"))
    return Group(*parts)


_GAP = 2  # characters between two columns (padding 1 + collapsed padding 1)
# a token that reads as numbers: 0.8759, [-0.0098,, 0.01/0.99/0.00, 64.2%, <1e-04, n=300
_NUMBER = re.compile(r"^[\[(]?(?:[A-Za-z_]\w*=)?[-+<>≤≥~]?\.?\d[\d.,eE+\-/%:x]*[\])%,;:]*$")
_MIN_WORD = 8  # a word without digits may be broken into pieces this long


def _pieces(token: str) -> list[str]:
    """A word's break points: after each underscore or slash (``paired_t_5x2cv`` ->
    ``paired_``, ``t_``, ``5x2cv``); a number is one piece."""
    if _NUMBER.match(token):
        return [token]
    return [p for p in re.split(r"(?<=[_/])", token) if p]


def _floors(texts: list[str]) -> list[int]:
    """Narrowest widths of a wrapping column, in the order they are tried: its longest word
    (wrap at spaces only), its longest word piece (also break at underscores), then
    ``_MIN_WORD`` (also break inside words) — never below its longest number."""
    tokens = [tok for t in texts for tok in t.split()]
    numeric = max([1, *(len(tok) for tok in tokens if _NUMBER.match(tok))])
    words = max([1, *(len(tok) for tok in tokens)])
    pieces = max([1, *(len(p) for tok in tokens for p in _pieces(tok))])
    return [max(numeric, words), max(numeric, pieces), max(numeric, min(pieces, _MIN_WORD))]


def _fit_widths(headers: list[str], cells: list[list[str]], wrap: list[bool],
                width: int, keep: list[bool] | None = None) -> list[int]:
    """Column widths that fit ``width``: every column as wide as its longest cell when that
    fits; otherwise the widest wrapping (text) columns are narrowed, one character at a time,
    first down to their longest word, then to their longest word piece, then to
    ``_MIN_WORD`` — never below their longest number; columns flagged in ``keep`` only after
    the others reached their floor at that step. Numbers and kept-whole columns never
    shrink; when even the narrowest layout is too wide, the table is left wider than
    ``width`` rather than splitting a number."""
    keep = keep or [False] * len(headers)
    full = [max(len(line) for t in [h, *col] for line in t.split("\n"))
            for h, col in zip(headers, cells, strict=True)]
    floors = [_floors([h, *col]) if wr else [w] * 3
              for h, col, wr, w in zip(headers, cells, wrap, full, strict=True)]
    widths = list(full)
    excess = sum(widths) + _GAP * (len(widths) - 1) - width
    for phase in range(3):
        for kept in (False, True):
            while excess > 0:
                candidates = [i for i, w in enumerate(widths)
                              if wrap[i] and w > floors[i][phase] and (kept or not keep[i])]
                if not candidates:
                    break
                widest = max(candidates, key=lambda i: widths[i])
                widths[widest] -= 1
                excess -= 1
    return widths


def _wrap_cell(text: str, width: int) -> str:
    """``text`` wrapped to ``width``: at spaces, then inside long words after underscores,
    then anywhere; a number is never split when it fits the width."""
    lines: list[str] = []
    for paragraph in text.split("\n"):
        line = ""
        for word in paragraph.split():
            parts = [word] if len(word) <= width else _pieces(word)
            for k, part in enumerate(parts):
                while len(part) > width:  # a piece longer than the column: cut it
                    if line:
                        lines.append(line)
                        line = ""
                    lines.append(part[:width])
                    part = part[width:]
                sep = "" if k > 0 or not line else " "
                if line and len(line) + len(sep) + len(part) > width:
                    lines.append(line)
                    line, sep = "", ""
                line += sep + part
        lines.append(line)
    return "\n".join(lines)


def _apply(fmt: Any, value: Any) -> str:
    if fmt == "p":
        return fmt_pvalue(value)
    if isinstance(fmt, int):
        return fmt_number(value, fmt)
    if isinstance(fmt, str):
        if not _is_number(value) or not math.isfinite(float(value)):
            return MISSING if value is None or _is_number(value) else str(value)
        return fmt.format(value)
    return str(fmt(value))


def _renderable(part: Any):
    from rich.text import Text

    if isinstance(part, str):
        return Text(part)
    try:
        import pandas as pd

        if isinstance(part, pd.DataFrame):
            return frame_table(part)
    except ImportError:  # pragma: no cover
        pass
    return part


def _tables(part: Any) -> list:
    from rich.console import Group
    from rich.table import Table

    if isinstance(part, Table):
        return [part]
    if isinstance(part, Group):
        return [t for p in part.renderables for t in _tables(p)]
    return []


def render(human: Any, *, width: int | None = None) -> str:
    """The human output as text: strings are prose (wrapped at spaces to the width), frames
    and rich renderables are tables; a list is rendered part after part.

    Plain text (no colour, no control codes) unless stdout is a terminal; trailing spaces are
    removed from every line.
    """
    from rich.console import Console

    parts = [_renderable(p) for p in (human if isinstance(human, list | tuple) else [human])
             if p is not None]
    width = width or output_width()
    # a table narrowed to its floor is printed whole rather than squeezed (rich would then
    # cut numbers): it may be wider than the output; prose keeps the output's width
    needed = [max([width, *(getattr(t, "min_width", None) or 0 for t in _tables(p))])
              for p in parts]
    tty = _isatty(sys.stdout)
    buffer = io.StringIO()
    console = Console(file=buffer, width=max([width, *needed]), force_terminal=tty,
                      color_system="auto" if tty else None, no_color=not tty, highlight=False,
                      markup=False, emoji=False, soft_wrap=False, legacy_windows=False)
    for part, w in zip(parts, needed, strict=True):
        console.print(part, overflow="fold", crop=False, width=w)
    text = buffer.getvalue()
    return "\n".join(line.rstrip() for line in text.rstrip("\n").split("\n"))


# ---------------------------------------------------------------------------------------------
# progress


class _Advance:
    """``advance(n=1, total=None)``: the callback given to a library's ``progress=`` hook;
    ``total=`` (re)sets the number of steps once it is known."""

    def __init__(self, bar=None, task=None) -> None:
        self._bar, self._task = bar, task

    def __call__(self, n: int = 1, total: int | None = None) -> None:
        if self._bar is None:
            return
        if total is not None:
            self._bar.update(self._task, total=total)
        if n:
            self._bar.advance(self._task, n)

    def step(self, description: str) -> None:
        """Rename the current step (e.g. ``lr: cross-study matrix``)."""
        if self._bar is not None:
            self._bar.update(self._task, description=description)


@contextlib.contextmanager
def progress(title: str, total: int | None = None) -> Iterator[_Advance]:
    """A progress bar on stderr while the block runs; yields ``advance(n=1, total=None)``.

    Shown only when :attr:`State.progress` is true (human output, not ``--quiet``, stderr a
    terminal); otherwise ``advance`` does nothing, so pipes, JSON and tests see no bar.
    ``total=None`` is an indeterminate bar (a spinner with the step's name) until a total is
    given.
    """
    if not state.progress:
        yield _Advance()
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    columns = [SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
               MofNCompleteColumn(), TimeElapsedColumn()]
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(title, total=total)
        yield _Advance(bar, task)


InputArg = Annotated[Path, typer.Argument(help="CSV/Parquet/DuckDB table.")]
OutOpt = Annotated[Path | None, typer.Option("--out", help="Directory for the figures (SVG) "
                                             "and tables (CSV).")]
OverwriteOpt = Annotated[bool, typer.Option(
    "--overwrite", help="Replace the files an earlier run wrote in --out (other files there are "
    "never touched).")]


# ---------------------------------------------------------------------------------------------
# shared pieces of the commands


@contextlib.contextmanager
def flags(names: dict[str, str]) -> Iterator[None]:
    """Library errors name Python parameters (`` `n_per_study` ``); name the flags instead."""
    try:
        yield
    except ReplikitError as exc:
        message = str(exc)
        for param, flag in names.items():
            message = message.replace(f"`{param}`", f"`{flag}`")
        if message == str(exc):
            raise
        raise type(exc)(message) from None


@contextlib.contextmanager
def warning_lines() -> Iterator[None]:
    """replikit's warnings raised inside, printed after it as one ``replikit: warning: ...``
    line each on stderr (once each under the command line's policy, ``cli/_warnings.py``);
    the others go on to that policy."""
    from ._warnings import active_policy

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ReplikitWarning)
        yield
    policy = active_policy()
    for w in caught:
        if issubclass(w.category, ReplikitWarning):
            if policy is not None:
                policy.say(str(w.message))
            else:
                typer.echo("replikit: warning: "
                           + escape_controls(flagify(" ".join(str(w.message).split()))),
                           err=True)
        else:
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)


def choice(value: str, flag: str, choices, *, upper: bool = False) -> str:
    v = value.upper() if upper else value.lower()
    if v not in choices:
        raise ParameterError(f"`{flag}` must be one of {', '.join(choices)}; got {value!r}.")
    return v


def check_out(out: Path | None, names, overwrite: bool) -> None:
    if out is not None:
        from .._outputs import check_output_dir

        check_output_dir(out, list(names), option="--out", overwrite=overwrite)
