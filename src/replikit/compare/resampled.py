"""Tests comparing two models from their resampled scores (Gardner & Brooks 2017).

Every test takes the scores of two models on the same resampling splits — a Scores table, a
DataFrame in its layout, a :class:`~replikit.experiment.RunResult` or a
:class:`~replikit.compare.Paired` design — and returns a
:class:`~replikit.compare.ComparisonResult` with the statistic, its df, the p-value under
``alternative``, the mean difference ``a - b``, its standard error under the test's own variance
(hence the confidence interval that goes with the test) and the scheme the test needs.

Valid tests (Gardner & Brooks 2017, Table 1)

============================== ========================== =========================================
function                       scheme                     variance of the mean difference
============================== ========================== =========================================
corrected_resampled_ttest      any resampling             ``(1/n + n_test/n_train) s²``, df ``n-1``
corrected_repeated_kfold_ttest r x k cross-validation     ``(1/(k r) + n_test/n_train) s²``
paired_ttest_5x2cv             5 x 2 cross-validation     ``mean_i s_i²`` (numerator ``d_11``), df 5
combined_ftest_5x2cv           5 x 2 cross-validation     F(10, 5)
sorted_runs_ttest              r x k cross-validation     ``s_x² / k`` on k sorted runs, df ``k-1``
============================== ========================== =========================================

Invalid tests, kept for comparison and teaching (each emits a
:class:`~replikit.errors.ValidityWarning`): :func:`naive_paired_ttest` and
:func:`proportions_ztest`. Equivalence and Bayesian: :func:`equivalence_ttest` (TOST with the
corrected variance) and :func:`bayesian_correlated_ttest` (Corani & Benavoli 2015).

``alternative`` is stated for the difference ``a - b``: ``'greater'`` tests whether ``a``
scores higher than ``b``. For an error metric (lower is better) that means ``a`` is worse.

Zero variance: when every split gives the same difference the standard error is 0. The
statistic is then ``±inf`` (p = 0 two-sided) if the mean difference is not 0 and NaN (p NaN)
if it is 0 — e.g. a model compared with itself; ``extra['note']`` says so and ``str()`` shows
it. No exception and no RuntimeWarning is raised. The Bayesian test returns a point mass.
"""

from __future__ import annotations

import math
import numbers
from typing import NamedTuple

import numpy as np
from scipy import stats

from .._compat import renamed
from .._validation import check_alternative, check_choice, check_float, check_int
from ..errors import DataError, ParameterError, ParameterTypeError, ValidityWarning, warn
from ..results import get_pvalue
from . import _kernels as K
from ._pairing import Paired, paired_scores
from ._result import BayesianResult, ComparisonResult
from ._words import fill_doc

__all__ = [
    "corrected_resampled_ttest", "corrected_repeated_kfold_ttest", "paired_ttest_5x2cv",
    "combined_ftest_5x2cv", "sorted_runs_ttest", "naive_paired_ttest", "proportions_ztest",
    "equivalence_ttest", "bayesian_correlated_ttest", "corrected_ttest_from_stats",
    "equivalence_test_from_stats", "NAIVE_T_WARNING", "PROPORTIONS_Z_WARNING", "SORTED_LEARNER_WARNING",
]

NAIVE_T_WARNING = (
    "naive_paired_ttest is invalid on resampled or cross-validated scores: the training sets of "
    "different splits overlap (and so do the test sets of different repeats), so the per-split "
    "differences are positively correlated; the t-test treats them as independent, "
    "underestimates the variance of their mean and rejects a true null far more often than "
    "alpha, the more so the more splits are used (Dietterich 1998; Nadeau & Bengio 2003; "
    "Gardner & Brooks 2017, sec. 3.4). Use corrected_repeated_kfold_ttest or "
    "corrected_resampled_ttest instead."
)
PROPORTIONS_Z_WARNING = (
    "proportions_ztest is invalid for comparing two learners: the two error rates are measured "
    "on the same test examples, so they are not independent as the pooled z assumes, and a "
    "single comparison cannot see the variation due to the choice of the training set; its "
    "Type I error is inflated (Dietterich 1998, sec. 3.1; Gardner & Brooks 2017, eq. 1). Use "
    "McNemar's test on one test set, or a corrected t-test on resampled scores."
)
SORTED_LEARNER_WARNING = (
    "sorted_runs_ttest(sort='learner') is invalid: sorting each learner's fold scores "
    "separately destroys the pairing of the two learners on the same folds, and the averaged "
    "order statistics of the two learners are strongly dependent; in replikit's calibration "
    "simulation (`replikit simulate tests`, 10x10 CV, no true difference) it rejects about 77% "
    "of the time at alpha = 0.05. It is kept only to reproduce the literal reading of Gardner & "
    "Brooks (2017), Table 1 (4); use sort='difference' (the default) or "
    "corrected_repeated_kfold_ttest."
)
_ZERO_VAR_NOTE = ("all differences are equal (zero variance): the statistic is +-inf when the "
                  "mean difference is not 0 and NaN when it is 0")


# ---------------------------------------------------------------------------------------------
# docstring pieces shared by the tests of this module

_DOC = {
    "scores": """scores : Scores, pandas.DataFrame, RunResult or Paired
        Scores of both models on the same splits: a Scores table (or a DataFrame in its
        layout, ``study, model, repeat, fold, metric, value, n_train, n_test``), a
        :class:`~replikit.experiment.RunResult`, or a :class:`~replikit.compare.Paired`
        design.""",
    "ab": """a, b : str, optional
        The two models; the difference tested is ``a - b``. Both may be omitted when the
        scores hold exactly two models.""",
    "metric_study": """metric : str, optional
        The metric compared; required when the scores hold several.
    study : str, optional
        The study compared within; required when the scores hold several.""",
    "alternative": """alternative : {'two-sided', 'less', 'greater'}, default 'two-sided'
        For the mean difference ``a - b`` against 0: ``'greater'`` tests whether ``a``
        scores higher than ``b``.""",
    "tost_alternative": """alternative : {'two-sided', 'greater', 'less'}, default 'two-sided'
        ``'two-sided'``: equivalence, H1 ``low < mu < high`` (two one-sided tests, p the larger
        of the two). ``'greater'``: non-inferiority, H1 ``mu > low``. ``'less'``:
        non-superiority, H1 ``mu < high``.""",
    "see_also": """corrected_repeated_kfold_ttest : The recommended test for r x k cross-validation.
    corrected_resampled_ttest : The recommended test for repeated hold-out.
    paired_ttest_5x2cv : Dietterich's test for 5x2 cross-validation.
    combined_ftest_5x2cv : Alpaydin's test for 5x2 cross-validation.
    bayesian_correlated_ttest : The posterior probability of a practical difference.
    equivalence_ttest : Whether two models are practically equivalent.
    replikit.compare.compare_scores : Every recommended test of every pair, as one table.""",
}


_doc = fill_doc(_DOC)


# ---------------------------------------------------------------------------------------------
# input validation


class _Labels(NamedTuple):
    a: str
    b: str
    metric: str


def _paired_iv(scores, a, b, metric, study, *, min_splits=2) -> Paired:
    p = paired_scores(scores, a, b, metric=metric, study=study)
    if p.n < min_splits:
        raise DataError(f"this test needs at least {min_splits} splits to estimate a variance; "
                        f"the scores of {p.a!r} and {p.b!r} have {p.n}.")
    return p


def _ratio_iv(ratio) -> float | None:
    if ratio is None:
        return None
    return check_float(ratio, "ratio", min_value=0.0)


def _corrected_ratio(p: Paired, ratio, *, infer_from_k: bool) -> tuple[float, str]:
    """``n_test / n_train``: given, else from the recorded sizes, else ``1/(k-1)`` for k-fold."""
    ratio = _ratio_iv(ratio)
    if ratio is not None:
        return ratio, "given"
    recorded = p.ratio
    if np.isfinite(recorded):
        return recorded, "recorded split sizes"
    r, k = p.shape
    if infer_from_k and k >= 2:
        return 1.0 / (k - 1), f"1/(k-1) for k = {k} equal folds (split sizes not recorded)"
    raise DataError(
        "the corrected variance needs the ratio n_test/n_train: the scores have no `n_train`/"
        "`n_test` columns (or they are missing) and the splits are not k-fold; add the split "
        "sizes to the Scores table or pass `ratio=`."
    )


def _corrected(p: Paired, ratio, *, infer_from_k: bool):
    """The per-split differences and the corrected t of a paired design (Nadeau & Bengio's
    variance): ``(d, statistic, se, df, ratio, ratio_source)``."""
    ratio, source = _corrected_ratio(p, ratio, infer_from_k=infer_from_k)
    d = p.d.ravel()
    stat, se, df = K.t_corrected(d, ratio)
    return d, stat, se, df, ratio, source


def _result(stat, se, df, labels, *, estimate, pvalue, test, method, alternative, valid,
            requires, n, df2=None, extra=None) -> ComparisonResult:
    extra = dict(extra or {})
    if se == 0 or not np.isfinite(stat):
        extra.setdefault("note", _ZERO_VAR_NOTE)
    return ComparisonResult(
        statistic=float(stat), pvalue=float(pvalue), df=None if df is None else float(df),
        estimate=float(estimate), se=float(se), alternative=alternative, method=method,
        extra=extra, test=test, valid=valid, requires=requires,
        df2=None if df2 is None else float(df2), n=int(n), a=labels.a, b=labels.b,
        metric=str(labels.metric),
    )


# ---------------------------------------------------------------------------------------------
# corrected t-tests


@_doc
def corrected_ttest_from_stats(mean, sd, n, ratio, *, alternative="two-sided", a="", b="",
                               metric="") -> ComparisonResult:
    """Corrected resampled t from summary statistics of the differences.

    ``t = mean / (sd · sqrt(1/n + ratio))``, Student t with ``n - 1`` df (Nadeau & Bengio 2003;
    Gardner & Brooks 2017, eq. 3). For published results that report only the mean and SD of
    the per-split differences.

    Parameters
    ----------
    mean : float
        Mean of the ``n`` differences ``a - b``.
    sd : float
        Their sample standard deviation (ddof 1), >= 0.
    n : int
        Number of splits (``k · r`` for r repeats of k-fold cross-validation), >= 2.
    ratio : float
        ``n_test / n_train`` (``1/9`` for 10-fold cross-validation), >= 0.
    {alternative}
    a, b, metric : str, default ''
        Names of the two models and of the metric, carried into the result.

    Returns
    -------
    ComparisonResult
        ``test='corrected_resampled_t'``; ``extra`` holds ``sd`` and ``ratio``.

    See Also
    --------
    corrected_resampled_ttest : The same test from the scores themselves.
    equivalence_test_from_stats : Equivalence from an estimate and its standard error.

    References
    ----------
    {refs:nadeau2003,gardner2017}

    Examples
    --------
    The AUC comparison of Gardner & Brooks (2017), Table 3 (10x10 CV, MLP - CART):

    >>> res = corrected_ttest_from_stats(0.029627, 0.034840, 100, 1 / 9)
    >>> round(res.pvalue, 4)
    0.0163
    """
    alternative = check_alternative(alternative)
    mean = check_float(mean, "mean")
    sd = check_float(sd, "sd", min_value=0.0)
    n = check_int(n, "n", min_value=2)
    ratio = check_float(ratio, "ratio", min_value=0.0)
    se = sd * math.sqrt(1.0 / n + ratio)
    with np.errstate(divide="ignore", invalid="ignore"):
        stat = np.true_divide(mean, se)
    df = n - 1
    pvalue = get_pvalue(stat, stats.t(df), alternative)
    labels = _Labels(a, b, metric)
    return _result(stat, se, df, labels, estimate=mean, pvalue=pvalue,
                   test="corrected_resampled_t",
                   method="Corrected resampled t-test (Nadeau & Bengio 2003), from summary "
                          "statistics",
                   alternative=alternative, valid=True, requires="any resampling", n=n,
                   extra={"sd": sd, "ratio": ratio})


@_doc
def corrected_resampled_ttest(scores, a=None, b=None, *, metric=None, study=None,
                              alternative="two-sided", ratio=None) -> ComparisonResult:
    """Corrected resampled t-test of two models on random train/test splits.

    For ``n`` random train/test splits (hold-out repeats, random subsampling, or any resampling
    whose test sets do not overlap the training set; Gardner & Brooks 2017, Table 1 row 2):

    ``t = mean(d) / sqrt((1/n + n_test/n_train) · s²)``, Student t with ``n - 1`` df,

    where ``d`` are the per-split differences ``a - b`` and ``s²`` their sample variance
    (Nadeau & Bengio 2003; Gardner & Brooks 2017, eq. 3). The term ``n_test/n_train``
    accounts for the correlation of the splits, which the naive t "boldly" takes as 0; without
    it the p-value can be made as small as one likes by adding splits.

    Parameters
    ----------
    {scores}
    {ab}
    {metric_study}
    {alternative}
    ratio : float, optional
        ``n_test / n_train``. By default ``mean(n_test) / mean(n_train)`` from the recorded
        split sizes (a DataError if they are not recorded).

    Returns
    -------
    ComparisonResult
        ``test='corrected_resampled_t'``, ``n`` = number of splits, ``extra['ratio']``.

    See Also
    --------
    corrected_repeated_kfold_ttest : The same correction on r x k cross-validation.
    corrected_ttest_from_stats : The test from published summary statistics.
    naive_paired_ttest : The uncorrected test, invalid on resampled scores.

    Notes
    -----
    **Randomized learners** (random forests, bagging, SGD, neural networks: a fit depends on
    its random state). The correction treats the whole variance of the per-split differences
    as shared between splits with correlation about ``n_test / n``; the learners' run-to-run
    variance is not shared (every fit draws its own random state), so for them the test is
    *conservative*, not liberal, in every setting simulated: its size falls from about .04
    (deterministic learners) towards 0 as the run-to-run noise grows (.002 for the 10x10
    version and .026 for 10 hold-outs in ``replikit.compare.validity`` when it dominates), and
    it loses power. Reduce the run-to-run noise before testing (more trees or ensemble members,
    or the mean of several random states per split) rather than trusting a larger p-value; no
    published variance correction fixes it (separating the run-to-run variance, estimated from
    a second run per split, made the test liberal — .15 of 300 null datasets — on the same
    design). See docs/compare.md.

    References
    ----------
    {refs:nadeau2003,gardner2017}

    Examples
    --------
    >>> import numpy as np
    >>> from replikit.compare import Paired
    >>> rng = np.random.default_rng(0)
    >>> p = Paired(0.80 + 0.02 * rng.standard_normal((30, 1)),
    ...            0.78 + 0.02 * rng.standard_normal((30, 1)), n_train=200, n_test=100)
    >>> res = corrected_resampled_ttest(p)
    >>> res.df, round(res.se, 4)
    (29.0, 0.0212)
    """
    alternative = check_alternative(alternative)
    p = _paired_iv(scores, a, b, metric, study)
    d, stat, se, df, ratio, source = _corrected(p, ratio, infer_from_k=False)
    pvalue = get_pvalue(stat, stats.t(df), alternative)
    return _result(stat, se, df, p, estimate=d.mean(), pvalue=pvalue,
                   test="corrected_resampled_t",
                   method="Corrected resampled t-test (Nadeau & Bengio 2003)",
                   alternative=alternative, valid=True, requires="any resampling", n=d.size,
                   extra={"ratio": ratio, "ratio_source": source})


@_doc
def corrected_repeated_kfold_ttest(scores, a=None, b=None, *, metric=None, study=None,
                                   alternative="two-sided", ratio=None) -> ComparisonResult:
    """Corrected repeated k-fold cross-validation t-test of two models (Bouckaert & Frank 2004).

    For ``r`` repeats of ``k``-fold cross-validation (Gardner & Brooks 2017, Table 1 row 3,
    the test they recommend with 10x10 CV):

    ``t = mean(d) / sqrt((1/(k·r) + n_test/n_train) · s²)``, Student t with ``k·r - 1`` df,

    with ``d`` the ``k·r`` differences ``a - b`` and ``s²`` their sample variance. The same
    correction as :func:`corrected_resampled_ttest`, on cross-validation splits, where it has
    better replicability than on random subsamples (Bouckaert & Frank 2004).

    Parameters
    ----------
    scores : Scores, pandas.DataFrame, RunResult or Paired
        Scores of both models on the same ``r x k`` cross-validation splits (k >= 2): a Scores
        table or a DataFrame in its layout, a RunResult, or a
        :class:`~replikit.compare.Paired` design.
    {ab}
    {metric_study}
    {alternative}
    ratio : float, optional
        ``n_test / n_train``; by default from the recorded split sizes (``mean(n_test) /
        mean(n_train)``, exactly ``1/(k-1)`` for equal folds), or ``1/(k-1)`` when the sizes
        are not recorded (noted in ``extra['ratio_source']``).

    Returns
    -------
    ComparisonResult
        ``test='corrected_repeated_kfold_t'``, ``n = k·r``.

    Raises
    ------
    ParameterError
        Only one fold per repeat (hold-out repeats): use :func:`corrected_resampled_ttest`.

    See Also
    --------
    corrected_resampled_ttest : The same correction on repeated hold-out.
    sorted_runs_ttest : Bouckaert's sorted-runs test on the same design.
    bayesian_correlated_ttest : The posterior of the same mean difference.
    replikit.compare.compare_scores : Every recommended test of every pair, as one table.

    Notes
    -----
    **Randomized learners**: conservative, not liberal, as for
    :func:`corrected_resampled_ttest` (see its Notes; .002 instead of .05 in
    ``replikit.compare.validity`` when the run-to-run noise dominates); reduce that noise
    before testing.

    References
    ----------
    {refs:bouckaert2004,nadeau2003,gardner2017}

    Examples
    --------
    >>> import numpy as np
    >>> from replikit.compare import Paired
    >>> rng = np.random.default_rng(1)
    >>> acc_a = 0.85 + 0.03 * rng.standard_normal((10, 10))
    >>> acc_b = acc_a - 0.01 + 0.02 * rng.standard_normal((10, 10))
    >>> res = corrected_repeated_kfold_ttest(Paired(acc_a, acc_b, a="rf", b="lr"))
    >>> res.df, res.extra["ratio"] == 1 / 9
    (99.0, True)
    """
    alternative = check_alternative(alternative)
    p = _paired_iv(scores, a, b, metric, study)
    r, k = p.shape
    if k < 2:
        raise ParameterError(
            f"corrected_repeated_kfold_ttest needs k-fold cross-validation (k >= 2 folds per "
            f"repeat); the scores of {p.a!r} and {p.b!r} have {k} fold per repeat ({r} repeats). "
            "For hold-out repeats use corrected_resampled_ttest."
        )
    d, stat, se, df, ratio, source = _corrected(p, ratio, infer_from_k=True)
    pvalue = get_pvalue(stat, stats.t(df), alternative)
    return _result(stat, se, df, p, estimate=d.mean(), pvalue=pvalue,
                   test="corrected_repeated_kfold_t",
                   method="Corrected repeated k-fold cv t-test (Bouckaert & Frank 2004)",
                   alternative=alternative, valid=True, requires="repeated k-fold", n=d.size,
                   extra={"ratio": ratio, "ratio_source": source, "repeats": r, "folds": k})


# ---------------------------------------------------------------------------------------------
# 5x2 cv


def _check_5x2(p: Paired, name: str) -> np.ndarray:
    if p.shape != (5, 2):
        raise DataError(
            f"{name} needs 5 repeats of 2-fold cross-validation (a 5 x 2 design, e.g. "
            f"scheme='5x2'); the scores of {p.a!r} and {p.b!r} form {p.shape[0]} repeat(s) x "
            f"{p.shape[1]} fold(s)."
        )
    return p.d


@_doc
def paired_ttest_5x2cv(scores, a=None, b=None, *, metric=None, study=None,
                       alternative="two-sided") -> ComparisonResult:
    """Dietterich's (1998) 5x2cv paired t-test of two models.

    ``t = d_11 / sqrt((1/5) Σ_i s_i²)``, Student t with 5 df, where ``d_ij`` is the difference
    ``a - b`` on fold ``j`` of repeat ``i`` and ``s_i² = Σ_j (d_ij - d̄_i)²`` (Gardner & Brooks
    2017, Table 1 row 1).

    Parameters
    ----------
    scores : Scores, pandas.DataFrame, RunResult or Paired
        Scores of both models on 5 repeats of 2-fold cross-validation: a Scores table or a
        DataFrame in its layout, a RunResult, or a :class:`~replikit.compare.Paired` design.
    {ab}
    {metric_study}
    {alternative}

    Returns
    -------
    ComparisonResult
        ``test='paired_t_5x2cv'``, ``n = 10``. ``estimate`` is the mean of all ten differences
        and ``se = sqrt(mean_i s_i²)`` the test's estimate of the SD of one difference, so the
        interval ``estimate ± t_5 · se`` is conservative; the statistic uses only ``d_11``
        (``extra['d11']``), so the interval and the p-value need not agree.

    See Also
    --------
    combined_ftest_5x2cv : Alpaydin's F on the same ten differences (more power).
    corrected_repeated_kfold_ttest : The recommended test for r x k cross-validation.

    References
    ----------
    {refs:dietterich1998,gardner2017}

    Examples
    --------
    >>> import numpy as np
    >>> from replikit.compare import Paired
    >>> d = np.array([[.02, .01], [.03, .00], [.01, .02], [.02, .03], [.00, .01]])
    >>> res = paired_ttest_5x2cv(Paired(0.8 + d, np.full((5, 2), 0.8)))
    >>> res.df, round(res.statistic, 3)
    (5.0, 1.754)
    """
    alternative = check_alternative(alternative)
    p = _paired_iv(scores, a, b, metric, study)
    d = _check_5x2(p, "paired_ttest_5x2cv")
    stat, se, df = K.t_5x2(d)
    pvalue = get_pvalue(stat, stats.t(df), alternative)
    return _result(stat, se, df, p, estimate=d.mean(), pvalue=pvalue, test="paired_t_5x2cv",
                   method="5x2cv paired t-test (Dietterich 1998)", alternative=alternative,
                   valid=True, requires="5x2", n=10, extra={"d11": float(d[0, 0])})


@_doc
def combined_ftest_5x2cv(scores, a=None, b=None, *, metric=None, study=None,
                         alternative="two-sided") -> ComparisonResult:
    """Alpaydın's (1999) combined 5x2cv F test of two models.

    ``f = Σ_i Σ_j d_ij² / (2 Σ_i s_i²)``, F distributed with (10, 5) df under the null that
    the two models perform equally; the p-value is the upper tail. More powerful and more
    stable than the 5x2cv t, which uses only ``d_11``.

    Parameters
    ----------
    scores : Scores, pandas.DataFrame, RunResult or Paired
        Scores of both models on 5 repeats of 2-fold cross-validation: a Scores table or a
        DataFrame in its layout, a RunResult, or a :class:`~replikit.compare.Paired` design.
    {ab}
    {metric_study}
    alternative : {'two-sided'}, default 'two-sided'
        The F test has no direction: any other value raises ParameterError.

    Returns
    -------
    ComparisonResult
        ``test='combined_f_5x2cv'``, ``df = 10``, ``df2 = 5``; no confidence interval
        (``ci_low``/``ci_high`` are NaN). ``se = sqrt(mean_i s_i²)`` as for the 5x2cv t.

    See Also
    --------
    paired_ttest_5x2cv : Dietterich's t on the same design.
    replikit.compare.primary_test : Why the F is the headline test of 5x2 CV.

    References
    ----------
    {refs:alpaydin1999,dietterich1998}

    Examples
    --------
    >>> import numpy as np
    >>> from replikit.compare import Paired
    >>> d = np.array([[.02, .01], [.03, .00], [.01, .02], [.02, .03], [.00, .01]])
    >>> res = combined_ftest_5x2cv(Paired(0.8 + d, np.full((5, 2), 0.8)))
    >>> (res.df, res.df2), round(res.statistic, 3)
    ((10.0, 5.0), 2.538)
    """
    alternative = check_alternative(alternative)
    if alternative != "two-sided":
        raise ParameterError(
            "combined_ftest_5x2cv tests whether the models differ in either direction (its "
            f"statistic is a sum of squares): `alternative` must be 'two-sided'; got "
            f"{alternative!r}. For a one-sided test use paired_ttest_5x2cv."
        )
    p = _paired_iv(scores, a, b, metric, study)
    d = _check_5x2(p, "combined_ftest_5x2cv")
    stat, df1, df2 = K.f_5x2(d)
    _, se, _ = K.t_5x2(d)
    pvalue = stats.f(df1, df2).sf(stat)
    return _result(stat, se, df1, p, estimate=d.mean(), pvalue=pvalue, test="combined_f_5x2cv",
                   method="5x2cv combined F test (Alpaydin 1999)", alternative=alternative,
                   valid=True, requires="5x2", n=10, df2=df2)


# ---------------------------------------------------------------------------------------------
# sorted runs


@_doc
def sorted_runs_ttest(scores, a=None, b=None, *, metric=None, study=None,
                      alternative="two-sided", sort="difference") -> ComparisonResult:
    """Paired t-test of two models on the sorted-runs sample (Bouckaert 2003).

    From ``r`` runs of ``k``-fold cross-validation, build ``k`` values ``x`` and apply an
    ordinary (uncorrected) t-test to them (Gardner & Brooks 2017, Table 1 row 4):

    ``t = mean(x) / (s_x / sqrt(k))``, Student t with ``k - 1`` df

    (Gardner & Brooks print ``df = r - 1``, the same number for their 10x10 design; the sample
    has ``k`` values). How ``x`` is built depends on ``sort`` — the paper's description admits
    two readings:

    * ``'difference'`` (default): sort the ``k`` fold differences ``a - b`` within each run and
      average the i-th smallest over the ``r`` runs.
    * ``'learner'``: within each run sort each learner's ``k`` fold scores, average the i-th
      smallest over the runs separately for each learner, ``P_i = (1/r) Σ_runs min_i`` (the
      paper's literal text and its Figure 1), and take ``x_i = P_i(a) - P_i(b)``.

    Both readings have the same numerator, the mean of all ``r·k`` differences (the paper notes
    that its two tests have "nearly identical numerators"); they differ in the spread of ``x``.
    Why the default is ``'difference'``: Gardner & Brooks (after Bouckaert 2003) present the
    sorted-runs scheme as one with an acceptable Type I error that needs no variance
    correction, and only the difference reading behaves so. Sorting each learner separately
    compares the two learners' average order statistics, which nearly coincide when their
    fold-to-fold spreads are alike, so ``s_x`` no longer measures the variability of the mean
    difference. In replikit's calibration simulation (:func:`replikit.compare.simulate_tests`,
    10x10 CV, 1,000 datasets x 5 repeats, alpha = 0.05, no true difference)
    ``sort='learner'`` rejected 76% of the time (the naive t on all 100 folds: 55%),
    ``sort='difference'`` 3.3% and the corrected repeated k-fold t 3.5%. ``sort='learner'`` is
    kept to reproduce the paper's reading; do not use it for inference.

    Parameters
    ----------
    scores : Scores, pandas.DataFrame, RunResult or Paired
        Scores of both models on ``r >= 2`` runs of ``k >= 2``-fold cross-validation: a Scores
        table or a DataFrame in its layout, a RunResult, or a
        :class:`~replikit.compare.Paired` design.
    {ab}
    {metric_study}
    {alternative}
    sort : {'difference', 'learner'}, default 'difference'
        What is sorted within a run (see above); ``'learner'`` is invalid (it emits a
        :class:`~replikit.errors.ValidityWarning` and returns ``valid=False``).

    Returns
    -------
    ComparisonResult
        ``test='sorted_runs_t'``, ``n = k`` (the sorted positions), ``df = k - 1``;
        ``extra['sample']`` holds the ``k`` values ``x`` and ``extra['sort']`` the reading used.

    See Also
    --------
    corrected_repeated_kfold_ttest : The recommended test on the same design.

    References
    ----------
    {refs:bouckaert2003,gardner2017}

    Examples
    --------
    >>> import numpy as np
    >>> from replikit.compare import Paired
    >>> rng = np.random.default_rng(2)
    >>> acc_a = 0.85 + 0.03 * rng.standard_normal((10, 10))
    >>> acc_b = acc_a - 0.01 + 0.02 * rng.standard_normal((10, 10))
    >>> res = sorted_runs_ttest(Paired(acc_a, acc_b))
    >>> res.n, res.df, res.extra["sort"]
    (10, 9.0, 'difference')
    """
    alternative = check_alternative(alternative)
    sort = check_choice(sort, "sort", K.SORTS)
    p = _paired_iv(scores, a, b, metric, study)
    r, k = p.shape
    if r < 2 or k < 2:
        raise DataError(
            f"sorted_runs_ttest needs r >= 2 runs of k >= 2-fold cross-validation; the scores "
            f"of {p.a!r} and {p.b!r} form {r} run(s) x {k} fold(s)."
        )
    if sort == "learner":
        warn(SORTED_LEARNER_WARNING, ValidityWarning)
    stat, se, df = K.t_sorted_runs(p.a_scores, p.b_scores, sort)
    x = K.sorted_runs_sample(p.a_scores, p.b_scores, sort)
    pvalue = get_pvalue(stat, stats.t(df), alternative)
    return _result(stat, se, df, p, estimate=x.mean(), pvalue=pvalue, test="sorted_runs_t",
                   method=f"Sorted-runs t-test (Bouckaert 2003), sort={sort!r}",
                   alternative=alternative, valid=sort == "difference",
                   requires="repeated k-fold", n=k,
                   extra={"sort": sort, "sample": x.tolist(), "runs": r})


# ---------------------------------------------------------------------------------------------
# invalid tests


@_doc
def naive_paired_ttest(scores, a=None, b=None, *, metric=None, study=None,
                       alternative="two-sided") -> ComparisonResult:
    """Naive paired t-test on per-split differences — INVALID on resampled scores.

    ``t = mean(d) / (s / sqrt(n))``, Student t with ``n - 1`` df (Gardner & Brooks 2017, eq. 2),
    the test most papers apply to cross-validation folds. The splits' training sets overlap, so
    the ``n`` differences are positively correlated and ``s²/n`` underestimates the variance of
    their mean: the test rejects a true null far more often than ``alpha``, and any difference
    becomes "significant" with enough splits (Dietterich 1998; Nadeau & Bengio 2003; Gardner &
    Brooks 2017, sec. 3.4). Kept for comparison and teaching; it emits a
    :class:`~replikit.errors.ValidityWarning` and returns ``valid=False``. It equals
    ``scipy.stats.ttest_rel`` on the two score vectors.

    Parameters
    ----------
    {scores}
    {ab}
    {metric_study}
    {alternative}

    Returns
    -------
    ComparisonResult
        ``test='naive_paired_t'``, ``valid=False``.

    See Also
    --------
    corrected_resampled_ttest : The valid test on resampled scores.
    corrected_repeated_kfold_ttest : The valid test on r x k cross-validation.

    References
    ----------
    {refs:dietterich1998,nadeau2003,gardner2017}

    Examples
    --------
    >>> import warnings
    >>> from replikit.compare import Paired
    >>> p = Paired([[0.81, 0.83, 0.80]], [[0.79, 0.80, 0.80]])
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     res = naive_paired_ttest(p)
    >>> res.valid, res.df
    (False, 2.0)
    """
    alternative = check_alternative(alternative)
    p = _paired_iv(scores, a, b, metric, study)
    warn(NAIVE_T_WARNING, ValidityWarning)
    d = p.d.ravel()
    stat, se, df = K.t_naive(d)
    pvalue = get_pvalue(stat, stats.t(df), alternative)
    return _result(stat, se, df, p, estimate=d.mean(), pvalue=pvalue, test="naive_paired_t",
                   method="Naive paired t-test (invalid on resampled scores)",
                   alternative=alternative, valid=False, requires="independent test sets",
                   n=d.size, extra={"warning": NAIVE_T_WARNING})


_PROPORTION_WORDS = ("acc", "err", "zero_one", "misclass", "0-1", "loss01")


@_doc
def proportions_ztest(scores, a=None, b=None, *, metric=None, study=None,
                      alternative="two-sided", n_test=None) -> ComparisonResult:
    """Difference-of-proportions z test with a pooled rate — INVALID for comparing learners.

    ``z = (P_A - P_B) / sqrt(2 p (1 - p) / n)``, ``p = (P_A + P_B) / 2``, standard normal
    (Gardner & Brooks 2017, eq. 1; Dietterich 1998, sec. 3.1). ``P_A``, ``P_B`` are the models'
    mean error rates (or accuracies: only the sign changes) over the splits and ``n`` the
    number of test examples of one repeat (``n_test`` for a hold-out split, the whole data set
    for a k-fold run; the mean over repeats). The two rates share their test examples, so they
    are not independent, and the training-set variation is ignored: the Type I error is
    inflated. Kept for comparison and teaching; emits a
    :class:`~replikit.errors.ValidityWarning` and returns ``valid=False``.

    Parameters
    ----------
    scores : Scores, pandas.DataFrame, RunResult or Paired
        An accuracy or error-rate metric (a proportion in [0, 1]) with ``n_test`` recorded: a
        Scores table or a DataFrame in its layout, a RunResult, or a
        :class:`~replikit.compare.Paired` design.
    {ab}
    {metric_study}
    {alternative}
    n_test : int, optional
        Number of test examples; overrides the recorded sizes.

    Returns
    -------
    ComparisonResult
        ``test='proportions_z'``, ``df=None`` (normal), ``valid=False``, ``n`` = test examples.

    Raises
    ------
    ParameterError
        The metric is not an accuracy or error rate (by name) or has values outside [0, 1].
    DataError
        ``n_test`` not recorded and not given.

    See Also
    --------
    replikit.compare.mcnemar_test : The valid test of two classifiers on one test set.
    corrected_resampled_ttest : The valid test on resampled scores.

    References
    ----------
    {refs:dietterich1998,gardner2017}

    Examples
    --------
    >>> import warnings
    >>> from replikit.compare import Paired
    >>> p = Paired([[0.20]], [[0.25]], n_train=700, n_test=300, metric="error_rate")
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     res = proportions_ztest(p)
    >>> round(res.statistic, 3), res.n
    (-1.466, 300)
    """
    alternative = check_alternative(alternative)
    p = _paired_iv(scores, a, b, metric, study, min_splits=1)
    name = str(p.metric).lower()
    if not any(w in name for w in _PROPORTION_WORDS):
        raise ParameterError(
            "proportions_ztest needs an accuracy or error-rate metric (a proportion of test "
            f"examples); got metric {p.metric!r}."
        )
    both = np.concatenate([p.a_scores.ravel(), p.b_scores.ravel()])
    if np.any((both < 0) | (both > 1)):
        raise ParameterError(
            f"proportions_ztest needs proportions in [0, 1]; metric {p.metric!r} has values in "
            f"[{both.min():g}, {both.max():g}] (rescale percentages to proportions)."
        )
    if n_test is not None:
        n = float(check_int(n_test, "n_test", min_value=1))
    elif np.isnan(p.n_test).any():
        raise DataError("proportions_ztest needs the number of test examples: the scores have no "
                        "`n_test` column (or it is missing); add it or pass `n_test=`.")
    else:
        n = float(p.n_test.sum(axis=1).mean())
    warn(PROPORTIONS_Z_WARNING, ValidityWarning)
    pa, pb = float(p.a_scores.mean()), float(p.b_scores.mean())
    stat = K.z_proportions(pa, pb, n)
    pooled = (pa + pb) / 2
    se = math.sqrt(2 * pooled * (1 - pooled) / n)
    pvalue = get_pvalue(stat, stats.norm, alternative)
    return _result(stat, se, None, p, estimate=pa - pb, pvalue=pvalue, test="proportions_z",
                   method="Difference-of-proportions z test (invalid for comparing learners)",
                   alternative=alternative, valid=False, requires="one hold-out test set",
                   n=int(round(n)), extra={"pooled": pooled, "warning": PROPORTIONS_Z_WARNING})


# ---------------------------------------------------------------------------------------------
# equivalence


def _bounds_iv(tolerance, bounds) -> tuple[float, float]:
    if (tolerance is None) == (bounds is None):
        raise ParameterError("give exactly one of `tolerance` (equivalence bounds ±tolerance in "
                             f"metric units) and `bounds` (low, high); got "
                             f"tolerance={tolerance!r}, "
                             f"bounds={bounds!r}.")
    if tolerance is not None:
        m = check_float(tolerance, "tolerance")
        if m <= 0:
            raise ParameterError(f"`tolerance` must be > 0 (in metric units); got "
                                 f"{tolerance!r}.")
        return -m, m
    if isinstance(bounds, (str, bytes)) or not hasattr(bounds, "__len__") or len(bounds) != 2:
        raise ParameterTypeError(f"`bounds` must be a pair (low, high); got {bounds!r}.")
    lo = check_float(bounds[0], "bounds[0]", finite=False)
    hi = check_float(bounds[1], "bounds[1]", finite=False)
    if not lo < hi or math.isnan(lo) or math.isnan(hi):
        raise ParameterError(f"`bounds` must satisfy low < high; got {bounds!r}.")
    return lo, hi


def _tost(estimate, se, df, lo, hi, alternative):
    dist = stats.norm if df is None else stats.t(df)
    with np.errstate(divide="ignore", invalid="ignore"):
        t_lo = np.true_divide(estimate - lo, se)
        t_hi = np.true_divide(estimate - hi, se)
    p_lo = float(dist.sf(t_lo))   # H0: mu <= lo
    p_hi = float(dist.cdf(t_hi))  # H0: mu >= hi
    if alternative == "greater":      # non-inferiority: H1 mu > lo
        stat, pvalue = t_lo, p_lo
    elif alternative == "less":       # non-superiority: H1 mu < hi
        stat, pvalue = t_hi, p_hi
    elif p_lo >= p_hi:
        stat, pvalue = t_lo, p_lo
    else:
        stat, pvalue = t_hi, p_hi
    extra = {"bounds": (lo, hi), "statistic_lower": float(t_lo), "pvalue_lower": p_lo,
             "statistic_upper": float(t_hi), "pvalue_upper": p_hi}
    return float(stat), pvalue, extra


@renamed(margin="tolerance")
@_doc
def equivalence_test_from_stats(estimate, se, *, df=None, tolerance=None, bounds=None,
                                alternative="two-sided", a="", b="",
                                metric="") -> ComparisonResult:
    """Two one-sided tests (TOST) of equivalence from an estimate and its standard error.

    ``t_low = (estimate - low) / se`` with p ``P(T >= t_low)``, ``t_high = (estimate - high) /
    se`` with p ``P(T <= t_high)``; equivalence is shown at level alpha when the larger p is
    below alpha, i.e. when the ``1 - 2 alpha`` interval lies within the bounds (Schuirmann
    1987). ``T`` is Student t with ``df`` degrees of freedom, or normal when ``df`` is None.

    Parameters
    ----------
    estimate : float
        The difference.
    se : float
        Its standard error (> 0).
    df : float, optional
        Degrees of freedom; None for a z test.
    tolerance : float, optional
        Symmetric equivalence bounds ``(-tolerance, tolerance)`` in the estimate's units (the
        equivalence margin; ``margin`` before replikit 0.2).
    bounds : (float, float), optional
        Asymmetric bounds ``(low, high)``. Give ``tolerance`` or ``bounds``.
    {tost_alternative}
    a, b, metric : str, default ''
        Names of the two models and of the metric, carried into the result.

    Returns
    -------
    ComparisonResult
        ``test='equivalence_tost'``; the statistic and p of the binding one-sided test, both in
        ``extra`` (``statistic_lower``, ``pvalue_lower``, ``statistic_upper``,
        ``pvalue_upper``).

    See Also
    --------
    equivalence_ttest : The same test from the scores, with the corrected variance.
    corrected_ttest_from_stats : The difference test from summary statistics.

    References
    ----------
    {refs:schuirmann1987}

    Examples
    --------
    >>> res = equivalence_test_from_stats(0.12, 0.09, bounds=(-0.2, 0.2))
    >>> round(res.pvalue, 4), round(res.extra["statistic_lower"], 4)
    (0.187, 3.5556)
    """
    alternative = check_alternative(alternative)
    estimate = check_float(estimate, "estimate")
    se = check_float(se, "se", min_value=0.0)
    if df is not None:
        df = check_float(df, "df", min_value=0.0, finite=False)
        if df == 0:
            raise ParameterError("`df` must be > 0; got 0.")
        if math.isinf(df):
            df = None
    lo, hi = _bounds_iv(tolerance, bounds)
    stat, pvalue, extra = _tost(estimate, se, df, lo, hi, alternative)
    labels = _Labels(a, b, metric)
    return _result(stat, se, df, labels, estimate=estimate, pvalue=pvalue, test="equivalence_tost",
                   method="TOST equivalence test (Schuirmann 1987)", alternative=alternative,
                   valid=True, requires="", n=0, extra=extra)


@renamed(margin="tolerance")
@_doc
def equivalence_ttest(scores, a=None, b=None, *, metric=None, study=None, tolerance=None,
                      bounds=None, alternative="two-sided", ratio=None) -> ComparisonResult:
    """TOST equivalence test of two models with the corrected resampled variance.

    Are the two models practically equivalent, their mean difference within ``±tolerance``
    (metric units)? Two one-sided corrected t-tests (Schuirmann 1987) with the variance of
    Nadeau & Bengio (2003) / Bouckaert & Frank (2004):

    ``se = sqrt((1/n + n_test/n_train) · s²)``, ``t_low = (mean(d) - low)/se``,
    ``t_high = (mean(d) - high)/se``, Student t with ``n - 1`` df.

    The p-value is the larger of ``P(T >= t_low)`` and ``P(T <= t_high)``; equivalence at level
    alpha holds exactly when ``confidence_interval(1 - 2*alpha)`` lies within the bounds. A
    non-significant difference test is not evidence of equivalence; this test is.

    Parameters
    ----------
    {scores}
    {ab}
    {metric_study}
    tolerance : float, optional
        Equivalence bounds ``(-tolerance, tolerance)`` in metric units (e.g. 0.01 = one
        percentage point of accuracy; ``margin`` before replikit 0.2).
    bounds : (float, float), optional
        Asymmetric bounds ``(low, high)`` instead of ``tolerance``.
    {tost_alternative}
    ratio : float, optional
        ``n_test / n_train``; by default from the recorded split sizes, or ``1/(k-1)`` for
        k-fold cross-validation without recorded sizes.

    Returns
    -------
    ComparisonResult
        ``test='equivalence_tost'``, ``requires='any resampling'``; both one-sided tests in
        ``extra``.

    See Also
    --------
    equivalence_test_from_stats : The same test from an estimate and its standard error.
    bayesian_correlated_ttest : The posterior probability of practical equivalence.

    References
    ----------
    {refs:schuirmann1987,nadeau2003,bouckaert2004}

    Examples
    --------
    >>> import numpy as np
    >>> from replikit.compare import Paired
    >>> rng = np.random.default_rng(3)
    >>> acc = 0.85 + 0.03 * rng.standard_normal((10, 10))
    >>> res = equivalence_ttest(Paired(acc + 0.002 * rng.standard_normal((10, 10)), acc),
    ...                         tolerance=0.01)
    >>> res.pvalue < 0.05
    True
    """
    alternative = check_alternative(alternative)
    lo, hi = _bounds_iv(tolerance, bounds)
    p = _paired_iv(scores, a, b, metric, study)
    d, _, se, df, ratio, source = _corrected(p, ratio, infer_from_k=True)
    stat, pvalue, extra = _tost(float(d.mean()), float(se), float(df), lo, hi, alternative)
    extra.update(ratio=ratio, ratio_source=source)
    return _result(stat, se, df, p, estimate=d.mean(), pvalue=pvalue, test="equivalence_tost",
                   method="TOST equivalence test, corrected resampled variance",
                   alternative=alternative, valid=True, requires="any resampling", n=d.size,
                   extra=extra)


# ---------------------------------------------------------------------------------------------
# Bayesian


@renamed(rope="tolerance")
@_doc
def bayesian_correlated_ttest(scores, a=None, b=None, *, metric=None, study=None,
                              tolerance=0.01, ratio=None) -> BayesianResult:
    """Bayesian correlated t-test of two models (Corani & Benavoli 2015), with a tolerance.

    The posterior of the mean difference ``mu`` of ``a - b`` is Student t with ``n - 1`` df,
    location ``mean(d)`` and scale ``sqrt((1/n + rho/(1-rho)) · s²)`` with ``rho/(1-rho) =
    n_test/n_train`` (Corani & Benavoli 2015, eq. 8; the correlation ``rho = n_test/n`` of
    Nadeau & Bengio). Reported: ``p_left = P(mu < -tolerance)``, ``p_rope = P(-tolerance <= mu
    <= tolerance)`` (the region of practical equivalence, ROPE) and ``p_right = P(mu >
    tolerance)``. With ``tolerance = 0``, ``2·min(p_left, p_right)`` is the two-sided p-value
    of the corrected t-test.

    Parameters
    ----------
    {scores}
    {ab}
    {metric_study}
    tolerance : float, default 0.01
        Half-width of the region of practical equivalence, in metric units (0.01: one
        percentage point of accuracy on a 0-1 scale), >= 0 (``rope`` before replikit 0.2).
    ratio : float, optional
        ``n_test / n_train``; by default from the recorded sizes, or ``1/(k-1)`` for k-fold.

    Returns
    -------
    BayesianResult
        The posterior, its three probabilities and its credible interval.

    See Also
    --------
    corrected_repeated_kfold_ttest : The frequentist test with the same variance.
    equivalence_ttest : The frequentist test of practical equivalence.
    replikit.compare.bayesian_signed_rank_test : The Bayesian comparison over many datasets.

    Notes
    -----
    Identical to baycomp's ``CorrelatedTTest`` (which uses ``1/(k-1)``), with ``a`` and ``b``
    passed as baycomp's ``y`` and ``x``. When all differences are equal the posterior is a point
    mass at their mean (as in baycomp): ``p_left = [mean < -tolerance]``, ``p_right = [mean >
    tolerance]``, and with ``tolerance = 0`` and a zero mean, 1/2 each.

    References
    ----------
    {refs:corani2015,nadeau2003}

    Examples
    --------
    >>> import numpy as np
    >>> from replikit.compare import Paired
    >>> rng = np.random.default_rng(4)
    >>> acc_a = 0.85 + 0.03 * rng.standard_normal((10, 10))
    >>> res = bayesian_correlated_ttest(Paired(acc_a + 0.03, acc_a), tolerance=0.01)
    >>> res.p_right > 0.99
    True
    """
    if isinstance(tolerance, bool) or not isinstance(tolerance, numbers.Real):
        raise ParameterTypeError(f"`tolerance` must be a number (metric units); got "
                                 f"{tolerance!r}.")
    rope = check_float(tolerance, "tolerance", min_value=0.0)
    p = _paired_iv(scores, a, b, metric, study)
    d, _, scale, df, ratio, source = _corrected(p, ratio, infer_from_k=True)
    mean, scale, df = float(d.mean()), float(scale), float(df)
    if scale == 0:
        if rope == 0:
            p_right = float(mean > 0) + 0.5 * float(mean == 0)
            p_left, p_rope = 1.0 - p_right, 0.0
        else:
            p_left, p_right = float(mean < -rope), float(mean > rope)
            p_rope = 1.0 - p_left - p_right
        extra = {"note": "all differences are equal: the posterior is a point mass"}
    else:
        post = stats.t(df, loc=mean, scale=scale)
        p_right = float(post.sf(rope))
        if rope == 0:
            p_left, p_rope = 1.0 - p_right, 0.0
        else:
            p_left = float(post.cdf(-rope))
            p_rope = max(0.0, 1.0 - p_left - p_right)
        extra = {}
    extra.update(ratio=ratio, ratio_source=source)
    return BayesianResult(p_left=p_left, p_rope=p_rope, p_right=p_right, tolerance=rope,
                          estimate=mean, scale=scale, df=df, a=p.a, b=p.b,
                          metric=str(p.metric), n=d.size, extra=extra)
