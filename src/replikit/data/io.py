"""Reading and writing tables: CSV, Parquet and DuckDB, chosen by file suffix.

DuckDB tables are addressed as ``path.duckdb`` (table ``name`` given separately); every identifier
is quoted, so table names with spaces, quotes or keywords are safe. Writers never replace an
existing file or table unless ``overwrite=True``.

CSV and TSV files are spreadsheet-safe: a text cell (or column name) that a spreadsheet would
take for a formula (it starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return) is
written with a leading single quote, and the reader takes that quote off again, so a table comes
back as it was written. Parquet and DuckDB files hold the values unchanged.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pandas as pd

from .._compat import dropped
from ..errors import DataError, InputFileError, ParameterError

__all__ = ["read_frame", "write_frame", "file_format", "quote_identifier", "file_signature",
           "check_duckdb_file", "check_duckdb_columns", "open_duckdb", "connect_duckdb"]

_FORMATS = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".txt": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".duckdb": "duckdb",
    ".ddb": "duckdb",
    ".db": "duckdb",
}


def quote_identifier(name: str) -> str:
    """Quote a SQL identifier for DuckDB (double quotes, embedded quotes doubled)."""
    return '"' + str(name).replace('"', '""') + '"'


def file_format(path: str | os.PathLike, *, name: str = "path") -> str:
    """``'csv'``, ``'tsv'``, ``'parquet'`` or ``'duckdb'`` from the suffix of ``path``.

    Compressed CSVs (``.csv.gz``, ``.csv.bz2``, ``.csv.zip``, ``.csv.xz``) count as CSV.
    """
    p = Path(path)
    suffixes = [s.lower() for s in p.suffixes]
    if suffixes and suffixes[-1] in {".gz", ".bz2", ".zip", ".xz", ".zst"}:
        suffixes = suffixes[:-1]
    fmt = _FORMATS.get(suffixes[-1] if suffixes else "")
    if fmt is None:
        known = ", ".join(sorted(_FORMATS))
        raise ParameterError(
            f"`{name}` must end in one of {known} (optionally compressed CSV); got {str(path)!r}."
        )
    return fmt


def _duckdb_tables(con) -> list[str]:
    return [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()]


def _check_unique_header(path: Path, sep: str, name: str) -> None:
    """pandas renames a repeated CSV column ``y`` to ``y.1``; refuse such a file instead."""
    header = pd.read_csv(path, sep=sep, header=None, nrows=1, dtype=str).iloc[0]
    names = [str(v) for v in header.tolist()]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise DataError(f"`{name}`: column name(s) {dup} appear more than once in the header of "
                        f"{str(path)!r}; column names must be unique.")


def _quoted_keys(dtype: dict | None) -> dict | None:
    """``dtype`` for a CSV whose column names may be spreadsheet-safe: each key also under its
    quoted name (a name ``-x`` is written ``'-x``); pandas ignores keys that are not columns."""
    if not dtype:
        return dtype
    from .._outputs import spreadsheet_safe

    quoted = spreadsheet_safe(pd.DataFrame(columns=list(dtype))).columns
    return {**dict(zip(quoted, dtype.values(), strict=True)), **dtype}


def _unquote(frame: pd.DataFrame, path: Path, name: str) -> pd.DataFrame:
    """Undo the spreadsheet-safe quoting of replikit's CSV writers (a text ``'=x`` is ``=x``;
    see ``replikit._outputs.spreadsheet_safe``); two names that become one are refused."""
    from .._outputs import undo_spreadsheet_safe

    out = undo_spreadsheet_safe(frame)
    if out is not frame and out.columns.duplicated().any():
        dup = sorted(set(map(str, out.columns[out.columns.duplicated()])))
        raise DataError(f"`{name}`: column name(s) {dup} appear more than once in the header of "
                        f"{str(path)!r} once a spreadsheet-safe quote (') is taken off; column "
                        "names must be unique.")
    return out


#: Separators a file named ``.csv`` may use instead of commas, as their names in messages.
_OTHER_SEPARATORS = {"\t": ("tab", "tabs"), ";": ("semicolon", "semicolons")}
_DECIMAL_COMMA = r"^\s*[-+]?\d*,\d+\s*$"


def _csv_separator(path: Path) -> str:
    """The separator of a file named ``.csv``: a comma, unless its header read with commas is
    one column whose name holds tabs (or, failing those, semicolons) — a tab- or
    semicolon-separated file under a ``.csv`` name, which Excel and many European locales
    write."""
    try:
        header = pd.read_csv(path, sep=",", header=None, nrows=1, dtype=str).iloc[0]
    except Exception:  # noqa: BLE001 - the read proper reports what is wrong with the file
        return ","
    if len(header) != 1 or not isinstance(header.iloc[0], str):
        return ","
    for sep in _OTHER_SEPARATORS:
        if sep in header.iloc[0]:
            return sep
    return ","


def _sniffed(frame: pd.DataFrame, path: Path, sep: str, dtype,
             name: str) -> tuple[pd.DataFrame, str]:
    """``(frame, sep)``: ``frame`` read from a ``.csv`` with ``sep`` (:func:`_csv_separator`),
    said in a warning; the comma reading when ``sep`` gives one column all the same (a header
    that only holds the character inside a quoted name). Numbers written with a decimal comma
    are refused: read as text they would become categories."""
    if frame.shape[1] < 2:
        return pd.read_csv(path, sep=",", dtype=dtype), ","
    one, many = _OTHER_SEPARATORS[sep]
    for col in frame.columns:
        values = frame[col].dropna()
        if len(values) and not pd.api.types.is_numeric_dtype(values) and \
                values.astype(str).str.match(_DECIMAL_COMMA).all():
            raise DataError(
                f"`{name}`: {path.name} looks {one}-separated (its header is one column holding "
                f"{many}) and writes numbers with a decimal comma (column {str(col)!r} holds "
                f"{str(values.iloc[0])!r}); save it with commas between the fields and points "
                "in the numbers, or as Parquet.")
    from ..errors import warn

    stacklevel = 3  # the warning points at the first caller outside replikit
    frame_ = sys._getframe(1)
    while frame_ is not None and frame_.f_globals.get("__name__", "").startswith("replikit"):
        stacklevel += 1
        frame_ = frame_.f_back
    warn(f"`{name}`: {path.name} is {one}-separated (its header read with commas is one column "
         f"holding {many}): read with {many} between the fields"
         + (" (name it .tsv to say so)" if sep == "\t" else "") + ".", stacklevel=stacklevel)
    return frame, sep


@dropped("name")
def read_frame(path: str | os.PathLike, *, table: str | None = None,
               dtype: dict | None = None) -> pd.DataFrame:
    """Read a CSV, TSV, Parquet file or a DuckDB table into a DataFrame.

    Parameters
    ----------
    path : path-like
        The file. Its suffix picks the reader (compressed CSVs count as CSV).
    table : str, optional
        For DuckDB files, the table to read; may be omitted when the file holds exactly one.
    dtype : dict, optional
        Column dtypes for the CSV reader.

    Notes
    -----
    In a CSV or TSV file, a text cell or column name made of one or more single quotes followed
    by ``=``, ``+``, ``-``, ``@``, a tab or a carriage return loses its first quote: that is how
    :func:`write_frame` (and every CSV replikit writes) keeps such text from being read as a
    formula by a spreadsheet, so ``'=1+1`` is read as ``=1+1``.

    Returns
    -------
    pandas.DataFrame
        The table, with at least one row.

    Raises
    ------
    InputFileError
        The file does not exist or is empty.
    DataError
        The file cannot be parsed or has no rows.

    See Also
    --------
    write_frame : The writer.
    replikit.data.Scores.read : Reads and validates a Scores table.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = pathlib.Path(d) / "t.csv"
    ...     _ = path.write_text("a,b\\n1,x\\n2,y\\n")
    ...     read_frame(path)
       a  b
    0  1  x
    1  2  y
    """
    name = "path"
    return _read(path, table, dtype, name)


def _read(path, table, dtype, name: str) -> pd.DataFrame:
    """:func:`read_frame`, its errors naming ``name`` (the caller's parameter)."""
    p = Path(path)
    fmt = file_format(p, name=name)
    if not p.exists():
        raise InputFileError(f"`{name}`: file {str(p)!r} does not exist.")
    if p.is_dir():
        raise InputFileError(f"`{name}`: {str(p)!r} is a directory, not a file.")
    if p.stat().st_size == 0:
        raise InputFileError(f"`{name}`: file {str(p)!r} is empty.")
    if table is not None and fmt != "duckdb":
        raise ParameterError(f"`table` names a table inside a DuckDB file; {str(p)!r} is a "
                             f"{fmt} file (leave `table` out).")
    try:
        if fmt in ("csv", "tsv"):
            sep = "\t" if fmt == "tsv" else _csv_separator(p)
            frame = pd.read_csv(p, sep=sep, dtype=_quoted_keys(dtype))
            if fmt == "csv" and sep != ",":  # a .csv that is tab- or semicolon-separated
                frame, sep = _sniffed(frame, p, sep, _quoted_keys(dtype), name)
            _check_unique_header(p, sep, name)
            frame = _unquote(frame, p, name)
        elif fmt == "parquet":
            frame = pd.read_parquet(p)
        else:
            check_duckdb_file(p, name=name, hint="save the table as .csv or .parquet, or give "
                                                 "a DuckDB file")
            with open_duckdb(p, name=name, read_only=True) as con:
                tables = _duckdb_tables(con)
                if table is None:
                    if len(tables) != 1:
                        raise ParameterError(
                            f"`table`: {str(p)!r} holds {len(tables)} tables "
                            f"({', '.join(map(repr, tables)) or 'none'}); name the one to read."
                        )
                    table = tables[0]
                if table not in tables:
                    raise ParameterError(
                        f"`table`: no table {table!r} in {str(p)!r}; it holds "
                        f"{', '.join(map(repr, tables)) or 'no tables'}."
                    )
                frame = con.execute(f"SELECT * FROM {quote_identifier(table)}").df()
    except UnicodeDecodeError as exc:
        raise DataError(f"`{name}`: {str(p)!r} is not UTF-8 text (byte "
                        f"0x{exc.object[exc.start]:02x} at "
                        f"position {exc.start:,} cannot be read as UTF-8: the file is in "
                        "another encoding, such as Latin-1 or UTF-16, or is not text); save it "
                        "as UTF-8 CSV, or as Parquet.") from None
    except pd.errors.EmptyDataError:
        raise InputFileError(f"`{name}`: file {str(p)!r} has no columns (empty file).") from None
    except (ParameterError, InputFileError, DataError):
        raise
    except Exception as exc:  # parser errors of three libraries: report them as one kind
        raise DataError(f"`{name}`: could not read {str(p)!r} as {fmt}: {exc}") from None
    if frame.shape[0] == 0:
        raise DataError(f"`{name}`: {str(p)!r} has a header but no rows.")
    return frame


@dropped("name", "overwrite_option")
def write_frame(frame: pd.DataFrame, path: str | os.PathLike, *, table: str | None = None,
                overwrite: bool = False) -> Path:
    """Write ``frame`` to CSV, Parquet or a DuckDB table (by suffix of ``path``).

    Refuses to replace an existing file (CSV/Parquet) or table (DuckDB) unless ``overwrite``.
    CSV and TSV files are spreadsheet-safe: a text cell or column name starting with ``=``,
    ``+``, ``-``, ``@``, a tab or a carriage return (or with single quotes and then one of
    those) is written with a leading ``'``, so that a spreadsheet shows it as text instead of
    running it as a formula; :func:`read_frame` takes the quote off. Numbers are never quoted.
    Other tables in a DuckDB file are left untouched; a file with a DuckDB suffix that is not a
    DuckDB database (an SQLite ``.db``, say) is refused, never opened. CSV and Parquet files are
    written through a temporary file and renamed, so an interrupted write leaves no half file.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table.
    path : path-like
        The file; its suffix picks the format.
    table : str, optional
        The table inside a DuckDB file (default ``'data'``).
    overwrite : bool, default False
        Replace an existing file or table.

    Returns
    -------
    pathlib.Path
        The path written.

    Raises
    ------
    OutputExistsError
        The file or table exists and ``overwrite`` is false.
    OutputError
        The path cannot be written (a directory, no permission, not a DuckDB file, in use).

    See Also
    --------
    read_frame : The reader.
    replikit.data.Scores.write : Writes a Scores table.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as d:
    ...     out = write_frame(pd.DataFrame({"a": [1, 2]}), pathlib.Path(d) / "t.parquet")
    ...     read_frame(out)["a"].tolist()
    [1, 2]
    """
    return _write(frame, path, table, overwrite, "path", "`overwrite`")


def _write(frame, path, table, overwrite: bool, name: str, overwrite_option: str | None) -> Path:
    """:func:`write_frame`, its errors naming ``name`` and ``overwrite_option``."""
    from .._outputs import check_output_file, csv_text, replace_hint, write_text_atomic
    from ..errors import OutputError, OutputExistsError

    p = Path(path)
    fmt = file_format(p, name=name)
    if fmt in ("csv", "tsv", "parquet"):
        check_output_file(p, option=name, overwrite=overwrite, overwrite_option=overwrite_option)
        if fmt == "parquet":
            _write_parquet_atomic(frame, p)
        else:
            write_text_atomic(p, csv_text(frame, sep="\t" if fmt == "tsv" else ","))
        return p
    table = table or "data"
    check_duckdb_columns(frame.columns, name=name)
    if p.exists():
        check_duckdb_file(p, name=name, error=OutputError)
    else:
        check_output_file(p, option=name)
    with open_duckdb(p, name=name, error=OutputError) as con:
        exists = table in _duckdb_tables(con)
        if exists and not overwrite:
            raise OutputExistsError(
                f"`{name}`: {str(p)!r} already holds table {table!r}; "
                f"{replace_hint(overwrite_option)}.")
        con.register("_replikit_frame", frame)
        try:
            con.execute(
                f"CREATE OR REPLACE TABLE {quote_identifier(table)} AS SELECT * FROM _replikit_frame"
            )
        finally:
            con.unregister("_replikit_frame")
    return p


def check_duckdb_columns(columns, *, name: str = "path") -> None:
    """Refuse column names that a DuckDB table cannot hold apart: DuckDB compares names
    without regard to case and would silently rename the second of ``proba_Yes`` and
    ``proba_yes`` to ``proba_yes_1``."""
    from ..errors import OutputError

    seen: dict[str, str] = {}
    for c in map(str, columns):
        other = seen.setdefault(c.lower(), c)
        if other != c:
            raise OutputError(
                f"`{name}`: columns {other!r} and {c!r} differ only in upper and lower case, "
                "which a DuckDB table cannot hold apart (it would rename one); write a .csv or "
                ".parquet file instead.")


def _write_parquet_atomic(frame: pd.DataFrame, p: Path) -> None:
    import tempfile

    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    os.close(fd)
    try:
        frame.to_parquet(tmp, index=False)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, p)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


# --------------------------------------------------------------------------------------------
# DuckDB files: recognised by their magic bytes before DuckDB opens them
# --------------------------------------------------------------------------------------------

_SIGNATURES = (
    (0, b"SQLite format 3\x00", "an SQLite database"),
    (0, b"PAR1", "a Parquet file"),
    (0, b"PK\x03\x04", "a ZIP archive (an Excel workbook?)"),
    (0, b"\x1f\x8b", "a gzip file"),
)


def file_signature(path: str | os.PathLike) -> str:
    """What the first bytes of an existing file say it is: ``'duckdb'``, ``'empty'``, or a
    phrase such as ``'an SQLite database'`` / ``'not a DuckDB database'``.

    A DuckDB database file carries the magic ``DUCK`` at byte 8 of its header.
    """
    with open(path, "rb") as fh:
        head = fh.read(16)
    if not head:
        return "empty"
    if head[8:12] == b"DUCK":
        return "duckdb"
    for offset, magic, what in _SIGNATURES:
        if head[offset:offset + len(magic)] == magic:
            return what
    try:
        head.decode("utf-8")
        return "a text file"
    except UnicodeDecodeError:
        return "not a DuckDB database"


def check_duckdb_file(path: str | os.PathLike, *, name: str = "path",
                      error: type[Exception] = InputFileError,
                      hint: str = "name a new path, or one ending in .csv or .parquet") -> Path:
    """Refuse, with ``error`` naming ``name``, an existing path that is not a DuckDB database
    (checked from its magic bytes, so DuckDB never tries to load an extension to read it);
    ``hint`` says what to do instead."""
    p = Path(path)
    if p.is_dir():
        raise error(f"`{name}`: {str(p)!r} is a directory; expected a DuckDB file.")
    try:
        kind = file_signature(p)
    except PermissionError:
        raise error(f"`{name}`: {str(p)!r} cannot be read (permission denied).") from None
    if kind == "empty":
        raise error(f"`{name}`: {str(p)!r} is an empty file, not a DuckDB database; remove it "
                    "or name a new path.")
    if kind != "duckdb":
        raise error(f"`{name}`: {str(p)!r} is {kind}, not a DuckDB database; replikit opens "
                    f"only DuckDB files ({hint}).")
    return p


@contextlib.contextmanager
def open_duckdb(path: str | os.PathLike, *, name: str = "path", read_only: bool = False,
                error: type[Exception] = InputFileError) -> Iterator:
    """``with open_duckdb(path, name=..., read_only=...) as con``: a DuckDB connection with
    extension auto-loading off, whose failures (file in use by another process, newer storage
    format, no permission) become one clear ``error`` naming ``name``."""
    con = connect_duckdb(path, name=name, read_only=read_only, error=error)
    try:
        yield con
    finally:
        con.close()


def connect_duckdb(path: str | os.PathLike, *, name: str = "path", read_only: bool = False,
                   error: type[Exception] = InputFileError):
    """Open a DuckDB file (see :class:`open_duckdb`); the caller closes the connection."""
    import duckdb

    p = Path(path)
    config = {"autoload_known_extensions": False, "autoinstall_known_extensions": False}
    try:
        return duckdb.connect(str(p), read_only=read_only, config=config)
    except duckdb.Error as exc:
        raise error(duckdb_problem(exc, p, name)) from None


def duckdb_problem(exc: Exception, path: Path, name: str) -> str:
    """One line for a DuckDB error on opening ``path``."""
    import re

    text = " ".join(str(exc).split())
    if "lock" in text.lower():
        pid = re.search(r"PID (\d+)", text)
        who = f"another process (PID {pid.group(1)})" if pid else "another process"
        return (f"`{name}`: {str(path)!r} is in use by {who}, e.g. another replikit run; wait "
                "for it to finish or use another file.")
    if "permission" in text.lower() or "read-only" in text.lower() or "read only" in text.lower():
        return f"`{name}`: cannot open {str(path)!r} for writing (permission denied)."
    if "version" in text.lower():
        return (f"`{name}`: {str(path)!r} was written by another DuckDB version and cannot be "
                f"opened here ({text[:200]}).")
    return f"`{name}`: cannot open {str(path)!r} as a DuckDB database: {text[:300]}"
