"""Schemes across studies: cross-study validation and a hold-out within every study.

Both are :class:`~replikit.experiment.schemes.Scheme` subclasses, so
:func:`~replikit.experiment.run` fits every split with its seeding rule, backends and store.
The study labels are the ``groups`` of the run (not its ``study``: with ``study=`` the runner
runs a scheme *within* each study, while these schemes train on one study, or on parts of all
of them, and test elsewhere).

* :class:`CrossStudy` — Bernau et al. (2014), Parmigiani (2023) sec. 7.4: train on all of study
  k, test on every other study k' (the off-diagonal cells of the cross-study validation
  matrix); the diagonal is K-fold cross-validation within study k.
* :class:`StudyHoldOut` — hold out a share of every study and train one rule on the rest of all
  of them pooled: the fixed rule φ of Parmigiani (2023, sec. 3), which must not be trained on
  the units used to assess it, then applied unchanged to the held-out units of every study.

Leave-one-study-out (Parmigiani (2023), sec. 7.4) is
:class:`~replikit.experiment.schemes.LeaveOneStudyOut`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from .._compat import renamed_fields
from .._validation import check_float, check_int
from ..errors import DataError, ParameterError
from .schemes import Scheme, SplitBlock

__all__ = ["CrossStudy", "StudyHoldOut", "StudyPlan"]


def _labels(groups, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct study labels and the code of each row (``np.unique`` order)."""
    if groups is None:
        raise ParameterError(f"`groups` (study labels) are needed for {name}; pass them to "
                             "`run(..., groups=...)`.")
    labels, codes = np.unique(np.asarray(groups), return_inverse=True)
    return labels, codes.ravel()


@dataclass(frozen=True, slots=True)
class StudyPlan:
    """What :class:`CrossStudy` does with one training study.

    Parameters
    ----------
    study : object
        The label (as in ``groups``).
    repeat : int
        Its position in the sorted labels: the ``repeat`` number of its splits.
    n_rows : int
        Its rows.
    trained : bool
        Whether a learner is trained on it (fold 0). Not for a study of one row, nor (with
        ``stratify``) for a study holding a single class — no classifier can be trained there.
    n_folds : int
        Folds planned for its within-study cross-validation (0: none, the study is not trained
        on). With ``stratify``, the cross-validation is still left out when a drawn fold would
        train on a single class (possible only when a class has a single row, or 2 rows that
        fall in one unstratified fold).
    stratified : bool
        Whether those folds are stratified by class.

    See Also
    --------
    CrossStudy.plan : Makes one per study.

    Examples
    --------
    >>> s = np.repeat(["a", "b"], [4, 1])
    >>> [(p.study, p.trained, p.n_folds) for p in CrossStudy(2).plan(groups=s)]
    [('a', True, 2), ('b', False, 0)]
    """

    study: object
    repeat: int
    n_rows: int
    trained: bool
    n_folds: int
    stratified: bool


@renamed_fields(n_splits="n_folds")
class CrossStudy(Scheme):
    """Cross-study validation (Bernau et al. (2014) [1]_; Parmigiani (2023) [2]_, sec. 7.4).

    For every study k (``groups`` labels, in sorted order): train on all of study k and test on
    the rows of every other study; then ``n_folds``-fold cross-validation within study k.
    Scored per test study, the first gives the off-diagonal cells ``m(φ_k; S_k')`` of the
    cross-study validation matrix; the pooled out-of-fold predictions of the second give its
    diagonal.

    Parameters
    ----------
    n_folds : int >= 2 or None, default 5
        Folds of the within-study cross-validation. A study with fewer rows gets one fold per
        row (leave-one-out). ``None``: no within-study cross-validation (fold 0 only).
    in_sample : bool, default False
        Fold 0 also tests the training study's own rows — the in-sample predictions of the
        single-study learners that multi-study stacking combines (Patil & Parmigiani 2018;
        Parmigiani (2023), sec. 7.6).
    stratify : bool, default False
        ``y`` holds class labels: a study with a single class is not trained on (its splits are
        left out, it is still tested); within-study folds are stratified when every class of the
        study has at least 2 rows and some class at least ``n_splits``; a study's within-study
        cross-validation is left out when one of its folds would train on a single class.
    random_state : None, int or Generator
        Shuffles the within-study folds (the runner passes its own stream).
    train_studies : iterable of int, optional
        Only these training studies (codes: positions in the sorted labels); every study is
        still tested. Their splits, folds and numbering are those of the full scheme, so a
        large matrix can be run a few training studies at a time (each run's predictions
        held in memory at once) with the numbers of one run.

    See Also
    --------
    LeaveOneStudyOut : Train on all studies but one.
    StudyHoldOut : A hold-out within every study.

    Notes
    -----
    Splits are numbered by training study: ``repeat`` r is the r-th label of
    ``numpy.unique(groups)``; ``fold`` 0 trains on all of it and tests on every other study
    (every study, its own included, with ``in_sample``); folds ``1..n`` are its within-study
    cross-validation. :meth:`plan` says, per study, what is done and why. Each study's folds
    are shuffled from its own random integer (one draw per study, in label order), so leaving
    a study out of training does not change the others' folds.

    References
    ----------
    .. [1] Bernau, C., Riester, M., Boulesteix, A., Parmigiani, G., Huttenhower, C., Waldron, L.
       & Trippa, L. (2014). Cross-Study Validation for the Assessment of Prediction
       Algorithms. Bioinformatics, 30(12), i105–i112. https://doi.org/10.1093/bioinformatics/btu279
    .. [2] Parmigiani, G. (2023). Defining Replicability of Prediction Rules. Statistical
       Science, 38(4), 543–556. https://doi.org/10.1214/23-STS891

    Examples
    --------
    >>> import numpy as np
    >>> s = np.repeat(["a", "b", "c"], 4)
    >>> splits = list(CrossStudy(2, random_state=0).iter_splits(np.zeros((12, 1)), groups=s))
    >>> [(sp.repeat, sp.fold, len(sp.train), len(sp.test)) for sp in splits[:3]]
    [(0, 0, 4, 8), (0, 1, 2, 2), (0, 2, 2, 2)]
    """

    def __init__(self, n_folds=5, in_sample=False, stratify=False, random_state=None,
                 train_studies=None):
        self.n_folds = None if n_folds is None else check_int(n_folds, "n_folds", min_value=2)
        self.in_sample = bool(in_sample)
        self.stratify = bool(stratify)
        self.random_state = random_state
        self.train_studies = None if train_studies is None else tuple(sorted(
            {check_int(k, "train_studies", min_value=0) for k in train_studies}))

    def _trains(self, p) -> bool:
        return p.trained and (self.train_studies is None or p.repeat in self.train_studies)

    @property
    def randomized(self) -> bool:  # type: ignore[override]
        return self.n_folds is not None

    def plan(self, y=None, groups=None) -> list[StudyPlan]:
        """One :class:`StudyPlan` per study (sorted labels), before any split is drawn.

        Parameters
        ----------
        y : array-like of shape (n_samples,), optional
            Class labels (needed with ``stratify``).
        groups : array-like of shape (n_samples,)
            Study labels.

        Returns
        -------
        list of StudyPlan
            One per study.
        """
        labels, codes = _labels(groups, "cross-study validation")
        y_arr = None if y is None else np.asarray(y)
        if self.stratify and y_arr is None:
            raise ParameterError("`stratify=True` needs `y`.")
        out = []
        for r, lab in enumerate(labels):
            idx = np.flatnonzero(codes == r)
            n = idx.size
            trained = n >= 2
            stratified = False
            n_folds = min(self.n_folds, n) if trained and self.n_folds else 0
            if self.stratify and trained:
                _, counts = np.unique(y_arr[idx], return_counts=True)
                if counts.size < 2:
                    trained, n_folds = False, 0
                else:
                    stratified = bool(n_folds and counts.min() >= 2 and counts.max() >= n_folds)
            out.append(StudyPlan(lab.item() if hasattr(lab, "item") else lab, r, n, trained,
                                 n_folds, stratified))
        return out

    def get_n_splits(self, X=None, y=None, groups=None) -> int:
        """The number of splits (with ``stratify``, drawn with the scheme's own
        ``random_state``: whether a fold trains on a single class depends on the draw)."""
        if not self.stratify:
            return sum(int(p.trained) + p.n_folds for p in self.plan(y, groups)
                       if self._trains(p))
        n = len(np.asarray(groups))
        return sum(1 for _ in self.iter_splits(np.empty((n, 0)), y, groups))

    def _blocks(self, n, y, groups, rng) -> Iterator[SplitBlock]:
        from sklearn.model_selection import KFold, StratifiedKFold

        labels, codes = _labels(groups, "cross-study validation")
        if labels.size < 2:
            raise DataError(f"cross-study validation needs at least 2 studies; got "
                            f"{labels.size}.")
        plans = self.plan(y, groups)
        seeds = rng.integers(0, 2**31 - 1, size=labels.size)  # one per study, in label order
        for p in plans:
            if not self._trains(p):
                continue
            own = codes == p.repeat
            folds = []
            if p.n_folds:
                idx = np.flatnonzero(own)
                seed = int(seeds[p.repeat])
                if p.stratified:
                    splitter = StratifiedKFold(p.n_folds, shuffle=True, random_state=seed)
                    with warnings.catch_warnings():  # "the least populated class has only m"
                        warnings.simplefilter("ignore", UserWarning)
                        folds = [(idx[a], idx[b]) for a, b in splitter.split(idx, y[idx])]
                else:
                    splitter = KFold(p.n_folds, shuffle=True, random_state=seed)
                    folds = [(idx[a], idx[b]) for a, b in splitter.split(idx)]
                if self.stratify and any(np.unique(y[a]).size < 2 for a, _ in folds):
                    folds = []  # a fold would train a classifier on one class
            m = 1 + len(folds)
            W = np.zeros((m, n))
            T = np.zeros((m, n), bool)
            W[0, own] = 1.0
            T[0] = True if self.in_sample else ~own
            for f, (a, b) in enumerate(folds, start=1):
                W[f, a] = 1.0
                T[f, b] = True
            yield SplitBlock(np.full(m, p.repeat), np.arange(m), W, T)


class StudyHoldOut(Scheme):
    """Hold out a share of every study; one training set pools the other rows of all studies.

    Within each study (``groups`` label) ``ceil(n_k · test_size)`` rows are drawn at random
    without replacement as test rows; the training set is every other row of every study. With
    ``test_size=0.5`` this is the half split of the fixed rule φ of Parmigiani (2023) [1]_
    (sec. 3): trained once, on data other than the units it is assessed on, then applied
    unchanged to the held-out units of every study.

    Parameters
    ----------
    test_size : float in (0, 1), default 0.5
        Share of each study's rows held out (rounded up: a study of one row is all test).
    n_repeats : int, default 1
        Independent draws (``repeat`` 0..n_repeats-1, ``fold`` 0).
    random_state : None, int or Generator
        The scheme's own random stream (the runner passes its own).

    See Also
    --------
    CrossStudy : Train on one study, test on each other.
    LeaveOneStudyOut : Train on all studies but one.

    References
    ----------
    .. [1] Parmigiani, G. (2023). Defining Replicability of Prediction Rules. Statistical
       Science, 38(4), 543–556. https://doi.org/10.1214/23-STS891

    Examples
    --------
    >>> import numpy as np
    >>> s = np.repeat(["a", "b"], [5, 4])
    >>> sp = next(StudyHoldOut(0.5, random_state=0).iter_splits(np.zeros((9, 1)), groups=s))
    >>> len(sp.train), len(sp.test)
    (4, 5)
    """

    def __init__(self, test_size=0.5, n_repeats=1, random_state=None):
        self.test_size = check_float(test_size, "test_size", min_value=0.0, max_value=1.0)
        if not 0 < self.test_size < 1:
            raise ParameterError(f"`test_size` must be strictly between 0 and 1; got {test_size}.")
        self.n_repeats = check_int(n_repeats, "n_repeats", min_value=1)
        self.random_state = random_state

    def get_n_splits(self, X=None, y=None, groups=None) -> int:
        return self.n_repeats

    def _blocks(self, n, y, groups, rng) -> Iterator[SplitBlock]:
        labels, codes = _labels(groups, "a hold-out within every study")
        members = [np.flatnonzero(codes == r) for r in range(labels.size)]
        n_test = [math.ceil(idx.size * self.test_size - 1e-12) for idx in members]
        if sum(n_test) >= n:
            raise DataError(f"`test_size`={self.test_size} leaves no training row: every "
                            "study is too small to split.")
        for r in range(self.n_repeats):
            T = np.zeros((1, n), bool)
            for idx, k in zip(members, n_test, strict=True):
                T[0, rng.choice(idx, k, replace=False)] = True
            yield SplitBlock(np.array([r]), np.zeros(1, int), (~T).astype(float), T)
