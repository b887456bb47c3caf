"""A user's modelling data: a table with a target column and, optionally, a study column."""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import pandas as pd
from pandas.api import types as ptypes

from ..errors import DataError
from .io import read_frame

__all__ = ["Dataset", "dataset_from_frame", "load_dataset", "infer_task"]


@dataclass(frozen=True)
class Dataset:
    """Features, target and study labels ready for modelling (complete cases only)."""

    name: str
    X: pd.DataFrame
    y: pd.Series
    study: pd.Series | None
    task: str  # 'regression' or 'classification'
    n_dropped: int
    description: str = ""
    citation: str = ""

    @property
    def n_studies(self) -> int:
        return 0 if self.study is None else int(self.study.nunique())


def infer_task(y: pd.Series) -> str:
    """``'classification'`` for booleans, strings or integer targets with at most 10 distinct
    values; ``'regression'`` otherwise."""
    if ptypes.is_bool_dtype(y) or not ptypes.is_numeric_dtype(y):
        return "classification"
    values = y.to_numpy()
    if ptypes.is_integer_dtype(y) or np.all(np.equal(np.mod(values, 1), 0)):
        if pd.unique(values).size <= 10:
            return "classification"
    return "regression"


def _columns_list(frame: pd.DataFrame) -> str:
    cols = [str(c) for c in frame.columns]
    shown = ", ".join(cols[:30])
    return shown + (f", ... ({len(cols)} in all)" if len(cols) > 30 else "")


def dataset_from_frame(frame: pd.DataFrame, *, target: str, study: str | None = None,
                       features: list[str] | None = None, task: str | None = None,
                       min_studies: int = 1, name: str = "data",
                       target_option: str = "target", study_option: str = "study") -> Dataset:
    """Validate a user's table and split it into features, target and study labels.

    Categorical features are one-hot encoded (first level dropped); rows with a missing value in
    any used column are dropped and counted. ``target_option``/``study_option`` name the
    parameters in messages (e.g. ``--target`` on the command line).

    Raises
    ------
    DataError
        The target or study column does not exist (the message lists the available columns),
        the target is not numeric for regression, the study column has fewer than
        ``min_studies`` studies, or no complete rows remain.
    """
    if target not in frame.columns:
        raise DataError(
            f"`{target_option}`: no column {target!r} in {name}; available columns: "
            f"{_columns_list(frame)}."
        )
    if study is not None and study not in frame.columns:
        raise DataError(
            f"`{study_option}`: no column {study!r} in {name}; available columns: "
            f"{_columns_list(frame)}."
        )
    if study is not None and study == target:
        raise DataError(f"`{study_option}` and `{target_option}` must differ; both are {target!r}.")
    if features is None:
        features = [c for c in frame.columns if c not in (target, study)]
    else:
        unknown = [f for f in features if f not in frame.columns]
        if unknown:
            raise DataError(f"`features`: no column(s) {unknown} in {name}; available columns: "
                            f"{_columns_list(frame)}.")
    if not features:
        raise DataError(f"{name} has no feature columns besides the target {target!r}.")
    y_raw = frame[target]
    if task is None:
        if not (ptypes.is_numeric_dtype(y_raw) or ptypes.is_bool_dtype(y_raw)):
            sample = y_raw.dropna().astype(str).unique()[:3].tolist()
            raise DataError(
                f"`{target_option}`: column {target!r} must be numeric (a continuous outcome or "
                f"0/1 labels); found dtype {y_raw.dtype} with values like {sample}."
            )
        task = infer_task(y_raw.dropna())
    used = frame[list(features) + [target] + ([study] if study else [])]
    complete = used.dropna()
    n_dropped = len(used) - len(complete)
    if len(complete) == 0:
        raise DataError(f"{name}: no row is complete in the used columns (all {len(used)} rows "
                        "have a missing value).")
    X = complete[list(features)]
    categorical = [c for c in X.columns if not (ptypes.is_numeric_dtype(X[c]) or ptypes.is_bool_dtype(X[c]))]
    X = pd.get_dummies(X, columns=categorical, drop_first=True, dtype=float).astype(float)
    X = X.reset_index(drop=True)
    y = complete[target].reset_index(drop=True)
    y = y.astype(float) if task == "regression" else y
    s = None
    if study is not None:
        s = complete[study].astype(str).reset_index(drop=True).rename("study")
        n_studies = s.nunique()
        if n_studies < min_studies:
            raise DataError(
                f"`{study_option}`: column {study!r} holds {n_studies} distinct stud"
                f"{'y' if n_studies == 1 else 'ies'} ({', '.join(map(repr, s.unique()[:5]))}); "
                f"at least {min_studies} are needed to compare studies."
            )
    if task == "classification" and y.nunique() < 2:
        raise DataError(f"`{target_option}`: column {target!r} has a single class; nothing to predict.")
    return Dataset(name, X, y.rename(target), s, task, n_dropped)


def load_dataset(path: str | os.PathLike, *, target: str, study: str | None = None,
                 table: str | None = None, min_studies: int = 1, data_option: str = "data",
                 **kwargs) -> Dataset:
    """Read a CSV/Parquet/DuckDB file and validate it as in :func:`dataset_from_frame`."""
    frame = read_frame(path, table=table, name=data_option)
    return dataset_from_frame(frame, target=target, study=study, min_studies=min_studies,
                              name=os.path.basename(str(path)), **kwargs)
