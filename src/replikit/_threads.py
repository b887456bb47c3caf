"""One thread policy for replikit's numerical work (threadpoolctl).

replikit parallelises over *tasks* — resamples, folds, studies, repetitions — never inside one
small matrix product. A multi-threaded BLAS on the small matrices of a batched fit only adds
synchronisation, and when the machine is busy its spinning threads compete with replikit's own
workers (a ``replikit estimate`` that takes 5 s on one thread per BLAS call was seen taking
over 17 minutes under load). So:

- **BLAS: one thread** inside every batched numpy path (:func:`single_blas`, also usable as a
  decorator) and around every model fit of the runner, serial or in a worker.
- **OpenMP: one thread around every model fit** of the runner (:func:`fit_limits`), serial or
  in a joblib/Dask worker (:func:`worker_limits`), so that workers × threads never exceeds the
  cores. The fits replikit runs are many and small (folds, resamples, studies); an OpenMP
  team per fit only synchronises, and on a busy machine its spinning threads starve: scikit-
  learn's histogram gradient boosting on 1,000 × 20 rows took 124 s for three fits with the
  default OpenMP threads beside other work on 2 cores, 2.8 s with one thread. To use more
  cores, run tasks in parallel (``n_jobs``).

Limits nest: an inner limit inside an outer one is a no-op. The controller that finds the
loaded BLAS/OpenMP libraries is cached (building one costs ~3 ms; applying it ~20 µs) and built
again when new modules have been imported, which may have loaded new libraries.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

__all__ = ["single_blas", "worker_limits", "fit_limits", "limit_threads"]

F = TypeVar("F", bound=Callable[..., Any])

_state = threading.local()
_cache: dict[str, Any] = {"controller": None, "n_modules": -1}


def _controller():
    n_modules = len(sys.modules)
    if _cache["controller"] is None or _cache["n_modules"] != n_modules:
        from threadpoolctl import ThreadpoolController

        _cache["controller"] = ThreadpoolController()
        _cache["n_modules"] = n_modules
    return _cache["controller"]


@contextlib.contextmanager
def limit_threads(*, blas: int | None = 1, openmp: int | None = None) -> Iterator[None]:
    """Limit BLAS and/or OpenMP thread pools within the block (``None`` leaves a pool alone).

    Nested calls with the same or looser limits do nothing, so library functions can state
    their policy without paying for it twice.
    """
    key = (blas, openmp)
    active = getattr(_state, "active", None)
    if active is not None and _covers(active, key):
        yield
        return
    controller = _controller()
    limiters = []
    try:
        if blas is not None:
            limiters.append(controller.limit(limits=blas, user_api="blas"))
        if openmp is not None:
            limiters.append(controller.limit(limits=openmp, user_api="openmp"))
        _state.active = key if active is None else _merge(active, key)
        yield
    finally:
        _state.active = active
        for lim in reversed(limiters):
            lim.restore_original_limits()


def _covers(active: tuple, wanted: tuple) -> bool:
    return all(w is None or (a is not None and a <= w) for a, w in zip(active, wanted,
                                                                       strict=True))


def _merge(active: tuple, wanted: tuple) -> tuple:
    return tuple(w if a is None else (a if w is None else min(a, w))
                 for a, w in zip(active, wanted, strict=True))


def single_blas(func: F | None = None):
    """One BLAS thread: ``with single_blas():`` or ``@single_blas`` on a batched numpy
    function."""
    if func is None:
        return limit_threads(blas=1)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with limit_threads(blas=1):
            return func(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def worker_limits():
    """The limits inside a joblib or Dask worker: one BLAS and one OpenMP thread."""
    return limit_threads(blas=1, openmp=1)


def fit_limits():
    """The limits around a model fit in the calling process: one BLAS and one OpenMP thread
    (the same as in a worker; parallelism is over tasks)."""
    return limit_threads(blas=1, openmp=1)


def usable_cores(most: int = 8) -> int:
    """CPU cores this process may use (its affinity mask where the OS has one), at most
    ``most``: the default number of workers of the commands that parallelise over tasks or
    blocks (their numbers do not depend on it)."""
    import os

    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(most, cores))
