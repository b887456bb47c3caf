"""Which model a fit belongs to, and whether it converged: the tally behind the command line's
one note per model ("lr did not converge in 1000 iterations on 3 of 50 fits").

Every model fit goes through :func:`replikit.experiment.fit.fit_predict`, which runs the fit
inside :func:`watched_fit`: the warnings of the fit are caught, the fit is counted for the
model named by :func:`model_fits` (the runner names each task's model; the error estimates
name theirs), with whether a ``ConvergenceWarning`` (scikit-learn's, or any class of that
name) came out of it, and then every caught warning is raised again, unchanged, under the
caller's filters. So a library user sees the warnings as before, and the command line, which
keeps library warnings quiet, can say per model how many fits stopped early — whatever
filters a section sets, and from worker processes too (the engine carries each task's
:func:`since` back and :func:`merge`\\ s it).

The tally is per process and only grows (a few numbers per model name); readers take a
:func:`tally` before and :func:`since` after their work.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
import warnings
from collections.abc import Iterator
from typing import Any

__all__ = ["model_fits", "current_model", "watched_fit", "replaying", "replay", "tally",
           "since", "merge", "is_convergence_warning", "max_iter_of"]

_MODEL: contextvars.ContextVar[str | None] = contextvars.ContextVar("replikit_fit_model",
                                                                    default=None)
_REPLAY: contextvars.ContextVar[bool] = contextvars.ContextVar("replikit_fit_replay",
                                                               default=False)
_LOCK = threading.Lock()
#: model (None: unnamed) -> [fits, fits that did not converge, max_iter of the last of those]
_TALLY: dict[str | None, list] = {}


@contextlib.contextmanager
def model_fits(model: str | None) -> Iterator[None]:
    """The fits made inside belong to ``model`` (a name the user gave)."""
    token = _MODEL.set(None if model is None else str(model))
    try:
        yield
    finally:
        _MODEL.reset(token)


def current_model() -> str | None:
    """The model the fits made now belong to (:func:`model_fits`), or None."""
    return _MODEL.get()


def replaying() -> bool:
    """Whether a warning raised now is one :func:`watched_fit` raises again (already counted)."""
    return _REPLAY.get()


@contextlib.contextmanager
def replay() -> Iterator[None]:
    """Mark the warnings raised inside as raised again (see :func:`replaying`)."""
    token = _REPLAY.set(True)
    try:
        yield
    finally:
        _REPLAY.reset(token)


def is_convergence_warning(category: type) -> bool:
    """Whether ``category`` is a ``ConvergenceWarning`` (scikit-learn's or another library's
    class of that name), without importing scikit-learn."""
    return isinstance(category, type) and any(
        c.__name__ == "ConvergenceWarning" for c in category.__mro__)


def max_iter_of(estimator: Any) -> int | None:
    """The estimator's ``max_iter`` (a pipeline's only one), or None."""
    try:
        params = estimator.get_params(deep=True)
    except Exception:  # noqa: BLE001 - not an estimator with parameters: nothing to say
        return None
    found = {v for k, v in params.items() if (k == "max_iter" or k.endswith("__max_iter"))
             and isinstance(v, int) and not isinstance(v, bool)}
    return found.pop() if len(found) == 1 else None


def _record(model: str | None, fits: int, failed: int, max_iter: int | None) -> None:
    with _LOCK:
        row = _TALLY.setdefault(model, [0, 0, None])
        row[0] += fits
        row[1] += failed
        if max_iter is not None:
            row[2] = max_iter


@contextlib.contextmanager
def watched_fit(estimator: Any) -> Iterator[None]:
    """Run one fit: count it for :func:`current_model`, note whether it converged, and raise
    its warnings again afterwards under the caller's filters (also when the fit fails; then
    the fit's own error is the one that propagates)."""
    caught: list = []
    done = False
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield
        done = True
        failed = any(is_convergence_warning(w.category) for w in caught)
        _record(current_model(), 1, int(failed), max_iter_of(estimator) if failed else None)
    finally:
        with replay(), contextlib.ExitStack() as stack:
            if not done:  # the fit failed: its error, not a warning made an error, propagates
                stack.enter_context(contextlib.suppress(Warning))
            for w in caught:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno,
                                       source=w.source)


def tally() -> dict[str | None, tuple]:
    """A copy of this process's tally: model -> (fits, not converged, max_iter)."""
    with _LOCK:
        return {k: tuple(v) for k, v in _TALLY.items()}


def since(before: dict[str | None, tuple]) -> dict[str | None, tuple]:
    """What the tally gained since ``before`` (a :func:`tally`): model -> (fits, not
    converged, max_iter)."""
    out = {}
    for model, (fits, failed, max_iter) in tally().items():
        f0, u0, _ = before.get(model, (0, 0, None))
        if fits > f0 or failed > u0:
            out[model] = (fits - f0, failed - u0, max_iter)
    return out


def merge(delta: dict[str | None, tuple], default_model: str | None = None) -> None:
    """Add a worker's :func:`since` to this process's tally; its unnamed fits belong to
    ``default_model`` (the model the caller's fits belong to)."""
    for model, (fits, failed, max_iter) in (delta or {}).items():
        _record(default_model if model is None else model, fits, failed, max_iter)
