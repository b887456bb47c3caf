"""k nearest neighbours whose k never exceeds the training rows.

The audit fits every study, and some studies are small: scikit-learn's k-NN with
``n_neighbors=15`` refuses a training set of 13 rows. These estimators use
``min(n_neighbors, n_train)`` neighbours (recorded as ``n_neighbors_``) and are otherwise
scikit-learn's :class:`~sklearn.neighbors.KNeighborsClassifier` and
:class:`~sklearn.neighbors.KNeighborsRegressor` (the ``knn`` model alias).

Examples
--------
>>> import numpy as np
>>> X = np.arange(16.0).reshape(8, 2); y = np.array([0, 1] * 4)
>>> KNNClassifier(n_neighbors=15).fit(X, y).n_neighbors_
8
"""

from __future__ import annotations

from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor

__all__ = ["KNNClassifier", "KNNRegressor"]


class _KNN(BaseEstimator):
    _inner: type = KNeighborsRegressor

    def __init__(self, n_neighbors: int = 15):
        self.n_neighbors = n_neighbors

    def fit(self, X, y):
        k = max(1, min(int(self.n_neighbors), len(X)))
        # brute force (one BLAS product per chunk of test rows) from 8 features up: scikit-learn's
        # 'auto' picks a k-d tree up to 15 features, 4x slower on the audit's anes example (14
        # features, many tied rows); below 8 the tree wins
        n_features = X.shape[1] if hasattr(X, "shape") and len(X.shape) == 2 else 0
        algorithm = "brute" if n_features >= 8 else "auto"
        self.model_ = self._inner(n_neighbors=k, algorithm=algorithm).fit(X, y)
        self.n_neighbors_ = k
        if hasattr(self.model_, "classes_"):
            self.classes_ = self.model_.classes_
        return self

    def predict(self, X):
        return self.model_.predict(X)


class KNNClassifier(ClassifierMixin, _KNN):
    """k-NN classifier with ``min(n_neighbors, n_train)`` neighbours."""

    _inner = KNeighborsClassifier

    def predict_proba(self, X):
        return self.model_.predict_proba(X)


class KNNRegressor(RegressorMixin, _KNN):
    """k-NN regressor with ``min(n_neighbors, n_train)`` neighbours."""

    _inner = KNeighborsRegressor
