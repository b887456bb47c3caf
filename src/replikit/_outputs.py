"""Output paths: checked before any work, never replaced unless asked, written atomically.

Every command that writes files calls :func:`check_output_file` or :func:`check_output_dir` for
*all* its outputs before it reads data or fits anything, so a refusal costs the user nothing.
A path is refused (:class:`~replikit.errors.OutputExistsError`, exit code 2 on the command line)
when a file replikit would write already exists, unless ``overwrite``; files replikit would not
write are never touched, whatever ``overwrite`` says. :func:`write_text_atomic` writes through a
temporary file in the same directory and renames it, so an interrupted run never leaves half a
report behind.

CSV and TSV outputs are spreadsheet-safe (:func:`spreadsheet_safe`): a text cell or column name
that a spreadsheet would read as a formula (it starts with ``=``, ``+``, ``-``, ``@``, a tab or
a carriage return; OWASP's guidance on CSV injection) is written with a leading single quote,
and :func:`undo_spreadsheet_safe`, which replikit's CSV reader applies, takes it off again.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from collections.abc import Iterable
from pathlib import Path

from .errors import OutputError, OutputExistsError

__all__ = ["check_output_file", "check_output_dir", "check_distinct", "write_text_atomic",
           "write_csv_atomic", "replace_hint", "csv_text", "spreadsheet_safe",
           "undo_spreadsheet_safe", "FORMULA_TRIGGERS"]


def replace_hint(overwrite_option: str | None) -> str:
    return (f"pass {overwrite_option} to replace it" if overwrite_option
            else "choose another path")


def _writable_parent(path: Path, option: str) -> None:
    """The nearest existing ancestor of ``path`` is a directory we may write into."""
    parent = path.parent if str(path.parent) else Path(".")
    probe = parent
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        raise OutputError(f"`{option}`: cannot create {str(path)!r}: {str(probe)!r} is a file, "
                          "not a directory.")
    if not _can_create_in(probe):
        raise OutputError(f"`{option}`: cannot write {str(path)!r}: directory {str(probe)!r} "
                          "is not writable.")


def _can_create_in(directory: Path) -> bool:
    """Whether a file can be created in ``directory`` — tried, not inferred from permission
    bits (which say nothing for root, read-only mounts or /proc)."""
    try:
        with tempfile.TemporaryFile(dir=directory):
            return True
    except OSError:
        return False


def check_output_file(path: str | os.PathLike, *, option: str = "out", overwrite: bool = False,
                      overwrite_option: str | None = "--overwrite",
                      suffixes: Iterable[str] | None = None) -> Path:
    """Check that ``path`` can be written as a new file (or replaced, with ``overwrite``).

    Parameters
    ----------
    path : path-like
    option : str
        The parameter or flag named in messages (``'--out'``).
    overwrite : bool
        Allow replacing an existing *file* (never a directory).
    overwrite_option : str or None
        How the user says ``overwrite`` (``'--overwrite'``; ``'overwrite=True'`` in Python).
    suffixes : iterable of str, optional
        Allowed file extensions (lower case, with the dot).

    Raises
    ------
    OutputExistsError
        The file exists and ``overwrite`` is false.
    OutputError
        The path is a directory, its extension is not allowed, or its directory is not writable.
    """
    p = Path(path).expanduser()
    if suffixes is not None:
        allowed = tuple(suffixes)
        if p.suffix.lower() not in allowed:
            raise OutputError(f"`{option}`: {str(p)!r} must end in one of {', '.join(allowed)}; "
                              f"got {p.suffix or 'no extension'!r}.")
    if p.is_dir():
        raise OutputError(f"`{option}`: {str(p)!r} is a directory; expected a file path.")
    if p.exists() or p.is_symlink():
        if not overwrite:
            raise OutputExistsError(f"`{option}`: {str(p)!r} already exists; "
                                    f"{replace_hint(overwrite_option)}.")
        if not os.access(p, os.W_OK):
            raise OutputError(f"`{option}`: {str(p)!r} exists and is not writable.")
    _writable_parent(p, option)
    return p


def check_output_dir(path: str | os.PathLike, names: Iterable[str], *, option: str = "out",
                     overwrite: bool = False,
                     overwrite_option: str | None = "--overwrite") -> Path:
    """Check that directory ``path`` can receive the files ``names``.

    The directory may exist and hold other files (they are never touched); it is refused when it
    is a file, is not writable, or already holds one of ``names`` and ``overwrite`` is false.
    A name may be a glob pattern (``'forest_*.svg'``) for files whose names depend on the data.
    """
    d = Path(path).expanduser()
    if d.exists() and not d.is_dir():
        raise OutputError(f"`{option}`: {str(d)!r} is a file; expected a directory.")
    if d.is_dir():
        if not _can_create_in(d):
            raise OutputError(f"`{option}`: directory {str(d)!r} is not writable.")
        clash = _existing(d, names)
        dirs = [n for n in clash if (d / n).is_dir()]
        if dirs:
            raise OutputError(f"`{option}`: {str(d / dirs[0])!r} is a directory where replikit "
                              "writes a file.")
        if clash and not overwrite:
            shown = ", ".join(clash[:4]) + (f" and {len(clash) - 4} more" if len(clash) > 4
                                            else "")
            raise OutputExistsError(
                f"`{option}`: {str(d)!r} already holds {shown}; "
                f"{replace_hint(overwrite_option).replace(' it', ' them')} or choose another "
                "directory.")
    else:
        _writable_parent(d / "x", option)
    return d


def _existing(d: Path, names: Iterable[str]) -> list[str]:
    found: set[str] = set()
    for n in names:
        if any(ch in n for ch in "*?["):
            found.update(p.name for p in d.glob(n))
        elif (d / n).exists() or (d / n).is_symlink():
            found.add(n)
    return sorted(found)


def write_csv_atomic(path: str | os.PathLike, frame) -> Path:
    """Write a DataFrame as CSV (no index, :func:`spreadsheet_safe`) through
    :func:`write_text_atomic`."""
    return write_text_atomic(path, csv_text(frame))


# --------------------------------------------------------------------------------------------
# Spreadsheet-safe CSV: no text cell can start a formula
# --------------------------------------------------------------------------------------------

#: The first characters that make a spreadsheet read a cell as a formula (OWASP, "CSV
#: Injection"): ``=``, ``+``, ``-``, ``@``, tab and carriage return.
FORMULA_TRIGGERS = "=+-@\t\r"
# a text that is quoted on writing: any run of single quotes (perhaps none), then a trigger;
# quoting adds one quote, so a text read back is unquoted when it is one or more quotes and a
# trigger. The two sets differ by exactly the texts without a leading quote, which makes the
# scheme reversible: a genuine "'=x" is written "''=x" and read back as "'=x".
_NEEDS_QUOTE = re.compile(r"'*[=+\-@\t\r]")
_QUOTED = re.compile(r"'+[=+\-@\t\r]")
_CR = re.compile(r"[^\r]*\r")


def csv_text(frame, *, sep: str = ",") -> str:
    """``frame`` as CSV (or TSV with ``sep='\\t'``) text, no index, made
    :func:`spreadsheet_safe` first.

    Lines end in ``\\n``; when a text holds a carriage return, in ``\\r\\n`` (RFC 4180),
    because the csv module quotes only the characters of its line terminator: a text such as
    ``'a\\rb'`` written unquoted would be read back as two rows."""
    safe = spreadsheet_safe(frame)
    cr = _CR.match
    has_cr = (any(isinstance(c, str) and cr(c) for c in safe.columns)
              or any(_text_mask(safe.iloc[:, j], _CR) is not None
                     for j in range(safe.shape[1])))
    return safe.to_csv(index=False, sep=sep, lineterminator="\r\n" if has_cr else "\n")


def spreadsheet_safe(frame):
    """``frame`` with every text cell and column name that a spreadsheet would take for a
    formula prefixed with a single quote ``'``.

    A text is quoted when it starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return,
    or with single quotes followed by one of those (so that :func:`undo_spreadsheet_safe` can
    tell a quote replikit added from one the value had). Only text is touched: cells of
    object, string and categorical columns that are ``str``; numbers (``-1.5`` in a float
    column) are never changed. The caller's frame is not modified; it is returned itself when
    nothing needs quoting.

    Examples
    --------
    >>> import pandas as pd
    >>> f = pd.DataFrame({"model": ["=1+1", "lr", "'-x"], "value": [-1.5, 0.5, 2.0]})
    >>> spreadsheet_safe(f)
      model  value
    0  '=1+1   -1.5
    1     lr    0.5
    2  ''-x    2.0
    """
    return _map_frame(frame, _NEEDS_QUOTE, lambda v: "'" + v)


def undo_spreadsheet_safe(frame):
    """The inverse of :func:`spreadsheet_safe`: one leading ``'`` taken off every text cell
    and column name that is one or more quotes followed by ``=``, ``+``, ``-``, ``@``, a tab
    or a carriage return. Other values, numbers included, are left as they are."""
    return _map_frame(frame, _QUOTED, lambda v: v[1:])


def _map_frame(frame, pattern: re.Pattern, change):
    out = None
    for j in range(frame.shape[1]):
        col = _map_text(frame.iloc[:, j], pattern, change)
        if col is not None:
            if out is None:
                out = frame.copy(deep=False)  # the caller's columns are never written to
            out.isetitem(j, col)
    names = list(frame.columns)
    renamed = [change(c) if isinstance(c, str) and pattern.match(c) else c for c in names]
    if renamed != names:
        if out is None:
            out = frame.copy(deep=False)
        out.columns = renamed
    return frame if out is None else out


def _map_text(col, pattern: re.Pattern, change):
    """``col`` with ``change(v)`` for each of its ``str`` values that ``pattern`` matches at
    the start; None when no value matches (or the column holds no text)."""
    import pandas as pd

    if isinstance(col.dtype, pd.CategoricalDtype):
        cats = list(col.cat.categories)
        new = [change(c) if isinstance(c, str) and pattern.match(c) else c for c in cats]
        return None if new == cats else col.cat.rename_categories(new)
    mask = _text_mask(col, pattern)
    if mask is None:
        return None
    out = col.copy()
    out[mask] = [change(v) for v in col.to_numpy(dtype=object)[mask]]
    return out


def _text_mask(col, pattern: re.Pattern):
    """Where ``col`` holds a ``str`` that ``pattern`` matches at the start (a boolean array);
    None when nowhere (or the column holds no text)."""
    import numpy as np
    import pandas as pd
    from pandas.api import types as ptypes

    if isinstance(col.dtype, pd.CategoricalDtype):
        if not any(isinstance(c, str) and pattern.match(c) for c in col.cat.categories):
            return None
        col = col.astype(object)
    if not (ptypes.is_object_dtype(col) or isinstance(col.dtype, pd.StringDtype)):
        return None
    values = col.to_numpy(dtype=object)
    try:  # the distinct values first: labels repeat, so this is cheap on long columns
        hits = [v for v in pd.unique(values) if isinstance(v, str) and pattern.match(v)]
        if not hits:
            return None
        return col.isin(hits).to_numpy(dtype=bool)
    except TypeError:  # unhashable cells (lists): look at each
        mask = np.fromiter((isinstance(v, str) and pattern.match(v) is not None
                            for v in values), bool, len(values))
        return mask if mask.any() else None


def check_distinct(paths: dict[str, str | os.PathLike | None]) -> None:
    """Two output flags must not name the same file (one would silently replace the other)."""
    seen: dict[Path, str] = {}
    for option, path in paths.items():
        if path is None:
            continue
        key = Path(path).expanduser().resolve()
        if key in seen:
            raise OutputError(f"`{option}` and `{seen[key]}` name the same file {str(path)!r}; "
                              "give each output its own path.")
        seen[key] = option


def write_text_atomic(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` through a temporary file and an atomic rename."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes the file private; give it the usual mode
        os.replace(tmp, p)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return p
