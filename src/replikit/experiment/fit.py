"""One fit path for every model fit in replikit: validate, clone, seed, fit, predict.

**The seeding rule** (the only one in replikit). A fit gets an integer *task seed* from the run's
root seed and a stable task key (:func:`replikit._random.task_int_seed`). The estimator is
``clone``\\ d — the caller's object is never fitted — and every ``random_state`` parameter of
the clone, nested ones included (``rf__random_state`` in a Pipeline), that is ``None`` gets the
task seed. A ``random_state`` the user fixed (an int or a ``RandomState``) is kept as given. So
a run is reproducible from its own ``random_state`` alone, bit-identical whatever the backend or
worker count, and a user who pins an estimator's seed gets exactly that estimator.

:func:`fit_predict` applies the rule and is what the runner's tasks (:func:`replikit.experiment.run`)
and the generic path of the resampling error estimates call; the batched fast paths solve the
same problems on the same scheme masks (:meth:`replikit.experiment.Scheme.masks`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._threads import fit_limits
from ..errors import DataError

__all__ = ["check_Xy", "seed_estimator", "fit_predict", "FitPrediction"]


def check_Xy(X, y, *, min_rows: int = 1):
    """Validate features and outcome of a fit: ``X`` two-dimensional, ``y`` one value per row,
    no missing outcome, at least ``min_rows`` rows.

    Parameters
    ----------
    X : array-like or DataFrame of shape (n_samples, n_features)
    y : array-like or Series of shape (n_samples,)
    min_rows : int, default 1

    Returns
    -------
    X : DataFrame or ndarray
        A DataFrame is returned as given (column names reach the estimator); anything else as a
        two-dimensional ndarray.
    y : ndarray of shape (n_samples,)

    Raises
    ------
    DataError
        Naming `X` or `y`, what was expected and what was got.

    Examples
    --------
    >>> X, y = check_Xy([[1.0], [2.0], [3.0]], [0, 1, 0])
    >>> X.shape, y.tolist()
    ((3, 1), [0, 1, 0])
    """
    import pandas as pd

    Xc = X if isinstance(X, pd.DataFrame) else np.asarray(X)
    if Xc.ndim != 2:
        raise DataError(f"`X` must be two-dimensional (rows x features); got shape {Xc.shape}.")
    ya = y.to_numpy() if isinstance(y, pd.Series) else np.asarray(y)
    if ya.ndim != 1 or len(ya) != len(Xc):
        raise DataError(f"`y` must be 1-D with one value per row of `X` ({len(Xc)}); got shape "
                        f"{ya.shape}.")
    missing = pd.isna(ya)
    if missing.any():
        raise DataError(f"`y` has {int(missing.sum())} missing value(s).")
    if len(ya) < min_rows:
        raise DataError(f"`X` must have at least {min_rows} rows; got {len(ya)}.")
    return Xc, ya


def seed_estimator(est, seed: int):
    """Give every ``random_state`` parameter of ``est`` that is ``None`` the integer ``seed``.

    Nested parameters (``step__random_state`` of a Pipeline or a meta-estimator) are included;
    a seed the user fixed is kept. ``est`` is changed in place and returned — pass a clone.

    Parameters
    ----------
    est : scikit-learn estimator
    seed : int

    Returns
    -------
    est

    Examples
    --------
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> seed_estimator(RandomForestClassifier(), 7).random_state
    7
    >>> seed_estimator(RandomForestClassifier(random_state=1), 7).random_state
    1
    """
    params = est.get_params(deep=True)
    updates = {k: seed for k, v in params.items()
               if (k == "random_state" or k.endswith("__random_state")) and v is None}
    if updates:
        est.set_params(**updates)
    return est


@dataclass(frozen=True)
class FitPrediction:
    """What :func:`fit_predict` returns.

    Attributes
    ----------
    estimator : fitted clone
        The seeded, fitted clone (for scorers that need the estimator).
    y_pred : ndarray of shape (n_test,)
    proba : ndarray of shape (n_test, n_classes) or None
        Predicted probabilities, columns in the order of ``classes``; ``None`` when not asked
        for or when the estimator has no ``predict_proba``.
    classes : ndarray or None
        The column labels of ``proba``.
    """

    estimator: Any
    y_pred: np.ndarray
    proba: np.ndarray | None
    classes: np.ndarray | None


def fit_predict(estimator, X_train, y_train, X_test, *, seed: int | None, proba: bool = False,
                classes=None) -> FitPrediction:
    """Clone ``estimator``, seed it (the rule of this module), fit it on the training rows and
    predict the test rows.

    Parameters
    ----------
    estimator : scikit-learn estimator
        Never fitted in place.
    X_train, y_train : training rows (repeat a row to give it weight, as a bootstrap does)
    X_test : test rows
    seed : int or None
        The task seed for ``random_state`` parameters that are ``None``; ``None`` leaves the
        clone unseeded.
    proba : bool, default False
        Also return ``predict_proba`` of the test rows (when the estimator has it).
    classes : array-like, optional
        All class labels, sorted as ``numpy.unique`` sorts them: the probability columns are
        aligned to them, a class missing from the training rows getting probability 0. By
        default the columns follow the fitted ``classes_``.

    Returns
    -------
    FitPrediction

    Raises
    ------
    ValueError
        scikit-learn's own error when the fit or prediction fails (the caller adds where).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = np.array(["a", "a", "b", "b"])
    >>> out = fit_predict(LogisticRegression(), X, y, X[:1], seed=0, proba=True,
    ...                   classes=["a", "b", "c"])
    >>> out.y_pred.tolist(), out.proba.shape, float(out.proba[0, 2])
    (['a'], (1, 3), 0.0)
    """
    from sklearn.base import clone

    est = clone(estimator)
    if seed is not None:
        seed_estimator(est, int(seed))
    with fit_limits():  # the thread policy: one BLAS and one OpenMP thread per fit
        est.fit(X_train, y_train)
        y_pred = np.asarray(est.predict(X_test))
        p = cls = None
        if proba and hasattr(est, "predict_proba"):
            try:
                p = np.asarray(est.predict_proba(X_test), float)
            except (AttributeError, NotImplementedError):
                p = None
        if p is not None:
            fitted = np.asarray(est.classes_)
            if classes is None:
                cls = fitted
            else:
                cls = np.asarray(classes)
                where = {c: i for i, c in enumerate(cls.tolist())}
                try:
                    cols = [where[c] for c in fitted.tolist()]
                except KeyError as exc:
                    raise DataError(f"`classes`: the fitted model predicts class {exc.args[0]!r}, "
                                    "which is not among the classes given.") from None
                full = np.zeros((p.shape[0], cls.size))
                full[:, cols] = p
                p = full
    return FitPrediction(est, y_pred, p, cls)
