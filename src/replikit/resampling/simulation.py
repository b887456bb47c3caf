"""The computational experiment of Etherington & Lieske (2019, sec. 4), replicating Verbyla &
Litvaitis (1989): how biased and how precise are resampling estimates of the error of a linear
discriminant analysis on data with no signal?

Each of ``n_experiments`` datasets has n = 30 rows, a response ``Binomial(1, 0.5)`` and 10
predictors ``N(0, 1)``, so the true error of any rule is 0.5. Eight estimators are applied:
resubstitution; hold-out H = 1, p = .368; H = 200, p = .368; H = 200, p = .2; K-fold K = 3,
K = 10, K = n; bootstrap B = 200 (eq. 6). All resamples of all datasets are fitted at once by the
batched LDA of :mod:`replikit.resampling._fast` (pooled covariance with divisor n - K, priors from
the training labels, as scikit-learn's LDA did when the original code ran).

Two random streams:

- ``exact=True`` replays the original script's draws on numpy's legacy global ``RandomState``
  seeded with the int ``random_state`` (the paper used 1), in its order, so the published
  figures come out
  exactly (the bootstrap row: mean .497, SD .069);
- ``exact=False`` (default) draws the same design from a ``numpy.random.Generator``, fully
  vectorised over datasets and resamples.
"""

from __future__ import annotations

import numbers
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .._random import check_random_state, root_seed_sequence
from .._threads import single_blas
from .._validation import check_int
from ..errors import ParameterTypeError
from ..experiment.schemes import bootstrap_weights, holdout_test_masks, kfold_test_masks
from ..results import Result
from ._fast import lda_margin

if TYPE_CHECKING:  # pandas is imported when the tables are built (0.2 s less before the work)
    import pandas as pd

__all__ = ["ResamplingExperiment", "simulate_resampling", "EXPERIMENT_METHODS", "PAPER_TABLE"]

N_ROWS, N_PREDICTORS, N_RESAMPLES = 30, 10, 200
# (label, family, parameter) in the order of the paper's Figure 1 legend
EXPERIMENT_METHODS = (
    ("resubstitution", "resub", None),
    ("hold-out H=1 p=.368", "holdout", (1, 0.368)),
    ("hold-out H=200 p=.368", "holdout", (200, 0.368)),
    ("hold-out H=200 p=.2", "holdout", (200, 0.2)),
    ("K-fold K=3", "kfold", 3),
    ("K-fold K=10", "kfold", 10),
    ("K-fold K=n", "kfold", 30),
    ("bootstrap B=200 (eq. 6)", "bootstrap", N_RESAMPLES),
)
# extra estimators computed from the same bootstrap fits (not in the paper)
EXTRA_METHODS = ("leave-one-out bootstrap (eq. 7)", ".632+ bootstrap")
# figures printed in the text of Etherington & Lieske (2019, sec. 5); the other rows are only
# drawn in its Figure 1
PAPER_TABLE = {"bootstrap B=200 (eq. 6)": (0.497, 0.069)}


@dataclass(frozen=True, slots=True)
class ResamplingExperiment(Result):
    """Result of :func:`simulate_resampling`: every estimator's error on every dataset, and
    their mean and SD beside the published figures.

    Attributes
    ----------
    errors : DataFrame
        One row per dataset, one column per estimator: the estimated error.
    table : DataFrame
        ``method, mean, sd`` (population SD, ddof = 0, as ``numpy.std``) over datasets, plus
        ``paper_mean, paper_sd`` where Etherington & Lieske (2019) print them, and
        ``in_paper`` (False for the two estimators added from the same bootstrap fits).
    n_experiments : int
        The number of simulated datasets.
    random_state : int
        The int that reproduces the run (the one given, or the entropy drawn for ``None``).
    exact : bool
        Whether the original script's random stream was replayed.
    runtime_seconds : float
        Time taken (not part of the numbers).

    See Also
    --------
    simulate_resampling : Runs the experiment.
    ErrorEstimates : The same estimators on one real dataset.

    Examples
    --------
    >>> res = simulate_resampling(n_experiments=20, random_state=3)
    >>> res.title
    'Resampling estimators of the error of LDA on 20 datasets with no signal'
    >>> list(res.to_frame().columns)
    ['method', 'mean', 'sd', 'paper_mean', 'paper_sd', 'in_paper']
    """

    errors: pd.DataFrame = field(repr=False)
    table: pd.DataFrame = field(repr=False)
    n_experiments: int
    random_state: int
    exact: bool
    runtime_seconds: float

    @property
    def title(self) -> str:
        """What was simulated, in a line."""
        from .._format import number

        return (f"Resampling estimators of the error of LDA on {number(self.n_experiments)} "
                "datasets with no signal")

    @property
    def description(self) -> str:
        """The design and the random stream in a sentence (for captions and the terminal)."""
        from .._format import number

        mode = ("exact replay of the original script's random stream" if self.exact
                else "numpy Generator stream")
        return (f"Etherington & Lieske (2019): {number(self.n_experiments)} datasets of n = 30 "
                "rows, 10 N(0, 1) predictors and a Binomial(1, 0.5) response (true error "
                f"0.5); {mode}, random state {self.random_state}")

    def to_frame(self) -> pd.DataFrame:
        """The summary table (one row per estimator).

        Returns
        -------
        pandas.DataFrame
            ``method, mean, sd, paper_mean, paper_sd, in_paper``.
        """
        return self.table.copy()

    def to_dict(self) -> dict:
        """The settings and the summary table in JSON types (the per-dataset errors are left
        out: :attr:`errors` has them).

        Returns
        -------
        dict
            ``n_experiments, random_state, exact, runtime_seconds, table``.
        """
        from ..results import to_jsonable

        return {"n_experiments": self.n_experiments, "random_state": self.random_state,
                "exact": self.exact, "runtime_seconds": self.runtime_seconds,
                "table": to_jsonable(self.table)}

    def __str__(self) -> str:
        body = self.table.to_string(index=False, float_format=lambda v: f"{v:.3f}",
                                    na_rep="")
        return f"{self.title}\n{self.description}; {self.runtime_seconds:.2f} s\n{body}"

    def plot(self, ax=None, *, include_extra: bool = False):
        """Smoothed densities of each estimator's errors over the datasets (the paper's
        Figure 1).

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw; by default a new figure (shown inline in a notebook).
        include_extra : bool, default False
            Also draw the two estimators not in the paper (eq. 7 and .632+).

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.
        """
        from .plots import plot_experiment_densities

        return plot_experiment_densities(self, ax=ax, include_extra=include_extra)


# --------------------------------------------------------------------------------------------
# the resamples of every dataset: training weights W (E, R, n) and test masks T (E, R, n)
# --------------------------------------------------------------------------------------------

def _layout():
    """Row ranges of each estimator in the stacked resample axis, in drawing order."""
    spans, start = {}, 0
    for label, family, param in EXPERIMENT_METHODS:
        size = {"resub": 1, "kfold": param, "bootstrap": N_RESAMPLES}.get(family)
        if family == "holdout":
            size = param[0]
        spans[label] = (start, start + size)
        start += size
    return spans, start


def _schemes() -> dict:
    """The scheme of every estimator, with the original code's redraw rules: hold-out splits
    whose training labels are all 0 and bootstrap resamples whose training labels are one
    class are redrawn; ``int(30 p)`` hold-out test rows (``rounding='floor'``)."""
    from ..experiment.schemes import Bootstrap, HoldOut, RepeatedKFold, Resubstitution

    out = {}
    for label, family, param in EXPERIMENT_METHODS:
        if family == "resub":
            out[label] = Resubstitution()
        elif family == "holdout":
            H, p = param
            out[label] = HoldOut(p, H, rounding="floor", redraw_all_zero=True)
        elif family == "kfold":
            out[label] = RepeatedKFold(param, 1)
        else:
            out[label] = Bootstrap(param, redraw_single_class=True)
    return out


def _first_accepted(draw, accept, m: int) -> np.ndarray:
    """The first ``m`` draws that ``accept`` keeps, drawing ``draw(k)`` (``k`` draws stacked)
    exactly as many times as a loop of single draws with redraws would: each round draws as
    many as are still missing, and every accepted draw of a round is used, so the stream is
    consumed in the same order and amount."""
    out, need = [], m
    while need:
        d = draw(need)
        keep = d[accept(d)]
        out.append(keep)
        need -= keep.shape[0]
    return out[0] if len(out) == 1 else np.concatenate(out)


def _draw_exact(E: int, seed: int):
    """The original script's draws on the legacy RandomState, in its order; the splits they
    make are the schemes' matrices (:func:`~replikit.experiment.schemes.bootstrap_weights`,
    :func:`~replikit.experiment.schemes.kfold_test_masks`,
    :func:`~replikit.experiment.schemes.holdout_test_masks`).

    The draws are stacked without changing the stream: the legacy ``choice(rows, size=n)`` is
    ``randint(0, n, size=n)``, and consecutive ``randint`` (or ``normal``) calls give the same
    numbers as one call of their total size, so the 10 predictor columns are one ``normal``
    call and the 200 bootstrap resamples with their redraws a few ``randint`` calls
    (:func:`_first_accepted`); the permutations stay one call each (``shuffle`` has no stacked
    form) but their redraw tests and all the matrices are vectorised.
    """
    rs = np.random.RandomState(seed)
    n = N_ROWS
    schemes = _schemes()
    holdouts = [(label, H, schemes[label].n_test(n)) for label, _, (H, _p)
                in EXPERIMENT_METHODS[1:4]]
    spans, R = _layout()
    y = np.empty((E, n), np.int64)
    X = np.empty((E, n, N_PREDICTORS))
    boot = np.empty((E, N_RESAMPLES, n), np.int64)
    folds = {K: np.empty((E, n), np.int64) for K in (10, 3, 30)}
    perms = {label: np.empty((E, H, n), np.int64) for label, H, _ in holdouts}
    for e in range(E):
        ye = rs.binomial(1, 0.5, size=n)
        y[e] = ye
        X[e] = rs.normal(size=(N_PREDICTORS, n)).T  # column by column, as the original
        boot[e] = _first_accepted(lambda m: rs.randint(0, n, size=(m, n)),
                                  lambda d, ye=ye: (s := ye[d].sum(axis=1)) * (n - s) > 0,
                                  N_RESAMPLES)
        for K in (10, 3, 30):
            folds[K][e] = rs.permutation(n)
        for label, H, k in holdouts:
            # the original's test: a training-label sum of 0 or n is redrawn (n never occurs)
            perms[label][e] = _first_accepted(
                lambda m: np.array([rs.permutation(n) for _ in range(m)]),
                lambda d, ye=ye, k=k: (s := ye[d[:, k:]].sum(axis=1)) * (n - s) != 0, H)
    W = np.zeros((E, R, n), np.uint8)
    T = np.zeros((E, R, n), bool)
    W[:, 0] = 1
    T[:, 0] = True
    a, b = spans["bootstrap B=200 (eq. 6)"]
    W[:, a:b] = bootstrap_weights(boot, n)
    T[:, a:b] = W[:, a:b] == 0
    for K, label in ((10, "K-fold K=10"), (3, "K-fold K=3"), (30, "K-fold K=n")):
        a, b = spans[label]
        T[:, a:b] = kfold_test_masks(folds[K], K)
        W[:, a:b] = ~T[:, a:b]
    for label, _H, k in holdouts:
        a, b = spans[label]
        T[:, a:b] = holdout_test_masks(perms[label], k)
        W[:, a:b] = ~T[:, a:b]
    return X, y, W, T


def _draw_modern(E: int, rng):
    """The same design from a numpy Generator, vectorised over datasets and resamples: every
    estimator's splits drawn for all datasets at once with its scheme's rules and matrices
    (:func:`_schemes`: ``int(30 p)`` hold-out test rows, hold-outs whose training labels are
    all 0 and bootstrap resamples of one class redrawn; contiguous folds of a shuffled order).
    """
    rng = check_random_state(rng)
    n = N_ROWS
    spans, R = _layout()
    schemes = _schemes()
    y = rng.binomial(1, 0.5, size=(E, n)).astype(np.int64)
    X = rng.normal(size=(E, n, N_PREDICTORS))
    W = np.zeros((E, R, n), np.uint8)
    T = np.zeros((E, R, n), bool)
    zero = (y == 0)[:, None, :]
    for label, family, param in EXPERIMENT_METHODS:
        a, b = spans[label]
        m = b - a
        if family == "resub":
            W[:, a], T[:, a] = 1, True
            continue
        if family == "bootstrap":
            draws = rng.integers(0, n, size=(E, m, n))
            while True:  # redraw resamples whose training labels are one class
                s = np.take_along_axis(y[:, None, :], draws, axis=2).sum(axis=2)
                bad = np.flatnonzero((s * (n - s) == 0).ravel())
                if bad.size == 0:
                    break
                draws.reshape(-1, n)[bad] = rng.integers(0, n, size=(bad.size, n))
            W[:, a:b] = bootstrap_weights(draws, n)
            T[:, a:b] = W[:, a:b] == 0
            continue
        order = rng.permuted(np.broadcast_to(np.arange(n), (E, m if family == "holdout" else 1,
                                                             n)), axis=2)
        if family == "kfold":
            T[:, a:b] = kfold_test_masks(order[:, 0], param)
        else:
            k = schemes[label].n_test(n)
            test = holdout_test_masks(order, k)
            while True:  # redraw hold-outs whose training labels are all 0
                bad = np.flatnonzero(np.all(test | zero, axis=2).ravel())
                if bad.size == 0:
                    break
                redraw = rng.permuted(np.broadcast_to(np.arange(n), (bad.size, n)), axis=1)
                test.reshape(-1, n)[bad] = holdout_test_masks(redraw, k)
            T[:, a:b] = test
        W[:, a:b] = ~T[:, a:b]
    return X, y, W, T


# --------------------------------------------------------------------------------------------
# fitting and summarising
# --------------------------------------------------------------------------------------------

def _errors(X, y, W, T, block: int = 50, chunk: int = 5, progress=None,
            n_jobs: int = 1) -> pd.DataFrame:
    """Every estimator's error for every dataset, from batched LDA fits of ``chunk`` datasets
    at a time (small enough for the per-resample temporaries to stay in cache;
    ``progress(e)`` after each block of ``e`` datasets, in order). With ``n_jobs > 1`` the
    blocks are computed by that many threads (numpy releases the GIL in its batched kernels;
    one BLAS thread each); every block is computed the same way whatever the thread, so the
    numbers are bit-identical to ``n_jobs=1``."""
    E = X.shape[0]
    cols = {label: np.empty(E) for label, _, _ in EXPERIMENT_METHODS}
    cols.update({label: np.empty(E) for label in EXTRA_METHODS})
    blocks = [slice(s, min(E, s + block)) for s in range(0, E, block)]

    def one(sl: slice) -> dict:
        return _block_errors(X, y, W, T, sl, chunk)

    if n_jobs > 1 and len(blocks) > 1:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=n_jobs) as pool:
            results = pool.map(one, blocks)  # in order: progress and assembly stay ordered
            for sl, out in zip(blocks, results, strict=True):
                _assign(cols, sl, out, progress)
    else:
        for sl in blocks:
            _assign(cols, sl, one(sl), progress)
    import pandas as pd

    return pd.DataFrame(cols)


def _assign(cols: dict, sl: slice, out: dict, progress) -> None:
    for label, values in out.items():
        cols[label][sl] = values
    if progress is not None:
        progress(sl.stop - sl.start)


def _block_errors(X, y, W, T, sl: slice, chunk: int) -> dict:
    """The errors of the datasets in ``sl`` (label -> values)."""
    spans, _ = _layout()
    out = {}
    parts = [slice(c, min(c + chunk, sl.stop)) for c in range(sl.start, sl.stop, chunk)]
    pred = np.concatenate([(lda_margin(X[c], y[c], W[c]) > 0) for c in parts]).astype(np.int64)
    wrong = (pred != y[sl, None, :]).astype(float)  # (e, R, n)
    test = T[sl]
    for label, family, _param in EXPERIMENT_METHODS:
        a, b = spans[label]
        L, M = wrong[:, a:b], test[:, a:b]
        if family == "resub":
            out[label] = L[:, 0].mean(axis=1)
        elif family == "holdout":  # eq. 4
            out[label] = ((L * M).sum(2) / M.sum(2)).mean(axis=1)
        elif family == "kfold":  # eq. 5: each row is tested once
            out[label] = (L * M).sum(axis=(1, 2)) / N_ROWS
        else:  # eq. 6: pooled out-of-bag errors
            out[label] = (L * M).sum(axis=(1, 2)) / M.sum(axis=(1, 2))
    a, b = spans["bootstrap B=200 (eq. 6)"]
    L, M = wrong[:, a:b], test[:, a:b]
    oob = M.sum(1)
    per_row = np.where(oob > 0, (L * M).sum(1) / np.maximum(oob, 1), np.nan)
    err1 = np.nanmean(per_row, axis=1)  # eq. 7
    out[EXTRA_METHODS[0]] = err1
    app = wrong[:, 0].mean(axis=1)
    p1 = y[sl].mean(axis=1)
    q1 = pred[:, 0].mean(axis=1)
    gamma = p1 * (1 - q1) + (1 - p1) * q1
    err1p = np.minimum(err1, gamma)
    ok = (err1p > app) & (gamma > app)
    rate = np.where(ok, np.clip((err1p - app) / np.where(ok, gamma - app, 1.0), 0, 1), 0.0)
    w = 0.632 / (1 - 0.368 * rate)
    out[EXTRA_METHODS[1]] = (1 - w) * app + w * err1p
    return out


def _summary(errors: pd.DataFrame) -> pd.DataFrame:
    import pandas as pd

    rows = []
    for label in errors.columns:
        v = errors[label].to_numpy()
        paper = PAPER_TABLE.get(label, (np.nan, np.nan))
        rows.append({"method": label, "mean": round(float(np.mean(v)), 3),
                     "sd": round(float(np.std(v)), 3), "paper_mean": paper[0],
                     "paper_sd": paper[1], "in_paper": label not in EXTRA_METHODS})
    return pd.DataFrame(rows)


def simulate_resampling(*, n_experiments: int = 1000, exact: bool = False,
                        random_state=None, progress=None,
                        n_jobs: int = 1) -> ResamplingExperiment:
    """Run the computational experiment of Etherington & Lieske (2019) [1]_ (sec. 4, Figure 1),
    replicating Verbyla & Litvaitis (1989) [2]_.

    For each of ``n_experiments`` datasets (n = 30, ``y ~ Binomial(1, .5)``, 10 predictors
    ``N(0, 1)``) estimate the error of LDA by resubstitution (eq. 3), hold-out (eq. 4; H = 1
    and 200 with p = .368, H = 200 with p = .2; ``int(30 p)`` test rows; splits redrawn while the
    training labels are all 0), K-fold (eq. 5; K = 3, 10, n; contiguous folds of a shuffled
    order) and the bootstrap (eq. 6; 200 resamples, redrawn while their training labels are
    a single class), then summarise each estimator by the mean and population SD (``numpy.std``,
    ddof = 0) over datasets, rounded to 3 decimals. The leave-one-out bootstrap (eq. 7) and the
    .632+ bootstrap of Efron & Tibshirani (1997) [3]_ are added from the same bootstrap fits
    (marked ``in_paper = False``).

    Parameters
    ----------
    n_experiments : int, default 1000
        The number of simulated datasets.
    exact : bool, default False
        Replay the original script's stream (legacy ``RandomState(random_state)``, draws in the
        original order; needs an int) — reproduces the published numbers with
        ``random_state=1``. Otherwise a ``numpy.random.Generator`` stream, the splits drawn by
        the schemes of :mod:`replikit.experiment.schemes`: the same experiment statistically.
    random_state : None, int or numpy.random.Generator
        Root of every draw (an int with ``exact=True``; the paper used 1).
    progress : callable, optional
        A progress bar's ``advance``: called once as ``progress(0, total=n_experiments)``,
        then with the number of datasets whose estimates are done (blocks of 50). It does not
        change the result.
    n_jobs : int, default 1
        Threads computing blocks of 50 datasets at once (numpy's batched kernels release the
        GIL); the numbers are bit-identical whatever ``n_jobs``.

    Returns
    -------
    ResamplingExperiment
        Every estimator's error on every dataset, and the summary table.

    See Also
    --------
    estimate_error : The same estimators on one real dataset.
    estimate_errors : Several of them at once.

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
    >>> res = simulate_resampling(n_experiments=20, random_state=3)
    >>> bool(res.table.set_index("method").loc["resubstitution", "mean"] < 0.4)
    True
    """
    n_experiments = check_int(n_experiments, "n_experiments", min_value=1)
    n_jobs = check_int(n_jobs, "n_jobs", min_value=1)
    if not isinstance(exact, (bool, np.bool_)):
        raise ParameterTypeError(f"`exact` must be a bool; got {type(exact).__name__}.")
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        random_state = check_int(random_state, "random_state", min_value=0)
    elif exact:
        raise ParameterTypeError("`random_state` must be an int to replay the original stream "
                                 f"(`exact=True`; the paper used 1); got {random_state!r}.")
    start = time.perf_counter()
    if progress is not None:
        progress(0, total=n_experiments)
    if exact:
        seed = random_state
        X, y, W, T = _draw_exact(n_experiments, seed)
    else:
        root = root_seed_sequence(random_state)
        seed = random_state if random_state is not None else int(root.entropy)
        X, y, W, T = _draw_modern(n_experiments, np.random.default_rng(root))
    # many small products: BLAS threads only add contention (and vary with machine load)
    with single_blas():
        errors = _errors(X, y, W, T, progress=progress, n_jobs=n_jobs)
    runtime = time.perf_counter() - start
    return ResamplingExperiment(errors, _summary(errors), n_experiments, seed, bool(exact),
                                runtime)
