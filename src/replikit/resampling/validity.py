"""Coverage of the prediction-error intervals, by simulation.

``replikit simulate validity --capabilities resampling`` runs :func:`validity`; the test suite
runs its small size and fails when a calibrated row leaves its band. The settings are those of
Bates, Hastie & Tibshirani (2024):

* **OLS, n = 100, p = 20** and **OLS, n = 50, p = 5**: ``x ~ N(0, I_p)``,
  ``y = x'beta + eps`` with ``beta = (1, 1, 1, 1, 0, ..., 0)`` and ``eps ~ N(0, 1)``;
  ``LinearRegression`` (with intercept), squared loss. The error of the model fitted on this
  sample, ``Err_XY = sigma^2 + b0^2 + |beta_hat - beta|^2`` (intercept ``b0``; ``Sigma = I``),
  is exact.
* **LDA, n = 100, p = 10**: two Gaussian classes (equal priors, ``N(±mu/2, I)`` with
  ``mu = (1.5, 0.5, 0, ..., 0)``), ``LinearDiscriminantAnalysis``, 0–1 loss. ``Err_XY`` is the
  exact misclassification probability of the fitted rule ``a'x + c > 0``:
  ``(Phi(-(a'm_1 + c)/|a|) + Phi((a'm_0 + c)/|a|)) / 2``.

``Err`` (the mean of ``Err_XY`` over training sets of size n) is a Monte-Carlo mean over 20,000
further training sets (5,000 in the small size), each with its exact ``Err_XY``.

For every replication the intervals of :func:`replikit.resampling.estimate_error` are
computed at 90% and 95%: nested cross-validation (10 folds, the default 50 repetitions; the
default interval of K-fold), the naive Wald interval of 10-fold CV and of 10 x 10 repeated CV,
the t interval of one hold-out split (test share 0.368), and the corrected resampled t of 50
hold-out splits. Only nested CV is claimed calibrated (goal: within ±3 points of nominal, the
``slack``); the others are documented.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._calibration import COLUMNS, rate_row
from .._validation import check_choice, check_int

__all__ = ["validity", "SIZES", "SETTINGS"]

CAP = "resampling"
STUDY = "error interval"
SIZES = {"small": {"replications": 40, "truth": 5000, "nested_repeats": 20},
         "full": {"replications": 500, "truth": 20000, "nested_repeats": 50}}
#: name -> (model, n, p)
SETTINGS = {"OLS, n=100, p=20": ("ols", 100, 20), "OLS, n=50, p=5": ("ols", 50, 5),
            "LDA, n=100, p=10": ("lda", 100, 10)}
LEVELS = (0.90, 0.95)
SLACK = 0.03
_INTERVALS = (("nested CV", "kfold", {"interval": "nested"}),
              ("naive Wald, 10-fold", "kfold", {"interval": "wald"}),
              ("naive Wald, 10x10 CV", "kfold", {"interval": "wald", "n_repeats": 10}),
              ("t, one hold-out split", "holdout", {"n_repeats": 1, "interval": "t"}),
              ("corrected t, 50 hold-outs", "holdout", {"n_repeats": 50}))


def _draw(kind: str, n: int, p: int, rng, size: int | None = None):
    shape = (n, p) if size is None else (size, n, p)
    X = rng.normal(size=shape)
    if kind == "ols":
        beta = np.zeros(p)
        beta[:4] = 1.0
        y = X @ beta + rng.normal(size=shape[:-1])
        return X, y
    y = rng.integers(0, 2, size=shape[:-1])
    mu = _mu(p)
    X += (y[..., None] - 0.5) * mu
    return X, y


def _mu(p: int) -> np.ndarray:
    mu = np.zeros(p)
    mu[0], mu[1] = 1.5, 0.5
    return mu


def _err_xy(kind: str, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Exact Err_XY of the model fitted to each dataset of the stack ``X (E, n, p)``."""
    from scipy.stats import norm

    E, n, p = X.shape
    if kind == "ols":
        beta = np.zeros(p)
        beta[:4] = 1.0
        xm, ym = X.mean(axis=1), y.mean(axis=1)
        Xc = X - xm[:, None, :]
        b = np.linalg.solve(np.einsum("eni,enj->eij", Xc, Xc),
                            np.einsum("eni,en->ei", Xc, y - ym[:, None])[..., None])[..., 0]
        b0 = ym - np.einsum("ei,ei->e", xm, b)
        return 1.0 + b0 ** 2 + np.sum((b - beta) ** 2, axis=1)
    y1 = y == 1
    n1 = y1.sum(axis=1)
    n0 = n - n1
    m1 = np.einsum("en,enp->ep", y1, X) / n1[:, None]
    m0 = np.einsum("en,enp->ep", ~y1, X) / n0[:, None]
    R = X - np.where(y1[..., None], m1[:, None, :], m0[:, None, :])
    S = np.einsum("eni,enj->eij", R, R) / (n - 2)  # the pooled covariance, divisor n - K
    a = np.linalg.solve(S, (m1 - m0)[..., None])[..., 0]
    c = -0.5 * np.einsum("ep,ep->e", m1 + m0, a) + np.log(n1 / n0)
    mu = _mu(p)
    norm_a = np.linalg.norm(a, axis=1)
    s1 = (a @ (mu / 2) + c) / norm_a
    s0 = (a @ (-mu / 2) + c) / norm_a
    return 0.5 * (norm.cdf(-s1) + norm.cdf(s0))


def _replication(kind, n, p, seed, nested_repeats):
    """Err_XY and the 90% / 95% intervals of one simulated dataset."""
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.linear_model import LinearRegression

    from .error import estimate_error

    rng = np.random.default_rng(seed)
    X, y = _draw(kind, n, p, rng)
    truth = float(_err_xy(kind, X[None], y[None])[0])
    model = LinearRegression() if kind == "ols" else LinearDiscriminantAnalysis()
    out = {}
    for name, method, opts in _INTERVALS:
        est = estimate_error(model, X, y, method=method, n_folds=10, random_state=rng,
                             n_nested_repeats=nested_repeats, **opts)
        out[name] = [tuple(est.confidence_interval(level)) for level in LEVELS]
    return truth, out


def _err(kind, n, p, rng, total):
    vals = []
    for start in range(0, total, 1000):
        X, y = _draw(kind, n, p, rng, size=min(1000, total - start))
        vals.append(_err_xy(kind, X, y))
    return float(np.concatenate(vals).mean())


def validity(*, size: str = "small", random_state=None, n_jobs: int = 1) -> pd.DataFrame:
    """Coverage of the prediction-error intervals for Err_XY and Err, by simulation.

    Parameters
    ----------
    size : {'small', 'full'}
        ``'small'``: 40 datasets per setting and 20 repetitions of nested CV (the test
        suite's, about half a minute); ``'full'``: 500 datasets and the default 50 repetitions
        (docs/resampling.md, "Intervals for the error"; several minutes).
    random_state : None, int or Generator
        Root of every draw; each dataset has its own stream, so the rows do not depend on
        ``n_jobs``.
    n_jobs : int
        Worker processes over the datasets.

    Returns
    -------
    DataFrame
        The rows of :mod:`replikit._calibration` (``capability='resampling'``): one coverage
        row per setting, interval, target (``Err_XY`` or ``Err``) and level.

    See Also
    --------
    replikit.resampling.estimate_error : The intervals.

    References
    ----------
    .. [1] Bates, S., Hastie, T. & Tibshirani, R. (2024). Cross-validation: what does it
       estimate and how well does it do it? Journal of the American Statistical Association,
       119(546), 1434–1445. https://doi.org/10.1080/01621459.2023.2197686
    .. [2] Nadeau, C. & Bengio, Y. (2003). Inference for the generalization error. Machine
       Learning, 52(3), 239–281. https://doi.org/10.1023/A:1024068626366

    Examples
    --------
    >>> t = validity(size="small", random_state=0)  # doctest: +SKIP
    >>> t.query("claim == 'calibrated'")["within"].all()  # doctest: +SKIP
    True
    """
    from .._random import root_seed_sequence, task_int_seed, task_rng

    check_choice(size, "size", tuple(SIZES))
    n_jobs = check_int(n_jobs, "n_jobs", min_value=1)
    plan = SIZES[size]
    root = root_seed_sequence(random_state)
    R = plan["replications"]
    rows = []
    for s_idx, (setting, (kind, n, p)) in enumerate(SETTINGS.items()):
        truth_err = _err(kind, n, p, task_rng(root, ("truth", s_idx)), plan["truth"])
        args = [(kind, n, p, task_int_seed(root, ("data", s_idx, r)), plan["nested_repeats"])
                for r in range(R)]
        if n_jobs == 1:
            results = [_replication(*a) for a in args]
        else:
            from joblib import Parallel, delayed

            from .._threads import worker_limits

            def one(*a):
                with worker_limits():
                    return _replication(*a)

            results = Parallel(n_jobs=n_jobs)(delayed(one)(*a) for a in args)
        truths = np.array([t for t, _ in results])
        for name, _, _ in _INTERVALS:
            calibrated = name == "nested CV"
            for li, level in enumerate(LEVELS):
                ci = np.array([res[name][li] for _, res in results])
                for target, value in (("Err_XY", truths), ("Err", truth_err)):
                    hits = int(np.sum((ci[:, 0] <= value) & (value <= ci[:, 1])))
                    rows.append(rate_row(
                        CAP, STUDY, name, f"{setting}, {target}, {int(level * 100)}%",
                        "coverage", hits=hits, n_replications=R, nominal=level,
                        claim="calibrated" if calibrated else "documented",
                        slack=SLACK if calibrated else 0.0))
    return pd.DataFrame(rows, columns=list(COLUMNS))
