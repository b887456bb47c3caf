"""Resampling schemes: scikit-learn style splitters that also number their splits and give them
as weight/mask matrices — the one scheme engine of replikit.

Each scheme has ``split(X, y=None, groups=None)`` yielding ``(train, test)`` index arrays like a
scikit-learn splitter, ``get_n_splits()``, a ``__repr__`` showing every parameter, and two views
of the same splits:

- ``iter_splits(X, y=None, groups=None, random_state=None)`` yields :class:`Split` records with
  the ``repeat`` and ``fold`` numbers the Scores table needs (what the runner fits);
- ``masks(n, y=None, groups=None, random_state=None)`` returns the training weights ``W`` and
  test mask ``T``, both of shape ``(R, n)``: ``W[r, i]`` is how many times row i is in the
  training set of split r (bootstrap counts, else 0/1) and ``T[r, i]`` whether it is tested
  (what the batched fast paths fit, all splits at once).

For the same ``random_state`` both views hold the same splits, in the same order: row r of the
matrices is the r-th split of ``iter_splits``, whose training index array lists row i
``W[r, i]`` times. ``random_state`` passed to either overrides the scheme's own (the runner
passes a per-study stream). Splits are drawn in blocks of at most about four million cells, so
memory stays bounded however many splits there are.

The schemes follow the resampling estimators of Etherington & Lieske (2019), a replication of
Verbyla & Litvaitis (1989), eqs. 3–7: resubstitution, hold-out with H repeats and test share p,
K-fold (K = n is leave-one-out), bootstrap with out-of-bag test sets; plus the 5×2 design of
Dietterich (1998) and leave-one-study-out (Parmigiani (2023), sec. 7.4).
"""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Iterator
from typing import NamedTuple

import numpy as np

from .._compat import dropped, renamed_fields
from .._random import check_random_state
from .._validation import check_choice, check_float, check_int
from ..errors import DataError, ParameterError

__all__ = ["subsample", "Split", "SplitBlock", "Scheme", "Resubstitution", "HoldOut",
           "RepeatedKFold", "LeaveOneOut",
           "FiveByTwo", "Bootstrap", "LeaveOneStudyOut", "SklearnScheme", "parse_scheme",
           "as_scheme", "kfold_test_masks", "holdout_test_masks", "bootstrap_weights"]

_BLOCK_CELLS = 1 << 22  # cells of one block of split matrices
_MAX_REDRAWS = 10_000


class Split(NamedTuple):
    """One split of a scheme, with the numbers the Scores table needs.

    Parameters
    ----------
    repeat : int
        The repeat (or, for cross-study validation, the training study) it belongs to.
    fold : int
        Its number within the repeat.
    train : ndarray of int
        Training rows; a row is listed as often as its weight (a bootstrap draw).
    test : ndarray of int
        Test rows.

    See Also
    --------
    SplitBlock : Consecutive splits as matrices.
    Scheme.iter_splits : Yields these.

    Examples
    --------
    >>> sp = next(RepeatedKFold(2, random_state=0).iter_splits(np.zeros((4, 1))))
    >>> sp.repeat, sp.fold, len(sp.train), len(sp.test)
    (0, 0, 2, 2)
    """

    repeat: int
    fold: int
    train: np.ndarray
    test: np.ndarray


class SplitBlock(NamedTuple):
    """Consecutive splits as matrices, as a :class:`Scheme` subclass yields them from
    ``_blocks`` (or single splits from ``_iter``).

    Parameters
    ----------
    repeat : ndarray of int, shape (m,)
        The repeat of each split.
    fold : ndarray of int, shape (m,)
        The fold of each split.
    weights : ndarray of float, shape (m, n)
        Times each row is in each split's training set.
    test : ndarray of bool, shape (m, n)
        The rows each split tests.
    counts : bool, default False
        Whether the weights may exceed 1 (bootstrap counts).

    See Also
    --------
    Split : One split as index arrays.
    Scheme.masks : Every split of a scheme as two matrices.

    Examples
    --------
    >>> block = SplitBlock(np.array([0]), np.array([0]), np.ones((1, 3)), np.ones((1, 3), bool))
    >>> block.weights.shape, bool(block.test.all())
    ((1, 3), True)
    """

    repeat: np.ndarray
    fold: np.ndarray
    weights: np.ndarray
    test: np.ndarray
    counts: bool = False  # weights may exceed 1 (bootstrap)


def _n_samples(X) -> int:
    if hasattr(X, "shape"):
        return int(X.shape[0])
    return len(X)


def _rows_per_block(n: int) -> int:
    return max(1, _BLOCK_CELLS // max(1, n))


# --------------------------------------------------------------------------------------------
# split matrices from drawn orders and indices (shared with simulate_resampling)
# --------------------------------------------------------------------------------------------

def _fold_ids(order: np.ndarray, n_splits: int) -> np.ndarray:
    """Fold number of every row when the rows, taken in ``order``, fill contiguous folds."""
    n = order.shape[-1]
    sizes = np.full(n_splits, n // n_splits)
    sizes[: n % n_splits] += 1
    of_position = np.broadcast_to(np.repeat(np.arange(n_splits), sizes), order.shape)
    fold = np.empty(order.shape, np.int64)
    np.put_along_axis(fold, order, of_position, axis=-1)
    return fold


def kfold_test_masks(order, n_splits: int) -> np.ndarray:
    """Test masks of K contiguous folds of the rows taken in ``order`` (scikit-learn's ``KFold``
    rule: the first ``n % K`` folds are one row larger).

    Parameters
    ----------
    order : array-like of shape (..., n)
        Permutations of ``0..n-1`` (one per leading index).
    n_splits : int
        K.

    Returns
    -------
    ndarray of bool, shape (..., K, n)
        ``[..., k, i]`` is True when row i is in test fold k.

    Examples
    --------
    >>> kfold_test_masks([2, 0, 1, 3], 2).astype(int).tolist()
    [[1, 0, 1, 0], [0, 1, 0, 1]]
    """
    order = np.asarray(order)
    fold = _fold_ids(order, n_splits)
    return fold[..., None, :] == np.arange(n_splits)[:, None]


def holdout_test_masks(order, n_test: int) -> np.ndarray:
    """Test masks of hold-out splits: the first ``n_test`` rows of each ``order`` are tested.

    Parameters
    ----------
    order : array-like of shape (..., n)
        Permutations of ``0..n-1``.
    n_test : int

    Returns
    -------
    ndarray of bool, shape (..., n)

    Examples
    --------
    >>> holdout_test_masks([[3, 1, 0, 2]], 2).astype(int).tolist()
    [[0, 1, 0, 1]]
    """
    order = np.asarray(order)
    T = np.zeros(order.shape, bool)
    np.put_along_axis(T, order[..., :n_test], True, axis=-1)
    return T


def bootstrap_weights(draws, n: int) -> np.ndarray:
    """Training weights of bootstrap resamples: how often each row was drawn.

    Parameters
    ----------
    draws : array-like of int, shape (..., m)
        Row indices drawn with replacement (one resample per leading index).
    n : int
        Number of rows.

    Returns
    -------
    ndarray of int64, shape (..., n)
        The out-of-bag (test) rows of a resample are those with weight 0.

    Examples
    --------
    >>> bootstrap_weights([[0, 0, 2]], 4).tolist()
    [[2, 0, 1, 0]]
    """
    draws = np.asarray(draws, np.int64)
    lead = draws.shape[:-1]
    flat = draws.reshape(-1, draws.shape[-1])
    m = flat.shape[0]
    counts = np.bincount((flat + n * np.arange(m)[:, None]).ravel(), minlength=m * n)
    return counts.reshape(*lead, n)


def _class_codes(y) -> np.ndarray:
    return np.unique(np.asarray(y), return_inverse=True)[1].reshape(-1)


def _check_class_labels(y, option: str) -> None:
    """A :class:`ParameterError` naming ``option`` when ``y`` is continuous (floats that are not
    all whole numbers, scikit-learn's ``type_of_target`` 'continuous'): strata are classes, and
    every value of a continuous outcome would be a class of its own."""
    arr = np.asarray(y)
    if arr.dtype.kind != "f":
        return
    finite = arr[np.isfinite(arr)]
    if np.all(np.mod(finite, 1) == 0):
        return
    distinct = np.unique(finite)
    shown = ", ".join(f"{v:.4g}" for v in distinct[:3])
    raise ParameterError(f"`{option}`: stratified splits need class labels; the outcome is "
                         f"continuous ({distinct.size:,} distinct values such as {shown}) — "
                         f"leave `{option}` off for a continuous outcome.")


# --------------------------------------------------------------------------------------------
# the schemes
# --------------------------------------------------------------------------------------------

class Scheme:
    """Base of replikit's resampling schemes: a scikit-learn splitter that also numbers its
    splits and gives them as weight/mask matrices.

    Subclasses implement ``get_n_splits`` and either ``_iter(n, y, groups, rng)`` (yield
    :class:`Split` records; the matrices of :meth:`masks` are built from them) or
    ``_blocks(n, y, groups, rng)`` (yield blocks of weight/mask matrices, for vectorised
    draws; the index arrays of :meth:`iter_splits` are read off them).

    See Also
    --------
    RepeatedKFold : K-fold cross-validation, repeated.
    Bootstrap : Bootstrap resamples with out-of-bag test sets.
    replikit.experiment.run : Fits every split of a scheme.

    Examples
    --------
    >>> class FirstHalf(Scheme):
    ...     randomized = False
    ...     def get_n_splits(self, X=None, y=None, groups=None):
    ...         return 1
    ...     def _iter(self, n, y, groups, rng):
    ...         yield Split(0, 0, np.arange(n // 2), np.arange(n // 2, n))
    >>> W, T = FirstHalf().masks(4)
    >>> W.tolist(), T.tolist()
    ([[1.0, 1.0, 0.0, 0.0]], [[False, False, True, True]])
    """

    randomized = True

    def _rng(self, random_state):
        seed = random_state if random_state is not None else getattr(self, "random_state", None)
        return check_random_state(seed)

    def iter_splits(self, X, y=None, groups=None, random_state=None) -> Iterator[Split]:
        """The splits of the rows of ``X`` as :class:`Split` records (repeat, fold, train,
        test); a training array lists a row as often as its weight.

        Parameters
        ----------
        X : array-like of shape (n_samples, ...)
            The rows (only their number is used by replikit's schemes).
        y : array-like of shape (n_samples,), optional
            Outcome (stratification and redraw rules).
        groups : array-like of shape (n_samples,), optional
            Group labels (leave-one-study-out, cross-study validation).
        random_state : None, int or Generator, optional
            Overrides the scheme's own.

        Yields
        ------
        Split
            One split at a time.
        """
        n = _n_samples(X)
        if n < 2:
            raise DataError(f"`X` must have at least 2 rows to resample; got {n}.")
        y_arr = None if y is None else np.asarray(y)
        g_arr = None if groups is None else np.asarray(groups)
        rng = self._rng(random_state)
        if self._yields_splits():
            yield from self._iter(n, y_arr, g_arr, rng)
            return
        rows = np.arange(n)
        for block in self._blocks(n, y_arr, g_arr, rng):
            for j in range(block.weights.shape[0]):
                w = block.weights[j]
                train = (np.repeat(rows, w.astype(np.int64)) if block.counts
                         else np.flatnonzero(w))
                yield Split(int(block.repeat[j]), int(block.fold[j]), train,
                            np.flatnonzero(block.test[j]))

    def masks(self, n, y=None, groups=None, random_state=None, *,
              compact: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Every split of ``n`` rows as a training-weight matrix and a test mask.

        Parameters
        ----------
        n : int
            Number of rows (at least 2).
        y : array-like of shape (n,), optional
            Outcome (stratification and redraw rules).
        groups : array-like of shape (n,), optional
            Group labels (leave-one-study-out).
        random_state : None, int or Generator, optional
            Overrides the scheme's own; the same value gives the same splits as
            :meth:`iter_splits`.
        compact : bool, default False
            Return the weights as ``uint8`` when every count fits (one byte per cell instead
            of eight: the resampling capability holds hundreds of resamples of a million
            rows); the values are the same.

        Returns
        -------
        train_weights : ndarray of float (``uint8`` if ``compact``), shape (R, n)
            Times each row is in each split's training set (bootstrap counts, else 0 or 1).
        test_mask : ndarray of bool, shape (R, n)
            The rows each split tests.

        Examples
        --------
        >>> W, T = RepeatedKFold(3, 2).masks(6, random_state=0)
        >>> W.shape, T.sum(axis=0).tolist()  # every row tested once per repeat
        ((6, 6), [2, 2, 2, 2, 2, 2])
        >>> W, T = Bootstrap(4).masks(5, random_state=0)
        >>> W.sum(axis=1).tolist(), bool(((W == 0) == T).all())
        ([5.0, 5.0, 5.0, 5.0], True)
        """
        n = check_int(n, "n", min_value=2)
        y_arr = None if y is None else np.asarray(y)
        g_arr = None if groups is None else np.asarray(groups)
        for name, arr in (("y", y_arr), ("groups", g_arr)):
            if arr is not None and arr.shape != (n,):
                raise DataError(f"`{name}` must have one value per row ({n}); got shape "
                                f"{arr.shape}.")
        blocks, weights, tests = self._blocks(n, y_arr, g_arr, self._rng(random_state)), [], []
        for b in blocks:  # converted block by block: no (R, n) float array when compact
            w = b.weights
            if compact and w.size and 0 <= w.min() and w.max() <= 255:
                small = w.astype(np.uint8)
                w = small if np.array_equal(small, w) else w  # whole counts only
            weights.append(w)
            tests.append(b.test)
        kinds = {w.dtype for w in weights}
        W = np.concatenate(weights) if len(kinds) == 1 else np.concatenate(
            [w.astype(float, copy=False) for w in weights])
        return (W if W.dtype == np.uint8 else W.astype(float, copy=False)), np.concatenate(tests)

    def split(self, X, y=None, groups=None):
        """``(train, test)`` index arrays of every split, as a scikit-learn splitter yields
        them (drawn with the scheme's own ``random_state``)."""
        for s in self.iter_splits(X, y, groups):
            yield s.train, s.test

    def _yields_splits(self) -> bool:
        return type(self)._iter is not Scheme._iter

    def _iter(self, n, y, groups, rng) -> Iterator[Split]:
        """Yield the splits of ``n`` rows (``y``/``groups`` may be None) drawing from ``rng``."""
        raise NotImplementedError(f"{type(self).__name__} implements neither _iter nor _blocks.")

    def _blocks(self, n, y, groups, rng) -> Iterator[SplitBlock]:
        """Yield the splits of ``n`` rows as blocks of matrices, drawing from ``rng``; by default
        one block per split of :meth:`_iter`."""
        for s in self._iter(n, y, groups, rng):
            W = np.bincount(np.asarray(s.train, np.int64), minlength=n)[None, :].astype(float)
            T = np.bincount(np.asarray(s.test, np.int64), minlength=n)[None, :] > 0
            yield SplitBlock(np.array([s.repeat]), np.array([s.fold]), W, T, counts=True)

    def __repr__(self) -> str:
        params = [
            name for name, p in inspect.signature(type(self).__init__).parameters.items()
            if name != "self" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        ]
        args = ", ".join(f"{p}={getattr(self, p)!r}" for p in params)
        return f"{type(self).__name__}({args})"

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and repr(self) == repr(other)

    def __hash__(self) -> int:
        return hash(repr(self))


def _from_test(test: np.ndarray, repeat, fold) -> SplitBlock:
    return SplitBlock(np.asarray(repeat), np.asarray(fold), (~test).astype(float), test)


class Resubstitution(Scheme):
    """Train and test on all rows: the apparent (resubstitution) error.

    Eq. 3 of Etherington & Lieske (2019) [1]_ and Verbyla & Litvaitis (1989) [2]_; optimistic,
    shown to measure the optimism of the other estimates.

    See Also
    --------
    HoldOut : Random train/test splits.
    RepeatedKFold : K-fold cross-validation.

    References
    ----------
    .. [1] Etherington, T. R. & Lieske, D. J. (2019). [Re] Resampling Methods for Evaluating
       Classification Accuracy of Wildlife Habitat Models. ReScience C, 5.
       https://doi.org/10.5281/zenodo.3234524
    .. [2] Verbyla, D. L. & Litvaitis, J. A. (1989). Resampling Methods for Evaluating
       Classification Accuracy of Wildlife Habitat Models. Environmental Management, 13(6),
       783–787. https://doi.org/10.1007/BF01868317

    Examples
    --------
    >>> W, T = Resubstitution().masks(3)
    >>> W.tolist(), T.tolist()
    ([[1.0, 1.0, 1.0]], [[True, True, True]])
    """

    randomized = False

    def get_n_splits(self, X=None, y=None, groups=None) -> int:
        return 1

    def _blocks(self, n, y, groups, rng):
        yield SplitBlock(np.zeros(1, int), np.zeros(1, int), np.ones((1, n)), np.ones((1, n), bool))


class HoldOut(Scheme):
    """H repeated random hold-outs with test share ``p`` (eq. 4 of Etherington & Lieske (2019)
    [1]_ and Verbyla & Litvaitis (1989) [2]_).

    Parameters
    ----------
    test_size : float in (0, 1), default 0.33
        Share p of rows in the test set.
    n_repeats : int, default 1
        Number H of independent hold-outs.
    stratify : bool, default False
        Keep class proportions (needs ``y`` of class labels; a continuous ``y`` is a
        :class:`~replikit.errors.ParameterError`).
    rounding : {'ceil', 'floor'}, default 'ceil'
        Test rows ``ceil(n p)`` (scikit-learn's rule, the default) or ``floor(n p)`` (the
        ``int(n*p)`` of Etherington & Lieske's code).
    redraw_all_zero : bool, default False
        Redraw a split whose training labels are all 0 (what Etherington & Lieske's code does
        for hold-out).
    random_state : None, int or Generator
        The scheme's own random stream (the runner passes its own).

    See Also
    --------
    RepeatedKFold : Every row tested once per repeat.
    Bootstrap : Resamples with replacement.

    Notes
    -----
    A split's test rows are the first ``n_test`` of a random permutation of the rows (a
    stratified split takes each class's share from a permutation of that class).

    References
    ----------
    .. [1] Etherington, T. R. & Lieske, D. J. (2019). [Re] Resampling Methods for Evaluating
       Classification Accuracy of Wildlife Habitat Models. ReScience C, 5.
       https://doi.org/10.5281/zenodo.3234524
    .. [2] Verbyla, D. L. & Litvaitis, J. A. (1989). Resampling Methods for Evaluating
       Classification Accuracy of Wildlife Habitat Models. Environmental Management, 13(6),
       783–787. https://doi.org/10.1007/BF01868317

    Examples
    --------
    >>> W, T = HoldOut(0.25, 3).masks(8, random_state=0)
    >>> T.sum(axis=1).tolist()
    [2, 2, 2]
    """

    def __init__(self, test_size=0.33, n_repeats=1, stratify=False, rounding="ceil",
                 redraw_all_zero=False, random_state=None):
        self.test_size = check_float(test_size, "test_size", min_value=0.0, max_value=1.0)
        if not 0 < self.test_size < 1:
            raise ParameterError(f"`test_size` must be strictly between 0 and 1; got {test_size}.")
        self.n_repeats = check_int(n_repeats, "n_repeats", min_value=1)
        self.stratify = bool(stratify)
        self.rounding = check_choice(rounding, "rounding", ("ceil", "floor"))
        self.redraw_all_zero = bool(redraw_all_zero)
        self.random_state = random_state

    def get_n_splits(self, X=None, y=None, groups=None) -> int:
        return self.n_repeats

    def n_test(self, n: int, *, min_train: int = 1) -> int:
        """Test rows of a split of ``n`` rows: ``n * test_size`` rounded by ``rounding``.

        Raises :class:`~replikit.errors.DataError` unless there is at least one test row and
        ``min_train`` training rows.

        Parameters
        ----------
        n : int
            Rows in the data.
        min_train : int, default 1
            The fewest training rows accepted.

        Returns
        -------
        int
            The number of test rows.

        Examples
        --------
        >>> HoldOut(0.368).n_test(30), HoldOut(0.368, rounding="floor").n_test(30)
        (12, 11)
        """
        raw = n * self.test_size
        k = math.ceil(raw - 1e-12) if self.rounding == "ceil" else int(raw + 1e-12)
        if not 1 <= k <= n - min_train:
            raise DataError(f"`test_size`={self.test_size} (rounding {self.rounding!r}) leaves "
                            f"{k} test rows of {n}; need at least 1 test row and {min_train} "
                            f"training row{'s' if min_train > 1 else ''}.")
        return k

    def _draw(self, m, n, k, y, rng) -> np.ndarray:
        if not self.stratify:
            return holdout_test_masks(rng.permuted(np.tile(np.arange(n), (m, 1)), axis=1), k)
        T = np.zeros((m, n), bool)
        for j in range(m):
            T[j, _stratified_sample(y, k, rng)] = True
        return T

    def _blocks(self, n, y, groups, rng):
        k = self.n_test(n)
        if self.stratify and y is None:
            raise ParameterError("`stratify=True` needs `y`.")
        if self.stratify:
            _check_class_labels(y, "stratify")
        check = self.redraw_all_zero and y is not None
        zero = None if not check else (y == 0)
        step = _rows_per_block(n)
        for start in range(0, self.n_repeats, step):
            m = min(step, self.n_repeats - start)
            T = self._draw(m, n, k, y, rng)
            if check:
                for _attempt in range(_MAX_REDRAWS):
                    bad = np.flatnonzero(np.all(T | zero, axis=1))  # every training label is 0
                    if bad.size == 0:
                        break
                    T[bad] = self._draw(bad.size, n, k, y, rng)
                else:
                    raise DataError("could not draw a hold-out split whose training labels are "
                                    f"not all 0 in {_MAX_REDRAWS:,} attempts.")
            yield _from_test(T, np.arange(start, start + m), np.zeros(m, int))


def _stratified_sample(y, k, rng):
    """k test rows with class shares as close as possible to y's (largest remainders)."""
    classes, inverse = np.unique(y, return_inverse=True)
    counts = np.bincount(inverse)
    quota = counts * k / len(y)
    take = np.floor(quota).astype(int)
    rest = k - take.sum()
    if rest:
        order = np.argsort(-(quota - take), kind="stable")
        take[order[:rest]] += 1
    chosen = [rng.permutation(np.flatnonzero(inverse == c))[:t] for c, t in enumerate(take)]
    return np.sort(np.concatenate(chosen))


@renamed_fields(n_splits="n_folds")
class RepeatedKFold(Scheme):
    """K-fold cross-validation repeated R times (eq. 5 of Etherington & Lieske (2019) [1]_ and
    Verbyla & Litvaitis (1989) [2]_; K = n is leave-one-out).

    Parameters
    ----------
    n_folds : int >= 2, default 10
        K, the number of folds.
    n_repeats : int >= 1, default 1
        R, the number of independent partitions.
    stratify : bool, default False
        Stratified folds (scikit-learn's StratifiedKFold rule; needs ``y`` of class labels, one
        class with at least ``n_folds`` rows). A continuous ``y``, or every class smaller than
        ``n_folds``, is a :class:`~replikit.errors.ParameterError` naming `stratify`.
    shuffle : bool, default True
        Shuffle before splitting (each repeat reshuffles); without shuffling, repeats coincide.
    random_state : None, int or Generator
        The scheme's own random stream (the runner passes its own).

    See Also
    --------
    LeaveOneOut : K = n.
    FiveByTwo : Five repeats of 2-fold cross-validation.
    HoldOut : Random train/test splits.

    Notes
    -----
    Each repeat draws one integer from the stream; the folds are then those of scikit-learn's
    ``KFold(shuffle=True, random_state=<that integer>)`` (contiguous folds of a shuffled order,
    the first ``n % K`` one row larger) or ``StratifiedKFold``.

    References
    ----------
    .. [1] Etherington, T. R. & Lieske, D. J. (2019). [Re] Resampling Methods for Evaluating
       Classification Accuracy of Wildlife Habitat Models. ReScience C, 5.
       https://doi.org/10.5281/zenodo.3234524
    .. [2] Verbyla, D. L. & Litvaitis, J. A. (1989). Resampling Methods for Evaluating
       Classification Accuracy of Wildlife Habitat Models. Environmental Management, 13(6),
       783–787. https://doi.org/10.1007/BF01868317

    Examples
    --------
    >>> W, T = RepeatedKFold(3, 2).masks(6, random_state=0)
    >>> T.shape, T.sum(axis=0).tolist()  # every row tested once per repeat
    ((6, 6), [2, 2, 2, 2, 2, 2])
    """

    def __init__(self, n_folds=10, n_repeats=1, stratify=False, shuffle=True, random_state=None):
        self.n_folds = check_int(n_folds, "n_folds", min_value=2)
        self.n_repeats = check_int(n_repeats, "n_repeats", min_value=1)
        self.stratify = bool(stratify)
        self.shuffle = bool(shuffle)
        self.random_state = random_state

    @property
    def randomized(self) -> bool:
        return self.shuffle

    def get_n_splits(self, X=None, y=None, groups=None) -> int:
        return self.n_folds * self.n_repeats

    def _fold_of_rows(self, n, y, seed) -> np.ndarray:
        if not self.stratify:
            order = (np.random.RandomState(seed).permutation(n) if self.shuffle
                     else np.arange(n))
            return _fold_ids(order, self.n_folds)
        from sklearn.model_selection import StratifiedKFold

        fold = np.empty(n, np.int64)
        largest = int(np.bincount(_class_codes(y)).max())
        if largest < self.n_folds:  # scikit-learn's ValueError, in words
            advice = (f"use at most {largest} folds or leave `stratify` off" if largest >= 2
                      else "every class has a single row; leave `stratify` off")
            raise ParameterError(
                f"`stratify`: stratified {self.n_folds}-fold cross-validation needs a class of "
                f"at least {self.n_folds} rows; the largest class has {largest} of {n} rows — "
                f"{advice}.")
        splitter = StratifiedKFold(n_splits=self.n_folds, shuffle=self.shuffle,
                                   random_state=seed)
        for f, (_, test) in enumerate(splitter.split(np.zeros((n, 1)), y)):
            fold[test] = f
        return fold

    def _blocks(self, n, y, groups, rng):
        K = self.n_folds
        if K > n:
            raise DataError(f"`n_folds`={K} exceeds the number of rows ({n}).")
        if self.stratify and y is None:
            raise ParameterError("`stratify=True` needs `y`.")
        if self.stratify:
            _check_class_labels(y, "stratify")
        step = _rows_per_block(n)
        for r in range(self.n_repeats):
            seed = int(rng.integers(0, 2**31 - 1)) if self.shuffle else None
            fold = self._fold_of_rows(n, y, seed)
            for a in range(0, K, step):
                ks = np.arange(a, min(K, a + step))
                yield _from_test(fold[None, :] == ks[:, None], np.full(ks.size, r), ks)


class FiveByTwo(RepeatedKFold):
    """Five repetitions of 2-fold cross-validation: the design of Dietterich's (1998) [1]_ 5×2
    tests.

    Parameters
    ----------
    stratify : bool, default False
        Stratified folds (needs ``y`` of class labels, as :class:`RepeatedKFold`).
    random_state : None, int or Generator
        The scheme's own random stream (the runner passes its own).

    See Also
    --------
    RepeatedKFold : Any K and number of repeats.

    References
    ----------
    .. [1] Dietterich, T. G. (1998). Approximate Statistical Tests for Comparing Supervised
       Classification Learning Algorithms. Neural Computation, 10(7), 1895–1923.
       https://doi.org/10.1162/089976698300017197

    Examples
    --------
    >>> FiveByTwo().get_n_splits()
    10
    """

    def __init__(self, stratify=False, random_state=None):
        super().__init__(n_folds=2, n_repeats=5, stratify=stratify, shuffle=True,
                         random_state=random_state)


class LeaveOneOut(Scheme):
    """Leave-one-out: K-fold with K = n (the jackknife setting of eq. 5 of Etherington & Lieske
    (2019) [1]_ and Verbyla & Litvaitis (1989) [2]_).

    See Also
    --------
    RepeatedKFold : K < n folds.

    References
    ----------
    .. [1] Etherington, T. R. & Lieske, D. J. (2019). [Re] Resampling Methods for Evaluating
       Classification Accuracy of Wildlife Habitat Models. ReScience C, 5.
       https://doi.org/10.5281/zenodo.3234524
    .. [2] Verbyla, D. L. & Litvaitis, J. A. (1989). Resampling Methods for Evaluating
       Classification Accuracy of Wildlife Habitat Models. Environmental Management, 13(6),
       783–787. https://doi.org/10.1007/BF01868317

    Examples
    --------
    >>> W, T = LeaveOneOut().masks(3)
    >>> T.astype(int).tolist()
    [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
    """

    randomized = False

    def get_n_splits(self, X=None, y=None, groups=None) -> int:
        if X is None:
            raise ParameterError("`X` is needed: leave-one-out has one split per row.")
        return _n_samples(X)

    def _blocks(self, n, y, groups, rng):
        step = _rows_per_block(n)
        for a in range(0, n, step):
            idx = np.arange(a, min(n, a + step))
            T = np.zeros((idx.size, n), bool)
            T[np.arange(idx.size), idx] = True
            yield _from_test(T, np.zeros(idx.size, int), idx)


class Bootstrap(Scheme):
    """Bootstrap resamples; the test set of each is its out-of-bag rows (eqs. 6–7 of
    Etherington & Lieske (2019) [1]_; Efron & Tibshirani (1997) [3]_).

    Parameters
    ----------
    n_resamples : int, default 200
        Number of bootstrap resamples.
    redraw_single_class : bool, default False
        Redraw a resample whose training labels are a single class (as Etherington & Lieske's
        replication does, so that LDA can be fitted); needs ``y`` of class labels (a
        continuous ``y`` is a :class:`~replikit.errors.ParameterError`). Resamples with no
        out-of-bag row are always redrawn.
    random_state : None, int or Generator
        The scheme's own random stream (the runner passes its own).

    See Also
    --------
    HoldOut : Random splits without replacement.
    replikit.resampling.estimate_error : The bootstrap error estimates (eqs. 6, 7, .632+).

    Notes
    -----
    A resample is n draws with replacement; its training weights are the counts
    (:func:`bootstrap_weights`) and its training index array repeats a row as often as it was
    drawn.

    References
    ----------
    .. [1] Etherington, T. R. & Lieske, D. J. (2019). [Re] Resampling Methods for Evaluating
       Classification Accuracy of Wildlife Habitat Models. ReScience C, 5.
       https://doi.org/10.5281/zenodo.3234524
    .. [2] Verbyla, D. L. & Litvaitis, J. A. (1989). Resampling Methods for Evaluating
       Classification Accuracy of Wildlife Habitat Models. Environmental Management, 13(6),
       783–787. https://doi.org/10.1007/BF01868317
    .. [3] Efron, B. & Tibshirani, R. (1997). Improvements on Cross-Validation: The .632+
       Bootstrap Method. Journal of the American Statistical Association, 92(438), 548–560.
       https://doi.org/10.1080/01621459.1997.10474007

    Examples
    --------
    >>> W, T = Bootstrap(4).masks(5, random_state=0)
    >>> W.sum(axis=1).tolist(), bool(((W == 0) == T).all())
    ([5.0, 5.0, 5.0, 5.0], True)
    """

    def __init__(self, n_resamples=200, redraw_single_class=False, random_state=None):
        self.n_resamples = check_int(n_resamples, "n_resamples", min_value=1)
        self.redraw_single_class = bool(redraw_single_class)
        self.random_state = random_state

    def get_n_splits(self, X=None, y=None, groups=None) -> int:
        return self.n_resamples

    def _blocks(self, n, y, groups, rng):
        onehot = None
        if self.redraw_single_class and y is not None:
            _check_class_labels(y, "redraw_single_class")  # n classes: an n x n one-hot
            codes = _class_codes(y)
            onehot = (codes[:, None] == np.arange(codes.max() + 1)).astype(np.int64)

        def draw(m):
            return bootstrap_weights(rng.integers(0, n, size=(m, n)), n)

        def bad(W):
            flag = np.all(W > 0, axis=1)  # no out-of-bag row
            if onehot is not None:
                flag |= ((W @ onehot) > 0).sum(axis=1) < 2
            return np.flatnonzero(flag)

        step = _rows_per_block(n)
        for start in range(0, self.n_resamples, step):
            m = min(step, self.n_resamples - start)
            W = draw(m)
            for _attempt in range(_MAX_REDRAWS):
                redo = bad(W)
                if redo.size == 0:
                    break
                W[redo] = draw(redo.size)
            else:
                raise DataError("could not draw a bootstrap resample with out-of-bag rows and "
                                f"two classes in {_MAX_REDRAWS:,} attempts.")
            yield SplitBlock(np.arange(start, start + m), np.zeros(m, int), W.astype(float), W == 0,
                         counts=True)


class LeaveOneStudyOut(Scheme):
    """Train on all studies but one, test on the one left out (Parmigiani (2023) [1]_, sec. 7.4).

    Needs ``groups`` (the study labels); fold ``i`` leaves out the i-th study in sorted order.

    See Also
    --------
    CrossStudy : Train on one study, test on each other.
    StudyHoldOut : A hold-out within every study.

    References
    ----------
    .. [1] Parmigiani, G. (2023). Defining Replicability of Prediction Rules. Statistical
       Science, 38(4), 543–556. https://doi.org/10.1214/23-STS891

    Examples
    --------
    >>> W, T = LeaveOneStudyOut().masks(4, groups=np.array(["a", "a", "b", "b"]))
    >>> T.astype(int).tolist()
    [[1, 1, 0, 0], [0, 0, 1, 1]]
    """

    randomized = False

    def get_n_splits(self, X=None, y=None, groups=None) -> int:
        if groups is None:
            raise ParameterError("`groups` (study labels) are needed for leave-one-study-out.")
        return int(np.unique(np.asarray(groups)).size)

    def _blocks(self, n, y, groups, rng):
        if groups is None:
            raise ParameterError("`groups` (study labels) are needed for leave-one-study-out.")
        labels = np.unique(groups)
        if labels.size < 2:
            raise DataError(f"leave-one-study-out needs at least 2 studies; got {labels.size}.")
        step = _rows_per_block(n)
        for a in range(0, labels.size, step):
            idx = np.arange(a, min(labels.size, a + step))
            yield _from_test(groups[None, :] == labels[idx][:, None], np.zeros(idx.size, int),
                             idx)


class SklearnScheme(Scheme):
    """Any scikit-learn splitter passed through as is; splits are numbered repeat 0, fold i.

    The splitter's own ``random_state`` is used (the runner cannot reseed it). Its training
    index arrays are passed on unchanged (order and repeats included); the weight matrix counts
    how often each row appears in them.

    Parameters
    ----------
    splitter : scikit-learn splitter
        Anything with ``split(X, y, groups)`` and ``get_n_splits(X, y, groups)``.

    See Also
    --------
    RepeatedKFold : replikit's own K-fold, reseeded by the runner.

    Examples
    --------
    >>> from sklearn.model_selection import KFold
    >>> [len(sp.test) for sp in SklearnScheme(KFold(3)).iter_splits(np.zeros((6, 1)))]
    [2, 2, 2]
    """

    def __init__(self, splitter):
        if not hasattr(splitter, "split"):
            raise ParameterError(f"`scheme` must have a `split(X, y, groups)` method; got "
                                 f"{type(splitter).__name__}.")
        self.splitter = splitter

    def get_n_splits(self, X=None, y=None, groups=None) -> int:
        return self.splitter.get_n_splits(X, y, groups)

    def iter_splits(self, X, y=None, groups=None, random_state=None):
        # X goes to the splitter as is (a custom splitter may look at it); no reseeding
        for i, (train, test) in enumerate(self.splitter.split(X, y, groups)):
            yield Split(0, i, np.asarray(train), np.asarray(test))

    def _iter(self, n, y, groups, rng):
        """The splits of ``n`` rows when only the row count is known (X is a 0-column array)."""
        yield from self.iter_splits(np.empty((n, 0)), y, groups)


_SPEC_HELP = ("'10x10' (K-fold x repeats), '10' or 'kfold:10', '5x2', 'loo', 'bootstrap:200', "
              "'holdout:0.33x200', 'resub', 'loso'")


@dropped("option")
def parse_scheme(spec: str, *, stratify: bool = False, random_state=None) -> Scheme:
    """Build a scheme from a short text (as on the command line).

    ``'10x10'`` → ``RepeatedKFold(10, 10)``; ``'10'``/``'kfold:10'`` → one 10-fold;
    ``'5x2'`` → :class:`FiveByTwo`; ``'loo'``; ``'bootstrap:200'``; ``'holdout:0.33x200'``
    (share 0.33, 200 repeats); ``'resub'``; ``'loso'`` (leave one study out). Errors name the
    parameter `scheme` (the argument of :func:`~replikit.experiment.run` this text is for).

    Parameters
    ----------
    spec : str or Scheme
        The text (a :class:`Scheme` is returned as it is).
    stratify : bool, default False
        Stratified folds and hold-outs; for the bootstrap, resamples of a single class are
        redrawn. Strata are classes: the scheme refuses a continuous outcome when it splits.
    random_state : None, int or Generator
        The scheme's own random stream.

    Returns
    -------
    Scheme
        The scheme.

    Raises
    ------
    ParameterError
        The text cannot be read, or names a scheme with impossible settings.

    See Also
    --------
    RepeatedKFold, HoldOut, Bootstrap : The schemes it builds.
    replikit.experiment.run : Takes the text directly.

    Examples
    --------
    >>> parse_scheme("10x5")
    RepeatedKFold(n_folds=10, n_repeats=5, stratify=False, shuffle=True, random_state=None)
    >>> parse_scheme("bootstrap:50").n_resamples
    50
    """
    option = "scheme"
    if isinstance(spec, Scheme):
        return spec
    if not isinstance(spec, str):
        raise ParameterError(f"`{option}` must be a text such as {_SPEC_HELP}; got {spec!r}.")
    s = spec.strip().lower()
    try:
        scheme = _parse(s, stratify, random_state)
    except ParameterError as exc:  # e.g. bootstrap:0, holdout:1.5, 1x10
        detail = str(exc).rstrip(".")
        raise ParameterError(f"`{option}` {spec!r}: {detail}.") from None
    if scheme is None:
        raise ParameterError(f"`{option}`: cannot read {spec!r}; use one of {_SPEC_HELP}.")
    return scheme


def _parse(s: str, stratify: bool, random_state) -> Scheme | None:
    if s in ("resub", "resubstitution", "apparent"):
        return Resubstitution()
    if s in ("loo", "leave-one-out"):
        return LeaveOneOut()
    if s in ("loso", "leave-one-study-out"):
        return LeaveOneStudyOut()
    if s in ("5x2", "5x2cv"):
        return FiveByTwo(stratify=stratify, random_state=random_state)
    if m := re.fullmatch(r"(?:kfold:)?(\d+)(?:x(\d+))?", s):
        return RepeatedKFold(int(m.group(1)), int(m.group(2) or 1), stratify=stratify,
                             random_state=random_state)
    if m := re.fullmatch(r"bootstrap(?::(\d+))?", s):
        return Bootstrap(int(m.group(1) or 200), redraw_single_class=stratify,
                         random_state=random_state)
    if m := re.fullmatch(r"holdout(?::([0-9.]+)(?:x(\d+))?)?", s):
        try:
            p = float(m.group(1) or 0.33)
        except ValueError:
            raise ParameterError(f"bad test share {m.group(1)!r}") from None
        return HoldOut(p, int(m.group(2) or 1), stratify=stratify, random_state=random_state)
    return None


def as_scheme(scheme) -> Scheme:
    """A :class:`Scheme` from a scheme, a text spec or a scikit-learn splitter."""
    if isinstance(scheme, Scheme):
        return scheme
    if isinstance(scheme, str):
        return parse_scheme(scheme)
    return SklearnScheme(scheme)


def subsample(y, rows: int, *, stratify: bool = False, random_state=None) -> np.ndarray:
    """Sorted indices of ``rows`` random rows of ``y`` (all rows when there are no more).

    With ``stratify``, every class keeps its share of the rows, rounded, and at least 2 rows
    (or all of them when it has fewer), so a rare class survives the draw.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        The outcome (class labels with ``stratify``).
    rows : int
        How many rows to keep.
    stratify : bool, default False
        Keep each class's share.
    random_state : None, int or Generator
        The random stream.

    Returns
    -------
    ndarray of int
        Sorted row indices.

    See Also
    --------
    HoldOut : Random train/test splits.

    Examples
    --------
    >>> idx = subsample([0] * 95 + [1] * 5, 20, stratify=True, random_state=0)
    >>> len(idx), int(sum(i >= 95 for i in idx))
    (21, 2)
    """
    import pandas as pd

    rows = check_int(rows, "rows", min_value=1)
    y = np.asarray(y)
    n = len(y)
    if rows >= n:
        return np.arange(n)
    rng = check_random_state(random_state)
    if not stratify:
        return np.sort(rng.choice(n, rows, replace=False))
    keep = []
    for c in pd.unique(y):
        idx = np.flatnonzero(y == c)
        k = max(2, int(round(rows * idx.size / n)))
        keep.append(rng.choice(idx, min(k, idx.size), replace=False))
    return np.sort(np.concatenate(keep))
