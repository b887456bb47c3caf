"""Resampling schemes: scikit-learn style splitters that also number their splits.

Each scheme has ``split(X, y=None, groups=None)`` yielding ``(train, test)`` index arrays like a
scikit-learn splitter, ``get_n_splits()``, a ``__repr__`` showing every parameter, and
``iter_splits(X, y=None, groups=None, random_state=None)`` yielding :class:`Split` records with
the ``repeat`` and ``fold`` numbers the Scores table needs. ``random_state`` passed to
``iter_splits`` overrides the scheme's own (the runner passes a per-study stream).

The schemes follow the resampling estimators of Etherington & Lieske's replication of Verbyla &
Litvaitis (seed 003, eqs. 3–7): resubstitution, hold-out with H repeats and test share p,
K-fold (K = n is leave-one-out), bootstrap with out-of-bag test sets; plus Dietterich's 5×2
design (seed 002) and leave-one-study-out (seed 001, sec. 7.4).
"""

from __future__ import annotations

import abc
import inspect
import math
import re
from collections.abc import Iterator
from typing import NamedTuple

import numpy as np

from .._random import check_random_state
from .._validation import check_choice, check_float, check_int
from ..errors import DataError, ParameterError

__all__ = ["Split", "Scheme", "Resubstitution", "HoldOut", "RepeatedKFold", "LeaveOneOut",
           "FiveByTwo", "Bootstrap", "LeaveOneStudyOut", "SklearnScheme", "parse_scheme",
           "as_scheme"]


class Split(NamedTuple):
    repeat: int
    fold: int
    train: np.ndarray
    test: np.ndarray


def _n_samples(X) -> int:
    if hasattr(X, "shape"):
        return int(X.shape[0])
    return len(X)


class Scheme(abc.ABC):
    """Base class. Subclasses implement ``_iter(n, y, groups, rng)`` and ``get_n_splits``."""

    randomized = True

    def iter_splits(self, X, y=None, groups=None, random_state=None) -> Iterator[Split]:
        n = _n_samples(X)
        if n < 2:
            raise DataError(f"`X` must have at least 2 rows to resample; got {n}.")
        seed = random_state if random_state is not None else getattr(self, "random_state", None)
        rng = check_random_state(seed)
        y_arr = None if y is None else np.asarray(y)
        g_arr = None if groups is None else np.asarray(groups)
        yield from self._iter(n, y_arr, g_arr, rng)

    def split(self, X, y=None, groups=None):
        for s in self.iter_splits(X, y, groups):
            yield s.train, s.test

    @abc.abstractmethod
    def _iter(self, n, y, groups, rng) -> Iterator[Split]:
        """Yield the splits of ``n`` rows (``y``/``groups`` may be None) drawing from ``rng``."""

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


class Resubstitution(Scheme):
    """Train and test on all rows: the apparent (resubstitution) error, seed 003 eq. 3."""

    randomized = False

    def get_n_splits(self, X=None, y=None, groups=None) -> int:
        return 1

    def _iter(self, n, y, groups, rng):
        idx = np.arange(n)
        yield Split(0, 0, idx, idx.copy())


class HoldOut(Scheme):
    """H repeated random hold-outs with test share ``p`` (seed 003 eq. 4).

    Parameters
    ----------
    test_size : float in (0, 1)
        Share p of rows in the test set.
    n_repeats : int
        Number H of independent hold-outs.
    stratify : bool
        Keep class proportions (needs ``y``).
    size_rounding : {'ceil', 'floor'}
        Test rows ``ceil(n p)`` (scikit-learn's rule, the default) or ``floor(n p)`` (the
        ``int(n*p)`` of the ReScience code of seed 003).
    redraw_all_zero : bool
        Redraw a split whose training labels are all 0 (what seed 003's code does for hold-out).
    random_state : None, int or Generator
    """

    def __init__(self, test_size=0.33, n_repeats=1, stratify=False, size_rounding="ceil",
                 redraw_all_zero=False, random_state=None):
        self.test_size = check_float(test_size, "test_size", min_value=0.0, max_value=1.0)
        if not 0 < self.test_size < 1:
            raise ParameterError(f"`test_size` must be strictly between 0 and 1; got {test_size}.")
        self.n_repeats = check_int(n_repeats, "n_repeats", min_value=1)
        self.stratify = bool(stratify)
        self.size_rounding = check_choice(size_rounding, "size_rounding", ("ceil", "floor"))
        self.redraw_all_zero = bool(redraw_all_zero)
        self.random_state = random_state

    def get_n_splits(self, X=None, y=None, groups=None) -> int:
        return self.n_repeats

    def n_test(self, n: int) -> int:
        raw = n * self.test_size
        k = math.ceil(raw - 1e-12) if self.size_rounding == "ceil" else int(raw + 1e-12)
        if not 1 <= k <= n - 1:
            raise DataError(f"`test_size`={self.test_size} leaves {k} test rows of {n}; need "
                            "at least one row in each of train and test.")
        return k

    def _iter(self, n, y, groups, rng):
        k = self.n_test(n)
        if self.stratify and y is None:
            raise ParameterError("`stratify=True` needs `y`.")
        for r in range(self.n_repeats):
            for _attempt in range(1000):
                if self.stratify:
                    test = _stratified_sample(y, k, rng)
                else:
                    test = np.sort(rng.permutation(n)[:k])
                mask = np.ones(n, bool)
                mask[test] = False
                train = np.flatnonzero(mask)
                if not (self.redraw_all_zero and y is not None and np.all(y[train] == 0)):
                    break
            yield Split(r, 0, train, test)


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


class RepeatedKFold(Scheme):
    """K-fold cross-validation repeated R times (seed 003 eq. 5; K = n is leave-one-out).

    Parameters
    ----------
    n_splits : int >= 2
    n_repeats : int >= 1
    stratify : bool
        Stratified folds (scikit-learn's StratifiedKFold rule; needs ``y``).
    shuffle : bool
        Shuffle before splitting (each repeat reshuffles); without shuffling, repeats coincide.
    random_state : None, int or Generator
    """

    def __init__(self, n_splits=10, n_repeats=1, stratify=False, shuffle=True, random_state=None):
        self.n_splits = check_int(n_splits, "n_splits", min_value=2)
        self.n_repeats = check_int(n_repeats, "n_repeats", min_value=1)
        self.stratify = bool(stratify)
        self.shuffle = bool(shuffle)
        self.random_state = random_state

    def get_n_splits(self, X=None, y=None, groups=None) -> int:
        return self.n_splits * self.n_repeats

    def _iter(self, n, y, groups, rng):
        from sklearn.model_selection import KFold, StratifiedKFold

        if self.n_splits > n:
            raise DataError(f"`n_splits`={self.n_splits} exceeds the number of rows ({n}).")
        if self.stratify and y is None:
            raise ParameterError("`stratify=True` needs `y`.")
        dummy = np.zeros((n, 1))
        for r in range(self.n_repeats):
            seed = int(rng.integers(0, 2**31 - 1)) if self.shuffle else None
            cls = StratifiedKFold if self.stratify else KFold
            splitter = cls(n_splits=self.n_splits, shuffle=self.shuffle, random_state=seed)
            for f, (train, test) in enumerate(splitter.split(dummy, y)):
                yield Split(r, f, train, np.sort(test))


class FiveByTwo(RepeatedKFold):
    """Five repetitions of 2-fold cross-validation (Dietterich 1998; seed 002)."""

    def __init__(self, stratify=False, random_state=None):
        super().__init__(n_splits=2, n_repeats=5, stratify=stratify, shuffle=True,
                         random_state=random_state)


class LeaveOneOut(Scheme):
    """Leave-one-out: K-fold with K = n (the jackknife setting of seed 003 eq. 5)."""

    randomized = False

    def get_n_splits(self, X=None, y=None, groups=None) -> int:
        if X is None:
            raise ParameterError("`X` is needed: leave-one-out has one split per row.")
        return _n_samples(X)

    def _iter(self, n, y, groups, rng):
        idx = np.arange(n)
        for i in range(n):
            yield Split(0, i, np.delete(idx, i), np.array([i]))


class Bootstrap(Scheme):
    """B bootstrap resamples; the test set of each is its out-of-bag rows (seed 003 eqs. 6–7).

    Parameters
    ----------
    n_resamples : int
        B.
    redraw_single_class : bool
        Redraw a resample whose training labels are a single class (as seed 003's replication
        does, so that LDA can be fitted). Resamples with no out-of-bag row are always redrawn.
    random_state : None, int or Generator

    Notes
    -----
    The training index array contains repeated rows (the multiplicities of the resample).
    """

    def __init__(self, n_resamples=200, redraw_single_class=False, random_state=None):
        self.n_resamples = check_int(n_resamples, "n_resamples", min_value=1)
        self.redraw_single_class = bool(redraw_single_class)
        self.random_state = random_state

    def get_n_splits(self, X=None, y=None, groups=None) -> int:
        return self.n_resamples

    def _iter(self, n, y, groups, rng):
        for b in range(self.n_resamples):
            for _attempt in range(10_000):
                train = np.sort(rng.integers(0, n, size=n))
                inbag = np.zeros(n, bool)
                inbag[train] = True
                test = np.flatnonzero(~inbag)
                if test.size == 0:
                    continue
                if self.redraw_single_class and y is not None and np.unique(y[train]).size < 2:
                    continue
                break
            else:
                raise DataError("could not draw a bootstrap resample with out-of-bag rows and "
                                "two classes in 10,000 attempts.")
            yield Split(b, 0, train, test)


class LeaveOneStudyOut(Scheme):
    """Train on all studies but one, test on the one left out (seed 001, sec. 7.4).

    Needs ``groups`` (the study labels); fold ``i`` leaves out the i-th study in sorted order.
    """

    randomized = False

    def get_n_splits(self, X=None, y=None, groups=None) -> int:
        if groups is None:
            raise ParameterError("`groups` (study labels) are needed for leave-one-study-out.")
        return int(np.unique(np.asarray(groups)).size)

    def _iter(self, n, y, groups, rng):
        if groups is None:
            raise ParameterError("`groups` (study labels) are needed for leave-one-study-out.")
        labels = np.unique(groups)
        if labels.size < 2:
            raise DataError(f"leave-one-study-out needs at least 2 studies; got {labels.size}.")
        for i, g in enumerate(labels):
            test = np.flatnonzero(groups == g)
            train = np.flatnonzero(groups != g)
            yield Split(0, i, train, test)


class SklearnScheme(Scheme):
    """Any scikit-learn splitter passed through as is; splits are numbered repeat 0, fold i.

    The splitter's own ``random_state`` is used (the runner cannot reseed it).
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


def parse_scheme(spec: str, *, stratify: bool = False, random_state=None,
                 option: str = "scheme") -> Scheme:
    """Build a scheme from a short text (as on the command line).

    ``'10x10'`` → ``RepeatedKFold(10, 10)``; ``'10'``/``'kfold:10'`` → one 10-fold;
    ``'5x2'`` → :class:`FiveByTwo`; ``'loo'``; ``'bootstrap:200'``; ``'holdout:0.33x200'``
    (share 0.33, 200 repeats); ``'resub'``; ``'loso'`` (leave one study out). ``option`` is the
    name used in error messages (``'--scheme'`` on the command line).
    """
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
