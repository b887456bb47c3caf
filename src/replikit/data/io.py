"""Reading and writing tables: CSV, Parquet and DuckDB, chosen by file suffix.

DuckDB tables are addressed as ``path.duckdb`` (table ``name`` given separately); every identifier
is quoted, so table names with spaces, quotes or keywords are safe. Writers never replace an
existing file or table unless ``overwrite=True``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from ..errors import DataError, InputFileError, ParameterError

__all__ = ["read_frame", "write_frame", "file_format", "quote_identifier"]

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


def read_frame(path: str | os.PathLike, *, table: str | None = None,
               name: str = "path", dtype: dict | None = None) -> pd.DataFrame:
    """Read a CSV, TSV, Parquet file or a DuckDB table into a DataFrame.

    Parameters
    ----------
    path : path-like
        The file. Its suffix picks the reader.
    table : str, optional
        For DuckDB files, the table to read; may be omitted when the file holds exactly one.
    name : str
        The parameter name used in error messages (e.g. ``"--data"``).
    dtype : dict, optional
        Column dtypes for the CSV reader.

    Raises
    ------
    InputFileError
        The file does not exist or is empty.
    DataError
        The file cannot be parsed or has no rows.
    """
    p = Path(path)
    fmt = file_format(p, name=name)
    if not p.exists():
        raise InputFileError(f"`{name}`: file {str(p)!r} does not exist.")
    if p.is_dir():
        raise InputFileError(f"`{name}`: {str(p)!r} is a directory, not a file.")
    if p.stat().st_size == 0:
        raise InputFileError(f"`{name}`: file {str(p)!r} is empty.")
    try:
        if fmt in ("csv", "tsv"):
            sep = "\t" if fmt == "tsv" else ","
            frame = pd.read_csv(p, sep=sep, dtype=dtype)
            _check_unique_header(p, sep, name)
        elif fmt == "parquet":
            frame = pd.read_parquet(p)
        else:
            import duckdb

            with duckdb.connect(str(p), read_only=True) as con:
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
    except pd.errors.EmptyDataError:
        raise InputFileError(f"`{name}`: file {str(p)!r} has no columns (empty file).") from None
    except (ParameterError, InputFileError, DataError):
        raise
    except Exception as exc:  # parser errors of three libraries: report them as one kind
        raise DataError(f"`{name}`: could not read {str(p)!r} as {fmt}: {exc}") from None
    if frame.shape[0] == 0:
        raise DataError(f"`{name}`: {str(p)!r} has a header but no rows.")
    return frame


def write_frame(frame: pd.DataFrame, path: str | os.PathLike, *, table: str | None = None,
                overwrite: bool = False, name: str = "path") -> Path:
    """Write ``frame`` to CSV, Parquet or a DuckDB table (by suffix of ``path``).

    Refuses to replace an existing file (CSV/Parquet) or table (DuckDB) unless ``overwrite``.
    Other tables in a DuckDB file are left untouched.
    """
    p = Path(path)
    fmt = file_format(p, name=name)
    p.parent.mkdir(parents=True, exist_ok=True)
    if fmt in ("csv", "tsv", "parquet"):
        if p.exists() and not overwrite:
            raise InputFileError(f"`{name}`: {str(p)!r} exists; pass overwrite=True to replace it.")
        if fmt == "parquet":
            frame.to_parquet(p, index=False)
        else:
            frame.to_csv(p, index=False, sep="\t" if fmt == "tsv" else ",")
        return p
    import duckdb

    table = table or "data"
    with duckdb.connect(str(p)) as con:
        exists = table in _duckdb_tables(con)
        if exists and not overwrite:
            raise InputFileError(
                f"`table`: {str(p)!r} already holds table {table!r}; pass overwrite=True to replace it."
            )
        con.register("_replikit_frame", frame)
        try:
            con.execute(
                f"CREATE OR REPLACE TABLE {quote_identifier(table)} AS SELECT * FROM _replikit_frame"
            )
        finally:
            con.unregister("_replikit_frame")
    return p
