"""One fit path for every model fit in replikit: validate, clone, set the random state, fit,
predict.

**The seeding rule** (the only one in replikit). A fit gets an integer *task random state* from
the run's root random state and a stable task key (:func:`replikit._random.task_int_seed`). The
estimator is ``clone``\\ d — the caller's object is never fitted — and every ``random_state``
parameter of the clone, nested ones included (``rf__random_state`` in a Pipeline), that is
``None`` gets the task's integer. A ``random_state`` the user fixed (an int or a
``RandomState``) is kept as given. So a run is reproducible from its own ``random_state``
alone, bit-identical whatever the backend or worker count, and a user who pins an estimator's
random state gets exactly that estimator.

:func:`fit_predict` applies the rule and is what the runner's tasks (:func:`replikit.experiment.run`)
and the generic path of the resampling error estimates call; the batched fast paths solve the
same problems on the same scheme masks (:meth:`replikit.experiment.Scheme.masks`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._compat import renamed
from .._convergence import watched_fit
from .._threads import fit_limits
from ..errors import DataError
from ..results import Result

__all__ = ["check_Xy", "seed_estimator", "fit_predict", "FitPrediction", "TestRows",
           "PREDICT_BLOCK_ROWS"]

#: Test rows predicted at once by :func:`fit_predict`: a larger test set is predicted a block
#: at a time, so that the copies a model's ``predict`` makes (a pipeline's transforms, a
#: conversion to floats) hold a block, not the whole set. Each row's prediction is its own:
#: the blocks change no number of a tree, a forest or k-NN, and a linear model's ``X @ beta``
#: by a few ulp at most (BLAS kernels unroll rows; a test checks both against one
#: ``predict`` of every row). The blocks depend on the test set only, never on the workers.
PREDICT_BLOCK_ROWS = 100_000


@dataclass(frozen=True)
class TestRows:
    """The rows ``rows`` of ``X`` (an array or a DataFrame) as a test set that is never
    copied whole: :func:`fit_predict` takes them a block at a time. A million test rows of 34
    columns are 272 MB, and a model's ``predict`` copies them once or twice more."""

    X: Any
    rows: np.ndarray

    def __len__(self) -> int:
        return len(self.rows)

    def take(self, a: int = 0, b: int | None = None):
        """Rows ``a:b`` of the test set (all of them by default), copied out of ``X``."""
        idx = self.rows[a:b]
        return self.X.iloc[idx] if hasattr(self.X, "iloc") else self.X[idx]


def _in_blocks(method, X_test):
    """``method`` (``predict``/``predict_proba``) of ``X_test`` (an array, a DataFrame or
    :class:`TestRows`) a block of :data:`PREDICT_BLOCK_ROWS` rows at a time."""
    n = len(X_test)
    rows = isinstance(X_test, TestRows)
    if n <= PREDICT_BLOCK_ROWS:
        return np.asarray(method(X_test.take() if rows else X_test))
    parts = []
    for a in range(0, n, PREDICT_BLOCK_ROWS):
        b = min(n, a + PREDICT_BLOCK_ROWS)
        block = X_test.take(a, b) if rows else (
            X_test.iloc[a:b] if hasattr(X_test, "iloc") else X_test[a:b])
        parts.append(np.asarray(method(block)))
    return np.concatenate(parts, axis=0)


def check_Xy(X, y, *, min_rows: int = 1):
    """Validate features and outcome of a fit: ``X`` two-dimensional, ``y`` one value per row,
    no missing outcome, at least ``min_rows`` rows.

    Parameters
    ----------
    X : array-like or DataFrame of shape (n_samples, n_features)
        Features.
    y : array-like or Series of shape (n_samples,), or a survival target
        Outcome; a survival outcome as a structured array (one boolean field, the event, one
        numeric field, the time: scikit-survival's layout) or a ``(time, event)`` tuple.
    min_rows : int, default 1
        The fewest rows accepted.

    Returns
    -------
    X : DataFrame or ndarray
        A DataFrame is returned as given (column names reach the estimator); anything else as a
        two-dimensional ndarray.
    y : ndarray of shape (n_samples,)
        A survival target as :data:`~replikit.experiment.survival.SURVIVAL_DTYPE`.

    Raises
    ------
    DataError
        Naming `X` or `y`, what was expected and what was got.

    See Also
    --------
    fit_predict : The fit these inputs go to.

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
    from .survival import is_survival_target, survival_target

    if is_survival_target(y):  # (event, time) in scikit-survival's layout, checked
        ya = survival_target(y)
        if len(ya) != len(Xc):
            raise DataError(f"`y` must have one (time, event) per row of `X` ({len(Xc)}); got "
                            f"{len(ya)}.")
        if len(ya) < min_rows:
            raise DataError(f"`X` must have at least {min_rows} rows; got {len(ya)}.")
        return Xc, ya
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


@renamed(seed="random_state")
def seed_estimator(est, random_state: int):
    """Give every ``random_state`` parameter of ``est`` that is ``None`` the integer
    ``random_state``.

    Nested parameters (``step__random_state`` of a Pipeline or a meta-estimator) are included;
    a random state the user fixed is kept. ``est`` is changed in place and returned — pass a
    clone. This is the one seeding rule of replikit (see the module docstring).

    Parameters
    ----------
    est : scikit-learn estimator
        The estimator (a clone: it is changed in place).
    random_state : int
        The task's integer, given to every ``random_state`` parameter that is ``None``.

    Returns
    -------
    estimator
        ``est`` itself.

    See Also
    --------
    fit_predict : Clones, applies this rule, fits and predicts.

    Examples
    --------
    >>> from sklearn.ensemble import RandomForestClassifier
    >>> seed_estimator(RandomForestClassifier(), 7).random_state
    7
    >>> seed_estimator(RandomForestClassifier(random_state=1), 7).random_state
    1
    """
    params = est.get_params(deep=True)
    updates = {k: random_state for k, v in params.items()
               if (k == "random_state" or k.endswith("__random_state")) and v is None}
    if updates:
        est.set_params(**updates)
    return est


@dataclass(frozen=True)
class FitPrediction(Result):
    """What :func:`fit_predict` returns: the fitted clone and its predictions of the test rows.

    Attributes
    ----------
    estimator : fitted clone
        The seeded, fitted clone (for scorers that need the estimator).
    y_pred : ndarray of shape (n_test,)
        Predicted outcomes of the test rows.
    proba : ndarray of shape (n_test, n_classes) or None
        Predicted probabilities, columns in the order of ``classes``; ``None`` when not asked
        for or when the estimator has no ``predict_proba``.
    classes : ndarray or None
        The column labels of ``proba``.

    See Also
    --------
    fit_predict : Makes it.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> X = np.array([[0.0], [1.0], [2.0]]); y = np.array([0.0, 1.0, 2.0])
    >>> fit_predict(LinearRegression(), X, y, X[:2], random_state=0).to_frame().round(6)
       y_pred
    0     0.0
    1     1.0
    """

    estimator: Any
    y_pred: np.ndarray
    proba: np.ndarray | None
    classes: np.ndarray | None

    @property
    def title(self) -> str:
        """The estimator's class and the number of test rows."""
        return f"Predictions of {type(self.estimator).__name__} ({len(self.y_pred):,} rows)"

    def to_frame(self):
        """One row per test row: ``y_pred`` and a ``proba_<class>`` column per class.

        Returns
        -------
        pandas.DataFrame
            The predictions.
        """
        import pandas as pd

        frame = pd.DataFrame({"y_pred": self.y_pred})
        if self.proba is not None:
            labels = self.classes if self.classes is not None else range(self.proba.shape[1])
            for j, c in enumerate(labels):
                frame[f"proba_{c}"] = self.proba[:, j]
        return frame

    def to_dict(self) -> dict[str, Any]:
        """The estimator's parameters as text and the predictions in JSON types.

        Returns
        -------
        dict
            ``estimator, y_pred, proba, classes``.
        """
        from ..results import to_jsonable

        return {"estimator": repr(self.estimator), "y_pred": to_jsonable(self.y_pred),
                "proba": to_jsonable(self.proba), "classes": to_jsonable(self.classes)}


@renamed(seed="random_state")
def fit_predict(estimator, X_train, y_train, X_test, *, random_state: int | None = None,
                proba: bool = False, classes=None) -> FitPrediction:
    """Clone ``estimator``, give it the task's random state (the rule of this module), fit it
    on the training rows and predict the test rows.

    Parameters
    ----------
    estimator : scikit-learn estimator
        Never fitted in place.
    X_train : array-like or DataFrame of shape (n_train, n_features)
        Training rows (repeat a row to give it weight, as a bootstrap does).
    y_train : array-like of shape (n_train,)
        Their outcomes.
    X_test : array-like, DataFrame or TestRows of shape (n_test, n_features)
        Test rows, predicted :data:`PREDICT_BLOCK_ROWS` at a time.
    random_state : int or None, default None
        The task's integer for ``random_state`` parameters that are ``None``; ``None`` leaves
        the clone as it is.
    proba : bool, default False
        Also return ``predict_proba`` of the test rows (when the estimator has it).
    classes : array-like, optional
        All class labels, sorted as ``numpy.unique`` sorts them: the probability columns are
        aligned to them, a class missing from the training rows getting probability 0. By
        default the columns follow the fitted ``classes_``.

    Returns
    -------
    FitPrediction
        The fitted clone, its predictions and probabilities.

    Raises
    ------
    ValueError
        scikit-learn's own error when the fit or prediction fails (the caller adds where).

    See Also
    --------
    seed_estimator : The seeding rule.
    replikit.experiment.run : Every task of a scheme is one call of this function.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]]); y = np.array(["a", "a", "b", "b"])
    >>> out = fit_predict(LogisticRegression(), X, y, X[:1], random_state=0, proba=True,
    ...                   classes=["a", "b", "c"])
    >>> out.y_pred.tolist(), out.proba.shape, float(out.proba[0, 2])
    (['a'], (1, 3), 0.0)
    """
    from sklearn.base import clone

    est = clone(estimator)
    if random_state is not None:
        seed_estimator(est, int(random_state))
    # the thread policy: one BLAS and one OpenMP thread per fit; the fit counted for its model,
    # with whether it converged (replikit._convergence: its warnings are raised again as they
    # were, and the command line says per model how many fits stopped early)
    with fit_limits(), watched_fit(est):
        est.fit(X_train, y_train)
        y_pred = _in_blocks(est.predict, X_test)
        p = cls = None
        if proba and hasattr(est, "predict_proba"):
            try:
                p = np.asarray(_in_blocks(est.predict_proba, X_test), float)
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
