"""The per-study design of Vijayakumar & Cheung (2021) as a resampling scheme: a train/test
split, then K-fold CV on the training part.

Vijayakumar & Cheung (2021, "Data and Simulation Design") split every study 2:1 into a training
and a test part, estimate the CV R² by K-fold cross-validation on the training part and the test
R² by the model refitted on the whole training part. :class:`HoldOutCV` is that design as a
scikit-learn-style splitter (a :class:`~replikit.experiment.schemes.Scheme`), so
:func:`replikit.experiment.run` fits every model on it, within each study (``study=``), with the
runner's random states, backends and store. Its splits are numbered ``fold = 0 .. K-1`` (the CV folds)
and ``fold = K`` (the train/test split, training on the whole training part).

The same splits feed the batched least-squares fits of :mod:`replikit.replicate._fits`: the
scheme's ``masks`` (the one scheme engine of :mod:`replikit.experiment.schemes`) turned into
*fold labels* — one integer per row, ``f`` for a row of CV fold ``f`` and ``-1`` for a test row
(:func:`fold_labels_from_masks`) — so the fast path and the runner fit the same rows.
"""

from __future__ import annotations

import numpy as np

from .._compat import renamed_fields
from .._format import number
from .._random import check_random_state
from .._validation import check_float, check_int
from ..errors import DataError, ParameterError
from ..experiment.schemes import Scheme, SplitBlock

__all__ = ["HoldOutCV", "LabeledFolds", "fold_labels_from_masks", "TEST_LABEL"]

TEST_LABEL = -1  # fold label of a row of the test part


@renamed_fields(n_splits="n_folds")
class HoldOutCV(Scheme):
    """A train/test split with K-fold cross-validation on the training part.

    The design of every study in Vijayakumar & Cheung (2021): each study's rows are permuted
    once; the first ``round(n * train_share)`` rows of the permutation are the training part,
    cut into K contiguous folds of (nearly) equal size, and the others are the test part.

    Parameters
    ----------
    n_folds : int, default 10
        Folds K of the cross-validation on the training part (at least 2; the paper uses 10).
    train_share : float, default 2/3
        Share of the rows in the training part, strictly between 0 and 1 (the paper's 2:1
        split).
    min_fold_rows : int, optional
        Use fewer folds, but at least 2, where a fold would hold fewer rows than this
        (``K = clip(n_train // min_fold_rows, 2, n_folds)``); an R² on a handful of held-out
        rows is mostly noise. Default: always ``n_folds``.
    random_state : None, int or Generator, optional
        Used when the scheme is called on its own; :func:`replikit.experiment.run` passes each
        study its own stream instead.

    See Also
    --------
    LabeledFolds : The same splits, from fold labels passed as ``groups``.
    replikit.experiment.run : Fits models on a scheme, within each study.

    Notes
    -----
    Splits ``fold = 0 .. K-1`` hold out CV fold f (training on the rest of the training part);
    split ``fold = K`` trains on the whole training part and tests on the test part. Indices are
    sorted, as scikit-learn's splitters return them. ``n_splits`` is the old name of
    ``n_folds`` (it still works, with a FutureWarning).

    References
    ----------
    .. [1] Vijayakumar, R. & Cheung, M. W. (2021). Assessing Replicability of Machine Learning
       Results: An Introduction to Methods on Predictive Accuracy in Social Sciences. Social
       Science Computer Review, 39(5), 768–801. https://doi.org/10.1177/0894439319888445

    Examples
    --------
    >>> import numpy as np
    >>> scheme = HoldOutCV(3, random_state=0)
    >>> [(len(train), len(test)) for train, test in scheme.split(np.zeros((30, 1)))]
    [(13, 7), (14, 6), (13, 7), (20, 10)]
    >>> HoldOutCV(2).fold_labels(9, random_state=0).tolist()  # -1: a test row
    [-1, -1, 0, 1, 0, 0, 1, -1, 1]
    """

    def __init__(self, n_folds: int = 10, *, train_share: float = 2 / 3,
                 min_fold_rows: int | None = None, random_state=None):
        self.n_folds = check_int(n_folds, "n_folds", min_value=2)
        share = check_float(train_share, "train_share")
        if not 0 < share < 1:
            raise ParameterError(f"`train_share` must lie strictly between 0 and 1; got "
                                 f"{train_share}.")
        self.train_share = share
        self.min_fold_rows = (None if min_fold_rows is None
                              else check_int(min_fold_rows, "min_fold_rows", min_value=1))
        self.random_state = random_state

    # -- the layout of n rows (no randomness) ---------------------------------------------

    def n_train(self, n: int) -> int:
        """Rows of the training part: ``round(n * train_share)``."""
        return int(round(n * self.train_share))

    def folds_for(self, n: int) -> int:
        """Folds K for ``n`` rows (fewer than ``n_folds`` under ``min_fold_rows``)."""
        if self.min_fold_rows is None:
            return self.n_folds
        return int(np.clip(self.n_train(n) // self.min_fold_rows, 2, self.n_folds))

    def fold_bounds(self, n: int) -> np.ndarray:
        """Positions in the permutation where the K folds of the training part start and end
        (K + 1 values, from 0 to ``n_train``)."""
        return np.linspace(0, self.n_train(n), self.folds_for(n) + 1).round().astype(int)

    def get_n_splits(self, X=None, y=None, groups=None) -> int:
        """K + 1 (the folds and the train/test split); needs ``X`` when ``min_fold_rows`` may
        lower K."""
        if self.min_fold_rows is None:
            return self.n_folds + 1
        if X is None:
            raise ParameterError("`X` is needed: the number of folds depends on the rows "
                                 "(`min_fold_rows`).")
        return self.folds_for(X.shape[0] if hasattr(X, "shape") else len(X)) + 1

    # -- fold labels ----------------------------------------------------------------------

    def assign(self, order) -> np.ndarray:
        """Fold labels of rows taken in ``order`` (a permutation of ``0 .. n-1``).

        Parameters
        ----------
        order : array-like of shape (n,)
            The first ``n_train`` positions are the training part, cut into contiguous folds;
            the rest is the test part.

        Returns
        -------
        ndarray of int of shape (n,)
            ``labels[order[i]]`` is the fold of position i, or ``-1`` (:data:`TEST_LABEL`) for
            the test part.
        """
        order = np.asarray(order)
        n = order.size
        if order.ndim != 1 or not np.array_equal(np.sort(order), np.arange(n)):
            raise ParameterError(f"`order` must be a permutation of 0..n-1; got shape "
                                 f"{order.shape}.")
        self._check_rows(n)
        position_label = np.full(n, TEST_LABEL, dtype=np.int64)
        bounds = self.fold_bounds(n)
        for f in range(bounds.size - 1):
            position_label[bounds[f]:bounds[f + 1]] = f
        labels = np.empty(n, dtype=np.int64)
        labels[order] = position_label
        return labels

    def fold_labels(self, n: int, random_state=None) -> np.ndarray:
        """Fold labels of ``n`` rows from one random permutation drawn from ``random_state``
        (what :meth:`split` uses)."""
        rng = check_random_state(self.random_state if random_state is None else random_state)
        return self.assign(rng.permutation(int(n)))

    def _check_rows(self, n: int) -> None:
        n_train = self.n_train(n)
        k = self.folds_for(n)
        if n - n_train < 2 or n_train < 2 * k:
            raise DataError(f"{number(n)} rows are too few for a {number(self.train_share)} "
                            f"train share with {k}-fold CV on it (need at least 2 test rows and "
                            "2 rows per fold).")

    # -- splits ---------------------------------------------------------------------------

    def _blocks(self, n, y, groups, rng):
        yield _label_block(self.fold_labels(n, rng))


def _label_block(labels) -> SplitBlock:
    """The splits of fold labels as one block of matrices: split f < K tests the rows labeled
    f and trains on the other training rows; split K trains on every training row and tests
    the test part."""
    labels = np.asarray(labels)
    k = int(labels.max()) + 1
    in_train = labels != TEST_LABEL
    test = np.stack([labels == f for f in range(k)] + [~in_train])
    weights = np.stack([in_train & (labels != f) for f in range(k)] + [in_train]).astype(float)
    return SplitBlock(np.zeros(k + 1, int), np.arange(k + 1), weights, test)


def fold_labels_from_masks(test) -> np.ndarray:
    """Fold labels from the test masks of :class:`HoldOutCV` or :class:`LabeledFolds`.

    Parameters
    ----------
    test : array-like of bool, shape (K + 1, n)
        The test masks of the K folds, then of the train/test split (``masks(n)[1]``).

    Returns
    -------
    ndarray of int of shape (n,)
        ``f`` for a row tested in fold f, ``-1`` for a row of the test part.

    Examples
    --------
    >>> W, T = HoldOutCV(2).masks(9, random_state=0)
    >>> fold_labels_from_masks(T).tolist() == HoldOutCV(2).fold_labels(9, 0).tolist()
    True
    """
    test = np.asarray(test, bool)
    folds, hold = test[:-1], test[-1]
    if not (folds.sum(axis=0) + hold == 1).all():
        raise ParameterError("`test`: every row must be tested exactly once, in one CV fold or "
                             "in the test part (the masks of HoldOutCV).")
    labels = np.argmax(folds, axis=0).astype(np.int64)
    labels[hold] = TEST_LABEL
    return labels


class LabeledFolds(Scheme):
    """The splits of fold labels passed as ``groups`` (those of :meth:`HoldOutCV.fold_labels`).

    For designs whose rows are assigned once and shared by several fits: the Study 2
    simulation (:func:`~replikit.replicate.simulate_replication`) fits every noise level of a
    study on the same splits, so it draws the labels itself and passes them to
    :func:`replikit.experiment.run` as ``groups``. Split f < K tests the rows labeled f and
    trains on the other labeled rows; split K trains on every labeled row and tests the rows
    labeled -1.

    See Also
    --------
    HoldOutCV : Draws the fold labels of one study.

    Examples
    --------
    >>> import numpy as np
    >>> labels = np.array([0, 1, -1, 0, 1, -1])
    >>> [(tr.tolist(), te.tolist()) for tr, te in LabeledFolds().split(np.zeros((6, 1)),
    ...                                                                 groups=labels)]
    [([1, 4], [0, 3]), ([0, 3], [1, 4]), ([0, 1, 3, 4], [2, 5])]
    """

    randomized = False

    def __init__(self):
        pass

    def get_n_splits(self, X=None, y=None, groups=None) -> int:
        if groups is None:
            raise ParameterError("`groups` (the fold labels) are needed.")
        return int(np.max(groups)) + 2

    def _blocks(self, n, y, groups, rng):
        if groups is None:
            raise ParameterError("`groups`: LabeledFolds reads the fold labels (f for CV fold f, "
                                 "-1 for a test row) from the groups; got none.")
        labels = np.asarray(groups)
        if labels.shape != (n,) or labels.min() < TEST_LABEL:
            raise ParameterError(f"`groups` must hold one fold label (>= -1) per row ({n}); got "
                                 f"shape {labels.shape}.")
        yield _label_block(labels)
