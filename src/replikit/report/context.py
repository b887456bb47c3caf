"""What an audit section can use: the data, the configuration, shared cached work, progress."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..data.userdata import Dataset

__all__ = ["AuditContext", "Progress"]


class Progress:
    """One rich progress bar per stage, on stderr; silent when ``enabled`` is false."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled

    @contextlib.contextmanager
    def stage(self, title: str, total: int | None = None) -> Iterator[Callable[[int], None]]:
        if not self.enabled:
            yield lambda n=1: None
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
        )
        from rich.progress import Progress as RichProgress

        columns = [SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                   MofNCompleteColumn(), TimeElapsedColumn()]
        with RichProgress(*columns, console=Console(stderr=True), transient=False) as bar:
            task = bar.add_task(title, total=total)

            def advance(n: int = 1) -> None:
                bar.advance(task, n)

            yield advance
            if total is not None:
                bar.update(task, completed=total)


@dataclass
class AuditContext:
    """Shared state of one audit run.

    Attributes
    ----------
    dataset : Dataset
        The data (complete cases).
    models : dict or None
        name -> scikit-learn estimator; ``None`` means the defaults for the task.
    random_state : int
        Root seed of every random choice in the audit.
    n_jobs : int
        Worker processes for model fitting.
    quick : bool
        Fewer resamples everywhere (for tests and previews).
    progress : Progress
    """

    dataset: Dataset
    models: dict | None = None
    random_state: int = 0
    n_jobs: int = 1
    quick: bool = False
    progress: Progress = field(default_factory=lambda: Progress(False))
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    def shared(self, key: str, compute: Callable[[], Any]) -> Any:
        """Compute ``compute()`` once per audit under ``key`` and reuse it (e.g. one runner call
        whose scores feed several sections)."""
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]

    def stage(self, title: str, total: int | None = None):
        return self.progress.stage(title, total)
