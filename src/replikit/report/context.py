"""What an audit section can use: the data, the configuration, shared cached work, progress."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..data.userdata import Dataset
from .inputs import AuditInput
from .preflight import AuditPlan, preflight

if TYPE_CHECKING:
    from ..experiment.engine import Engine

__all__ = ["AuditContext", "Progress", "Tolerance", "parse_tolerances", "TOLERANCE_SECTIONS"]

#: Sections whose light is judged against a practical tolerance, and whether a tolerance may be
#: relative ("10%": a share of the section's reference quantity, e.g. the pooled loss).
TOLERANCE_SECTIONS = {"compare": False, "replicate": False, "multistudy": True,
                      "generalize": False}


@dataclass(frozen=True)
class Tolerance:
    """A user's practical tolerance for one section's light: absolute, in the section's units,
    or relative, a share of the section's reference quantity (``10%`` of the pooled loss).

    Examples
    --------
    >>> Tolerance(0.1, relative=True).of(280.0), str(Tolerance(0.1, relative=True))
    (28.0, '10%')
    """

    value: float
    relative: bool = False

    def of(self, reference: float) -> float:
        """The tolerance in the section's units (``reference`` scales a relative one)."""
        return self.value * abs(reference) if self.relative else self.value

    def __str__(self) -> str:
        from .._format import number

        return f"{number(100 * self.value)}%" if self.relative else number(self.value)


def parse_tolerances(given) -> dict[str, Tolerance]:
    """Check the audit's ``tolerances`` before any work: a mapping section -> number >= 0 (the
    section's units) or ``'N%'`` (relative, where the section allows it).

    Raises
    ------
    ParameterError
        An unknown section, a negative or unreadable value, or a percentage where the section
        takes its own units; the message names ``tolerances``.

    Examples
    --------
    >>> parse_tolerances({"multistudy": "10%", "replicate": 0.05})["multistudy"]
    Tolerance(value=0.1, relative=True)
    """
    from ..errors import ParameterError

    if given is None:
        return {}
    if not hasattr(given, "items"):
        raise ParameterError("`tolerances` must map a section (" + ", ".join(TOLERANCE_SECTIONS)
                             + f") to a tolerance; got {type(given).__name__}.")
    out = {}
    for key, raw in given.items():
        if key not in TOLERANCE_SECTIONS:
            raise ParameterError(f"`tolerances`: no section {key!r} is judged against a "
                                 f"tolerance; choose from {', '.join(TOLERANCE_SECTIONS)}.")
        if isinstance(raw, Tolerance):
            out[key] = raw
            continue
        text = str(raw).strip()
        relative = text.endswith("%")
        try:
            value = float(text[:-1] if relative else text)
        except ValueError:
            value = float("nan")
        if not value >= 0 or value == float("inf") or (relative and value > 100):
            raise ParameterError(f"`tolerances`: the {key} tolerance must be a number >= 0"
                                 + (" or a percentage such as 10%" if TOLERANCE_SECTIONS[key]
                                    else "") + f"; got {raw!r}.")
        if relative and not TOLERANCE_SECTIONS[key]:
            raise ParameterError(f"`tolerances`: the {key} tolerance is in the metric's units; "
                                 f"a percentage ({raw!r}) has nothing to be a share of there.")
        out[key] = Tolerance(value / 100 if relative else value, relative)
    return out


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
    """What a report section can use: the data, the settings, shared work and progress bars.

    A section's ``build(ctx)`` reads the data and settings from here, hands them to its
    capability's audit entry and reuses the fits other sections made (:meth:`shared`).

    Parameters
    ----------
    dataset : Dataset or None
        The data (complete cases) of the ``data`` entry; ``None`` for the other entries.
    models : dict, optional
        Name -> scikit-learn estimator; ``None`` means the defaults for the task.
    random_state : int, optional
        Root of every random choice in the audit; ``None`` draws fresh entropy (kept, so
        every section shares one root).
    n_jobs : int, default 1
        Worker processes for model fitting.
    quick : bool, default False
        Fewer resamples everywhere (for tests and previews).
    progress : Progress, optional
        Progress bars per stage (silent by default).
    plan : AuditPlan, optional
        Report-wide choices made before any fit (primary metric, usable studies); computed
        from the data when not given.
    moderators : tuple of str, optional
        Study-level columns for the replication section's meta-regression; ``None`` lets the
        section find the columns constant within every study.
    tolerances : dict, optional
        Section key -> :class:`Tolerance` the user gave (see :func:`parse_tolerances`); a
        section without one uses its documented default and says so on its card.
    source : AuditInput, optional
        What the audit starts from (:mod:`replikit.report.inputs`): the data, or scores,
        predictions, a benchmark table or reported estimates; made from ``dataset`` when not
        given.
    engine : Engine, optional
        Where every fit of every section runs and the store that keeps them
        (:class:`replikit.experiment.engine.Engine`); default: ``n_jobs`` joblib processes
        (serial for one), no store.

    See Also
    --------
    replikit.report.Section : A section, built from a context.
    replikit.report.run_audit : Makes the context and runs every section.

    Examples
    --------
    >>> from replikit.report import example_dataset
    >>> ctx = AuditContext(example_dataset("nwtco_binary"), quick=True, random_state=0)
    >>> ctx.metric, ctx.shared("answer", lambda: 42)
    ('roc_auc', 42)
    """

    dataset: Dataset
    models: dict | None = None
    random_state: int | None = None
    n_jobs: int = 1
    quick: bool = False
    progress: Progress = field(default_factory=lambda: Progress(False))
    plan: AuditPlan | None = None
    moderators: tuple[str, ...] | None = None
    tolerances: dict[str, Tolerance] = field(default_factory=dict)
    source: AuditInput | None = None
    engine: Engine | None = None
    _cache: dict[str, Any] = field(default_factory=dict, repr=False, init=False)

    def __post_init__(self) -> None:
        if self.random_state is None:  # fresh entropy, kept so every section shares one root
            import numpy as np

            self.random_state = int(np.random.SeedSequence().entropy)
        if self.source is None:
            if self.dataset is None:
                from ..errors import ParameterError

                raise ParameterError("an audit needs a `dataset` or a `source`.")
            self.source = AuditInput("data", self.dataset.name, dataset=self.dataset,
                                     task=self.dataset.task)
        elif self.dataset is None:
            self.dataset = self.source.dataset
        if self.plan is None and self.dataset is not None:
            self.plan = preflight(self.dataset, self.models)
        if self.engine is None:
            from ..experiment.engine import Engine

            self.engine = Engine("joblib" if self.n_jobs > 1 else "serial", self.n_jobs)

    @property
    def entry(self) -> str:
        """The entry level the audit starts from (:data:`replikit.report.inputs.ENTRIES`);
        ``'survival'`` for data whose outcome is a survival time (each section has its own
        builder for it)."""
        if self.source.kind == "data" and self.dataset is not None \
                and self.dataset.task == "survival":
            return "survival"
        return self.source.kind

    def tolerance(self, key: str) -> Tolerance | None:
        """The user's tolerance for section ``key``, or ``None`` (use the section's default)."""
        return self.tolerances.get(key)

    @property
    def metric(self) -> str | None:
        """The report's primary metric (see :func:`replikit.report.preflight.primary_metric`);
        for the other entries the one the input names (:attr:`AuditInput.metric`)."""
        return self.plan.primary_metric if self.plan is not None else self.source.metric

    def study_subset(self, min_rows: int, *, all_classes: bool = True, min_per_class: int = 1):
        """The dataset restricted to the studies a study-level section can use.

        Returns ``(dataset, left_out)`` where ``left_out`` lists ``(study, reason)``; the
        dataset is ``self.dataset`` itself when nothing is left out.
        """
        kept, left_out = self.plan.usable_studies(min_rows, all_classes=all_classes,
                                                  min_per_class=min_per_class)
        d = self.dataset
        if not left_out or d.study is None:
            return d, left_out
        import dataclasses

        mask = d.study.astype(str).isin(kept).to_numpy()
        sub = dataclasses.replace(
            d, X=d.X[mask].reset_index(drop=True), y=d.y[mask].reset_index(drop=True),
            study=d.study[mask].reset_index(drop=True),
            event=None if d.event is None else d.event[mask].reset_index(drop=True))
        return sub, left_out

    def shared(self, key: str, compute: Callable[[], Any]) -> Any:
        """Compute ``compute()`` once per audit under ``key`` and reuse it (e.g. one runner call
        whose scores feed several sections).

        Parameters
        ----------
        key : str
            What the value is (include what it depends on, e.g. the models' names).
        compute : callable
            Makes the value, called the first time only.

        Returns
        -------
        object
            The value.
        """
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]

    def holds(self, prefix: str) -> bool:
        """Whether a shared value whose key starts with ``prefix`` has been computed."""
        return any(k.startswith(prefix) for k in self._cache)

    def release(self, prefix: str) -> None:
        """Drop the shared values whose key starts with ``prefix`` (their last reader is done;
        a later call of :meth:`shared` would compute them again, with the same numbers)."""
        for key in [k for k in self._cache if k.startswith(prefix)]:
            del self._cache[key]

    def stage(self, title: str, total: int | None = None):
        """A progress bar for one stage of a section (a context manager).

        Parameters
        ----------
        title : str
            What the stage does.
        total : int, optional
            Its number of steps.

        Returns
        -------
        contextlib.AbstractContextManager
            Yields ``advance(n=1)``.
        """
        return self.progress.stage(title, total)
