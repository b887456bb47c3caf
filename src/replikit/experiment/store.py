"""A resumable DuckDB store of finished work: the runner's tasks and the audit's fit sets.

A store is replikit's own file. Layout (store format 3):

- ``replikit_meta(key, value)``: ``format`` = ``'3'``; ``owner`` = the hash of what the store
  belongs to (one :func:`~replikit.experiment.run` specification, or one audit: its data and
  settings) and ``owner_spec`` = that specification as JSON;
- ``replikit_runs(run_id, spec)``: every run the store holds results of (one for ``run``, one
  per fit set for an audit), ``run_id`` the hash of its specification;
- ``replikit_results(run_id, key, payload)``: one row per finished task, ``key`` the task's
  structured key as a JSON list (``["lr", "all", 0, 3]``: model, study, repeat, fold for the
  runner), ``payload`` its result in :mod:`replikit.experiment._codec` bytes (no pickle: opening
  a store never runs code) — read back bit for bit;
- ``replikit_scores(run_id, study, model, repeat, fold, metric, value, n_train, n_test)``: the
  runner's scores as a long table, for SQL (``SELECT model, avg(value) FROM replikit_scores ...``).

Finished tasks are committed by a writer thread as a group commit: as soon as one transaction
is done, the next takes every task finished meanwhile. A task is on disk milliseconds after it
finished, so a run killed even by SIGKILL loses only the tasks in flight (and any finished in
the last commit's milliseconds), while many small tasks share one transaction and the fits never
wait for the disk. Opening a store
checks, before DuckDB touches the file, that it is a DuckDB database (magic bytes: an SQLite
``results.db`` is refused, never handed to DuckDB, which would try to load an extension), that
it holds no table replikit did not write (a user's database is never written into) and that no
other process has it open (DuckDB's file lock: the second of two concurrent runs is refused with
one line). A store belonging to another run specification or another audit is a
:class:`~replikit.errors.StoreError` naming what differs, unless ``clear=True``, which deletes
the stored results — and only replikit's tables. A store of an older format is refused the same
way (its tables stay as they are, readable with SQL).
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from pathlib import Path

from .._compat import dropped
from ..data.io import check_duckdb_file, connect_duckdb
from ..errors import StoreError

__all__ = ["TaskStore", "check_store", "STORE_TABLES", "STORE_FORMAT"]

STORE_FORMAT = "3"
#: The tables of every store format replikit has written (format 2 had ``replikit_tasks`` and
#: ``replikit_predictions``): a file holding only these is replikit's own.
STORE_TABLES = ("replikit_meta", "replikit_runs", "replikit_results", "replikit_scores",
                "replikit_tasks", "replikit_predictions")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS replikit_meta (key VARCHAR PRIMARY KEY, value VARCHAR);
CREATE TABLE IF NOT EXISTS replikit_runs (run_id VARCHAR PRIMARY KEY, spec VARCHAR);
CREATE TABLE IF NOT EXISTS replikit_results (
    run_id VARCHAR, "key" VARCHAR, payload BLOB, PRIMARY KEY (run_id, "key"));
CREATE TABLE IF NOT EXISTS replikit_scores (
    run_id VARCHAR, study VARCHAR, model VARCHAR, "repeat" BIGINT, fold BIGINT,
    metric VARCHAR, value DOUBLE, n_train BIGINT, n_test BIGINT);
"""
#: Seconds between the starts of two commits at least (the environment variable
#: ``REPLIKIT_STORE_INTERVAL`` sets another): a task is on disk at most this long, plus one
#: commit, after it finished.
COMMIT_INTERVAL = float(os.environ.get("REPLIKIT_STORE_INTERVAL", "0.2"))
_SCORE_COLUMNS = ["study", "model", "repeat", "fold", "metric", "value", "n_train", "n_test"]
_SCORE_SQL = ", ".join(f'"{c}"' for c in _SCORE_COLUMNS)


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
    """'new', 'current' or 'old' (an earlier store format); refuse a file holding other
    tables."""
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
    if row is not None and row[0] in ("1", "2"):
        return "old"
    if row is None or row[0] != STORE_FORMAT:
        found = "?" if row is None else row[0]
        raise StoreError(f"`{option}`: {str(path)!r} has store format {found}; this replikit "
                         f"reads format {STORE_FORMAT}; {_clear_hint(clear_option)}.")
    return "current"


def _old_format_error(path: Path, option: str, clear_option: str) -> StoreError:
    return StoreError(
        f"`{option}`: {str(path)!r} was written by an older replikit (store format 1 or 2: one "
        "run per store, results as text); its results cannot be resumed by this replikit, "
        f"though its tables stay readable with SQL — {_clear_hint(clear_option)}.")


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
    """An open store: the finished tasks of the runs of one owner (a run specification or an
    audit), committed in batches (see the module docstring).

    Parameters
    ----------
    path : path-like
        A DuckDB file of replikit's own, or a new path.
    spec : dict
        What the store belongs to: a run's specification (scheme, metrics, data fingerprint,
        models, random state) or an audit's (data fingerprint and settings); ``spec['kind']``
        names it in messages (default ``'run'``).
    spec_hash : str
        Its hash; a store belonging to another one is refused unless ``clear``.
    clear : bool, default False
        Delete the stored results (replikit's tables only) and start afresh.

    Raises
    ------
    StoreError
        The path cannot be a store, or belongs to another run or audit.

    See Also
    --------
    check_store : The same checks, before any work, writing nothing.
    replikit.experiment.run : Opens one with ``store=``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as d:
    ...     store = TaskStore(pathlib.Path(d) / "run.duckdb", {"scheme": "5x2"}, "abc")
    ...     store.add("r1", ["lr", 0], b"result")  # committed by a writer thread
    ...     store.flush()
    ...     print(store.done("r1"), store.load("r1", ['["lr", 0]']))
    ...     store.close()
    {'["lr", 0]'} {'["lr", 0]': b'result'}
    """

    @dropped("option", "clear_option")
    def __init__(self, path, spec: dict, spec_hash: str, *, clear: bool = False) -> None:
        option, clear_option = _OPTION, _CLEAR
        self.path = Path(path).expanduser()
        _check_path(self.path, option)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.con = connect_duckdb(self.path, name=option, error=StoreError)
        # DuckDB's own worker threads would compete with the fits for the cores; a store's
        # inserts and lookups are small
        self.con.execute("SET threads TO 1")
        self._queue: list[tuple] = []
        self._runs: dict[str, str] = {}
        self._lock = threading.Lock()  # one user of the connection at a time
        self._wake = threading.Condition()
        self._writer: threading.Thread | None = None
        self._writing = self._stop = self._flushing = False
        self._error: BaseException | None = None
        #: transactions committed (one per batch) and tasks written, for the benchmarks
        self.n_commits = self.n_written = 0
        try:
            self._open(spec, spec_hash, clear, option, clear_option)
        except BaseException:
            self.con.close()
            raise

    def _open(self, spec, spec_hash, clear, option, clear_option) -> None:
        con = self.con
        kind = _inspect(con, self.path, option, clear_option)
        if kind == "old" and not clear:
            raise _old_format_error(self.path, option, clear_option)
        # one transaction (one sync to disk: opening a new store is part of every stored run)
        # that a refusal rolls back, leaving the file as it was
        con.execute("BEGIN TRANSACTION")
        try:
            if kind == "old":
                for table in STORE_TABLES:
                    con.execute(f"DROP TABLE IF EXISTS {table}")
            con.execute(_SCHEMA)
            con.execute("INSERT OR IGNORE INTO replikit_meta VALUES ('format', ?)",
                        [STORE_FORMAT])
            meta = dict(con.execute("SELECT key, value FROM replikit_meta").fetchall())
            stored = meta.get("owner")
            if stored is not None and stored != spec_hash and not clear:
                old = json.loads(meta.get("owner_spec", "{}"))
                diff = sorted(k for k in set(old) | set(spec) if old.get(k) != spec.get(k))
                what = ("audit" if spec.get("kind") == "audit" else "run specification")
                raise StoreError(
                    f"`{option}`: {str(self.path)!r} holds results of a different {what} "
                    f"(differs in: {', '.join(diff) or 'settings'}); "
                    f"{_clear_hint(clear_option)}.")
            if stored != spec_hash or clear:
                for table in ("replikit_runs", "replikit_results", "replikit_scores"):
                    con.execute(f"DELETE FROM {table}")
                con.execute("INSERT OR REPLACE INTO replikit_meta VALUES ('owner', ?)",
                            [spec_hash])
                con.execute("INSERT OR REPLACE INTO replikit_meta VALUES ('owner_spec', ?)",
                            [json.dumps(spec, sort_keys=True, default=str)])
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise

    def register(self, run_id: str, spec: dict) -> None:
        """Record a run (one fit set) of the owner; its tasks are stored under ``run_id``."""
        text = json.dumps(spec, sort_keys=True, default=str)
        if self._runs.get(run_id) == text:
            return
        with self._lock:
            self.con.execute("INSERT OR IGNORE INTO replikit_runs VALUES (?, ?)", [run_id, text])
        self._runs[run_id] = text

    def done(self, run_id: str) -> set[str]:
        """Keys (JSON lists) of the finished tasks of ``run_id`` (committed or queued)."""
        with self._lock:
            rows = self.con.execute('SELECT "key" FROM replikit_results WHERE run_id = ?',
                                    [run_id]).fetchall()
            queued = {k for r, k, _, _ in self._queue if r == run_id}
        return {k for (k,) in rows} | queued

    def add(self, run_id: str, key, payload: bytes, rows=None) -> None:
        """Queue one finished task (``key``: a JSON list, or a list to encode as one; ``rows``:
        ``(make, item)`` where ``make([item, ...])`` gives the task's scores rows for the long
        SQL table, called once per commit for all its tasks). A writer thread commits what is
        queued as soon as its previous commit is done (group commit): the task is on disk a
        commit's time (milliseconds) after it finished, and many small tasks share one
        transaction."""
        self._raise_writer_error()
        text = key if isinstance(key, str) else json.dumps(list(key))
        with self._wake:
            self._queue.append((run_id, text, payload, rows))
            if self._writer is None:
                self._writer = threading.Thread(target=self._write_loop, daemon=True,
                                                 name="replikit-store-writer")
                self._writer.start()
            if len(self._queue) == 1:
                # wake the writer only when it may be waiting for work: while it waits out the
                # commit interval or commits, a wake-up per task would only make it take the
                # interpreter from the fits (a thread switch per task)
                self._wake.notify()

    def _write_loop(self) -> None:
        last = -float("inf")
        while True:
            with self._wake:
                while not self._queue and not self._stop:
                    self._wake.wait()
                # at most one commit per COMMIT_INTERVAL: the fits keep the interpreter
                wait = last + COMMIT_INTERVAL - time.monotonic()
                while wait > 0 and not self._stop and not self._flushing:
                    self._wake.wait(wait)
                    wait = last + COMMIT_INTERVAL - time.monotonic()
                last = time.monotonic()
                if not self._queue and self._stop:
                    return
                batch, self._queue = self._queue, []
                self._writing = True
            try:
                self._commit(batch)
            except BaseException as exc:  # raised in the caller at the next add/flush
                self._error = exc
            finally:
                with self._wake:
                    self._writing = False
                    self._wake.notify_all()

    def _commit(self, batch) -> None:
        import pyarrow as pa

        # Arrow tables inserted with one INSERT ... SELECT each: the writer holds the
        # interpreter (which the fits need) for less time than with pandas frames and
        # `append` (about 15 ms of fixed cost per table and commit)
        results = pa.table({"run_id": pa.array([b[0] for b in batch], pa.string()),
                            "key": pa.array([b[1] for b in batch], pa.string()),
                            "payload": pa.array([b[2] for b in batch], pa.binary())})
        groups: dict = {}  # (run_id, make) -> items, in order
        for run_id, _, _, rows in batch:
            if rows is not None:
                groups.setdefault((run_id, rows[0]), []).append(rows[1])
        scores = [(run_id, pa.Table.from_pandas(make(items), columns=_SCORE_COLUMNS,
                                                preserve_index=False))
                  for (run_id, make), items in groups.items()]
        with self._lock:
            con = self.con
            con.execute("BEGIN TRANSACTION")
            try:
                con.register("replikit_new_results", results)
                con.execute('INSERT INTO replikit_results SELECT run_id, "key", payload '
                            "FROM replikit_new_results")
                for run_id, table in scores:
                    con.register("replikit_new_scores", table)
                    con.execute(f"INSERT INTO replikit_scores SELECT ?, {_SCORE_SQL} "
                                "FROM replikit_new_scores", [run_id])
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
            finally:
                con.unregister("replikit_new_results")
                con.unregister("replikit_new_scores")
        self.n_commits += 1
        self.n_written += len(batch)

    def _raise_writer_error(self) -> None:
        if self._error is not None:
            exc, self._error = self._error, None
            raise StoreError(f"`{_OPTION}`: writing to {str(self.path)!r} failed: "
                             f"{' '.join(str(exc).split())[:300]}") from exc

    def flush(self) -> None:
        """Wait until every queued task is committed."""
        with self._wake:
            self._flushing = True
            self._wake.notify_all()
            while self._queue or self._writing:
                self._wake.wait()
            self._flushing = False
        self._raise_writer_error()

    def load(self, run_id: str, keys) -> dict[str, bytes]:
        """The stored payloads of ``keys`` (JSON lists) of ``run_id`` that are finished."""
        self.flush()
        wanted = set(keys)
        with self._lock:
            rows = self.con.execute('SELECT "key", payload FROM replikit_results '
                                    'WHERE run_id = ?', [run_id]).fetchall()
        return {k: bytes(p) for k, p in rows if k in wanted}

    def close(self) -> None:
        """Commit what is queued and close the file."""
        try:
            self.flush()
        finally:
            with self._wake:
                self._stop = True
                self._wake.notify_all()
            if self._writer is not None:
                self._writer.join()
            self.con.close()
