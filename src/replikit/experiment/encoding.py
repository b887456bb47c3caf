"""Level codes for one-hot columns: a many-level categorical as one column for tree models.

A table's text columns reach the models one-hot encoded (one 0/1 column per level but the
first; :func:`replikit.data.userdata.dataset_from_frame`). For linear models that is the
encoding; for trees it multiplies the work by the number of levels (a 142-level ``country``
column is 141 columns to scan at every split) and lets a split isolate only one level at a
time. :func:`onehot_groups` finds the sets of mutually exclusive 0/1 columns of a table (the
dummies of one categorical: no row has two of them), and :class:`LevelCodes` turns each set
back into one column of level codes, fitted on the training rows only:

- the codes are ordered by the mean outcome of each level in the training rows (for classes:
  the share of the most frequent class), so a split on the code separates low from high
  levels — for a continuous outcome the best split of a categorical is of this form (Fisher
  1958; Breiman et al. 1984, sec. 9.4), the ordering histogram gradient boosting uses inside
  each node;
- a level with no training row gets the reference level's code (as a dummy that is never 1 in
  training has no effect on a fitted model).

The recoding is lossless (a row's level is recovered from its code), fitted per training fold
(no test row's outcome is used) and deterministic.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

__all__ = ["onehot_groups", "LevelCodes", "MIN_GROUP_LEVELS"]

#: Fewest dummy columns of a categorical for it to be recoded (smaller ones are cheap as they
#: are): a categorical of 9 levels or more.
MIN_GROUP_LEVELS = 8


def onehot_groups(X, *, min_columns: int = MIN_GROUP_LEVELS) -> tuple[tuple[int, ...], ...]:
    """Sets of one-hot columns of ``X``: column positions of 0/1 columns that share a name
    prefix (``country_Albania``, ``country_Angola``: ``country``) and are mutually exclusive
    (no row has two of them), each with at least ``min_columns`` columns, largest first.

    Parameters
    ----------
    X : pandas.DataFrame
        The encoded features (column names as :func:`pandas.get_dummies` writes them).
    min_columns : int, default :data:`MIN_GROUP_LEVELS`
        Fewest columns of a set.

    Returns
    -------
    tuple of tuple of int
        Each set's column positions, in column order.

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"age": [30., 41., 52.], "c_a": [1., 0., 0.], "c_b": [0., 1., 0.]})
    >>> onehot_groups(X, min_columns=2)
    ((1, 2),)
    """
    import pandas as pd

    if not isinstance(X, pd.DataFrame) or X.shape[1] < min_columns:
        return ()
    values = X.to_numpy()
    binary = np.flatnonzero(((values == 0.0) | (values == 1.0)).all(axis=0)).tolist()
    by_prefix: dict[str, list[int]] = {}
    for j in binary:
        name = str(X.columns[j])
        for i, ch in enumerate(name):
            if ch == "_" and i > 0:
                by_prefix.setdefault(name[:i], []).append(j)
    groups, used = [], set()
    # the largest sets first; a column joins one set only
    for _, cols in sorted(by_prefix.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        cols = [j for j in cols if j not in used]
        if len(cols) < min_columns or values[:, cols].sum(axis=1).max() > 1:
            continue
        groups.append(tuple(sorted(cols)))
        used.update(cols)
    return tuple(sorted(groups, key=lambda g: (-len(g), g[0])))


class LevelCodes(TransformerMixin, BaseEstimator):
    """Replace each set of one-hot columns by one column of level codes ordered by the mean
    outcome of the training rows (see the module docstring).

    Parameters
    ----------
    groups : tuple of tuple of int
        Column positions of each set of mutually exclusive 0/1 columns
        (:func:`onehot_groups`).

    Attributes
    ----------
    order_ : list of numpy.ndarray
        Per set, the code of each level (the reference level, every column 0, first).
    n_features_out_ : int
        Columns out: the other columns, then one code column per set.

    Notes
    -----
    The output puts the columns outside every set first, in their order, then one code
    column per set: :meth:`code_columns` gives their positions (for a model's
    ``categorical_features``).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.5, 1, 0], [1.5, 0, 1], [2.5, 0, 0], [3.5, 0, 1]])
    >>> LevelCodes(groups=((1, 2),)).fit_transform(X, [10.0, 30.0, 0.0, 30.0])
    array([[0.5, 1. ],
           [1.5, 2. ],
           [2.5, 0. ],
           [3.5, 2. ]])
    """

    def __init__(self, groups=()):
        self.groups = groups

    def _levels(self, X) -> list[np.ndarray]:
        """Per set, each row's level: 0 for the reference (every column 0), j + 1 for the
        set's column j."""
        out = []
        for cols in self.groups:
            block = X[:, list(cols)]
            out.append(np.where(block.any(axis=1), block.argmax(axis=1) + 1, 0))
        return out

    def fit(self, X, y=None):
        X = np.asarray(X, dtype=float)
        y = np.asarray(y)
        if y.dtype.kind != "f":  # classes: the share of the most frequent class
            values, counts = np.unique(y, return_counts=True)
            target = (y == values[np.argmax(counts)]).astype(float)
        else:
            target = y.astype(float)
        overall = float(target.mean()) if target.size else 0.0
        self.order_ = []
        for cols, level in zip(self.groups, self._levels(X), strict=True):
            k = len(cols) + 1
            counts = np.bincount(level, minlength=k)
            sums = np.bincount(level, weights=target, minlength=k)
            means = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
            # an unseen level takes the reference level's place (or the overall mean)
            ref = means[0] if counts[0] > 0 else overall
            means = np.where(np.isnan(means), ref, means)
            # stable: ties keep the column order, so the codes never depend on chance
            rank = np.empty(k, dtype=float)
            rank[np.argsort(means, kind="stable")] = np.arange(k, dtype=float)
            rank[counts == 0] = rank[0]  # as the reference level, exactly
            self.order_.append(rank)
        inside = {j for cols in self.groups for j in cols}
        self.keep_ = np.array([j for j in range(X.shape[1]) if j not in inside], dtype=int)
        self.n_features_in_ = X.shape[1]
        self.n_features_out_ = len(self.keep_) + len(self.groups)
        return self

    def transform(self, X):
        X = np.asarray(X, dtype=float)
        codes = [rank[level] for rank, level in zip(self.order_, self._levels(X), strict=True)]
        return np.column_stack([X[:, self.keep_], *codes]) if codes else X[:, self.keep_]

    def code_columns(self, n_features: int) -> list[int]:
        """Positions of the code columns in the output, for ``n_features`` input columns."""
        inside = sum(len(cols) for cols in self.groups)
        start = n_features - inside
        return list(range(start, start + len(self.groups)))
