"""Where fits run and where finished ones are kept: one :class:`Engine` for a whole analysis.

An engine carries the backend (the calling process, joblib worker processes, or a Dask cluster
at a scheduler's address), the number of workers and, optionally, an open store
(:class:`~replikit.experiment.store.TaskStore`). :meth:`Engine.map` runs a function over a list
of independent tasks and returns the results in the tasks' order: it skips the tasks the store
already holds (reading their results back bit for bit), sends the others to the backend, and
commits each finished one to the store in batches. The runner's fits go through it, and so do
the audit's other fit sets, so one ``--scheduler`` sends every fit of an audit to one cluster
and one ``--store`` makes the whole audit resumable.

Reproducibility rests on the tasks, not on the engine: each task carries everything random about
it (its seed is derived from the run's root and the task's key), so the results do not depend on
the backend, the worker count, the order in which tasks finish, or which of them were resumed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._compat import dropped
from .._threads import fit_limits, worker_limits
from .._validation import check_choice, check_int
from ..errors import ParameterError

__all__ = ["Engine", "BACKENDS", "spec_hash", "connect_scheduler", "SCHEDULER_TIMEOUT",
           "run_options", "data_fingerprint", "MEMORY_GOAL", "WORKER_BASE_BYTES",
           "REFIT_CELL_BYTES", "RELEASE_SHARE", "refit_bytes", "memory_workers", "resident_bytes"]

BACKENDS = ("serial", "joblib", "dask")
SCHEDULER_TIMEOUT = 5.0  # seconds to reach a Dask scheduler before giving up

#: The memory goal of an analysis on one machine (the audit of 1,000,000 rows within 4 GiB,
#: docs/performance.md): the resident memory of the calling process and of the joblib workers
#: running at once. :meth:`Engine.map` runs fewer local workers when ``workers x`` a task's
#: expected memory (:func:`refit_bytes`) would take the sum above it (down to one task at a
#: time, in the calling process); the numbers do not change, only the time. A Dask cluster
#: keeps its own limits (its workers' ``memory_limit``).
MEMORY_GOAL = 4 * 2**30
#: A joblib worker's own resident memory before its task's arrays: the interpreter, numpy,
#: pandas and scikit-learn, and the pages of the shared data it touches (measured about 0.3 GB).
WORKER_BASE_BYTES = 300_000_000
#: Resident bytes a refit holds per training cell (rows x encoded columns) at its peak, about
#: five float64 copies: the resample taken from the data, the pipeline's transformed copy
#: (a scaler, level codes), the estimator's validated float copy and its own working arrays
#: (gradient boosting's early-stopping split and binned copy, least squares' centred copy).
#: Measured in the 1,000,000-row audit: histogram gradient boosting on 1,000,000 bootstrap
#: rows x 34 columns about 1.4 GiB per worker, linear regression on 980,000 rows about
#: 1.3 GiB (``docs/performance.md``, "The audit at a million rows").
REFIT_CELL_BYTES = 40
#: After a :meth:`Engine.map` whose tasks each need at least this share of the memory goal,
#: the idle joblib workers are stopped (the next map starts new ones, about a second): they
#: would hold their pages beside this process while it assembles the results.
RELEASE_SHARE = 0.125


def refit_bytes(rows: int, columns: int) -> int:
    """The resident memory one refit on ``rows`` training rows of ``columns`` encoded columns
    is expected to need in a joblib worker: :data:`WORKER_BASE_BYTES` plus
    :data:`REFIT_CELL_BYTES` per training cell.

    Examples
    --------
    >>> round(refit_bytes(1_000_000, 34) / 2**30, 2)
    1.55
    """
    return int(WORKER_BASE_BYTES + REFIT_CELL_BYTES * max(0, int(rows)) * max(1, int(columns)))


def memory_workers(n_jobs: int, task_bytes: int | None, *, resident: int,
                   goal: int | None = MEMORY_GOAL) -> int:
    """How many of ``n_jobs`` workers may run tasks of ``task_bytes`` at once beside a calling
    process holding ``resident`` bytes, within ``goal``: ``floor((goal - resident) /
    task_bytes)``, between 1 and ``n_jobs`` (all of them without an estimate or a goal).

    Examples
    --------
    >>> GiB = 2**30
    >>> memory_workers(2, GiB, resident=GiB), memory_workers(2, 2 * GiB, resident=GiB)
    (2, 1)
    >>> memory_workers(4, None, resident=3 * GiB), memory_workers(2, 5 * GiB, resident=0)
    (4, 1)
    """
    if not task_bytes or goal is None or n_jobs <= 1:
        return max(1, n_jobs)
    return int(min(n_jobs, max(1, (goal - resident) // task_bytes)))


def resident_bytes() -> int:
    """The calling process's resident memory (``/proc/self/statm``; psutil elsewhere; 0 when
    neither is available)."""
    import os

    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        pass
    try:
        import psutil

        return int(psutil.Process().memory_info().rss)
    except Exception:  # noqa: BLE001 - no way to measure: no limit from this side
        return 0


def spec_hash(spec: dict) -> str:
    """A short hash of a JSON-able specification (sorted keys)."""
    text = json.dumps(spec, sort_keys=True, default=str)
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


@dropped("option")
def connect_scheduler(address: str, *, timeout: float = SCHEDULER_TIMEOUT):
    """A ``dask.distributed.Client`` for the scheduler at ``address``, or one clear
    :class:`~replikit.errors.ParameterError` naming `client` after ``timeout`` seconds."""
    option = "client"
    try:
        from dask.distributed import Client
    except ImportError:
        raise ParameterError(f"`{option}`: the Dask backend needs the `dask` extra (pip install "
                             "'replikit[dask]').") from None
    try:
        return Client(address, timeout=f"{timeout}s")
    except (OSError, TimeoutError, ValueError) as exc:
        detail = " ".join(str(exc).split())[:200]
        raise ParameterError(f"`{option}`: cannot reach a Dask scheduler at {address!r} within "
                             f"{timeout:g} s ({type(exc).__name__}: {detail}).") from None


def data_fingerprint(*parts) -> str:
    """A hash of data: DataFrames, Series and arrays (``None`` skipped), column names, dtypes
    and values. Vectorised (pandas' row hashes), so a million mixed-type rows take about a
    second, not the minutes a text rendering of every value would."""
    import numpy as np
    import pandas as pd

    h = hashlib.blake2b(digest_size=16)
    for part in parts:
        if part is None:
            h.update(b"<none>")
            continue
        if isinstance(part, pd.DataFrame | pd.Series):
            frame = part.to_frame() if isinstance(part, pd.Series) else part
            h.update(repr([(str(c), str(t)) for c, t in frame.dtypes.items()]).encode())
            h.update(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())
            continue
        arr = np.asarray(part)
        h.update(f"{arr.dtype}{arr.shape}".encode())
        if arr.dtype == object or arr.dtype.hasobject:
            flat = pd.DataFrame(arr.reshape(len(arr), -1) if arr.ndim else arr.reshape(1, 1))
            types = {type(v).__name__ for v in flat.to_numpy().ravel()[:1000]}
            h.update(repr(sorted(types)).encode())
            h.update(pd.util.hash_pandas_object(flat, index=False).to_numpy().tobytes())
        else:
            h.update(np.ascontiguousarray(arr).tobytes())
    return h.hexdigest()


def run_options(engine: Engine | None = None, n_jobs: int | None = 1) -> dict:
    """The keyword arguments of :func:`~replikit.experiment.run` for a capability's fits: the
    analysis's ``engine`` (every fit of an audit goes to its backend and store) or, without
    one, ``n_jobs`` joblib processes (serial for one)."""
    if engine is not None:
        return {"engine": engine}
    n = n_jobs or 1
    return {"backend": "joblib" if n > 1 else "serial", "n_jobs": n if n > 1 else None}


def _call_serial(fn, task, shared):
    """A task in the calling process: one BLAS and one OpenMP thread around it (the thread
    policy of :mod:`replikit._threads`: parallelism is over tasks)."""
    with fit_limits():
        return fn(task, *shared)


def _call_worker(index, fn, task, shared):
    """A task in a joblib or Dask worker: one BLAS and one OpenMP thread, so that workers x
    threads never exceeds the cores. Its warnings travel back with the result and are raised
    again in the calling process, under its filters (a worker's stderr would print them
    unfiltered, interleaved with progress lines); so does the task's count of fits and of
    fits that did not converge (:mod:`replikit._convergence`)."""
    import warnings

    from .. import _convergence

    records: dict = {}  # one record per distinct warning of the task, in order

    def keep(message, category, filename, lineno, file=None, line=None):
        records[(str(message), category, filename, lineno, _convergence.replaying())] = None

    before = _convergence.tally()
    with worker_limits(), warnings.catch_warnings():
        warnings.simplefilter("default")
        warnings.showwarning = keep
        out = fn(task, *shared)
    return index, out, (tuple(records), _convergence.since(before))


def _release_idle_workers() -> None:
    """Stop the idle joblib (loky) workers of earlier maps, whose memory would sit beside
    tasks run one at a time in this process (a later map starts new ones: about a second)."""
    try:
        from joblib.externals.loky import reusable_executor
    except ImportError:  # pragma: no cover - joblib always ships loky
        return
    executor = getattr(reusable_executor, "_executor", None)
    if executor is not None:
        with contextlib.suppress(Exception):
            executor.shutdown(wait=True, kill_workers=True)


def _reraise(returned) -> None:
    """A worker's warnings raised again here, and its fits added to this process's tally (its
    unnamed fits belong to the model this process's fits belong to now)."""
    import warnings

    from .. import _convergence

    if len(returned) == 2 and isinstance(returned[1], dict):
        records, fitted = returned
    else:  # a worker of an earlier replikit: its warnings only, no count of fits
        records, fitted = returned, {}
    _convergence.merge(fitted, _convergence.current_model())
    for message, category, filename, lineno, *replayed in records:
        with _convergence.replay() if any(replayed) else contextlib.nullcontext():
            warnings.warn_explicit(message, category, filename, lineno)


@dataclass
class Engine:
    """Where an analysis runs its tasks, and the store that keeps finished ones.

    Parameters
    ----------
    backend : {'serial', 'joblib', 'dask'}, default 'serial'
        The calling process, joblib (loky) worker processes, or Dask.
    n_jobs : int, optional
        Workers for joblib, or for a local Dask cluster made when no ``client`` is given.
    client : dask.distributed.Client or str, optional
        A Dask client or a scheduler address (``backend='dask'``); an address is connected
        once, when the engine is first used, and closed by :meth:`close`.
    store : TaskStore, optional
        An open store; :meth:`map` resumes from it and commits to it.
    memory_goal : int or None, default MEMORY_GOAL
        Bytes the calling process and the joblib workers running at once should stay within
        (:data:`MEMORY_GOAL`): a :meth:`map` given the expected memory of one task runs fewer
        joblib workers when all of them would exceed it (``None``: no limit). What it did is
        kept in ``memory_notes``. Serial and Dask backends are not affected.

    Examples
    --------
    >>> from operator import add
    >>> with Engine() as engine:
    ...     engine.map(add, [1, 2, 3], shared=(10,))
    [11, 12, 13]
    """

    backend: str = "serial"
    n_jobs: int | None = None
    client: Any = None
    store: Any = None
    memory_goal: int | None = MEMORY_GOAL
    _own_client: Any = field(default=None, repr=False)
    #: tasks of the last :meth:`map` read back from the store instead of run
    last_resumed: int = field(default=0, repr=False)
    #: joblib workers the last :meth:`map` ran at once (its backend's ``workers`` otherwise)
    last_workers: int = field(default=0, repr=False)
    #: one sentence per :meth:`map` that ran fewer workers to stay within ``memory_goal``
    memory_notes: list = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        self.backend = check_choice(self.backend, "backend", BACKENDS)
        if self.client is not None and self.backend != "dask":
            raise ParameterError(f"`client` is a Dask scheduler; it needs backend='dask' (got "
                                 f"backend={self.backend!r}).")
        if self.n_jobs is not None and self.n_jobs != -1:
            self.n_jobs = check_int(self.n_jobs, "n_jobs", min_value=1)

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc) -> bool:
        self.close()
        return False

    @property
    def workers(self) -> int:
        """Tasks in flight at once (1 for the serial backend)."""
        if self.backend == "serial":
            return 1
        if self.backend == "dask" and self._dask() is not None:
            return max(1, sum(self._dask().nthreads().values()))
        if self.n_jobs in (None, -1):
            import os

            return os.cpu_count() or 1
        return int(self.n_jobs)

    def _dask(self):
        if self.backend != "dask":
            return None
        if isinstance(self.client, str):
            self.client = self._own_client = connect_scheduler(self.client)
        if self.client is None:
            from dask.distributed import Client

            self.client = self._own_client = Client(
                n_workers=self.n_jobs if self.n_jobs not in (None, -1) else 1,
                threads_per_worker=1, processes=True, dashboard_address=None)
        return self.client

    def close(self) -> None:
        """Commit and close the store; close a Dask client this engine connected."""
        try:
            if self.store is not None:
                self.store.close()
                self.store = None
        finally:
            if self._own_client is not None:
                self._own_client.close()
                self._own_client = self.client = None

    def map(self, fn: Callable, tasks: Sequence, *, shared: tuple = (),
            keys: Sequence | None = None, run_id: str | None = None, spec: dict | None = None,
            encode: Callable | None = None, decode: Callable | None = None,
            rows: Callable | None = None, on_result: Callable | None = None,
            task_bytes: int | None = None, label: str = "") -> list:
        """``[fn(task, *shared) for task in tasks]``, run on the backend, resumed from and
        committed to the store.

        Parameters
        ----------
        fn : callable
            A module-level function (it travels to worker processes).
        tasks : sequence
            The tasks, each carrying its own seed: results must not depend on where or in
            which order they run.
        shared : tuple
            Arguments every task shares (the data): sent to each Dask worker once.
        keys : sequence, optional
            A JSON-able key per task (a list or tuple of str and int), unique within the run;
            needed with a store.
        run_id : str, optional
            The run the keys belong to (the hash of its specification, :func:`spec_hash`);
            needed with a store.
        spec : dict, optional
            The run's specification, recorded in the store with ``run_id``.
        encode, decode : callable, optional
            A result to a tree :mod:`replikit.experiment._codec` stores, and back
            (``decode(tree, task)``); default: the result as it is.
        rows : callable, optional
            Results (a list) to a scores frame the store also keeps as a long SQL table;
            called once per commit (a module-level function or a stable object).
        on_result : callable, optional
            Called with no argument after each task (progress).
        task_bytes : int, optional
            The memory one task is expected to need in a worker (:func:`refit_bytes`): with
            the joblib backend, no more workers run at once than fit beside this process
            within ``memory_goal`` (:func:`memory_workers`; one means the tasks run one at a
            time in this process). The results do not depend on it.
        label : str, optional
            What the tasks are (``"gb's bootstrap refits"``), for the note in ``memory_notes``
            when fewer workers ran.

        Returns
        -------
        list
            The results in the order of ``tasks``.
        """
        from . import _codec

        tasks = list(tasks)
        self.last_resumed = 0
        results: list = [None] * len(tasks)
        store = self.store if run_id is not None else None
        todo = list(range(len(tasks)))
        texts: list[str] = []
        if store is not None:
            if keys is None or len(keys) != len(tasks):
                raise ParameterError("`keys`: a stored map needs one key per task.")
            texts = [json.dumps(list(k)) for k in keys]
            if len(set(texts)) != len(texts):
                raise ParameterError("`keys`: two tasks have the same key.")
            store.register(run_id, spec or {})
            stored = store.load(run_id, texts)
            todo = []
            for i, text in enumerate(texts):
                if text in stored:
                    tree = _codec.unpack(stored[text])
                    results[i] = decode(tree, tasks[i]) if decode else tree
                    self.last_resumed += 1
                    if on_result is not None:
                        on_result()
                else:
                    todo.append(i)
        n_jobs = self._memory_jobs(task_bytes, label) if todo else None
        try:
            for i, out in self._stream(fn, tasks, todo, shared, n_jobs):
                results[i] = out
                if store is not None:
                    tree = encode(out) if encode else out
                    store.add(run_id, texts[i], _codec.pack(tree),
                              (rows, out) if rows else None)
                if on_result is not None:
                    on_result()
        finally:
            if store is not None:
                store.flush()
            if (self.backend == "joblib" and n_jobs != 1 and task_bytes
                    and self.memory_goal is not None
                    and task_bytes >= self.memory_goal * RELEASE_SHARE):
                # idle workers keep a large task's pages (the shared data they mapped) while
                # this process assembles the results: 1,000,000 rows' pooled CV, 2 x 0.6 GiB
                _release_idle_workers()
        return results

    def _memory_jobs(self, task_bytes: int | None, label: str) -> int | None:
        """The joblib workers of one :meth:`map` (``None``: the engine's own ``n_jobs``)."""
        self.last_workers = self.workers if self.backend != "dask" or self.client else 0
        if self.backend != "joblib" or not task_bytes or self.memory_goal is None:
            return None
        wanted = self.workers
        resident = resident_bytes()
        n = memory_workers(wanted, task_bytes, resident=resident, goal=self.memory_goal)
        self.last_workers = n
        if n >= wanted:
            return None
        gib = 2**30
        what = label or "the fits"
        how = "one at a time" if n == 1 else f"{n} at a time"
        note = (f"ran {what} {how} instead of {wanted} to stay within the "
                f"{self.memory_goal / gib:g} GiB memory goal (each about "
                f"{task_bytes / gib:.1f} GiB beside {resident / gib:.1f} GiB in use)")
        if note not in self.memory_notes:
            self.memory_notes.append(note)
        if n == 1:
            _release_idle_workers()
        return n

    def _stream(self, fn, tasks, todo, shared, n_jobs=None):
        if not todo:
            return
        if self.backend == "serial" or n_jobs == 1:  # one at a time (also when the memory
            # goal allows one worker): in this process, no worker holding a copy of the data
            for i in todo:
                yield i, _call_serial(fn, tasks[i], shared)
        elif self.backend == "joblib":
            from joblib import Parallel, delayed

            par = Parallel(n_jobs=n_jobs or self.n_jobs or -1, backend="loky",
                           return_as="generator_unordered")
            for i, out, warned in par(delayed(_call_worker)(i, fn, tasks[i], shared)
                                      for i in todo):
                _reraise(warned)
                yield i, out
        else:
            yield from self._stream_dask(fn, tasks, todo, shared)

    def _stream_dask(self, fn, tasks, todo, shared):
        import uuid

        from dask.distributed import as_completed

        client = self._dask()
        shared_f = [client.scatter(a, broadcast=True) for a in shared]
        tag = uuid.uuid4().hex[:12]  # keys unique per map: a cluster may serve many clients
        futures = [client.submit(_call_worker, i, fn, tasks[i], shared_f,
                                 key=f"replikit-{tag}-{i}", pure=False) for i in todo]
        try:
            for fut in as_completed(futures):
                i, out, warned = fut.result()
                _reraise(warned)
                yield i, out
        finally:
            client.cancel(futures)
