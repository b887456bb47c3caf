"""What an audit starts from: one of five entry levels, read and checked before any work.

=============  ==========================================================================
entry          what the user has
=============  ==========================================================================
``data``       a data table and an outcome: the audit fits scikit-learn models itself
``scores``     per-fold scores (the Scores layout, an mlr3 or a Weka Experimenter export)
``predictions``  out-of-fold predictions (the Predictions layout)
``benchmark``  one score per model and dataset (a paper's table, an OpenML study)
``estimates``  reported study-level results (an R², r, AUC or accuracy with n, or an SE)
=============  ==========================================================================

Each section of the audit answers what its entry allows (a section declares the entries it
reads, :class:`~replikit.report.Section`) and is marked skipped, with the one thing to supply,
for the others. This module only reads and checks; every number is computed by the
capabilities.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..data.userdata import Dataset
from ..errors import DataError, ParameterError

__all__ = ["AuditInput", "ENTRIES", "ENTRY_LABELS", "SCHEMES", "audit_input"]

#: The five entry levels, from the least to the most information.
ENTRIES = ("estimates", "benchmark", "scores", "predictions", "data")
#: How the report and the command line name each entry.
ENTRY_LABELS = {
    "data": "a data table (models fitted by replikit)",
    "scores": "per-fold scores",
    "predictions": "out-of-fold predictions",
    "benchmark": "a benchmark table (one score per model and dataset)",
    "estimates": "reported study-level estimates",
}
#: The options that name each entry on the command line (for messages).
ENTRY_FLAGS = {"data": "--data", "scores": "--scores", "predictions": "--predictions",
               "benchmark": "--benchmark", "estimates": "--estimates"}
#: What a Scores table may say about its resampling scheme: ``kfold`` (each repeat splits the
#: rows into k folds: n_test/n_train = 1/(k-1)) or ``holdout`` (repeated random splits with
#: a test share ``test_fraction``).
SCHEMES = ("kfold", "holdout")

#: Preferred primary metric of a scores table, first found wins (mirrors the data entry's
#: rule: a threshold-free score first, then accuracy, R², then the errors).
_METRIC_ORDER = ("roc_auc", "balanced_accuracy", "accuracy", "r2", "error_rate", "log_loss",
                 "brier", "rmse", "mse", "mae")


@dataclass(frozen=True)
class AuditInput:
    """One entry into the audit, read and checked.

    Attributes
    ----------
    kind : str
        One of :data:`ENTRIES`.
    name : str
        What the user gave (a file name, or ``'DataFrame'``).
    dataset : Dataset, optional
        The data (``kind='data'``).
    scores : Scores, optional
        Per-fold scores (``kind='scores'``).
    predictions : Predictions, optional
        Out-of-fold predictions (``kind='predictions'``).
    benchmark : pandas.DataFrame, optional
        Datasets x models, one finite score per cell (``kind='benchmark'``; see
        :func:`replikit.compare.read_benchmark`).
    estimates : pandas.DataFrame, optional
        The reported estimates as given, one row per study, or per effect when a study
        reports several (``kind='estimates'``).
    metric : str, optional
        The primary metric: of the scores (``--metric`` or the first of roc_auc,
        balanced_accuracy, accuracy, r2, ...), the benchmark's score, or the estimates' metric
        column (``r2``, ``r``, ``auc``, ``accuracy`` or ``estimate``).
    higher_is_better : bool
        Direction of the benchmark's score.
    original : str, optional
        The original study of the estimates (``role`` column or ``original=``).
    scheme : str, optional
        What the scores say about their resampling (:data:`SCHEMES`), ``None`` when unknown:
        then the tests that need the test-to-training size ratio are skipped, never guessed.
    test_fraction : float, optional
        The share of rows in each test set, for a ``holdout`` scheme.
    task : str, optional
        ``'classification'`` or ``'regression'`` where the entry says so (the data's task, the
        scores' metric, the predictions' outcome), else ``None``.
    notes : tuple of str
        How the input was read (the layout recognised, the columns mapped).

    See Also
    --------
    audit_input : Reads and checks an entry.
    replikit.audit : Audits it.

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"dataset": ["d1", "d2", "d3"], "lr": [0.8, 0.7, 0.9],
    ...                       "rf": [0.82, 0.69, 0.93]})
    >>> entry = audit_input(benchmark=table)
    >>> entry.kind, entry.label, entry.flag, entry.n_studies
    ('benchmark', 'a benchmark table (one score per model and dataset)', '--benchmark', 3)
    """

    kind: str
    name: str
    dataset: Dataset | None = None
    scores: Any = None
    predictions: Any = None
    benchmark: pd.DataFrame | None = None
    estimates: pd.DataFrame | None = None
    metric: str | None = None
    higher_is_better: bool = True
    original: str | None = None
    scheme: str | None = None
    test_fraction: float | None = None
    task: str | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def label(self) -> str:
        """The entry in words (``'per-fold scores'``)."""
        return ENTRY_LABELS[self.kind]

    @property
    def flag(self) -> str:
        """The command-line option of this entry (``'--scores'``)."""
        return ENTRY_FLAGS[self.kind]

    @property
    def n_studies(self) -> int:
        """Studies (datasets of a benchmark) in the input."""
        if self.dataset is not None:
            return self.dataset.n_studies
        if self.scores is not None:
            return int(self.scores.frame["study"].nunique())
        if self.predictions is not None:
            return int(self.predictions.frame["study"].nunique())
        if self.benchmark is not None:
            return int(len(self.benchmark))
        return int(self.estimates["study"].astype(str).nunique())

    def labels(self) -> list[str]:
        """Every name the input gives its studies, models, columns and classes (what the report
        shortens when long: :class:`replikit._labels.Abbreviations`)."""
        out: list = []

        def text_values(frame: pd.DataFrame) -> None:
            out.extend(map(str, frame.columns))
            for col in frame.columns:
                values = frame[col]
                if not pd.api.types.is_numeric_dtype(values):
                    out.extend(map(str, pd.unique(values.dropna())))

        d = self.dataset
        if d is not None:
            out.extend(map(str, d.X.columns))
            out.append(str(d.y.name))
            if d.study is not None:
                out.extend(map(str, pd.unique(d.study)))
            out.extend(map(str, d.classes or ()))
        for table in (self.scores, self.predictions):
            if table is not None:
                text_values(table.frame)
        if self.benchmark is not None:
            out.extend(map(str, self.benchmark.index))
            out.extend(map(str, self.benchmark.columns))
        if self.estimates is not None:
            text_values(self.estimates)
        return out

    @property
    def test_ratio(self) -> float | None:
        """``n_test / n_train`` of a ``holdout`` scheme with a known test share."""
        if self.scheme == "holdout" and self.test_fraction is not None:
            return self.test_fraction / (1.0 - self.test_fraction)
        return None


def _frame(given, what: str, table: str | None = None, dtype: dict | None = None):
    """``(frame, name)`` from a DataFrame or a path."""
    if isinstance(given, pd.DataFrame):
        return given.copy(), "DataFrame"
    if isinstance(given, (str, os.PathLike)):
        from ..data.io import read_frame

        return read_frame(given, table=table, dtype=dtype), Path(given).name
    raise ParameterError(f"`{what}` must be a pandas DataFrame or a path to a CSV, Parquet or "
                         f"DuckDB file; got {type(given).__name__}.")


def _scheme_iv(scheme, test_fraction) -> tuple[str | None, float | None]:
    if scheme is not None and scheme not in SCHEMES:
        raise ParameterError(f"`scheme` must be one of {', '.join(SCHEMES)}; got {scheme!r}.")
    if test_fraction is not None:
        try:
            test_fraction = float(test_fraction)
        except (TypeError, ValueError):
            test_fraction = float("nan")
        if not 0 < test_fraction < 1:
            raise ParameterError("`test_fraction` must be a number strictly between 0 and 1 "
                                 f"(the share of rows in each test set); got {test_fraction!r}.")
        if scheme is None:
            scheme = "holdout"
        elif scheme != "holdout":
            raise ParameterError("`test_fraction` goes with `scheme='holdout'` (repeated random "
                                 f"splits); with scheme={scheme!r} the folds fix it.")
    elif scheme == "holdout":
        raise ParameterError("`scheme='holdout'` needs `test_fraction` (the share of rows in "
                             "each test set).")
    return scheme, test_fraction


def _scores_scheme(scores, layout: str, scheme, test_fraction) -> tuple[str | None, str]:
    """What the scores say about their scheme, and a sentence on how it is known."""
    f = scores.frame
    if {"n_train", "n_test"} <= set(f.columns) and not f[["n_train", "n_test"]].isna().any().any():
        return scheme or "recorded", ("the training and test set sizes are recorded in the file "
                                      "(n_train, n_test)")
    if scheme == "kfold":
        return "kfold", ("k-fold cross-validation as stated (`scheme`): n_test/n_train = "
                         "1/(k-1)")
    if scheme == "holdout":
        return "holdout", (f"repeated hold-out with a test share of {test_fraction:g} as stated "
                           "(`test_fraction`)")
    if layout == "mlr3":
        return "kfold", "mlr3's k-fold resampling (cv, repeated_cv): n_test/n_train = 1/(k-1)"
    return None, ("the file does not say how the folds were made (no n_train/n_test columns); "
                  "state it with `scheme` (kfold) or `test_fraction` for the tests that need "
                  "the test-to-training size ratio")


def _primary(metrics: list[str], given: str | None, what: str) -> str:
    if given is not None:
        if given not in metrics:
            raise ParameterError(f"`metric`: {given!r} is not a metric of the {what}; it has "
                                 f"{', '.join(map(str, metrics))}.")
        return given
    for m in _METRIC_ORDER:
        if m in metrics:
            return m
    return str(metrics[0])


def audit_input(*, data=None, target: str | None = None, study: str | None = None,
                scores=None, predictions=None, benchmark=None, estimates=None,
                columns: dict | None = None, n_folds: int | None = None,
                scheme: str | None = None, test_fraction: float | None = None,
                metric: str | None = None, higher_is_better: bool | None = None,
                original: str | None = None, task: str | None = None,
                table: str | None = None, time: str | None = None,
                event: str | None = None) -> AuditInput:
    """Read and check one entry of the audit (exactly one of ``data``, ``scores``,
    ``predictions``, ``benchmark``, ``estimates``; each a DataFrame or a path).

    Parameters
    ----------
    data : DataFrame, path or Dataset, optional
        A data table; needs ``target`` (and ``study`` for the study-level sections). A table
        laid out as scores, predictions or estimates is refused with the entry it belongs to.
    target, study : str, optional
        The outcome column and the column of study labels of ``data``; ``study`` also names
        the study column of ``predictions`` when it is not ``study``.
    scores : DataFrame or path, optional
        Per-fold scores: the Scores layout, an mlr3 ``bmr$score()`` export or a Weka
        Experimenter CSV (recognised from their columns), or any layout mapped by ``columns``.
    predictions : DataFrame or path, optional
        Out-of-fold predictions: ``study, model, repeat, fold, row, y_true, y_pred[,
        proba_*]`` (``columns`` maps other names; ``model``, ``repeat``, ``fold``, ``row``
        may be absent for one rule, one repeat, one fold).
    benchmark : DataFrame or path, optional
        One score per model and dataset, long or wide (:func:`replikit.compare.read_benchmark`;
        ``columns`` may name ``dataset``, ``model`` and ``score``).
    estimates : DataFrame or path, optional
        One row per study (or per effect: several rows of a study, told apart by a column
        ``effect_id``, ``outcome``, ``sample``, ``fold`` or ``model`` or by their order, are
        pooled by a multilevel model): ``study``, a column named by its metric (``r2``, ``r``,
        ``auc``, ``accuracy`` or ``estimate``) with ``n``, or ``se`` / ``variance``; the
        original marked by a ``role`` column (``original`` / ``replication``) or
        ``original``.
    columns : dict, optional
        ``{entry_column: file_column}`` for a layout replikit does not recognise.
    n_folds : int, optional
        Folds per repeat of an mlr3 export of repeated cross-validation.
    scheme : {'kfold', 'holdout'}, optional
        How per-fold scores (or predictions whose folds do not partition the rows) were made,
        where the file cannot say (no ``n_train`` / ``n_test``): the corrected tests need the
        test-to-training size ratio.
    test_fraction : float, optional
        Share of rows in each test set of a ``holdout`` scheme (implies it).
    metric : str, optional
        The primary metric of scores or predictions; for a benchmark table, the name of its
        score (``'roc_auc'``, ``'rmse'``: it sets the label and whether a default tolerance
        applies).
    higher_is_better : bool, optional
        Direction of a benchmark's score (default: higher is better).
    original : str, optional
        The original study of ``estimates`` (instead of a ``role`` column).
    task : {'classification', 'regression'}, optional
        The task of ``data`` or ``predictions`` (default: inferred from the outcome).
    table : str, optional
        The table inside a DuckDB file.
    time, event : str, optional
        With ``data``: a survival outcome in place of ``target`` — the follow-up time column
        and the event column (1/0, true/false or yes/no). The audit then scores the models
        by the C-index and validates them across studies (Bernau et al. (2014)).

    Returns
    -------
    AuditInput
        The entry, read and checked.

    Raises
    ------
    ParameterError
        None or several entries given, an option that does not go with the entry, or a bad
        ``scheme`` / ``test_fraction`` / ``metric``.
    DataError
        The table does not have what its entry needs (the message names the column).

    See Also
    --------
    replikit.audit : Reads an entry with this and audits it.
    AuditInput : What is returned.

    Examples
    --------
    >>> from replikit.data.examples import score_export
    >>> entry = audit_input(scores=score_export("weka"))
    >>> entry.kind, entry.metric, entry.scheme, entry.n_studies
    ('scores', 'roc_auc', 'recorded', 2)
    """
    given = {k: v for k, v in (("data", data), ("scores", scores),
                               ("predictions", predictions), ("benchmark", benchmark),
                               ("estimates", estimates)) if v is not None}
    if len(given) != 1:
        raise ParameterError("give exactly one of `data`, `scores`, `predictions`, "
                             "`benchmark`, `estimates`; got "
                             + (", ".join(f"`{k}`" for k in given) or "none") + ".")
    (kind, value), = given.items()
    scheme, test_fraction = _scheme_iv(scheme, test_fraction)
    _only(kind, target=target, n_folds=n_folds, scheme=scheme, metric=metric,
          higher_is_better=higher_is_better, original=original, task=task, time=time,
          event=event)
    if kind == "data":
        return _data_input(value, target, study, task, table, time, event)
    if kind == "scores":
        return _scores_input(value, columns, n_folds, scheme, test_fraction, metric, table)
    if kind == "predictions":
        return _predictions_input(value, columns, study, metric, task, scheme, test_fraction,
                                  table)
    if kind == "benchmark":
        return _benchmark_input(value, columns, higher_is_better, metric, table)
    return _estimates_input(value, columns, original, table)


#: The options each entry reads (any other given with it is refused, never ignored).
_OPTIONS = {
    "data": {"target", "task", "time", "event"},
    "scores": {"n_folds", "scheme", "metric"},
    "predictions": {"metric", "task", "scheme"},
    "benchmark": {"higher_is_better", "metric"},
    "estimates": {"original"},
}


def _only(kind: str, **options) -> None:
    wrong = [k for k, v in options.items() if v is not None and k not in _OPTIONS[kind]]
    if wrong:
        raise ParameterError(f"`{wrong[0]}` does not apply to `{kind}` (it goes with "
                             + ", ".join(f"`{e}`" for e, opts in _OPTIONS.items()
                                         if wrong[0] in opts) + ").")


def _refuse_misplaced(frame: pd.DataFrame, name: str) -> None:
    from ..data.foreign import guess_entry

    found = guess_entry(frame)
    if found is not None:
        kind, what = found
        raise DataError(f"`data`: {name} looks like {what}, not a data table to fit models "
                        f"on; give it as `{kind}` instead.")


def _data_input(value, target, study, task, table, time=None, event=None) -> AuditInput:
    from ..data.userdata import dataset_from_frame
    from .preflight import MIN_ROWS

    if isinstance(value, Dataset):
        if target is not None or task is not None or time is not None or event is not None:
            raise ParameterError("`target`/`time`/`event`/`task` describe a table; a Dataset "
                                 "already has them.")
        return AuditInput("data", value.name, dataset=value, task=value.task)
    frame, name = _frame(value, "data", table)
    _refuse_misplaced(frame, name)
    if target is None and time is None and event is None:
        raise ParameterError("`target`: required with `data` (the outcome column), or `time` "
                             "and `event` for a survival outcome.")
    ds = dataset_from_frame(frame, target=target, study=study, task=task, name=name,
                            min_studies=2 if study else 1, min_rows=MIN_ROWS, time=time,
                            event=event)
    return AuditInput("data", name, dataset=ds, task=ds.task)


def _scores_input(value, columns, n_folds, scheme, test_fraction, metric, table) -> AuditInput:
    from ..data.foreign import scores_from_frame

    frame, name = _frame(value, "scores", table, dtype={"model": str, "metric": str,
                                                         "learner_id": str, "Key_Scheme": str})
    scores, layout = scores_from_frame(frame, columns=columns, n_folds=n_folds)
    metrics = [str(m) for m in scores.metrics]
    primary = _primary(metrics, metric, "scores")
    known, how = _scores_scheme(scores, layout.name, scheme, test_fraction)
    notes = tuple(n for n in (layout.description, how) if n)
    models = scores.frame.loc[scores.frame["metric"] == primary, "model"].nunique()
    if models < 2:
        raise DataError(f"`scores`: the audit compares models; the scores of metric {primary!r} "
                        f"hold {models} model.")
    from ..experiment.metrics import CLASSIFICATION_METRICS

    task = "classification" if primary in CLASSIFICATION_METRICS | {"brier"} else "regression"
    return AuditInput("scores", name, scores=scores, metric=primary, scheme=known,
                      test_fraction=test_fraction, task=task, notes=notes)


def _predictions_input(value, columns, study, metric, task, scheme, test_fraction,
                       table) -> AuditInput:
    from ..data.tables import Predictions

    frame, name = _frame(value, "predictions", table, dtype={"model": str})
    if columns:
        absent = [v for v in columns.values() if v not in frame.columns]
        if absent:
            raise DataError(f"`columns` names column {absent[0]!r}, which the predictions do "
                            f"not have; found columns {list(map(str, frame.columns))}.")
        frame = frame.rename(columns={v: k for k, v in columns.items()})
    if study is not None and study != "study":
        if study not in frame.columns:
            raise DataError(f"`study`: no column {study!r} in the predictions; found columns "
                            f"{list(map(str, frame.columns))}.")
        frame = frame.drop(columns=[c for c in ("study",) if c in frame.columns])
        frame = frame.rename(columns={study: "study"})
    notes = []
    for col, fill, why in (("study", "all", "one study"), ("model", "model", "one model"),
                           ("repeat", 0, "one repeat"), ("fold", 0, "one fold")):
        if col not in frame.columns:
            frame[col] = fill
            notes.append(f"no `{col}` column: {why}")
    if "row" not in frame.columns:
        frame["row"] = frame.groupby(["study", "model", "repeat"]).cumcount()
        notes.append("no `row` column: rows numbered in file order within each study, model "
                     "and repeat")
    for col in ("y_true", "y_pred"):
        if col not in frame.columns and not (col == "y_pred" and any(
                str(c).startswith("proba_") for c in frame.columns)):
            raise DataError(f"`predictions`: no column {col!r}; out-of-fold predictions need "
                            "y_true and y_pred (or proba_<class> columns); found columns "
                            f"{list(map(str, frame.columns))}.")
    preds = Predictions(frame)
    inferred = task or _prediction_task(preds.frame)
    if task is not None and task not in ("classification", "regression", "survival"):
        raise ParameterError(f"`task` must be 'classification', 'regression' or 'survival'; "
                             f"got {task!r}.")
    if (inferred == "survival") != ("event" in preds.frame.columns):
        raise DataError("`predictions`: a survival outcome needs an `event` column (1 when "
                        "y_true is an event time, 0 when censored) and y_pred a risk score; "
                        + ("none was found." if inferred == "survival" else
                           f"the predictions have one, but task={task!r} was given."))
    if inferred == "survival" and metric is None:
        metric = "c_index"
    return AuditInput("predictions", name, predictions=preds, metric=metric, task=inferred,
                      scheme=scheme, test_fraction=test_fraction,
                      notes=tuple(notes) + (f"task: {inferred}" + (
                          "" if task else " (from the event column)" if inferred == "survival"
                          else " (inferred from y_true)"),))


def _prediction_task(frame: pd.DataFrame) -> str:
    """Survival when an ``event`` column is given; classification when the outcome is text or
    takes few whole-number values, or when class probabilities are given; else regression."""
    if "event" in frame.columns:
        return "survival"
    y = frame["y_true"]
    if any(str(c).startswith("proba_") for c in frame.columns):
        return "classification"
    if not pd.api.types.is_numeric_dtype(y) or pd.api.types.is_bool_dtype(y):
        return "classification"
    values = pd.unique(y.dropna())
    whole = bool((values == values.round()).all()) if len(values) else False
    return "classification" if whole and len(values) <= 10 else "regression"


def _benchmark_input(value, columns, higher_is_better, metric, table) -> AuditInput:
    from ..compare import read_benchmark

    frame, name = _frame(value, "benchmark", table)
    cols = dict(columns or {})
    unknown = sorted(set(cols) - {"dataset", "model", "score"})
    if unknown:
        raise ParameterError(f"`columns`: a benchmark table maps dataset, model and score; got "
                             f"{unknown[0]!r}.")
    wide = read_benchmark(frame, dataset_column=cols.get("dataset"),
                          model_column=cols.get("model"), score_column=cols.get("score"),
                          allow_missing=True)  # holes: the sections say how they use them
    if wide.shape[1] < 2:
        raise DataError(f"`benchmark`: the table holds {wide.shape[1]} model; the audit "
                        "compares two or more.")
    score = metric or cols.get("score")
    if score is None:  # a long table's one score column names the metric
        numeric = [c for c in frame.columns if pd.api.types.is_numeric_dtype(frame[c])
                   and not pd.api.types.is_bool_dtype(frame[c]) and c not in set(wide.columns)]
        score = str(numeric[0]) if len(numeric) == 1 else None
    hib = True if higher_is_better is None else bool(higher_is_better)
    return AuditInput("benchmark", name, benchmark=wide, metric=score or "score",
                      higher_is_better=hib,
                      notes=(f"{wide.shape[0]} datasets x {wide.shape[1]} models; "
                             f"{'higher' if hib else 'lower'} scores are better",))


#: Columns of reported estimates, by the metric they hold.
ESTIMATE_COLUMNS = ("r2", "r", "auc", "accuracy", "c_index", "estimate")


def _estimates_input(value, columns, original, table) -> AuditInput:
    frame, name = _frame(value, "estimates", table)
    if columns:
        absent = [v for v in columns.values() if v not in frame.columns]
        if absent:
            raise DataError(f"`columns` names column {absent[0]!r}, which the estimates do not "
                            f"have; found columns {list(map(str, frame.columns))}.")
        frame = frame.rename(columns={v: k for k, v in columns.items()})
    if "study" not in frame.columns:
        raise DataError("`estimates`: no `study` column (one row per study, labelled); found "
                        f"columns {list(map(str, frame.columns))}.")
    found = [c for c in ESTIMATE_COLUMNS if c in frame.columns]
    if len(found) != 1:
        raise DataError("`estimates`: expected one column named by its metric ("
                        + ", ".join(ESTIMATE_COLUMNS) + "); found "
                        + (", ".join(found) if found else "none") + " among "
                        f"{list(map(str, frame.columns))}.")
    cols = set(frame.columns)
    if found[0] == "c_index" and not (cols & {"se", "variance"} or {"ci_low", "ci_high"} <= cols):
        raise DataError("`estimates`: a C-index needs its standard error `se` (or `variance`) "
                        "or its confidence interval `ci_low`, `ci_high`; none of these columns "
                        "is present (a C-index has no closed-form variance from n).")
    if not (cols & {"n", "se", "variance"} or {"n_pos", "n_neg"} <= cols
            or {"ci_low", "ci_high"} <= cols):
        raise DataError("`estimates`: each study needs its sample size `n` (for an AUC: `n_pos` "
                        "and `n_neg`, or `n` with `prevalence`), or a standard error `se` or "
                        "`variance`; none of these columns is present.")
    if found[0] == "estimate" and not ({"se", "variance"} & set(frame.columns)):
        raise DataError("`estimates`: a column named `estimate` holds an effect whose sampling "
                        "variance replikit cannot derive from n; give `se` or `variance` (or "
                        "name the column by its metric: r2, r, auc, accuracy).")
    labels = frame["study"].astype(str)
    several = bool(labels.duplicated().any())  # several effects per study: a multilevel model
    _variance_per_row(frame, found[0], labels)
    if "role" in frame.columns:
        if original is not None:
            raise ParameterError("`original`: the table marks the original in its `role` "
                                 "column; give one or the other.")
        role = frame["role"].astype(str).str.strip().str.lower()
        bad = sorted(set(role) - {"original", "replication"})
        if bad:
            raise DataError(f"`estimates`: column `role` holds {bad[0]!r}; expected "
                            "'original' or 'replication'.")
        marked = labels[role == "original"].unique()
        mixed = sorted(set(marked) & set(labels[role != "original"]))
        if mixed:
            raise DataError(f"`estimates`: column `role` marks study {mixed[0]!r} both "
                            "'original' and 'replication'; give every row of a study the same "
                            "role.")
        if len(marked) != 1:
            raise DataError("`estimates`: column `role` must mark exactly one study "
                            f"'original'; it marks {len(marked)}.")
        original = str(marked[0])
    elif original is not None and str(original) not in set(labels):
        raise ParameterError(f"`original`: no study {original!r} in the estimates; studies are "
                             f"{', '.join(labels[:8])}{', ...' if len(labels) > 8 else ''}.")
    n_studies = labels.nunique()
    count = (f"{len(frame)} effects in {n_studies} studies (several per study: a multilevel "
             "model)" if several else f"{len(frame)} studies")
    return AuditInput("estimates", name, estimates=frame, metric=found[0],
                      original=None if original is None else str(original),
                      notes=(f"{count}; metric column {found[0]!r}"
                             + (f"; original: {original}" if original is not None else
                                "; no original marked (meta-analysis only)"),))


def _variance_per_row(frame: pd.DataFrame, metric: str, labels: pd.Series) -> None:
    """Refuse, naming the column and the study, a row whose sampling variance cannot be had:
    no ``se`` or ``variance`` and (for an ``estimate``, always) no sample size (for a
    ``c_index``: no interval ``ci_low``, ``ci_high``)."""
    given = pd.Series(False, index=frame.index)
    for col in ("se", "variance"):
        if col in frame.columns:
            given |= pd.to_numeric(frame[col], errors="coerce").notna()
    sizes = [c for c in (("n_pos", "n_neg") if metric == "auc" and "n" not in frame.columns
                         else ("ci_low", "ci_high") if metric == "c_index"
                         else ("n",)) if c in frame.columns]
    if metric == "c_index" and len(sizes) < 2:  # an interval needs both bounds
        sizes = []
    if metric != "estimate" and sizes:
        given |= pd.concat([pd.to_numeric(frame[c], errors="coerce").notna() for c in sizes],
                           axis=1).all(axis=1)
    missing = (~given).to_numpy().nonzero()[0]
    if missing.size:
        i = int(missing[0])
        have = [c for c in ("se", "variance") if c in frame.columns]
        if metric == "c_index":
            raise DataError(f"`estimates`: study {labels.iloc[i]!r} (row {i + 1}) has a "
                            "`c_index` but no `se` (or `variance`) nor an interval `ci_low`, "
                            "`ci_high`; a C-index has no closed-form variance from n.")
        raise DataError(f"`estimates`: study {labels.iloc[i]!r} (row {i + 1}) has a "
                        f"`{metric}` but no " + " or ".join(f"`{c}`" for c in have or ["se"])
                        + ("" if metric == "estimate" else " nor a sample size `n`")
                        + "; every row needs its standard error or sampling variance"
                        + ("." if metric == "estimate" else " (or n to derive it)."))
