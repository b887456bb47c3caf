"""Per-fold scores exported by other tools, read into the :class:`~replikit.data.Scores` layout.

Recognised from their columns:

mlr3
    ``as.data.table(bmr$score())`` (written with ``data.table::fwrite``): ``task_id``,
    ``learner_id``, ``iteration`` and measure columns (``classif.ce``, ``classif.acc``,
    ``classif.auc``, ``regr.mse``, ``regr.rsq``, ...); optionally ``resampling_id``, ``nr``,
    ``uhash``. ``iteration`` is the fold of a single repeat, except for
    ``resampling_id == "repeated_cv"``, where iteration ``i`` is fold ``(i - 1) % n_folds`` of
    repeat ``(i - 1) // n_folds`` (mlr3's order), so ``n_folds`` must be given. The export has
    no training or test set sizes, so only the k-fold resamplings (``cv``, ``repeated_cv``,
    ``loo``) are read, where the corrected tests' ratio ``n_test / n_train`` is ``1/(k-1)``.
Weka Experimenter
    The CSV result listener's file: ``Key_Dataset``, ``Key_Scheme``, ``Key_Scheme_options``,
    ``Key_Run``, ``Key_Fold`` and measure columns (``Percent_correct`` becomes ``accuracy`` in
    [0, 1], ``Area_under_ROC`` ``roc_auc``, ``Root_mean_squared_error`` ``rmse``,
    ``Mean_absolute_error`` ``mae``), with ``Number_of_training_instances`` and
    ``Number_of_testing_instances`` as ``n_train`` and ``n_test``.

Any other layout is mapped with ``columns={"study": ..., "model": ..., "fold": ...}``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import DataError, ParameterError
from .tables import Scores

__all__ = ["read_scores", "scores_from_frame", "recognise_layout", "ScoresLayout",
           "MLR3_MEASURES", "WEKA_MEASURES", "guess_entry", "maybe_estimates"]

#: mlr3 measure ids and the replikit metric each becomes (direction follows the metric:
#: ``error_rate``, ``mse``, ``rmse``, ``mae`` and ``log_loss`` are errors, lower is better).
MLR3_MEASURES = {
    "classif.ce": "error_rate", "classif.acc": "accuracy", "classif.auc": "roc_auc",
    "classif.bacc": "balanced_accuracy", "classif.logloss": "log_loss",
    "regr.mse": "mse", "regr.rmse": "rmse", "regr.mae": "mae", "regr.rsq": "r2",
}
#: Weka Experimenter measure columns: ``(replikit metric, scale)``; the value is multiplied by
#: ``scale`` (Weka's percentages become proportions).
WEKA_MEASURES = {
    "Percent_correct": ("accuracy", 0.01),
    "Area_under_ROC": ("roc_auc", 1.0), "Root_mean_squared_error": ("rmse", 1.0),
    "Mean_absolute_error": ("mae", 1.0),
}
_MLR3_KEYS = ("task_id", "learner_id", "iteration")
_WEKA_KEYS = ("Key_Dataset", "Key_Scheme", "Key_Run", "Key_Fold")
_MLR3_KFOLD = {"cv", "repeated_cv", "loo"}
_MAPPABLE = ("study", "model", "repeat", "fold", "metric", "value", "n_train", "n_test")


@dataclass(frozen=True)
class ScoresLayout:
    """How a table was read: the layout recognised and a one-line account of the mapping.

    Attributes
    ----------
    name : {'scores', 'mlr3', 'weka', 'columns'}
        The layout: replikit's own, an mlr3 export, a Weka Experimenter file, or a mapping
        given with ``columns``.
    description : str
        One line for the user (``"read as an mlr3 benchmark export: ..."``); empty for the
        Scores layout.
    """

    name: str
    description: str


def _need(frame: pd.DataFrame, columns, what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise DataError(f"{what}: missing column(s) {', '.join(f'`{m}`' for m in missing)}; "
                        f"found columns {list(map(str, frame.columns))}.")


def _int_column(frame: pd.DataFrame, name: str, what: str, low: int) -> np.ndarray:
    values = pd.to_numeric(frame[name], errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(values) | (values != np.round(values)) | (values < low)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise DataError(f"{what}: column `{name}` must hold integers >= {low}; found "
                        f"{frame[name].iloc[i]!r} at row {i} (0-based).")
    return values.astype(np.int64)


def _mlr3(frame: pd.DataFrame, n_folds: int | None) -> tuple[pd.DataFrame, str]:
    what = "mlr3 export"
    measures = [c for c in frame.columns if c in MLR3_MEASURES]
    if not measures:
        others = [c for c in frame.columns if str(c).startswith(("classif.", "regr."))]
        raise DataError(f"{what}: no measure column replikit knows; expected one of "
                        f"{', '.join(f'`{m}`' for m in MLR3_MEASURES)}; found "
                        f"{others or list(map(str, frame.columns))}.")
    iteration = _int_column(frame, "iteration", what, 1)
    resampling = (frame["resampling_id"].astype(str).to_numpy() if "resampling_id" in frame
                  else np.full(len(frame), "cv"))
    repeated = resampling == "repeated_cv"
    if repeated.any() and n_folds is None:
        raise ParameterError("`n_folds`: the mlr3 export's resampling is "
                             "repeated_cv, whose iteration numbers run over repeats and folds; "
                             "give the number of folds per repeat.")
    if n_folds is not None and (isinstance(n_folds, bool) or not isinstance(n_folds, (int, np.integer))
                                or n_folds < 2):
        raise ParameterError(f"`n_folds` must be an integer >= 2; got {n_folds!r}.")
    other = sorted(set(resampling) - _MLR3_KFOLD)
    if other:
        raise DataError(f"{what}: column `resampling_id` holds {other[0]!r}; replikit reads the "
                        "k-fold resamplings (cv, repeated_cv, loo), whose test-to-training size "
                        "ratio is known without the sizes the export leaves out. For other "
                        "resamplings add columns n_train and n_test and map the file with "
                        "`columns` (study=task_id, model=learner_id, fold=iteration, ...).")
    k = int(n_folds) if n_folds is not None else 1
    repeat = np.where(repeated, (iteration - 1) // k, 0)
    fold = np.where(repeated, (iteration - 1) % k, iteration - 1)
    base = pd.DataFrame({"study": frame["task_id"].astype(str).to_numpy(),
                         "model": frame["learner_id"].astype(str).to_numpy(),
                         "repeat": repeat, "fold": fold})
    if "resampling_id" in frame and frame["resampling_id"].nunique() > 1:
        base["resampling"] = resampling  # part of the key: one study may use several
    parts = []
    for m in measures:
        part = base.copy()
        part["metric"] = MLR3_MEASURES[m]
        part["value"] = pd.to_numeric(frame[m], errors="coerce").to_numpy(dtype=float)
        parts.append(part)
    out = pd.concat(parts, ignore_index=True)
    text = ", ".join(f"{MLR3_MEASURES[m]} (from {m})" for m in measures)
    r = int(repeat.max()) + 1
    desc = (f"read as an mlr3 benchmark export: {base['study'].nunique()} task(s), "
            f"{base['model'].nunique()} learner(s), {r} repeat(s) of "
            f"{int(fold.max()) + 1} folds; metrics {text}; no training/test set sizes in the "
            "file: the corrected tests use n_test/n_train = 1/(k-1) of k equal folds")
    return out, desc


def _weka(frame: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    what = "Weka Experimenter file"
    measures = [c for c in frame.columns if c in WEKA_MEASURES]
    if not measures:
        raise DataError(f"{what}: no measure column replikit knows; expected one of "
                        f"{', '.join(f'`{m}`' for m in WEKA_MEASURES)}; found columns "
                        f"{list(map(str, frame.columns))}.")
    run = _int_column(frame, "Key_Run", what, 1)
    fold = _int_column(frame, "Key_Fold", what, 1)
    scheme = frame["Key_Scheme"].astype(str)
    options = (frame["Key_Scheme_options"].fillna("").astype(str).str.strip("'\" ")
               if "Key_Scheme_options" in frame else pd.Series("", index=frame.index))
    short = scheme.str.rsplit(".", n=1).str[-1]
    model = short.copy()
    # one short class name run with several option sets: the options tell them apart
    pairs = pd.DataFrame({"short": short, "options": options}).drop_duplicates()
    clash = set(pairs["short"][pairs["short"].duplicated()])
    if clash:
        hit = short.isin(clash)
        model[hit] = short[hit] + " " + options[hit]
    base = pd.DataFrame({"study": frame["Key_Dataset"].astype(str).to_numpy(),
                         "model": model.to_numpy(), "repeat": run - 1, "fold": fold - 1})
    sizes = [c for c in ("Number_of_training_instances", "Number_of_testing_instances")
             if c in frame]
    for col, name in (("Number_of_training_instances", "n_train"),
                      ("Number_of_testing_instances", "n_test")):
        if col in frame:
            base[name] = _int_column(frame, col, what, 1)
    parts = []
    for m in measures:
        metric, scale = WEKA_MEASURES[m]
        values = pd.to_numeric(frame[m].replace("?", np.nan), errors="coerce")
        part = base.copy()
        part["metric"] = metric
        part["value"] = values.to_numpy(dtype=float) * scale
        parts.append(part[values.notna().to_numpy()])  # Weka writes '?' where it has none
    out = pd.concat(parts, ignore_index=True)
    text = ", ".join(f"{WEKA_MEASURES[m][0]} (from {m}"
                     f"{', divided by 100' if WEKA_MEASURES[m][1] != 1.0 else ''})"
                     for m in measures)
    size_text = ("training/test set sizes from the file" if len(sizes) == 2 else
                 "no training/test set sizes in the file, so the corrected tests that need "
                 "them are skipped")
    desc = (f"read as a Weka Experimenter file: {base['study'].nunique()} dataset(s), "
            f"{base['model'].nunique()} scheme(s), {int(base['repeat'].max()) + 1} run(s) of "
            f"{int(base['fold'].max()) + 1} folds; metrics {text}; {size_text}")
    return out, desc


def _mapped(frame: pd.DataFrame, columns: dict) -> tuple[pd.DataFrame, str]:
    if not isinstance(columns, dict):
        raise ParameterError("`columns` must map Scores columns to the file's columns, e.g. "
                             f"{{'study': 'dataset', 'model': 'learner'}}; got {columns!r}.")
    unknown = [k for k in columns if k not in _MAPPABLE]
    if unknown:
        raise ParameterError(f"`columns`: {unknown[0]!r} is not a Scores column; "
                             f"expected one of {', '.join(_MAPPABLE)}.")
    absent = [v for v in columns.values() if v not in frame.columns]
    if absent:
        raise DataError(f"`columns` names column `{absent[0]}`, which the file does "
                        f"not have; found columns {list(map(str, frame.columns))}.")
    out = frame.rename(columns={v: k for k, v in columns.items()})
    shown = ", ".join(f"{k}={v}" for k, v in columns.items())
    if "value" in columns and "metric" not in out.columns:
        # one measure column mapped as the value (value=accuracy): its name is the metric
        out["metric"] = str(columns["value"])
        shown += f"; metric {columns['value']!r} (the value column's name)"
    return out, f"read with the column mapping {shown}"


def recognise_layout(frame: pd.DataFrame) -> str:
    """The layout of a scores table, from its columns.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table.

    Returns
    -------
    str
        ``'mlr3'`` (``task_id`` and ``learner_id``), ``'weka'`` (``Key_Dataset`` and
        ``Key_Scheme``), ``'scores'`` (any Scores column: validated as Scores, whose messages
        name what is missing) or ``'unknown'``.

    See Also
    --------
    scores_from_frame : Reads the table in the layout recognised.

    Examples
    --------
    >>> import pandas as pd
    >>> recognise_layout(pd.DataFrame(columns=["Key_Dataset", "Key_Scheme", "Key_Run"]))
    'weka'
    """
    cols = set(map(str, frame.columns))
    if {"task_id", "learner_id"} <= cols:
        return "mlr3"
    if {"Key_Dataset", "Key_Scheme"} <= cols:
        return "weka"
    if cols & {"study", "model", "repeat", "fold", "metric", "value"}:
        return "scores"
    return "unknown"


def scores_from_frame(frame: pd.DataFrame, *, columns: dict | None = None,
                      n_folds: int | None = None) -> tuple[Scores, ScoresLayout]:
    """Read per-fold scores in the Scores layout, an mlr3 export or a Weka Experimenter file.

    The layout is recognised from the columns (see the module docstring); ``columns`` maps any
    other layout. A table without a ``repeat`` column is one repeat.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table as read from the file.
    columns : dict, optional
        ``{scores_column: file_column}`` for a layout replikit does not recognise, e.g.
        ``{"study": "dataset", "model": "learner", "fold": "split"}``.
    n_folds : int, optional
        Folds per repeat, needed for an mlr3 export with ``resampling_id == "repeated_cv"``.

    Returns
    -------
    scores : Scores
        The validated table.
    layout : ScoresLayout
        The layout recognised and a one-line account of the mapping.

    Raises
    ------
    DataError
        A column the layout needs is missing or holds the wrong values.
    ParameterError
        ``n_folds`` is needed but not given, or ``columns`` names an unknown Scores column.

    See Also
    --------
    read_scores : The same from a file.
    replikit.data.Scores : The layout every capability reads.

    References
    ----------
    Lang, M. et al. (2019). mlr3: A modern object-oriented machine learning framework in R.
    Journal of Open Source Software 4(44), 1903.
    Hall, M. et al. (2009). The WEKA data mining software: an update. SIGKDD Explorations
    11(1), 10-18.

    Examples
    --------
    >>> import pandas as pd
    >>> mlr3 = pd.DataFrame({"task_id": "pima", "learner_id": ["classif.rpart"] * 2 +
    ...                      ["classif.log_reg"] * 2, "resampling_id": "cv",
    ...                      "iteration": [1, 2, 1, 2], "classif.ce": [.25, .27, .22, .23]})
    >>> scores, layout = scores_from_frame(mlr3)
    >>> layout.name, scores.metrics, scores.frame["fold"].tolist()
    ('mlr3', ['error_rate'], [0, 1, 0, 1])
    """
    if columns:
        frame, desc = _mapped(frame, columns)
        name = "columns"
    else:
        name = recognise_layout(frame)
        if name == "mlr3":
            _need(frame, _MLR3_KEYS, "mlr3 export")
            frame, desc = _mlr3(frame, n_folds)
        elif name == "weka":
            _need(frame, _WEKA_KEYS, "Weka Experimenter file")
            frame, desc = _weka(frame)
        elif name == "scores":
            desc = ""
        else:
            raise DataError(
                "scores: the columns match no layout replikit reads; expected the Scores "
                "columns (study, model, fold, metric, value), an mlr3 export (task_id, "
                "learner_id, iteration, a measure such as classif.ce) or a Weka Experimenter "
                "file (Key_Dataset, Key_Scheme, Key_Run, Key_Fold, a measure such as "
                f"Percent_correct); found columns {list(map(str, frame.columns))}. Map other "
                "layouts with `columns` (study=..., model=..., fold=...).")
    return Scores(frame), ScoresLayout(name, desc)  # no repeat column: one repeat


def read_scores(path: str | os.PathLike, *, columns: dict | None = None,
                n_folds: int | None = None, table: str | None = None) -> Scores:
    """Read a scores file in the Scores layout, an mlr3 export or a Weka Experimenter file.

    Parameters
    ----------
    path : path-like
        CSV, Parquet or DuckDB file.
    columns : dict, optional
        ``{scores_column: file_column}`` for any other layout.
    n_folds : int, optional
        Folds per repeat, for an mlr3 export of repeated cross-validation.
    table : str, optional
        The table inside a DuckDB file.

    Returns
    -------
    Scores
        The validated table (folds and repeats numbered from 0).

    See Also
    --------
    scores_from_frame : The same from a DataFrame, with the layout recognised.
    replikit.compare.compare_scores : Compares the models.

    References
    ----------
    Lang, M. et al. (2019). mlr3: A modern object-oriented machine learning framework in R.
    Journal of Open Source Software 4(44), 1903.

    Examples
    --------
    >>> from replikit.data.examples import score_export
    >>> s = read_scores(score_export("weka"))
    >>> s.models, s.metrics
    (['Logistic', 'SimpleCart'], ['accuracy', 'mae', 'rmse', 'roc_auc'])
    """
    from .io import read_frame

    frame = read_frame(path, table=table, dtype={"model": str, "metric": str,
                                                  "learner_id": str, "Key_Scheme": str})
    return scores_from_frame(frame, columns=columns, n_folds=n_folds)[0]


#: Distinctive column sets of tables that belong to another entry of the audit. Each set must
#: be present whole (a dataset with a ``value`` column is still data).
_SCORES_SETS = ({"model", "fold", "metric", "value"}, {"model", "repeat", "fold", "value"})
_MLR3_SET = {"task_id", "learner_id", "iteration"}
_WEKA_SET = {"key_dataset", "key_scheme", "key_run", "key_fold"}
_ESTIMATE_METRICS = ("r2", "r", "auc", "accuracy", "c_index", "estimate", "yi", "value")
_ESTIMATE_SPREAD = ("n", "se", "variance", "vi", "ci_low")


def guess_entry(frame: pd.DataFrame) -> tuple[str, str] | None:
    """Which entry of the audit a table belongs to when it is not raw data.

    Per-fold scores (the Scores layout, an mlr3 ``bmr$score()`` export, a Weka Experimenter
    CSV), out-of-fold predictions (``y_true`` with ``y_pred`` or ``proba_*``) or reported
    estimates (one row per study: a metric column with ``n`` or ``se``). Only a layout's whole
    distinctive column set counts, so a dataset with a column called ``value`` is still data.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table (its columns, and for estimates its rows, decide).

    Returns
    -------
    tuple of (str, str) or None
        ``(entry, what)``: the entry (``'scores'``, ``'predictions'``, ``'estimates'``) and the
        layout in words; ``None`` for anything else.

    Examples
    --------
    >>> guess_entry(pd.DataFrame(columns=["task_id", "learner_id", "iteration", "classif.ce"]))
    ('scores', 'per-fold scores exported by mlr3')
    >>> guess_entry(pd.DataFrame(columns=["age", "value", "y"])) is None
    True
    """
    import re

    columns = {str(c) for c in frame.columns}
    lower = {c.lower() for c in columns}
    if any(s <= lower for s in _SCORES_SETS):
        return "scores", "per-fold scores"
    if _MLR3_SET <= lower and any(re.fullmatch(r"(classif|regr|surv|clust|dens)\.\w+", c)
                                  for c in lower):
        return "scores", "per-fold scores exported by mlr3"
    if _WEKA_SET <= lower:
        return "scores", "per-fold scores exported by the Weka Experimenter"
    if "y_true" in lower and ("y_pred" in lower or any(c.startswith("proba_") for c in lower)):
        return "predictions", "out-of-fold predictions"
    metric = [c for c in frame.columns if str(c).lower() in _ESTIMATE_METRICS]
    spread = [c for c in frame.columns if str(c).lower() in _ESTIMATE_SPREAD]
    label = [c for c in frame.columns if str(c).lower() in ("study", "role")]
    if metric and spread and label:
        by_study = [c for c in label if str(c).lower() == "study"]
        one_per_study = bool(by_study) and frame[by_study[0]].is_unique
        roles = [c for c in label if str(c).lower() == "role"]
        marked = bool(roles) and set(frame[roles[0]].dropna().astype(str).str.lower()) <= {
            "original", "replication"}
        if one_per_study or marked:
            return "estimates", "reported estimates (one row per study)"
    return None


def maybe_estimates(header: pd.DataFrame) -> bool:
    """Whether a header has the columns of reported estimates (its rows then decide, see
    :func:`guess_entry`)."""
    lower = {str(c).lower() for c in header.columns}
    return bool(lower & set(_ESTIMATE_METRICS) and lower & set(_ESTIMATE_SPREAD)
                and lower & {"study", "role"})
