"""The audit's progress on stderr: rich bars on a terminal, plain lines elsewhere.

A log file, a CI job or a batch queue gets no bars (a bar redrawn in a file is noise), but
still needs to know that a long audit is alive and where it is: :class:`LineProgress` writes
one line when a stage starts, a line at most every :data:`LINE_SECONDS` while it runs, and one
when it ends, each with the seconds since the audit began::

    replikit: [  0.0 s] Error estimates (resampling): started (6 steps)
    replikit: [ 21.4 s] Error estimates (resampling): 3/6
    replikit: [ 40.2 s] Error estimates (resampling): done in 40.2 s

:func:`make_progress` picks the kind from the audit's ``progress`` argument.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator

from .context import Progress

__all__ = ["LineProgress", "make_progress", "LINE_SECONDS"]

#: Fewest seconds between two lines of one stage (its first and last lines always print).
LINE_SECONDS = 5.0


class LineProgress(Progress):
    """Plain progress lines on stderr (or ``stream``), for output that is not a terminal.

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> p = LineProgress(stream=out)
    >>> with p.stage("Fits", total=2) as advance:
    ...     advance(); advance()
    >>> [line.split("] ")[1] for line in out.getvalue().splitlines()][0]
    'Fits: started (2 steps)'
    """

    def __init__(self, enabled: bool = True, *, stream=None, every: float = LINE_SECONDS):
        super().__init__(enabled)
        self._stream = stream
        self._every = every
        self._start = time.perf_counter()

    def line(self, text: str) -> None:
        """One line, stamped with the seconds since the audit began."""
        if not self.enabled:
            return
        stream = self._stream if self._stream is not None else sys.stderr
        stamp = time.perf_counter() - self._start
        print(f"replikit: [{stamp:6.1f} s] {text}", file=stream, flush=True)

    @contextlib.contextmanager
    def stage(self, title: str, total: int | None = None) -> Iterator[Callable[[int], None]]:
        if not self.enabled:
            yield lambda n=1: None
            return
        began = time.perf_counter()
        state = {"done": 0, "last": began}
        self.line(f"{title}: started" + (f" ({total} step{'s' if total != 1 else ''})"
                                         if total else ""))

        def advance(n: int = 1) -> None:
            state["done"] += n
            now = time.perf_counter()
            if now - state["last"] >= self._every and (total is None
                                                       or state["done"] < total):
                state["last"] = now
                self.line(f"{title}: {state['done']}" + (f"/{total}" if total else ""))

        yield advance
        self.line(f"{title}: done in {time.perf_counter() - began:.1f} s")


def make_progress(progress) -> Progress:
    """The audit's progress from its ``progress`` argument: ``True`` or ``'bar'`` rich bars,
    ``'lines'`` plain lines (:class:`LineProgress`), ``False`` nothing."""
    if progress == "lines":
        return LineProgress(True)
    return Progress(bool(progress))
