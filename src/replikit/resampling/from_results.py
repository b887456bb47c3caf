"""Prediction-error estimates from results a user already has: per-fold scores or out-of-fold
predictions, each estimate with an interval that says what it estimates.

- :func:`summarize_scores`: per (study, model, metric), the cross-validation estimate (the mean
  over repeats and folds) with the corrected repeated-CV t interval of Nadeau & Bengio (2003)
  as Bouckaert & Frank (2004) apply it to r x k cross-validation,
  ``mean ± t_{J-1} · sqrt((1/J + n_test/n_train) · S²)``, J = repeats x folds and S² the
  variance of the J split scores. It is an interval for the *expected* performance of the
  learning algorithm trained on ``n_train`` rows (averaged over training sets of that size),
  not for the model fitted on all rows (Bates, Hastie & Tibshirani (2024)). Without the
  test-to-training size ratio (no ``n_train``/``n_test``, no scheme stated) there is no
  interval: a ratio is never guessed.
- :func:`summarize_predictions`: per (study, model), the mean per-row loss of the pooled
  out-of-fold predictions (squared error, absolute error, log loss, misclassification) with the
  naive Wald interval (rows treated as independent, the data path's "naive" interval); where
  each repeat's folds partition the rows (k-fold predictions), also the corrected t interval
  over the fold scores, of the losses and of the fold metrics.

:func:`corrected_cv_interval` is the interval of one set of split scores.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..results import ConfidenceInterval, Result, Verdict

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CVSummary", "CVInterval", "summarize_scores", "summarize_predictions",
           "corrected_cv_interval", "describe_splits", "ROW_LOSSES", "LOSS_WORDS",
           "INTERVAL_LABELS", "METRIC_BOUNDS"]

#: The per-row losses of out-of-fold predictions, by task (``log_loss`` needs the probability
#: of every class), named as the metrics of :mod:`replikit.experiment.metrics`.
ROW_LOSSES = {"classification": ("log_loss", "error_rate"), "regression": ("mse", "mae")}
#: The per-row losses in words.
LOSS_WORDS = {"log_loss": "log loss", "error_rate": "misclassification rate",
              "mse": "mean squared error", "mae": "mean absolute error"}
#: How each interval is named in tables and on the card.
INTERVAL_LABELS = {"corrected_t": "corrected repeated-CV t", "wald": "naive Wald",
                   "none": "no interval"}
_SCHEMES = (None, "kfold", "holdout", "recorded")
#: The range of the metrics whose values are bounded: an interval is clipped to it (which
#: changes no interval's coverage of a truth inside the range). The concordance indices, AUCs,
#: Brier scores and rates live in [0, 1], the squared and absolute errors and log loss in
#: [0, inf), R² (1 - SSE/SST) in (-inf, 1].
METRIC_BOUNDS = {
    **dict.fromkeys(("c_index", "c_index_uno", "mean_auc", "integrated_brier_score", "roc_auc",
                     "accuracy", "balanced_accuracy", "error_rate", "r2_corr"), (0.0, 1.0)),
    **dict.fromkeys(("mse", "rmse", "mae", "log_loss"), (0.0, np.inf)),
    "r2": (-np.inf, 1.0),
}
#: Columns of the estimates that are not part of a group's key.
_NOT_KEYS = frozenset({"metric", "basis", "estimate", "se", "ci_low", "ci_high", "df",
                       "interval", "target", "n_repeats", "n_folds", "n_resamples", "n_rows",
                       "n_train", "ratio", "ratio_source", "higher_is_better", "note"})


# -- the interval ---------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class CVInterval(Result):
    """The corrected repeated-CV t interval of one set of split scores.

    Attributes
    ----------
    estimate : float
        The mean of the J split scores.
    se : float
        ``sqrt((1/J + ratio) · S²)``.
    df : float
        ``J - 1``.
    ratio : float
        ``n_test / n_train``.
    n_resamples : int
        J.
    confidence_level : float
        The level of ``ci_low``, ``ci_high``.
    ci_low, ci_high : float
        The interval.

    See Also
    --------
    corrected_cv_interval : Makes it.
    summarize_scores : The intervals of every study and model of a Scores table.

    Examples
    --------
    >>> ci = corrected_cv_interval([0.71, 0.74, 0.69, 0.73, 0.72], ratio=0.25)
    >>> ci.n_resamples, ci.df, round(ci.estimate, 3)
    (5, 4.0, 0.718)
    """

    estimate: float
    se: float
    df: float
    ratio: float
    n_resamples: int
    confidence_level: float
    ci_low: float
    ci_high: float

    def confidence_interval(self, confidence_level: float | None = None) -> ConfidenceInterval:
        """The interval at ``confidence_level`` (default: the level it was made at)."""
        from ..results import wald_interval

        level = self.confidence_level if confidence_level is None else confidence_level
        return wald_interval(self.estimate, self.se, level, df=self.df)


def _corrected(mean, var, n_resamples, ratio, level):
    """Vectorised kernel: ``(se, df, low, high)`` of the corrected t (NaN where undefined)."""
    from scipy import stats

    mean, var = np.asarray(mean, float), np.asarray(var, float)
    J = np.asarray(n_resamples, float)
    ratio = np.asarray(ratio, float)
    ok = (J >= 2) & np.isfinite(ratio) & np.isfinite(var)
    se = np.where(ok, np.sqrt(np.where(ok, (1.0 / np.maximum(J, 1) + ratio) * var, 0.0)),
                  np.nan)
    df = np.where(ok, J - 1, np.nan)
    q = np.where(ok, stats.t.ppf((1 + level) / 2, np.where(ok, df, 1.0)), np.nan)
    return se, df, mean - q * se, mean + q * se


def corrected_cv_interval(values, *, ratio: float,
                          confidence_level: float = 0.95) -> CVInterval:
    r"""The corrected repeated-CV t interval of J split scores (Nadeau & Bengio (2003) [1]_;
    Bouckaert & Frank (2004) [2]_ for r x k cross-validation).

    .. math::

        \bar x \pm t_{J-1,\,(1+\gamma)/2}\,
        \sqrt{\Bigl(\frac{1}{J} + \frac{n_{test}}{n_{train}}\Bigr) S^2}

    with :math:`\bar x` and :math:`S^2` the mean and variance (ddof 1) of the J scores. The
    term ``n_test / n_train`` stands for the correlation of split scores that share training
    rows; it makes the interval one for the *expected* performance of the learning algorithm
    trained on ``n_train`` rows, not for the one model fitted on all rows (Bates, Hastie &
    Tibshirani (2024) [3]_). Its coverage is measured in docs/validity.md.

    Parameters
    ----------
    values : array-like of shape (J,)
        One score per split (J = repeats x folds, or H hold-out splits), J >= 2, finite.
    ratio : float
        ``n_test / n_train``: ``1 / (k - 1)`` for k-fold cross-validation.
    confidence_level : float, default 0.95
        The level.

    Returns
    -------
    CVInterval
        ``estimate, se, df, ratio, n_resamples, ci_low, ci_high``.

    Raises
    ------
    ParameterError
        Fewer than two scores, a score that is not finite, a negative ``ratio``.

    See Also
    --------
    CVInterval : What is returned.
    summarize_scores : The interval for every study and model of a Scores table.

    References
    ----------
    .. [1] Nadeau, C. & Bengio, Y. (2003). Inference for the generalization error. Machine
       Learning, 52, 239–281. https://doi.org/10.1023/A:1024068626366
    .. [2] Bouckaert, R. R. & Frank, E. (2004). Evaluating the replicability of significance
       tests for comparing learning algorithms. PAKDD 2004, LNCS 3056, 3–12.
       https://doi.org/10.1007/978-3-540-24775-3_3
    .. [3] Bates, S., Hastie, T. & Tibshirani, R. (2024). Cross-validation: what does it
       estimate and how well does it do it? Journal of the American Statistical
       Association, 119(546), 1434–1445. https://doi.org/10.1080/01621459.2023.2197686

    Examples
    --------
    >>> r = corrected_cv_interval([0.80, 0.84, 0.78, 0.82, 0.81], ratio=1 / 4)
    >>> round(r.estimate, 3), round(r.se, 4), r.df  # se = sqrt((1/5 + 1/4) * 0.0005)
    (0.81, 0.015, 4.0)
    """
    from .._validation import check_confidence_level, check_float
    from ..errors import ParameterError

    x = np.asarray(values, dtype=float).ravel()
    if x.size < 2 or not np.all(np.isfinite(x)):
        raise ParameterError("`values` must hold at least two finite split scores; got "
                             f"{x.size} value(s)" + ("" if np.all(np.isfinite(x)) else
                                                     " with a missing or infinite one") + ".")
    ratio = check_float(ratio, "ratio", min_value=0.0)
    level = check_confidence_level(confidence_level)
    se, df, lo, hi = _corrected(x.mean(), x.var(ddof=1), x.size, ratio, level)
    return CVInterval(float(x.mean()), float(se), float(df), ratio, int(x.size), level,
                      float(lo), float(hi))


# -- the result -----------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class CVSummary(Result):
    """Result of :func:`summarize_scores` and :func:`summarize_predictions`.

    Attributes
    ----------
    estimates : pandas.DataFrame
        One row per (study, model, metric, basis): ``estimate``, ``se``, ``ci_low``,
        ``ci_high``, ``df``, ``interval`` (``'corrected_t'``, ``'wald'`` or ``'none'``),
        ``basis`` (``'folds'``: the mean of the split scores; ``'rows'``: the pooled per-row
        loss), ``target`` (what the interval estimates, in words), ``n_repeats``,
        ``n_folds``, ``n_resamples`` (J), ``n_rows``, ``n_train``, ``ratio``, ``ratio_source``,
        ``higher_is_better``, ``note`` (why there is no interval).
    source : {'scores', 'predictions'}
        What the estimates were made from.
    metric : str
        The primary metric (the verdict's).
    higher_is_better : bool
        Its direction.
    scheme : str or None
        How the test-to-training ratio was known (``'recorded'``, ``'kfold'``, ``'holdout'``;
        ``None``: unknown, no corrected interval).
    confidence_level : float
        The level of every interval.
    best : dict
        Study -> the model with the best estimate of ``metric``.
    key_study : str
        The study of the verdict's key number (the first).
    notes : tuple of str
        What was done.
    verdict : Verdict
        The best model's estimate with its interval, labelled; level ``'info'`` (an estimate
        with nothing to judge it against).

    Examples
    --------
    >>> from replikit.data.examples import score_export
    >>> from replikit.data.foreign import read_scores
    >>> summary = summarize_scores(read_scores(score_export("weka")), metric="roc_auc")
    >>> summary.scheme, sorted(summary.best)
    ('recorded', ['nwtco-NWTS-3', 'nwtco-NWTS-4'])

    See Also
    --------
    summarize_scores, summarize_predictions : Make it.
    """

    estimates: pd.DataFrame = field(repr=False)
    source: str
    metric: str
    higher_is_better: bool
    scheme: str | None
    confidence_level: float
    best: dict
    key_study: str
    notes: tuple
    verdict: Verdict

    @property
    def title(self) -> str:
        return f"Cross-validation estimates from {self.source}"

    def to_frame(self) -> pd.DataFrame:
        """The tidy table (a copy of :attr:`estimates`)."""
        return self.estimates.copy()

    def primary(self) -> pd.DataFrame:
        """One row per (study, model) of the primary metric, the verdict's kind of estimate:
        the mean of the fold scores where it has an interval, else the pooled rows (naive
        Wald), else whatever there is."""
        f = self.estimates[self.estimates["metric"] == self.metric]
        rank = np.where((f["basis"] == "folds") & (f["interval"] == "corrected_t"), 0,
                        np.where(f["interval"] == "wald", 1, 2))
        keys = [c for c in f.columns if c not in _NOT_KEYS]
        f = f.assign(_rank=rank).sort_values("_rank", kind="stable")
        f = f.drop_duplicates(subset=keys).drop(columns="_rank").sort_index()
        return f.reset_index(drop=True)

    def plot(self, ax=None):
        """Every model's estimate of the primary metric with its interval, by study.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw; by default a new figure.

        Returns
        -------
        matplotlib.axes.Axes
        """
        from ..experiment.metrics import metric_label
        from .plots import plot_interval_estimates

        f = self.primary()
        words = LOSS_WORDS.get(self.metric, metric_label(self.metric))
        return plot_interval_estimates(
            f.assign(group=f["study"].astype(str))[["model", "group", "estimate", "ci_low",
                                                    "ci_high"]],
            xlabel=f"estimated {words} ({self.confidence_level:.0%} interval)", ax=ax)

    def __str__(self) -> str:
        cols = ["study", "model", "metric", "basis", "estimate", "ci_low", "ci_high",
                "interval"]
        body = self.estimates[cols].to_string(index=False, float_format=lambda v: f"{v:.4g}")
        return f"{self.title}\n{body}\n{self.verdict}"


# -- from scores ----------------------------------------------------------------------------

def _scores_iv(scores, metric, scheme, test_fraction, confidence_level):
    import pandas as pd

    from .._validation import check_confidence_level
    from ..data.tables import Scores
    from ..errors import DataError, ParameterError, ParameterTypeError

    if isinstance(scores, pd.DataFrame):
        scores = Scores(scores)
    if not isinstance(scores, Scores):
        raise ParameterTypeError("`scores` must be a replikit.data.Scores table or a DataFrame "
                                 f"in its layout; got {type(scores).__name__}.")
    frame = scores.frame
    metrics = [str(m) for m in scores.metrics]
    if metric is not None and metric not in metrics:
        raise ParameterError(f"`metric`: {metric!r} is not a metric of the scores; they have "
                             f"{', '.join(metrics)}.")
    if scheme not in _SCHEMES:
        raise ParameterError("`scheme` must be 'kfold', 'holdout', 'recorded' or None; got "
                             f"{scheme!r}.")
    if test_fraction is not None:
        ok = isinstance(test_fraction, (int, float)) and 0 < float(test_fraction) < 1
        if not ok:
            raise ParameterError("`test_fraction` must be a number strictly between 0 and 1; "
                                 f"got {test_fraction!r}.")
        if scheme not in (None, "holdout"):
            raise ParameterError(f"`test_fraction` goes with scheme='holdout'; got "
                                 f"scheme={scheme!r}.")
        scheme = "holdout"
    elif scheme == "holdout":
        raise ParameterError("`scheme='holdout'` needs `test_fraction` (the share of rows in "
                             "each test set).")
    sized = {"n_train", "n_test"} <= set(frame.columns)
    if scheme == "recorded" and not (sized and frame[["n_train", "n_test"]].notna().all().all()):
        raise DataError("`scheme='recorded'` needs the columns n_train and n_test filled in "
                        "every row.")
    return frame, metric or metrics[0], scheme, (None if test_fraction is None
                                                 else float(test_fraction)), \
        check_confidence_level(confidence_level)


def describe_splits(reps: int, folds: float, splits: int) -> str:
    """A resampling in words, from its repeats, folds per repeat and splits.

    Parameters
    ----------
    reps : int
        Repeats.
    folds : float
        Folds per repeat (their mean over the repeats).
    splits : int
        Split scores in all.

    Returns
    -------
    str
        ``'10-fold CV'``, ``'10x10-fold CV'`` (repeats x folds), ``'30 hold-out splits'`` (one
        test set per repeat) or ``'12 splits'``.

    See Also
    --------
    summarize_scores : Names the resampling of each group with it.

    Examples
    --------
    >>> describe_splits(1, 10, 10), describe_splits(5, 2, 10), describe_splits(30, 1, 30)
    ('10-fold CV', '5x2-fold CV', '30 hold-out splits')
    """
    k = int(round(folds))
    if k >= 2 and abs(folds - k) < 1e-9:
        return f"{k}-fold CV" if reps == 1 else f"{reps}x{k}-fold CV"
    if k == 1:
        return f"{splits} hold-out split{'s' if splits != 1 else ''}"
    return f"{splits} splits"


def _fold_table(frame: pd.DataFrame, keys: list[str], scheme, test_fraction,
                level: float, sizes_rule: str) -> pd.DataFrame:
    """One row per group of ``keys``: the mean of its split scores and the corrected t.

    ``frame`` has ``keys``, ``repeat``, ``fold``, ``value`` and optional ``n_train``,
    ``n_test``. The ratio: recorded sizes where every split of the group has them, else
    ``test_fraction / (1 - test_fraction)`` (holdout), else ``1/(k-1)`` (kfold), else none.
    """
    import pandas as pd

    g = frame.groupby(keys, sort=False, dropna=False)
    out = g["value"].agg(estimate="mean", variance=lambda v: v.var(ddof=1),
                         n_resamples="count").reset_index()
    out["n_repeats"] = g["repeat"].nunique().to_numpy()
    per_rep = frame.groupby([*keys, "repeat"], sort=False, dropna=False)["fold"].nunique()
    out["n_folds"] = per_rep.groupby(level=list(range(len(keys))), sort=False).mean().to_numpy()
    sized = {"n_train", "n_test"} <= set(frame.columns)
    if sized:
        tr = frame["n_train"].astype("Float64").astype(float)
        te = frame["n_test"].astype("Float64").astype(float)
        sz = pd.DataFrame({**{k: frame[k] for k in keys}, "tr": tr, "te": te,
                           "miss": tr.isna() | te.isna()})
        gs = sz.groupby(keys, sort=False, dropna=False)
        complete = ~gs["miss"].any().to_numpy()
        n_train = gs["tr"].mean().to_numpy()
        n_test = gs["te"].mean().to_numpy()
        rec_ratio = np.where(complete & (n_train > 0), n_test / np.where(n_train > 0, n_train,
                                                                         1.0), np.nan)
        n_train = np.where(complete, n_train, np.nan)
    else:
        rec_ratio = n_train = np.full(len(out), np.nan)
    k = out["n_folds"].to_numpy(float)
    ratio = rec_ratio.copy()
    source = np.where(np.isfinite(rec_ratio), sizes_rule, "")
    todo = ~np.isfinite(ratio)
    if scheme == "holdout":
        ratio[todo] = test_fraction / (1 - test_fraction)
        source[todo] = "test_fraction"
    elif scheme == "kfold":
        kk = todo & (k >= 2)
        ratio[kk] = 1.0 / (k[kk] - 1.0)
        source[kk] = "kfold"
    out["n_train"] = n_train
    out["ratio"] = ratio
    out["ratio_source"] = source
    se, df, lo, hi = _corrected(out["estimate"], out["variance"], out["n_resamples"], ratio, level)
    out["se"], out["df"], out["ci_low"], out["ci_high"] = se, df, lo, hi
    J = out["n_resamples"].to_numpy()
    notes = np.where(
        J < 2, "one split: no spread across splits to build an interval from",
        np.where(np.isfinite(ratio), "",
                 np.where((scheme == "kfold") & (k < 2),
                          "scheme 'kfold' but one fold per repeat",
                          "the test/training size ratio is unknown (no n_train/n_test, no "
                          "scheme stated): no interval rather than a wrong one")))
    out["interval"] = np.where(np.isfinite(out["ci_low"].to_numpy(float)), "corrected_t",
                               "none")
    out["note"] = notes
    return out.drop(columns=["variance"])


def _target(row) -> str:
    """What an estimate's interval estimates, in words."""
    if row["interval"] == "corrected_t":
        n_train = row["n_train"]
        where = (f"trained on {n_train:,.0f} rows" if np.isfinite(n_train) else
                 f"trained on {(row['n_folds'] - 1) / row['n_folds']:.0%} of the rows"
                 if row["ratio_source"] == "kfold" else
                 f"trained on {1 / (1 + row['ratio']):.0%} of the rows")
        return f"expected performance of the learner {where}"
    if row["interval"] == "wald":
        return "error on new rows like these (naive: rows treated as independent)"
    return "no interval: " + str(row["note"])


def summarize_scores(scores, *, metric: str | None = None, scheme: str | None = None,
                     test_fraction: float | None = None,
                     confidence_level: float = 0.95) -> CVSummary:
    r"""The cross-validation estimate of every metric, per study and model, with the corrected
    repeated-CV t interval (Nadeau & Bengio (2003) [1]_; Bouckaert & Frank (2004) [2]_).

    For each (study, model, metric) with J split scores :math:`x_j` (J = repeats x folds):

    .. math::

        \hat\mu = \bar x, \qquad
        SE^2 = \Bigl(\frac{1}{J} + \frac{n_{test}}{n_{train}}\Bigr) S^2, \qquad
        \hat\mu \pm t_{J-1} \, SE,

    an interval for the expected performance of the learner trained on ``n_train`` rows
    (Bates, Hastie & Tibshirani (2024) [3]_ discuss what cross-validation estimates). The
    ratio ``n_test / n_train`` is read from the ``n_train``/``n_test`` columns where every
    split of the group has them, else from ``scheme``: ``'holdout'`` with ``test_fraction``
    (``f / (1 - f)``), ``'kfold'`` (``1 / (k - 1)``, k the folds per repeat). Without either
    there is no interval (``interval='none'`` with the reason): a ratio is never guessed. The
    interval of a bounded metric is clipped to its range (:data:`METRIC_BOUNDS`: [0, 1] for
    the concordance indices, AUCs, Brier scores and rates), which leaves its coverage of any
    value inside the range as it is. The direction of each metric (``higher_is_better``) is
    that of :func:`replikit.experiment.metrics.higher_is_better`, and for survival metrics
    (``'c_index'``, ``'c_index_uno'``, ``'mean_auc'``, ``'integrated_brier_score'``) that of
    :func:`replikit.experiment.survival_higher_is_better`.

    Parameters
    ----------
    scores : Scores or DataFrame
        ``study, model, repeat, fold, metric, value[, n_train, n_test]``; extra factor
        columns (``dataset``, ``tuning``) split the groups further.
    metric : str, optional
        The primary metric, of the verdict (default: the first in the table).
    scheme : {'kfold', 'holdout', 'recorded'}, optional
        How the scores were made, where the table has no sizes.
    test_fraction : float, optional
        The test share of a repeated hold-out (implies ``scheme='holdout'``).
    confidence_level : float, default 0.95
        The level of every interval.

    Returns
    -------
    CVSummary
        The estimates, the best model per study and the verdict (``'info'``).

    Raises
    ------
    ParameterError
        An unknown metric or scheme, a ``test_fraction`` outside (0, 1).

    See Also
    --------
    corrected_cv_interval : The interval of one set of split scores.
    summarize_predictions : The same from out-of-fold predictions.

    References
    ----------
    .. [1] Nadeau, C. & Bengio, Y. (2003). Inference for the generalization error. Machine
       Learning, 52, 239–281. https://doi.org/10.1023/A:1024068626366
    .. [2] Bouckaert, R. R. & Frank, E. (2004). Evaluating the replicability of significance
       tests for comparing learning algorithms. PAKDD 2004, LNCS 3056, 3–12.
       https://doi.org/10.1007/978-3-540-24775-3_3
    .. [3] Bates, S., Hastie, T. & Tibshirani, R. (2024). Cross-validation: what does it
       estimate and how well does it do it? Journal of the American Statistical
       Association, 119(546), 1434–1445. https://doi.org/10.1080/01621459.2023.2197686

    Examples
    --------
    >>> from replikit.data.examples import score_export
    >>> from replikit.data.foreign import read_scores
    >>> res = summarize_scores(read_scores(score_export("weka")), metric="roc_auc")
    >>> res.scheme, res.verdict.level
    ('recorded', 'info')
    >>> print(res.verdict.label)
    Logistic's mean 10x10-fold CV ROC AUC, study nwtco-NWTS-3, 95% corrected repeated-CV t interval
    """

    from ..data.tables import Scores

    frame, metric, scheme, test_fraction, level = _scores_iv(scores, metric, scheme,
                                                             test_fraction, confidence_level)
    extra = [c for c in Scores.key_columns(frame) if c not in Scores.KEY]
    keys = ["study", "model", *extra, "metric"]
    sized = ({"n_train", "n_test"} <= set(frame.columns)
             and frame[["n_train", "n_test"]].notna().all().all())
    known = "recorded" if sized else scheme
    table = _fold_table(frame, keys, scheme, test_fraction, level, "recorded")
    table["basis"] = "folds"
    table["n_rows"] = np.nan
    table = _finish(table)
    notes = [f"{len(frame):,} split scores of {frame['model'].nunique()} model(s) in "
             f"{frame['study'].nunique()} stud{'y' if frame['study'].nunique() == 1 else 'ies'}"]
    if extra:
        notes.append("groups split further by " + ", ".join(extra))
    return _summary(table, "scores", metric, known, level, notes)


def _higher_is_better(metric: str) -> bool:
    """The direction of ``metric``: :func:`replikit.experiment.metrics.higher_is_better`, or
    for a survival metric it does not know :func:`replikit.experiment.survival_higher_is_better`
    (its default would call the integrated Brier score, an error, higher-is-better)."""
    from ..experiment.metrics import METRICS, higher_is_better
    from ..experiment.survival import SURVIVAL_METRICS, survival_higher_is_better

    if metric not in METRICS and metric in SURVIVAL_METRICS:
        return survival_higher_is_better(metric)
    return higher_is_better(metric)


def _clip_to_bounds(table: pd.DataFrame) -> pd.DataFrame:
    """Each interval clipped to its metric's range (:data:`METRIC_BOUNDS`)."""
    bounds = np.array([METRIC_BOUNDS.get(str(m), (-np.inf, np.inf)) for m in table["metric"]],
                      dtype=float).reshape(-1, 2)
    lo, hi = bounds[:, 0], bounds[:, 1]
    table["ci_low"] = np.maximum(table["ci_low"].to_numpy(float), lo)  # NaN stays NaN
    table["ci_high"] = np.minimum(table["ci_high"].to_numpy(float), hi)
    return table


def _finish(table: pd.DataFrame) -> pd.DataFrame:
    table = _clip_to_bounds(table)
    table["higher_is_better"] = [_higher_is_better(str(m)) for m in table["metric"]]
    table["target"] = [_target(r) for _, r in table.iterrows()]
    first = [c for c in ("study", "model") if c in table.columns]
    rest = ["metric", "basis", "estimate", "se", "ci_low", "ci_high", "df", "interval",
            "target", "n_repeats", "n_folds", "n_resamples", "n_rows", "n_train", "ratio",
            "ratio_source", "higher_is_better", "note"]
    extra = [c for c in table.columns if c not in first and c not in rest]
    return table[[*first, *extra, *rest]].reset_index(drop=True)


def _summary(table, source, metric, scheme, level, notes) -> CVSummary:
    hib = _higher_is_better(metric)
    probe = CVSummary(table, source, metric, hib, scheme, level, {}, "", tuple(notes),
                      Verdict("", metric))
    prim = probe.primary()
    best = {}
    for study, sub in prim.groupby("study", sort=False):
        est = sub["estimate"].to_numpy(float)
        if np.all(np.isnan(est)):
            continue
        at = int(np.nanargmax(est) if hib else np.nanargmin(est))
        best[study] = sub.iloc[at]["model"]
    key_study = next(iter(best)) if best else str(prim["study"].iloc[0])
    verdict = _verdict(prim, best, key_study, metric, source, level)
    return CVSummary(table, source, metric, hib, scheme, level, best, key_study,
                     tuple(notes), verdict)


def _coverage_caveat(reps: int, folds: float, splits: int, metric: str = "") -> str:
    """What the coverage study measured for the closest kind of resampling (docs/validity.md:
    one 10-fold CV, 10x10-fold CV, 20 hold-out splits; docs/survival.md: Harrell's C under
    5x5-fold CV), and whether this one was simulated."""
    head = "the corrected t interval is a heuristic whose coverage depends on the setting: "
    if metric == "c_index" and folds >= 2 and reps > 1:
        text, measured = ("for Harrell's C of a Cox model under 5x5-fold CV it covered "
                          "95-96% at 95% (n = 100 to 1,000, 30% and 60% censored) in our "
                          "simulations"), (reps, round(folds)) == (5, 5)
    elif folds >= 2 and reps == 1:
        text, measured = ("for one 10-fold CV it covered 96-99% at 95% in our simulations "
                          "(conservative: wider than it needs to be)"), round(folds) == 10
    elif folds >= 2:
        text, measured = ("for 10x10-fold CV it covered 90-92% at 95% with least squares "
                          "(anti-conservative) and 96% with a nearest-centroid classifier in "
                          "our simulations"), (reps, round(folds)) == (10, 10)
    else:
        text, measured = ("for 20 hold-out splits it covered 92-93% at 95% with least squares "
                          "(anti-conservative) and 95% with a nearest-centroid classifier in "
                          "our simulations"), splits == 20
    if not measured:
        text += f"; {describe_splits(reps, folds, splits)} itself was not simulated"
    return head + text


def _verdict(prim, best, key_study, metric, source, level) -> Verdict:
    from .._format import interval, number
    from ..experiment.metrics import metric_label

    words = LOSS_WORDS.get(metric, metric_label(metric))
    pct = f"{level:.0%}"
    rows = prim.set_index(["study", "model"])
    parts, caveats = [], []
    key = None
    for study, model in best.items():
        r = rows.loc[(study, model)]
        if isinstance(r, type(prim)):
            r = r.iloc[0]
        how = ("the pooled out-of-fold rows" if r["basis"] == "rows" else
               describe_splits(int(r["n_repeats"]), float(r["n_folds"]), int(r["n_resamples"])))
        if r["interval"] == "none":
            text = f"{model} {number(r['estimate'])} ({how}; no interval)"
        else:
            text = (f"{model} {number(r['estimate'])} ({how}; {pct} "
                    f"{INTERVAL_LABELS[r['interval']]} interval "
                    f"{interval(r['ci_low'], r['ci_high'])})")
        parts.append((study, text))
        if study == key_study:
            key = (model, r, how)
    model, r, how = key
    mean_words = words if words.startswith("mean ") else f"mean {words}"
    lead = (f"Best {mean_words} by study: " if len(parts) > 1 else f"Best {mean_words}: ")
    sentence = lead + "; ".join(
        (f"study {s}: " if len(parts) > 1 else f"in study {s}, ") + t for s, t in parts) + "."
    if r["interval"] == "corrected_t":
        sentence += (f" The interval is for the {r['target']} (Nadeau & Bengio (2003)), "
                     "not for the one model fitted on all rows.")
        caveats.append(_coverage_caveat(int(r["n_repeats"]), float(r["n_folds"]),
                                        int(r["n_resamples"]), metric))
    elif r["interval"] == "wald":
        caveats.append("the interval is the naive Wald one (rows treated as independent); it "
                       "can cover below its level (Bates, Hastie & Tibshirani 2024)")
    else:
        caveats.append(f"no interval: {r['note']}")
    caveats.append("the best model is picked on these same scores, so its estimate leans "
                   "optimistic (selection)")
    kind = INTERVAL_LABELS[r["interval"]]
    what = (f"{mean_words} on the pooled out-of-fold rows" if r["basis"] == "rows" else
            f"{how} {words}" if words.startswith("mean ") else f"mean {how} {words}")
    label = (f"{model}'s {what}, study {key_study}"
             + (f", {pct} {kind} interval" if r["interval"] != "none" else
                " (no interval)"))
    has = r["interval"] != "none"
    return Verdict(sentence, metric_label(metric), "info", estimate=float(r["estimate"]),
                   ci_low=float(r["ci_low"]) if has else None,
                   ci_high=float(r["ci_high"]) if has else None,
                   caveats=tuple(caveats), label=label, tolerance="")


# -- from predictions -----------------------------------------------------------------------

def _row_losses(frame: pd.DataFrame, task: str) -> dict:
    """Metric -> the per-row loss of every prediction (NaN where it cannot be computed)."""
    import pandas as pd

    y = frame["y_true"]
    pred = frame["y_pred"]
    if task == "regression":
        e = y.to_numpy(float) - pred.to_numpy(float)
        return {"mse": e ** 2, "mae": np.abs(e)}
    out = {"error_rate": (y.astype(str).to_numpy() != pred.astype(str).to_numpy())
           .astype(float)}
    cols = {str(c)[len("proba_"):]: c for c in frame.columns if str(c).startswith("proba_")}
    labels = y.astype(str).to_numpy()
    classes = set(pd.unique(labels))
    p = np.full(len(frame), np.nan)
    if cols and classes <= set(cols):
        for lab, c in cols.items():
            hit = labels == lab
            p[hit] = frame[c].to_numpy(float)[hit]
    elif len(cols) == 1 and len(classes | set(cols)) == 2:  # binary, one column
        (lab, c), = cols.items()
        q = frame[c].to_numpy(float)
        p = np.where(labels == lab, q, 1 - q)
    if np.all(np.isfinite(p)):
        out["log_loss"] = -np.log(np.clip(p, 1e-15, 1.0))
    return out


def _partition_sizes(frame: pd.DataFrame) -> pd.DataFrame:
    """Per (study, model, repeat, fold): ``n_test`` and ``n_train`` (the repeat's other rows
    when its folds partition its rows into two or more folds; else missing)."""
    run = ["study", "model", "repeat"]
    f = frame.groupby([*run, "fold"], sort=False).size().rename("n_test").reset_index()
    per_run = frame.groupby(run, sort=False).agg(n_rows=("row", "size"),
                                                 distinct=("row", "nunique"),
                                                 folds=("fold", "nunique")).reset_index()
    f = f.merge(per_run, on=run, how="left")
    part = (f["distinct"] == f["n_rows"]) & (f["folds"] >= 2)
    f["n_train"] = (f["n_rows"] - f["n_test"]).where(part)
    return f[[*run, "fold", "n_train", "n_test"]]


def _predictions_iv(predictions, fold_scores, metric, task, confidence_level):
    import pandas as pd

    from .._validation import check_confidence_level
    from ..data.tables import Predictions, Scores
    from ..errors import ParameterError, ParameterTypeError

    if isinstance(predictions, pd.DataFrame):
        predictions = Predictions(predictions)
    if not isinstance(predictions, Predictions):
        raise ParameterTypeError("`predictions` must be a replikit.data.Predictions table or a "
                                 f"DataFrame in its layout; got {type(predictions).__name__}.")
    if fold_scores is not None and isinstance(fold_scores, pd.DataFrame):
        fold_scores = Scores(fold_scores)
    if fold_scores is not None and not isinstance(fold_scores, Scores):
        raise ParameterTypeError("`fold_scores` must be a replikit.data.Scores table; got "
                                 f"{type(fold_scores).__name__}.")
    if task is not None and task not in ("classification", "regression"):
        raise ParameterError(f"`task` must be 'classification' or 'regression'; got {task!r}.")
    if metric is not None and not isinstance(metric, str):
        raise ParameterTypeError(f"`metric` must be a metric name; got {type(metric).__name__}.")
    return predictions, fold_scores, check_confidence_level(confidence_level)


def summarize_predictions(predictions, *, fold_scores=None, metric: str | None = None,
                          task: str | None = None, scheme: str | None = None,
                          test_fraction: float | None = None,
                          confidence_level: float = 0.95) -> CVSummary:
    r"""The error of pooled out-of-fold predictions, per study and model, with its intervals.

    Per-row losses :math:`e_i` (squared and absolute error of a continuous outcome; log loss
    (with the probability of every class) and misclassification of classes): the pooled
    estimate is their mean, each row's loss first averaged over the repeats, with the naive
    Wald interval :math:`\bar e \pm z \, sd(e) / \sqrt{n}` (rows treated as independent; Bates,
    Hastie & Tibshirani (2024) [3]_, eq. 3, who show it can cover below its level) — the
    data path's "naive" interval.

    Where each repeat's folds partition its rows into two or more folds (k-fold out-of-fold
    predictions, so a fold's training set is the other folds: ``n_train = rows - n_test``),
    every loss and every metric of ``fold_scores`` also gets its cross-validation estimate,
    the mean of the fold scores, with the corrected repeated-CV t interval of
    :func:`summarize_scores` (Nadeau & Bengio (2003) [1]_; Bouckaert & Frank (2004) [2]_),
    an interval for the expected performance of the learner trained on ``n_train`` rows. A
    per-row loss's fold score is the mean of its rows' losses.

    Parameters
    ----------
    predictions : Predictions or DataFrame
        ``study, model, repeat, fold, row, y_true, y_pred[, proba_<class>]``.
    fold_scores : Scores, optional
        The per-fold scores of these predictions
        (:func:`replikit.experiment.scoring.scores_from_predictions`, computed when not
        given).
    metric : str, optional
        The primary metric, of the verdict: a per-row loss (:data:`ROW_LOSSES`) or a metric
        of ``fold_scores``. Default: the log loss of classes with probabilities, else the
        misclassification rate (``'error_rate'``); the squared error (``'mse'``).
    task : {'classification', 'regression'}, optional
        Default: classification when probabilities are given or the outcome is text or takes
        at most 10 whole-number values.
    scheme : {'kfold', 'holdout'}, optional
        How the folds were made, for predictions whose folds do not partition the rows (each
        repeat tests only some of them): as in :func:`summarize_scores`, ``'holdout'`` with
        ``test_fraction`` gives the ratio; without it those folds get no corrected interval.
    test_fraction : float, optional
        The test share of a ``'holdout'`` scheme.
    confidence_level : float, default 0.95
        The level of every interval.

    Returns
    -------
    CVSummary
        ``basis='rows'`` (pooled, naive Wald) and ``basis='folds'`` (corrected t) rows, the
        best model per study and the verdict (its key number: the corrected t interval where
        the folds allow it, else the naive one, labelled).

    Raises
    ------
    ParameterError
        A metric that is neither a per-row loss nor in ``fold_scores``.

    See Also
    --------
    summarize_scores : From per-fold scores.
    replikit.experiment.scoring.scores_from_predictions : The fold scores.

    References
    ----------
    .. [1] Nadeau, C. & Bengio, Y. (2003). Inference for the generalization error. Machine
       Learning, 52, 239–281. https://doi.org/10.1023/A:1024068626366
    .. [2] Bouckaert, R. R. & Frank, E. (2004). Evaluating the replicability of significance
       tests for comparing learning algorithms. PAKDD 2004, LNCS 3056, 3–12.
       https://doi.org/10.1007/978-3-540-24775-3_3
    .. [3] Bates, S., Hastie, T. & Tibshirani, R. (2024). Cross-validation: what does it
       estimate and how well does it do it? Journal of the American Statistical
       Association, 119(546), 1434–1445. https://doi.org/10.1080/01621459.2023.2197686

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> y = rng.normal(size=40)
    >>> p = pd.DataFrame({"study": "s", "model": np.repeat(["a", "b"], 40), "repeat": 0,
    ...                   "fold": np.tile(np.arange(40) % 4, 2), "row": np.tile(np.arange(40), 2),
    ...                   "y_true": np.tile(y, 2),
    ...                   "y_pred": np.concatenate([y + rng.normal(0, .5, 40), np.zeros(40)])})
    >>> res = summarize_predictions(p, task="regression")
    >>> res.best, res.verdict.label
    ({'s': 'a'}, "a's 4-fold CV mean squared error, study s, 95% corrected repeated-CV t interval")
    """
    import pandas as pd

    from ..errors import ParameterError

    predictions, fold_scores, level = _predictions_iv(predictions, fold_scores, metric, task,
                                                      confidence_level)
    frame = predictions.frame
    task = task or _task_of(frame)
    if fold_scores is None:
        from ..experiment.scoring import scores_from_predictions

        fold_scores = scores_from_predictions(predictions, task=task)
    losses = _row_losses(frame, task)
    default = ("mse" if task == "regression" else
               "log_loss" if "log_loss" in losses else "error_rate")
    fs = fold_scores.frame
    if metric is not None and metric not in losses and metric not in set(fs["metric"]):
        raise ParameterError(f"`metric`: {metric!r} is neither a per-row loss of these "
                             f"predictions ({', '.join(losses)}) nor a metric of "
                             f"`fold_scores` ({', '.join(map(str, pd.unique(fs['metric'])))}).")
    metric = metric or default
    keys = ["study", "model"]
    # pooled rows: each row's loss averaged over the repeats, then rows independent
    base = frame[["study", "model", "repeat", "fold", "row"]].copy()
    pooled = []
    from scipy import stats

    z = float(stats.norm.ppf((1 + level) / 2))
    for name, loss in losses.items():
        per_row = (base.assign(loss=loss).groupby([*keys, "row"], sort=False)["loss"].mean()
                   .reset_index())
        g = per_row.groupby(keys, sort=False)["loss"]
        t = g.agg(estimate="mean", sd=lambda v: v.std(ddof=1), n_rows="count").reset_index()
        t["metric"] = name
        t["se"] = t["sd"] / np.sqrt(t["n_rows"])
        t["ci_low"] = np.maximum(0.0, t["estimate"] - z * t["se"])
        t["ci_high"] = t["estimate"] + z * t["se"]
        t["df"] = np.nan
        t["interval"] = np.where(np.isfinite(t["se"]), "wald", "none")
        t["note"] = np.where(np.isfinite(t["se"]), "", "one row: no spread to build an "
                             "interval from")
        t["n_repeats"] = base.groupby(keys, sort=False)["repeat"].nunique().to_numpy()
        t["n_folds"] = np.nan
        t["n_resamples"] = np.nan
        t["n_train"] = np.nan
        t["ratio"] = np.nan
        t["ratio_source"] = ""
        t["basis"] = "rows"
        pooled.append(t.drop(columns=["sd"]))
    # fold scores: the losses' fold means and the metrics of fold_scores, sizes from the
    # partition (or as recorded)
    sizes = _partition_sizes(frame)
    fold_loss = [base.assign(value=loss, metric=name)
                 .groupby([*keys, "repeat", "fold", "metric"], sort=False)["value"].mean()
                 .reset_index() for name, loss in losses.items()]
    given = fs[[c for c in (*keys, "repeat", "fold", "metric", "value", "n_train", "n_test")
                if c in fs.columns]]
    folds = pd.concat([*fold_loss], ignore_index=True).merge(sizes, on=[*keys, "repeat",
                                                                        "fold"], how="left")
    if {"n_train", "n_test"} <= set(given.columns):
        given = given.astype({"n_train": "Float64", "n_test": "Float64"})
    else:
        given = given.merge(sizes, on=[*keys, "repeat", "fold"], how="left")
    given = given[~given["metric"].isin(list(losses))]
    folds = pd.concat([folds, given], ignore_index=True)
    ft = _fold_table(folds, [*keys, "metric"], scheme, test_fraction, level, "partition")
    ft["basis"] = "folds"
    ft["n_rows"] = np.nan
    ft.loc[ft["interval"] == "none", "note"] = np.where(
        ft.loc[ft["interval"] == "none", "n_resamples"] < 2,
        "one fold: no spread across folds",
        "the folds do not partition each repeat's rows (not k-fold predictions), so the "
        "training sizes are unknown")
    table = pd.concat([*pooled, ft], ignore_index=True)
    order = {m: i for i, m in enumerate([*losses, *pd.unique(fs["metric"])])}
    models = {m: i for i, m in enumerate(pd.unique(frame["model"]))}
    studies = {m: i for i, m in enumerate(pd.unique(frame["study"]))}
    table["_s"] = table["study"].map(studies)
    table["_o"] = table["metric"].map(order).fillna(len(order))
    table["_b"] = (table["basis"] == "folds").astype(int)
    table["_m"] = table["model"].map(models)
    table = table.sort_values(["_s", "_o", "_b", "_m"], kind="stable").drop(
        columns=["_s", "_o", "_b", "_m"])
    table = _finish(table)
    part = ft["ratio_source"].eq("partition").any()
    notes = [f"{len(frame):,} out-of-fold predictions of {frame['model'].nunique()} model(s) "
             f"in {frame['study'].nunique()} stud{'y' if frame['study'].nunique() == 1 else 'ies'}"
             f"; task: {task}",
             "per-row losses: " + ", ".join(LOSS_WORDS[m] for m in losses)
             + ("" if "log_loss" in losses or task == "regression" else
                " (no log loss: no probability for every class)")]
    if part:
        notes.append("each repeat's folds partition its rows: a fold's training set is taken "
                     "to be the other folds (n_train = rows - n_test)")
    return _summary(table, "predictions", metric, "partition" if part else None, level, notes)


def _task_of(frame: pd.DataFrame) -> str:
    """Classification when probabilities are given or the outcome is text, boolean or takes
    at most 10 whole-number values; else regression (the rule of
    :func:`replikit.experiment.scoring.primary_metric_of`)."""
    import pandas as pd
    from pandas.api import types as ptypes

    y = frame["y_true"]
    if any(str(c).startswith("proba_") for c in frame.columns):
        return "classification"
    if not ptypes.is_numeric_dtype(y) or ptypes.is_bool_dtype(y):
        return "classification"
    values = pd.unique(y.dropna())
    whole = bool(np.all(values == np.round(values))) if len(values) else False
    return "classification" if whole and len(values) <= 10 else "regression"

