"""The command line's one policy for warnings (:func:`warning_policy`, set by
``replikit.cli.main`` around every command).

* replikit's own warnings (:class:`~replikit.errors.ReplikitWarning` and its subclasses): one
  line each, ``replikit: warning: ...``, the parameters they name shown as the command's flags;
  a warning already said is not said again.
* fits that did not converge: one note per model when the command ends, ``replikit: note: lr
  did not converge in 1000 iterations on 3 of 50 fits ...``, from the tally every fit keeps
  (:mod:`replikit._convergence`), whatever filters the work set on the way.
* every other warning of the libraries replikit calls (scikit-learn, numpy, scipy, pandas,
  matplotlib): quiet; ``--debug`` shows them as Python does.

The library itself (the Python API) keeps Python's own handling of warnings: only the command
line installs this policy.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import warnings
from collections.abc import Iterator

import typer

from .. import _convergence
from .._labels import escape_controls
from ..errors import ReplikitWarning

__all__ = ["WarningPolicy", "warning_policy", "active_policy"]

_ACTIVE: list[WarningPolicy] = []


class WarningPolicy:
    """What a command does with the warnings raised while it runs (see the module)."""

    def __init__(self, debug: bool = False, *, quiet=lambda: False, render=lambda t: t) -> None:
        self.debug = debug
        self.quiet = quiet  # --quiet: no diagnostics
        self.render = render  # the messages' parameters as the command's flags
        self._said: set[str] = set()
        self._lock = threading.Lock()
        self._before = _convergence.tally()

    def show(self, message, category, filename, lineno, file=None, line=None) -> None:
        """``warnings.showwarning`` while a command runs."""
        if isinstance(category, type) and issubclass(category, ReplikitWarning):
            self.say(str(message))
        elif self.debug:  # as Python shows a warning, on stderr
            try:
                (file or sys.stderr).write(
                    warnings.formatwarning(message, category, filename, lineno, line))
            except (OSError, ValueError):  # stderr closed: nothing to show it on
                pass

    def say(self, text: str, *, prefix: str = "replikit: warning: ",
            flags: dict[str, str] | None = None) -> bool:
        """Print one warning line (its parameters as the command's flags, or as ``flags``
        maps them), unless the same text was said already; returns whether it was printed."""
        if self.quiet():
            return False
        text = " ".join(str(text).split())
        for param, flag in (flags or {}).items():
            text = text.replace(f"`{param}`", f"`{flag}`")
        text = escape_controls(self.render(text))
        with self._lock:
            if text in self._said:
                return False
            self._said.add(text)
        typer.echo(prefix + text, err=True)
        return True

    def notes(self) -> list[str]:
        """One line per model some of whose fits did not converge while the command ran."""
        lines = []
        for model, (fits, failed, max_iter) in _convergence.since(self._before).items():
            if not failed:
                continue
            name = "a model" if model is None else model
            steps = f" in {max_iter:,} iterations" if max_iter else ""
            lines.append(f"replikit: note: {escape_controls(name)} did not converge{steps} on "
                         f"{failed:,} of {fits:,} fits (a model stopped early may score worse "
                         "than it can: raise its max_iter, or scale the features).")
        return lines


def active_policy() -> WarningPolicy | None:
    """The policy of the command running now, if any."""
    return _ACTIVE[-1] if _ACTIVE else None


@contextlib.contextmanager
def warning_policy(debug: bool = False, *, quiet=lambda: False,
                   render=lambda t: t) -> Iterator[WarningPolicy]:
    """Apply the command line's policy inside (see the module); the notes on fits that did not
    converge are printed on leaving, unless ``quiet()``."""
    policy = WarningPolicy(debug, quiet=quiet, render=render)
    with warnings.catch_warnings():
        # every warning reaches the policy once per place (not a library's own filters)
        warnings.simplefilter("default")
        warnings.showwarning = policy.show
        _ACTIVE.append(policy)
        try:
            yield policy
        finally:
            _ACTIVE.remove(policy)
            if not quiet():
                for line in policy.notes():
                    typer.echo(line, err=True)
