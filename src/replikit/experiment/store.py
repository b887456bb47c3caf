"""A resumable DuckDB store of finished runner tasks.

A store is replikit's own file. Layout (store format 2):

- ``replikit_meta(key, value)``: ``format`` = ``'2'``;
- ``replikit_runs(spec_hash, spec)``: the one run specification the store holds;
- ``replikit_tasks(model, study, repeat, fold)``: one row per finished task, the four key
  columns together the primary key — structured, so no label can make two tasks collide
  (format 1 joined them into one ``model|study|repeat|fold`` string, where a model ``m|a`` in
  study ``b`` and a model ``m`` in study ``a|b`` were one task);
- ``replikit_scores`` and ``replikit_predictions``: the long tables, with the same key columns.

Each finished task is written in its own transaction, so an interrupted run (even by SIGKILL)
loses only the tasks in flight. Opening a store checks, before DuckDB touches the file, that it
is a DuckDB database (magic bytes: an SQLite ``results.db`` is refused, never handed to DuckDB,
which would try to load an extension), that it holds no table replikit did not write (a user's
database is never written into) and that no other process has it open (DuckDB's file lock: the
second of two concurrent runs is refused with one line). A store holding another run
specification is a :class:`~replikit.errors.StoreError` unless ``clear=True``, which deletes the
stored results — and only replikit's tables.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from .._compat import dropped
from ..data.io import check_duckdb_file, connect_duckdb
from ..errors import StoreError

__all__ = ["TaskStore", "check_store", "STORE_TABLES", "STORE_FORMAT"]

STORE_FORMAT = "2"
STORE_TABLES = ("replikit_meta", "replikit_runs", "replikit_tasks", "replikit_scores",
                "replikit_predictions")
_KEY = ("model", "study", "repeat", "fold")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS replikit_meta (key VARCHAR PRIMARY KEY, value VARCHAR);
CREATE TABLE IF NOT EXISTS replikit_runs (spec_hash VARCHAR PRIMARY KEY, spec VARCHAR);
CREATE TABLE IF NOT EXISTS replikit_tasks (
    model VARCHAR, study VARCHAR, "repeat" BIGINT, fold BIGINT,
    PRIMARY KEY (model, study, "repeat", fold));
CREATE TABLE IF NOT EXISTS replikit_scores (
    study VARCHAR, model VARCHAR, "repeat" BIGINT, fold BIGINT,
    metric VARCHAR, value DOUBLE, n_train BIGINT, n_test BIGINT);
CREATE TABLE IF NOT EXISTS replikit_predictions (
    study VARCHAR, model VARCHAR, "repeat" BIGINT, fold BIGINT, "row" BIGINT,
    y_true VARCHAR, y_pred VARCHAR, proba VARCHAR);
"""


def _tables(con) -> list[str]:
    rows = con.execute("SELECT table_schema, table_name FROM information_schema.tables "
                       "WHERE table_catalog = current_database()").fetchall()
    return [name if schema == "main" else f"{schema}.{name}" for schema, name in rows]


#: How the messages name the store and the way to clear it: the parameters of
#: :func:`~replikit.experiment.run` (the command line shows its flags instead).
_OPTION, _CLEAR = "store", "`clear_store`"


def _clear_hint(clear_option: str) -> str:
    return f"name a new store path, or clear this one with {clear_option}"


def _inspect(con, path: Path, option: str, clear_option: str) -> str:
    """'new', 'current' or 'old' (format 1); refuse a file holding other tables."""
    tables = _tables(con)
    foreign = [t for t in tables if t not in STORE_TABLES]
    if foreign:
        shown = ", ".join(map(repr, foreign[:5])) + (" ..." if len(foreign) > 5 else "")
        raise StoreError(
            f"`{option}`: {str(path)!r} holds tables replikit did not write ({shown}); a store "
            "must be a file of replikit's own, so a database of yours is never written into — "
            "name a new path, e.g. runs.duckdb.")
    if not tables:
        return "new"
    if "replikit_meta" not in tables:
        return "old"
    row = con.execute("SELECT value FROM replikit_meta WHERE key = 'format'").fetchone()
    if row is None or row[0] != STORE_FORMAT:
        found = "?" if row is None else row[0]
        raise StoreError(f"`{option}`: {str(path)!r} has store format {found}; this replikit "
                         f"reads format {STORE_FORMAT}; {_clear_hint(clear_option)}.")
    return "current"


def _old_format_error(path: Path, option: str, clear_option: str) -> StoreError:
    return StoreError(
        f"`{option}`: {str(path)!r} was written by an older replikit (store format 1, whose "
        "joined task ids could confuse labels containing '|'); its results cannot be resumed "
        f"safely — {_clear_hint(clear_option)}.")


def _check_path(path: Path, option: str) -> None:
    if path.is_dir():
        raise StoreError(f"`{option}`: {str(path)!r} is a directory; a store is a DuckDB file "
                         "(e.g. runs.duckdb).")
    if path.exists():
        check_duckdb_file(path, name=option, error=StoreError,
                          hint="a store is a DuckDB file replikit creates: name a new path, "
                               "e.g. runs.duckdb")
        if not os.access(path, os.R_OK | os.W_OK):
            raise StoreError(f"`{option}`: store {str(path)!r} is not writable (permission "
                             "denied).")
        return
    parent = path.parent if str(path.parent) else Path(".")
    probe = parent
    while not probe.exists() and probe.parent != probe:
        probe = probe.parent
    if not probe.is_dir():
        raise StoreError(f"`{option}`: cannot create {str(path)!r}: {str(probe)!r} is a file, "
                         "not a directory.")
    try:  # tried, not inferred from permission bits (root, read-only mounts, /proc)
        with tempfile.TemporaryFile(dir=probe):
            pass
    except OSError:
        raise StoreError(f"`{option}`: cannot create {str(path)!r}: directory {str(probe)!r} "
                         "is not writable.") from None


@dropped("option", "clear_option")
def check_store(path, *, clear: bool = False) -> Path:
    """Check, before any work, that ``path`` can be used as a store.

    A new path needs a writable directory; an existing one must be a DuckDB file holding only
    replikit's tables, not in use by another process, and (without ``clear``) of the current
    store format. Nothing is written.

    Parameters
    ----------
    path : path-like
        The store (a DuckDB file of replikit's own, or a new path).
    clear : bool, default False
        The caller will clear the store (an older store format is then no error).

    Returns
    -------
    pathlib.Path
        The path, user directory expanded.

    Raises
    ------
    StoreError
        With one line naming `store` (the parameter of :func:`~replikit.experiment.run`).

    See Also
    --------
    TaskStore : The open store of a run.
    replikit.experiment.run : Its ``store`` parameter.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as d:
    ...     check_store(pathlib.Path(d) / "run.duckdb").name
    'run.duckdb'
    """
    option, clear_option = _OPTION, _CLEAR
    p = Path(path).expanduser()
    _check_path(p, option)
    if not p.exists():
        return p
    con = connect_duckdb(p, name=option, read_only=True, error=StoreError)
    try:
        kind = _inspect(con, p, option, clear_option)
    finally:
        con.close()
    if kind == "old" and not clear:
        raise _old_format_error(p, option, clear_option)
    return p


class TaskStore:
    """The open store of one run: finished tasks, committed one at a time (see the module
    docstring).

    Parameters
    ----------
    path : path-like
        A DuckDB file of replikit's own, or a new path.
    spec : dict
        The run's specification (scheme, metrics, data fingerprint, models, random state).
    spec_hash : str
        Its hash; a store holding another one is refused unless ``clear``.
    clear : bool, default False
        Delete the stored results (replikit's tables only) and start afresh.

    Raises
    ------
    StoreError
        The path cannot be a store, or holds another run.

    See Also
    --------
    check_store : The same checks, before any work, writing nothing.
    replikit.experiment.run : Opens one with ``store=``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as d:
    ...     store = TaskStore(pathlib.Path(d) / "run.duckdb", {"scheme": "5x2"}, "abc")
    ...     print(store.done())
    ...     store.close()
    set()
    """

    @dropped("option", "clear_option")
    def __init__(self, path, spec: dict, spec_hash: str, *, clear: bool = False) -> None:
        option, clear_option = _OPTION, _CLEAR
        self.path = Path(path).expanduser()
        _check_path(self.path, option)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.con = connect_duckdb(self.path, name=option, error=StoreError)
        try:
            self._open(spec, spec_hash, clear, option, clear_option)
        except BaseException:
            self.con.close()
            raise

    def _open(self, spec, spec_hash, clear, option, clear_option) -> None:
        con = self.con
        kind = _inspect(con, self.path, option, clear_option)
        if kind == "old":
            if not clear:
                raise _old_format_error(self.path, option, clear_option)
            for table in STORE_TABLES:
                con.execute(f"DROP TABLE IF EXISTS {table}")
        con.execute("BEGIN TRANSACTION")
        con.execute(_SCHEMA)
        con.execute("INSERT OR IGNORE INTO replikit_meta VALUES ('format', ?)", [STORE_FORMAT])
        con.execute("COMMIT")
        stored = con.execute("SELECT spec_hash, spec FROM replikit_runs").fetchall()
        if stored and stored[0][0] != spec_hash:
            if not clear:
                old = json.loads(stored[0][1])
                diff = sorted(k for k in set(old) | set(spec) if old.get(k) != spec.get(k))
                raise StoreError(
                    f"`{option}`: {str(self.path)!r} holds results of a different run "
                    f"specification (differs in: {', '.join(diff)}); "
                    f"{_clear_hint(clear_option)}.")
            stored = []
        if not stored:
            con.execute("BEGIN TRANSACTION")
            for table in ("replikit_runs", "replikit_tasks", "replikit_scores",
                          "replikit_predictions"):
                con.execute(f"DELETE FROM {table}")
            con.execute("INSERT INTO replikit_runs VALUES (?, ?)",
                        [spec_hash, json.dumps(spec, sort_keys=True, default=str)])
            con.execute("COMMIT")
        elif clear:
            con.execute("BEGIN TRANSACTION")
            for table in ("replikit_tasks", "replikit_scores", "replikit_predictions"):
                con.execute(f"DELETE FROM {table}")
            con.execute("COMMIT")

    def done(self) -> set[tuple]:
        """Keys ``(model, study, repeat, fold)`` of the finished tasks."""
        rows = self.con.execute('SELECT model, study, "repeat", fold FROM replikit_tasks')
        return {(m, s, int(r), int(f)) for m, s, r, f in rows.fetchall()}

    def commit(self, key: tuple, scores: pd.DataFrame, predictions: pd.DataFrame | None) -> None:
        """Write one finished task (key ``(model, study, repeat, fold)``) atomically."""
        con = self.con
        con.execute("BEGIN TRANSACTION")
        try:
            s = scores[["study", "model", "repeat", "fold", "metric", "value", "n_train",
                        "n_test"]]
            con.register("_s", s)
            con.execute("INSERT INTO replikit_scores SELECT * FROM _s")
            con.unregister("_s")
            if predictions is not None and len(predictions):
                proba_cols = [c for c in predictions.columns if str(c).startswith("proba_")]
                proba = (json.dumps({"columns": proba_cols,
                                     "values": predictions[proba_cols].to_numpy().tolist()})
                         if proba_cols else None)
                p = pd.DataFrame({
                    "study": predictions["study"].astype(str),
                    "model": predictions["model"].astype(str), "repeat": predictions["repeat"],
                    "fold": predictions["fold"], "row": predictions["row"],
                    "y_true": [json.dumps(_py(v)) for v in predictions["y_true"]],
                    "y_pred": [json.dumps(_py(v)) for v in predictions["y_pred"]],
                    "proba": [proba] + [None] * (len(predictions) - 1),
                })
                con.register("_p", p)
                con.execute("INSERT INTO replikit_predictions SELECT * FROM _p")
                con.unregister("_p")
            con.execute("INSERT INTO replikit_tasks VALUES (?, ?, ?, ?)",
                        [key[0], key[1], int(key[2]), int(key[3])])
            con.execute("COMMIT")
        except Exception:
            con.execute("ROLLBACK")
            raise

    def load(self, keys: list[tuple], with_predictions: bool) -> dict:
        """Scores and predictions of the tasks ``keys`` as ``{key: (scores, predictions)}``."""
        out = {}
        scores = self.con.execute("SELECT * FROM replikit_scores").df()
        by_task_s = _groups(scores)
        by_task_p = {}
        if with_predictions:
            by_task_p = _groups(self.con.execute("SELECT * FROM replikit_predictions").df())
        for key in keys:
            s = by_task_s[key].reset_index(drop=True)
            p = None
            if with_predictions and key in by_task_p:
                raw = by_task_p[key].reset_index(drop=True)
                p = pd.DataFrame({c: raw[c] for c in ("study", "model", "repeat", "fold", "row")})
                p["y_true"] = [json.loads(v) for v in raw["y_true"]]
                p["y_pred"] = [json.loads(v) for v in raw["y_pred"]]
                first = raw["proba"].dropna()
                if len(first):
                    block = json.loads(first.iloc[0])
                    values = np.asarray(block["values"], float)
                    for j, c in enumerate(block["columns"]):
                        p[c] = values[:, j]
            out[key] = (s, p)
        return out

    def close(self) -> None:
        self.con.close()


def _groups(frame: pd.DataFrame) -> dict:
    if frame.empty:
        return {}
    idx = frame.groupby(list(_KEY), sort=False).indices
    return {(m, s, int(r), int(f)): frame.iloc[rows] for (m, s, r, f), rows in idx.items()}


def _py(v):
    return v.item() if isinstance(v, np.generic) else v

