"""Every requested test for every pair of models, as one tidy table (Gardner & Brooks 2017).

:func:`compare_scores` takes resampled scores (a Scores table, a DataFrame in its layout or a
:class:`~replikit.experiment.RunResult`), pairs the models on their common splits and runs the
tests that fit the resampling design: by default the *recommended* ones of Gardner & Brooks
(2017, Table 1) plus the Bayesian correlated t-test. P-values are adjusted for multiple
comparisons (Holm by default) within each test, across pairs, metrics and studies.
:func:`compare_models` fits scikit-learn estimators with the runner first (one run, all metrics
from the same fits).
"""

from __future__ import annotations

import dataclasses
import itertools
import warnings
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import stats

from .._compat import renamed, renamed_fields
from .._format import number
from .._format import pvalue as _pvalue_text
from .._validation import check_alternative, check_choice, check_confidence_level, check_float
from ..errors import DataError, ParameterError, ParameterTypeError, ReplikitWarning
from ..results import Result, to_jsonable
from ._words import OLD_INTERVAL, OLD_INTERVAL_VALUES, fill_doc, interval_alias, test_name

__all__ = ["compare_scores", "compare_models", "ComparisonTable", "TESTS", "TEST_IDS",
           "recommended_tests", "primary_test", "DEFAULT_TOLERANCE", "not_computed"]

#: Tests :func:`compare_scores` can run, in display order: name -> the design it needs.
TESTS: dict[str, str] = {
    "corrected_repeated_kfold_ttest": "repeated k-fold CV (k >= 2; Bouckaert & Frank 2004)",
    "corrected_resampled_ttest": "repeated hold-out / bootstrap, one test set per repeat "
                                 "(Nadeau & Bengio 2003)",
    "paired_ttest_5x2cv": "5x2 CV (Dietterich 1998)",
    "combined_ftest_5x2cv": "5x2 CV (Alpaydin 1999)",
    "sorted_runs_ttest": "repeated k-fold CV with r >= 2 repeats (Bouckaert 2003)",
    "equivalence_ttest": "repeated k-fold or hold-out; needs `tolerance` (TOST, corrected "
                         "variance)",
    "bayesian_correlated_ttest": "any resampling (Corani & Benavoli 2015)",
    "naive_paired_ttest": "INVALID on resampled scores (Dietterich 1998); for reference",
    "proportions_ztest": "INVALID (Dietterich 1998; Gardner & Brooks 2017, eq. 1); accuracy or "
                         "error_rate",
}

#: Short identifier each test writes in the ``test`` column (``ComparisonResult.test``).
TEST_IDS: dict[str, str] = {
    "corrected_repeated_kfold_ttest": "corrected_repeated_kfold_t",
    "corrected_resampled_ttest": "corrected_resampled_t",
    "paired_ttest_5x2cv": "paired_t_5x2cv",
    "combined_ftest_5x2cv": "combined_f_5x2cv",
    "sorted_runs_ttest": "sorted_runs_t",
    "equivalence_ttest": "equivalence_tost",
    "bayesian_correlated_ttest": "bayesian_correlated_t",
    "naive_paired_ttest": "naive_paired_t",
    "proportions_ztest": "proportions_z",
}
_BAYES = "bayesian_correlated_t"
_INVALID_WHY = {
    "naive_paired_t": "treats the correlated differences of overlapping splits as independent",
    "proportions_z": "treats two error rates on the same test rows as independent and ignores "
                     "the training-set variation",
    "sorted_runs_t": "sorted by learner rejects about 77% of true nulls in simulation",
}
#: Half-width of the Bayesian rows' region of practical equivalence when no `tolerance` is
#: given: one percentage point of a score on a 0-1 scale.
DEFAULT_TOLERANCE = 0.01
_PROPORTION_WORDS = ("acc", "err", "zero_one", "misclass", "0-1", "loss01")

_RECOMMENDED_NOTE = ("corrected repeated k-fold t for r x k CV, corrected resampled t for "
                     "repeated hold-out, 5x2cv t and combined F for 5x2 CV; plus the Bayesian "
                     "correlated t")

_CORRECTIONS = ("holm", "bonferroni", "hochberg", "none")
#: Tests whose variance is corrected by the test-to-training size ratio (they take ``ratio=``).
_USES_RATIO = frozenset({"corrected_repeated_kfold_ttest", "corrected_resampled_ttest",
                         "equivalence_ttest", "bayesian_correlated_ttest"})

_COLUMNS = ["study", "a", "b", "metric", "test", "method", "estimate", "se", "ci_low",
            "ci_high", "ci_level", "statistic", "df", "df2", "pvalue", "pvalue_adjusted", "reject",
            "p_left", "p_rope", "p_right", "conclusion", "valid", "requires", "n", "n_repeats",
            "n_folds", "alternative"]


def _higher_is_better(metric: str) -> bool:
    """Whether a higher score of ``metric`` is better (errors and losses are the exception)."""
    from ..experiment.metrics import higher_is_better

    return higher_is_better(str(metric))


def _design_ok(name: str, r: int, k: int, metric: str, tolerance) -> bool:
    """Whether test ``name`` applies to an ``r`` repeats x ``k`` folds design of ``metric``."""
    n = r * k
    if name == "corrected_repeated_kfold_ttest":
        return k >= 2 and n >= 2
    if name == "corrected_resampled_ttest":
        return k == 1 and r >= 2
    if name in ("paired_ttest_5x2cv", "combined_ftest_5x2cv"):
        return (r, k) == (5, 2)
    if name == "sorted_runs_ttest":
        return r >= 2 and k >= 2
    if name == "equivalence_ttest":
        return tolerance is not None and n >= 2
    if name == "proportions_ztest":
        return any(w in str(metric).lower() for w in _PROPORTION_WORDS)
    return n >= 2  # bayesian, naive


@fill_doc()
def recommended_tests(n_repeats: int, n_folds: int) -> list[str]:
    """The recommended tests for an ``n_repeats`` x ``n_folds`` resampling design.

    Gardner & Brooks (2017, sec. 4 and Table 1): the corrected repeated k-fold CV t-test for
    r x k cross-validation, the corrected resampled t-test for repeated hold-out (one test set
    per repeat), the 5x2cv paired t-test and combined F-test for 5x2 CV; plus the Bayesian
    correlated t-test (Corani & Benavoli 2015), which adds the probability of a practically
    null difference.

    Parameters
    ----------
    n_repeats : int
        Repeats of the resampling (hold-out splits when ``n_folds`` is 1).
    n_folds : int
        Folds per repeat (1 for hold-out or bootstrap splits).

    Returns
    -------
    list of str
        Names of the tests (keys of :data:`TESTS`), in display order.

    See Also
    --------
    primary_test : The one test whose decisions a headline reports.
    compare_scores : Runs these tests for every pair of models.

    References
    ----------
    {refs:gardner2017,corani2015}

    Examples
    --------
    >>> recommended_tests(10, 10)
    ['corrected_repeated_kfold_ttest', 'bayesian_correlated_ttest']
    >>> recommended_tests(5, 2)
    ['paired_ttest_5x2cv', 'combined_ftest_5x2cv', 'bayesian_correlated_ttest']
    """
    if (n_repeats, n_folds) == (5, 2):
        out = ["paired_ttest_5x2cv", "combined_ftest_5x2cv"]
    elif n_folds >= 2:
        out = ["corrected_repeated_kfold_ttest"]
    else:
        out = ["corrected_resampled_ttest"]
    return out + ["bayesian_correlated_ttest"]


@fill_doc()
def primary_test(n_repeats: int, n_folds: int) -> str:
    """The one recommended test whose decisions a headline reports, for a resampling design.

    The corrected repeated k-fold CV t-test for r x k CV and the corrected resampled t-test
    for repeated hold-out (Gardner & Brooks 2017, Table 1 rows 3 and 2), and for 5x2 CV
    Alpaydın's (1999) combined F test rather than Dietterich's 5x2cv t (row 1): the t's
    statistic reads only the first fold's difference ``d_11``, which Gardner & Brooks (sec. 4)
    blame for its low power and replicability, while the F uses all ten differences and holds
    its level with more power (Alpaydın 1999; in :func:`~replikit.compare.simulate_tests`,
    power 0.22 against 0.16 at a difference of 0.05). The F has no direction: the better model
    is the one the mean difference favours, and it has no interval for the mean difference.

    Parameters
    ----------
    n_repeats : int
        Repeats of the resampling (hold-out splits when ``n_folds`` is 1).
    n_folds : int
        Folds per repeat (1 for hold-out or bootstrap splits).

    Returns
    -------
    str
        The name of the test (a key of :data:`TESTS`), for two-sided questions.

    See Also
    --------
    recommended_tests : Every recommended test of the design.
    replikit.compare.audit : Reports each pair by this test.

    References
    ----------
    {refs:gardner2017,alpaydin1999}

    Examples
    --------
    >>> primary_test(10, 10), primary_test(5, 2), primary_test(100, 1)
    ('corrected_repeated_kfold_ttest', 'combined_ftest_5x2cv', 'corrected_resampled_ttest')
    """
    if (n_repeats, n_folds) == (5, 2):
        return "combined_ftest_5x2cv"
    return recommended_tests(n_repeats, n_folds)[0]


@fill_doc()
@interval_alias
@renamed_fields(rope="tolerance")
@dataclass(frozen=True, slots=True, eq=False)
class ComparisonTable(Result):
    """All tests of all compared pairs: a tidy frame with a readable ``str`` and a forest plot.

    :func:`compare_scores` and :func:`compare_models` return it; its fields are its
    parameters.

    Parameters
    ----------
    frame : pandas.DataFrame
        One row per (study, pair, metric, test): ``study, a, b, metric, test, method, estimate``
        (mean of a - b), ``se, ci_low, ci_high, ci_level`` (the level of that row's interval:
        ``confidence_level``, or the Bonferroni level with ``simultaneous=True``; NaN for
        the F test, which has no interval), ``statistic, df, df2, pvalue, pvalue_adjusted,
        reject, p_left, p_rope, p_right`` (Bayesian rows), ``conclusion, valid, requires, n,
        n_repeats, n_folds, alternative``. Valid tests come first. ``test`` holds the test's
        id (:data:`~replikit.compare.TEST_IDS`); ``str()`` and the figure name it in words.
    correction : str
        Multiple-comparison adjustment applied within each test: 'holm', 'bonferroni',
        'hochberg' or 'none'.
    alpha : float
        Significance level of ``reject``.
    confidence_level : float
        Level of ``ci_low``/``ci_high`` (credible interval for Bayesian rows); with
        ``simultaneous=True`` the joint level of each test's intervals.
    tolerance : float or dict
        Half-width of the region of practical equivalence of the Bayesian rows (per metric when
        a dict), and the equivalence margin of the TOST rows when they ran (``rope`` before
        replikit 0.2).
    scores : Scores or None
        The scores compared (set by :func:`compare_models`).
    notes : tuple of str
        Warnings raised while testing (each once), e.g. why a test is invalid.
    simultaneous : bool
        Whether the frequentist intervals are Bonferroni-simultaneous over each test's
        comparisons (``interval='simultaneous'`` before replikit 0.2).

    See Also
    --------
    compare_scores : Builds the table from resampled scores.
    compare_models : Fits the models, then builds the table.
    replikit.compare.plot_comparisons : The forest plot of :meth:`plot`.

    References
    ----------
    {refs:gardner2017,holm1979}

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> rows = [{"study": "s", "model": m, "repeat": r, "fold": f, "metric": "accuracy",
    ...          "value": 0.8 + (0.03 if m == "rf" else 0) + 0.01 * rng.normal(),
    ...          "n_train": 900, "n_test": 100}
    ...         for m in ("lr", "rf") for r in range(10) for f in range(10)]
    >>> table = compare_scores(pd.DataFrame(rows))
    >>> len(table), table.significant["conclusion"].tolist()
    (2, ['rf better'])
    """

    frame: pd.DataFrame
    correction: str = "holm"
    alpha: float = 0.05
    confidence_level: float = 0.95
    tolerance: float | dict = DEFAULT_TOLERANCE
    scores: object | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    simultaneous: bool = False

    @property
    def title(self) -> str:
        """``'Model comparisons'``."""
        return "Model comparisons"

    def to_frame(self) -> pd.DataFrame:
        """A copy of :attr:`frame`.

        Returns
        -------
        pandas.DataFrame
            One row per (study, pair, metric, test).
        """
        return self.frame.copy()

    def to_dict(self) -> dict:
        """The settings and the rows in JSON types (the scores are left out).

        Returns
        -------
        dict
            ``correction, alpha, confidence_level, tolerance, simultaneous, notes`` and
            ``comparisons`` (the records of :attr:`frame`).
        """
        return to_jsonable({
            "correction": self.correction, "alpha": self.alpha,
            "confidence_level": self.confidence_level, "tolerance": self.tolerance,
            "simultaneous": self.simultaneous, "notes": list(self.notes),
            "comparisons": self.frame})

    def __len__(self) -> int:
        return len(self.frame)

    @property
    def significant(self) -> pd.DataFrame:
        """Rows of valid frequentist tests that reject at ``alpha`` after adjustment."""
        f = self.frame
        return f[f["valid"] & f["reject"].fillna(False).astype(bool)].reset_index(drop=True)

    def plot(self, ax=None, *, metric=None, **kwargs):
        """Forest plot of the mean differences of one metric with their intervals.

        Invalid tests are greyed (:func:`replikit.compare.plot_comparisons`).

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw; a new figure's axes when None.
        metric : str, optional
            The metric drawn; may be omitted when the table holds one metric (metrics have
            different scales, so each gets its own plot).
        **kwargs
            Passed to :func:`~replikit.compare.plot_comparisons`.

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.
        """
        from .plots import plot_comparisons

        metrics = list(pd.unique(self.frame["metric"]))
        if metric is None:
            if len(metrics) != 1:
                raise ParameterError(f"`metric`: the table holds several metrics {metrics}; "
                                     "plot one at a time.")
            metric = metrics[0]
        if metric not in metrics:
            raise ParameterError(f"`metric`: {metric!r} is not in the table; metrics: "
                                 f"{metrics}.")
        kwargs.setdefault("xlabel", f"mean difference a − b ({_metric_label(metric)})")
        return plot_comparisons(self.frame[self.frame["metric"] == metric], ax=ax, **kwargs)

    def __str__(self) -> str:
        f = self.frame
        if f.empty:
            return "Model comparisons: no test applied."
        n_fam = (f.dropna(subset=["pvalue"]).groupby("test").size())
        fam = (f"{self.correction.capitalize()}-adjusted within each test over "
               f"{number(int(n_fam.max()))} comparison(s)" if self.correction != "none"
               and len(n_fam) else "not adjusted for multiple comparisons")
        level = number(self.confidence_level * 100, 4)
        ci_head = f"{level}% simult. CI" if self.simultaneous else f"{level}% CI"
        lines = [f"Model comparisons (estimate = mean of a - b over paired splits; p-values "
                 f"{fam}; alpha = {number(self.alpha)})"]
        show = pd.DataFrame({
            " ": np.where(f["valid"], "", "!"),
            "study": f["study"].astype(str),
            "a - b": f["a"].astype(str) + " - " + f["b"].astype(str),
            "metric": f["metric"].astype(str),
            "test": [test_name(t) for t in f["test"]],
            "estimate": f["estimate"].map(_fmt),
            ci_head: [f"[{_fmt(lo)}, {_fmt(hi)}]" if np.isfinite(lo) else "–"
                      for lo, hi in zip(f["ci_low"], f["ci_high"], strict=True)],
            "stat": f["statistic"].map(_fmt),
            "df": [_fmt_df(d1, d2) for d1, d2 in zip(f["df"], f["df2"], strict=True)],
            "p": f["pvalue"].map(_fmt_p),
            "p adj": f["pvalue_adjusted"].map(_fmt_p),
            "conclusion": [
                c if t != _BAYES else f"{c}; P(<,=,>) = {pl:.2f}/{pr:.2f}/{pg:.2f}"
                for c, t, pl, pr, pg in zip(f["conclusion"], f["test"], f["p_left"],
                                            f["p_rope"], f["p_right"], strict=True)],
        })
        if show["study"].nunique() == 1:
            show = show.drop(columns="study")
        lines.append(_render(show, right={"estimate", "stat", "df", "p", "p adj"}))
        dashes = not_computed(f)
        if dashes:
            lines.append("– not computed: " + "; ".join(dashes) + ".")
        if not f["valid"].all():
            bad = list(dict.fromkeys(f.loc[~f["valid"], "test"]))
            why = "; ".join(f"the {test_name(t)} "
                            f"{_INVALID_WHY.get(t, 'is not valid for this design')}"
                            for t in bad)
            lines.append(f"! invalid, shown for reference only (their type I error is "
                         f"inflated; Dietterich 1998, Gardner & Brooks 2017 sec. 3.4): {why}.")
        if self.simultaneous:
            levels = f.loc[f["test"] != _BAYES, "ci_level"].dropna().unique()
            each = ", ".join(f"{number(v * 100, 4)}%" for v in sorted(levels))
            lines.append(f"simult. CI: Bonferroni-simultaneous intervals, covering all the "
                         f"differences of a test together with probability >= {level}% (each "
                         f"interval at {each or level + '%'}); Bayesian rows: {level}% "
                         "credible intervals.")
        if (f["test"] == _BAYES).any():
            tol = (", ".join(f"{m} ±{number(v)}" for m, v in self.tolerance.items())
                   if isinstance(self.tolerance, dict) else f"±{number(self.tolerance)}")
            lines.append(f"Bayesian rows: no p-value; P(<,=,>) are the posterior probabilities "
                         f"that a - b lies below, inside and above the region of practical "
                         f"equivalence ({tol}); a conclusion needs one of them >= 0.95.")
        return "\n".join(lines)


@fill_doc()
def not_computed(frame: pd.DataFrame) -> list[str]:
    """Why cells of a comparisons table are empty (shown as "–"), one reason per kind.

    Some tests have no such number by construction (the Bayesian correlated t-test has no
    statistic or p-value, the combined 5x2cv F test no interval for the difference, the z test no
    degrees of freedom); others could not compute it on these scores (a difference that is 0,
    or the same, on every split has no variance, so a t statistic is 0/0 or infinite).

    Parameters
    ----------
    frame : pandas.DataFrame
        The rows of :attr:`ComparisonTable.frame` (or of the audit's comparisons).

    Returns
    -------
    list of str
        The reasons, in the order the rows first need them; empty when no cell is empty.

    See Also
    --------
    ComparisonTable : Its text prints these reasons under the table ("– not computed: ...").

    References
    ----------
    {refs:nadeau2003,alpaydin1999,corani2015}

    Examples
    --------
    >>> f = pd.DataFrame({"a": ["lr"], "b": ["rf"], "test": ["combined_f_5x2cv"],
    ...                   "estimate": [0.1], "se": [0.02], "ci_low": [np.nan],
    ...                   "statistic": [5.0], "df": [10.0], "pvalue": [0.04]})
    >>> not_computed(f)
    ['5x2cv combined F test: no interval (its statistic pools the squared differences and has no
    interval for the mean difference)']
    """
    reasons: dict[str, list[str]] = {}

    def add(reason: str, pair: str | None = None) -> None:
        where = reasons.setdefault(reason, [])
        if pair is not None and pair not in where:
            where.append(pair)

    def finite(v) -> bool:
        try:
            return bool(np.isfinite(float(v)))
        except (TypeError, ValueError):
            return False

    for row in frame.itertuples(index=False):
        test = str(row.test)
        pair = f"{row.a} - {row.b}"
        if not finite(row.estimate):
            add("the differences of the scores are not finite (values too large): nothing is "
                "computed for", pair)
            continue
        if test == _BAYES:
            add(f"{test_name(test)}: no statistic or p-value (a posterior, not a test: its "
                "P(<,=,>) are in the conclusion)")
            continue
        if not finite(row.ci_low):
            if test == TEST_IDS["combined_ftest_5x2cv"]:
                add(f"{test_name(test)}: no interval (its statistic pools the squared "
                    "differences and has no interval for the mean difference)")
            else:
                add("no interval could be computed for", pair)
        if not finite(row.df):
            if test == TEST_IDS["proportions_ztest"]:
                add(f"{test_name(test)}: no degrees of freedom (a z test)")
            else:
                add("no degrees of freedom for", pair)
        if not (finite(row.statistic) and finite(row.pvalue)):
            se = float(row.se) if finite(row.se) else np.nan
            if se == 0 and float(row.estimate) == 0:
                add("a - b is 0 on every split (no variance: the statistic is 0/0, so no "
                    "p-value and no conclusion) for", pair)
            elif se == 0:
                add("a - b is the same on every split (no variance: the statistic is "
                    "infinite) for", pair)
            else:
                add("the test statistic or its p-value could not be computed on these scores "
                    "for", pair)
    return [reason + (" " + ", ".join(pairs) if pairs else "")
            for reason, pairs in reasons.items()]


def _metric_label(metric) -> str:
    """How figures and sentences name a metric (``'ROC AUC'`` for ``'roc_auc'``)."""
    from ..experiment.metrics import metric_label

    return metric_label(str(metric))


def _render(show: pd.DataFrame, right: set) -> str:
    """Plain-text table: text columns left-aligned, numbers right-aligned."""
    cols = list(show.columns)
    cells = [[str(v) for v in show[c]] for c in cols]
    widths = [max(len(str(c)), *(len(v) for v in col)) for c, col in zip(cols, cells,
                                                                          strict=True)]

    def line(values):
        parts = [v.rjust(w) if c in right else v.ljust(w)
                 for c, v, w in zip(cols, values, widths, strict=True)]
        return "  ".join(parts).rstrip()

    out = [line([str(c) for c in cols])]
    out += [line([col[i] for col in cells]) for i in range(len(show))]
    return "\n".join(out)


def _fmt(v) -> str:
    if v is None or not np.isfinite(v):
        return "–"
    return number(v, 4)


def _fmt_df(d1, d2) -> str:
    if d1 is None or not np.isfinite(d1):
        return "–"
    if d2 is not None and np.isfinite(d2):
        return f"{number(d1, 4)}, {number(d2, 4)}"
    return number(d1, 4)


def _fmt_p(p) -> str:
    return _pvalue_text(p, table=True)


def _scores_frame(scores) -> pd.DataFrame:
    from ..data.tables import Scores

    if hasattr(scores, "scores") and not isinstance(scores, pd.DataFrame):
        scores = scores.scores  # RunResult
    if isinstance(scores, Scores):
        return scores.frame
    if isinstance(scores, pd.DataFrame):
        return Scores(scores).frame
    raise ParameterTypeError("`scores` must be a Scores table, a DataFrame in the Scores layout "
                             f"or a RunResult; got {type(scores).__name__}.")


def _as_list(value, name: str) -> list | None:
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    if isinstance(value, Sequence) or isinstance(value, (np.ndarray, pd.Index)):
        out = list(value)
        if not out:
            raise ParameterError(f"`{name}`: give at least one; got an empty list.")
        return out
    raise ParameterTypeError(f"`{name}` must be a string or a list of strings; got "
                             f"{type(value).__name__}.")


class _Tolerance:
    """The practical tolerance of a comparison, per metric: the half-width of the Bayesian
    rows' region of practical equivalence (``DEFAULT_TOLERANCE`` when none was given) and the
    margin of the TOST rows (only when one was given and it is above 0)."""

    def __init__(self, given, metrics):
        self.given = given
        if isinstance(given, dict):
            lacking = [m for m in metrics if m not in given]
            if lacking:
                raise ParameterError(f"`tolerance`: a dict of half-widths needs every compared "
                                     f"metric; missing {lacking}.")
            self.value = {m: float(v) for m, v in given.items()}
        else:
            self.value = DEFAULT_TOLERANCE if given is None else float(given)

    def rope(self, metric) -> float:
        return self.value[metric] if isinstance(self.value, dict) else self.value

    def margin(self, metric) -> float | None:
        """The TOST margin of ``metric``: None without a tolerance or with a zero one."""
        if self.given is None:
            return None
        v = self.rope(metric)
        return v if v > 0 else None

    def any_margin(self, metrics) -> bool:
        return any(self.margin(m) is not None for m in metrics)


def _tolerance_iv(tolerance) -> None:
    if tolerance is None:
        return
    for name, value in (tolerance if isinstance(tolerance, dict) else {"": tolerance}).items():
        value = check_float(value, f"tolerance[{name!r}]" if name else "tolerance")
        if value < 0:
            raise ParameterError(f"`tolerance` must be >= 0 (half-width, metric units); got "
                                 f"{value!r}" + (f" for {name!r}." if name else "."))


def _compare_iv(frame, a, b, metrics, tests, alternative, correction, study, alpha,
                confidence_level, tolerance, simultaneous):
    alternative = check_alternative(alternative)
    if not isinstance(simultaneous, bool | np.bool_):
        raise ParameterTypeError(f"`simultaneous` must be True or False; got "
                                 f"{simultaneous!r}.")
    correction = "none" if correction is None else str(correction).lower()
    check_choice(correction, "correction", _CORRECTIONS)
    alpha = check_float(alpha, "alpha")
    if not 0.0 < alpha < 1.0:
        raise ParameterError(f"`alpha` must be strictly between 0 and 1; got {alpha!r}.")
    confidence_level = check_confidence_level(confidence_level)
    _tolerance_iv(tolerance)
    models = list(pd.unique(frame["model"]))
    for name, given in (("a", a), ("b", b)):
        if given is not None and given not in models:
            raise DataError(f"`{name}`: model {given!r} is not in the scores; models present: "
                            f"{', '.join(map(str, models))}.")
    if a is not None and b is not None and a == b:
        raise ParameterError(f"`a` and `b` must be different models; both are {a!r}.")
    if len(models) < 2:
        raise DataError(f"the scores hold one model only ({models[0]!r}); a comparison needs "
                        "two.")
    if a is not None and b is not None:
        pairs = [(a, b)]
    elif a is not None or b is not None:
        one = a if a is not None else b
        pairs = [(one, m) if a is not None else (m, one) for m in models if m != one]
    else:
        pairs = list(itertools.combinations(models, 2))
    present = list(pd.unique(frame["metric"]))
    metrics = _as_list(metrics, "metrics") or present
    missing = [m for m in metrics if m not in present]
    if missing:
        raise DataError(f"`metrics`: {missing} not in the scores; metrics present: "
                        f"{', '.join(map(str, present))}.")
    tol = _Tolerance(tolerance, metrics)
    studies = list(pd.unique(frame["study"]))
    if study is not None:
        if study not in studies and str(study) in map(str, studies):
            study = next(s for s in studies if str(s) == str(study))
        if study not in studies:
            raise DataError(f"`study`: {study!r} is not in the scores; studies present: "
                            f"{', '.join(map(str, studies))}.")
        studies = [study]
    if isinstance(tests, str) and tests in ("recommended", "all"):
        mode, wanted = tests, None
    else:
        by_id = {v: k for k, v in TEST_IDS.items()}
        wanted = [by_id.get(t, t) for t in _as_list(tests, "tests")]
        unknown = [t for t in wanted if t not in TESTS]
        if unknown:
            raise ParameterError(f"`tests`: unknown test(s) {unknown}; use 'recommended', 'all' "
                                 f"or names from {', '.join(TESTS)} (or their short ids "
                                 f"{', '.join(TEST_IDS.values())}).")
        if "equivalence_ttest" in wanted and not tol.any_margin(metrics):
            raise ParameterError("`tolerance`: the equivalence test needs a tolerance above 0 "
                                 "(the largest difference, in metric units, that counts as "
                                 "equivalent).")
        mode = "list"
    return (pairs, metrics, studies, mode, wanted, alternative, correction, alpha,
            confidence_level, tol, bool(simultaneous))


def _proportions_ok(paired) -> bool:
    """The z test of proportions needs rates in [0, 1] and the test-set sizes."""
    both = np.concatenate([paired.a_scores.ravel(), paired.b_scores.ravel()])
    return bool(np.all((both >= 0) & (both <= 1)) and not np.isnan(paired.n_test).any())


def _choose_tests(mode, wanted, paired, margin, where, alternative) -> list[str]:
    r, k = paired.a_scores.shape
    metric = paired.metric
    if mode in ("recommended", "all"):
        if mode == "recommended":
            out = recommended_tests(r, k)
            if margin is not None and _design_ok("equivalence_ttest", r, k, metric, margin):
                out.insert(-1, "equivalence_ttest")
        else:
            out = [t for t in TESTS if _design_ok(t, r, k, metric, margin)
                   and (t != "proportions_ztest" or _proportions_ok(paired))]
        # the combined F has no direction: it answers two-sided questions only
        return [t for t in out if alternative == "two-sided" or t != "combined_ftest_5x2cv"]
    for t in wanted:
        if not _design_ok(t, r, k, metric, margin):
            raise ParameterError(f"`tests`: {t!r} needs {TESTS[t]}; the scores of {where} have "
                                 f"{r} repeat(s) x {k} fold(s) of metric {metric!r}.")
    return [t for t in TESTS if t in wanted]


def _row(res, name: str, study, paired, confidence_level: float) -> dict:
    r, k = paired.a_scores.shape
    higher_is_better = _higher_is_better(paired.metric)
    row = {"study": study, "a": paired.a, "b": paired.b, "metric": paired.metric,
           "test": getattr(res, "test", "") or TEST_IDS[name], "n_repeats": r, "n_folds": k}
    if name == "bayesian_correlated_ttest":
        est, scale, df = float(res.estimate), float(res.scale), float(res.df)
        lo, hi = (stats.t.interval(confidence_level, df, loc=est, scale=scale) if scale > 0
                  else (est, est))
        probs = (float(res.p_left), float(res.p_rope), float(res.p_right))
        best = int(np.argmax(probs))
        if not np.all(np.isfinite(probs)):  # NaN >= 0.95 is False: never read a NaN as a win
            conclusion = "none: posterior undefined (non-finite differences)"
        elif probs[best] < 0.95:
            conclusion = "undecided"
        elif best == 1:
            conclusion = "practically equivalent"
        else:
            higher = paired.a if best == 2 else paired.b  # the model scoring higher
            lower = paired.b if best == 2 else paired.a
            conclusion = f"{higher if higher_is_better else lower} better"
        row.update({
            "method": getattr(res, "method", "") or "Bayesian correlated t-test",
            "estimate": est, "se": scale, "ci_low": float(lo), "ci_high": float(hi),
            "ci_level": confidence_level, "statistic": np.nan, "df": df, "df2": np.nan,
            "pvalue": np.nan,
            "p_left": probs[0], "p_rope": probs[1], "p_right": probs[2],
            "conclusion": conclusion, "valid": True,
            "requires": getattr(res, "requires", "") or "any resampling",
            "n": int(getattr(res, "n", 0) or r * k), "alternative": "two-sided",
        })
        return row
    lo, hi, level = _interval(res, confidence_level)
    df2 = getattr(res, "df2", None)
    row.update({
        "method": res.method, "estimate": float(res.estimate), "se": float(res.se),
        "ci_low": lo, "ci_high": hi, "ci_level": level, "statistic": float(res.statistic),
        "df": np.nan if res.df is None else float(res.df),
        "df2": np.nan if df2 is None else float(df2), "pvalue": float(res.pvalue),
        "p_left": np.nan, "p_rope": np.nan, "p_right": np.nan, "conclusion": "",
        "valid": bool(getattr(res, "valid", True)), "requires": getattr(res, "requires", ""),
        "n": int(getattr(res, "n", 0) or r * k), "alternative": res.alternative,
    })
    return row


def _interval(res, confidence_level: float) -> tuple[float, float, float]:
    """``(low, high, level)`` of a frequentist result's interval; NaNs where it has none (the
    F test) or cannot be computed."""
    try:
        ci = res.confidence_interval(confidence_level)
        lo, hi = float(ci.low), float(ci.high)
    except (TypeError, ValueError, ZeroDivisionError):
        lo = hi = np.nan
    return lo, hi, (confidence_level if np.isfinite(lo) and np.isfinite(hi) else np.nan)


def _simultaneous(out: pd.DataFrame, results: list, confidence_level: float) -> None:
    """Replace the frequentist intervals of ``out`` by Bonferroni-simultaneous ones, in place.

    Within each test the family is the same as the p-value adjustment's (the rows with a finite
    p-value, m of them); each of its intervals is computed at ``1 - (1 - confidence_level) / m``,
    so that all m cover their differences together with probability at least
    ``confidence_level`` (Bonferroni's inequality). Bayesian rows keep their credible interval.
    """
    for test, idx in out.groupby("test", sort=False).groups.items():
        if test == _BAYES:
            continue
        pos = out.index.get_indexer(idx)
        m = int(np.isfinite(out["pvalue"].to_numpy(float)[pos]).sum())
        if m <= 1:
            continue
        level = 1.0 - (1.0 - confidence_level) / m
        for i in pos:
            lo, hi, lev = _interval(results[i], level)
            out.iloc[i, out.columns.get_indexer(["ci_low", "ci_high", "ci_level"])] = (lo, hi,
                                                                                       lev)


def _finite_moments(d) -> bool:
    """The differences, their mean and their variance are finite (scores near 1e308 are
    finite, yet their differences or sums overflow)."""
    d = np.asarray(d, float)
    with np.errstate(all="ignore"):
        return bool(np.all(np.isfinite(d)) and np.isfinite(d.mean()) and np.isfinite(d.var()))


def _conclude(frame: pd.DataFrame, alpha: float) -> pd.DataFrame:
    freq = (frame["test"] != _BAYES).to_numpy()
    p = frame["pvalue_adjusted"].to_numpy(float)
    known = np.isfinite(p) & freq
    reject = pd.array(np.where(known, p <= alpha, False), dtype="boolean")
    reject[~known] = pd.NA
    frame["reject"] = reject
    out = frame["conclusion"].to_numpy(object).copy()
    rej = known & (p <= alpha)
    out[freq & ~known] = "–"
    out[known & ~rej] = "no difference shown"
    tost = (frame["test"] == TEST_IDS["equivalence_ttest"]).to_numpy()
    # a TOST that does not reject has not shown equivalence (nor a difference)
    out[known & ~rej & tost] = "equivalence not shown"
    equiv = rej & tost
    out[equiv] = "equivalent within the tolerance"
    won = np.flatnonzero(rej & ~equiv)
    if won.size:
        metric = frame["metric"].to_numpy(object)[won]
        hib = {m: _higher_is_better(m) for m in pd.unique(metric)}
        a_higher = frame["estimate"].to_numpy(float)[won] > 0
        a_names = frame["a"].to_numpy(object)[won]
        b_names = frame["b"].to_numpy(object)[won]
        out[won] = [f"{x if up == hib[m] else y} better"
                    for x, y, up, m in zip(a_names, b_names, a_higher, metric, strict=True)]
    frame["conclusion"] = out
    return frame


def _positions(column: pd.Series, where: dict) -> np.ndarray:
    """``where[value]`` for every value of ``column`` (looked up once per distinct value)."""
    codes, uniques = pd.factorize(column.to_numpy(object))
    return np.array([where[u] for u in uniques], dtype=np.int64)[codes]


def _adjust(frame: pd.DataFrame, correction: str) -> np.ndarray:
    adjusted = frame["pvalue"].to_numpy(float).copy()
    if correction == "none":
        return adjusted
    from .multiple import adjust_pvalues

    for _, idx in frame.groupby("test", sort=False).groups.items():
        pos = frame.index.get_indexer(idx)
        p = adjusted[pos]
        ok = np.isfinite(p)
        if ok.sum() > 0:
            p[ok] = adjust_pvalues(p[ok], correction=correction)
            adjusted[pos] = p
    return adjusted


def _emit_once(caught) -> list[str]:
    """Re-emit the warnings caught while testing, each distinct message once."""
    seen: dict[tuple, int] = {}
    for w in caught:
        key = (w.category, str(w.message))
        seen[key] = seen.get(key, 0) + 1
    notes = []
    for (category, message), count in seen.items():
        text = message + (f" (raised for {count} comparisons)" if count > 1 else "")
        warnings.warn(text, category, stacklevel=4)  # the caller of compare_scores
        notes.append(text)
    return notes


@renamed(rope="tolerance", margin="tolerance", **OLD_INTERVAL, values=OLD_INTERVAL_VALUES)
@fill_doc()
def compare_scores(scores, a=None, b=None, *, metrics=None, tests="recommended",
                   alternative: str = "two-sided", correction: str | None = "holm",
                   study=None, alpha: float = 0.05, confidence_level: float = 0.95,
                   tolerance: float | dict | None = None, sort: str = "difference",
                   simultaneous: bool = False, ratio: float | None = None) -> ComparisonTable:
    """Compare models on resampled scores with the tests that fit the design.

    The models are paired on the splits (repeat, fold) both were evaluated on; for each
    study, metric and pair the chosen tests run on the r x k paired differences
    ``d_ij = score_a,ij - score_b,ij``. P-values are adjusted within each test across all
    compared (study, metric, pair) combinations.

    Parameters
    ----------
    scores : Scores, pandas.DataFrame or RunResult
        Columns ``study, model, repeat, fold, metric, value`` and ``n_train, n_test`` (the
        corrected tests need the training and test set sizes).
    a, b : str, optional
        The models to compare. Both ``None``: every pair of models; one given: that model
        against each other model.
    metrics : str or list of str, optional
        Metrics to compare (default: every metric in ``scores``).
    tests : {'recommended', 'all'} or str or list of str, default 'recommended'
        'recommended': the corrected repeated k-fold t-test for r x k CV, the corrected
        resampled t-test for repeated hold-out, the 5x2cv t- and combined F-test for 5x2 CV
        (Gardner & Brooks 2017, Table 1; the F test, which has no direction, only with a
        two-sided ``alternative``), plus the Bayesian correlated t-test; with a ``tolerance``
        also the equivalence test. 'all': every test in :data:`TESTS` the design allows,
        including the naive t and the difference-in-proportions z, which are invalid on
        resampled scores (flagged ``valid=False``; their ValidityWarnings are raised once, not
        per pair). Or test names from :data:`TESTS` (or their ids, :data:`TEST_IDS`).
    alternative : {'two-sided', 'less', 'greater'}, default 'two-sided'
        In terms of the mean of a - b (the Bayesian test is always two-sided).
    correction : {'holm', 'bonferroni', 'hochberg', 'none'} or None, default 'holm'
        Adjustment of the p-values within each test (Holm 1979 by default; see
        :func:`replikit.compare.adjust_pvalues`).
    study : str, optional
        Compare within this study only (default: every study, each on its own).
    alpha : float, default 0.05
        Significance level of the ``reject`` column (after adjustment).
    confidence_level : float, default 0.95
        Level of the intervals (credible interval for the Bayesian test).
    tolerance : float or dict of str -> float, optional
        The practical tolerance, in metric units (a dict gives one per metric): the largest
        difference that does not matter. It is the half-width of the Bayesian test's region
        of practical equivalence (:data:`DEFAULT_TOLERANCE`, 0.01, when not given) and, when
        given and above 0, the margin of the TOST equivalence test, which then runs with the
        recommended tests: the Bayesian ``P(equivalent)`` and the TOST answer the same
        question with the same tolerance. ``rope`` and ``margin`` before replikit 0.2 (which
        could differ; give the one tolerance that matters).
    sort : {'difference', 'learner'}, default 'difference'
        How the sorted-runs test builds its sample (see
        :func:`~replikit.compare.sorted_runs_ttest`): in the calibration simulation
        (:func:`~replikit.compare.simulate_tests`, 1000 datasets) the 'learner' reading rejected
        a true null in 77% of runs at alpha = 0.05 and is flagged invalid; 'difference' in 3.4%.
    simultaneous : bool, default False
        False: each interval at ``confidence_level`` on its own — beside adjusted p-values it
        is an *unadjusted* interval, and one that misses 0 is not a shown difference. True:
        Bonferroni-simultaneous intervals over the same family as the p-value adjustment (the
        m compared rows of each test): each at level ``1 - (1 - confidence_level) / m``, so
        that together they cover every difference with probability at least
        ``confidence_level``. For the t-type tests the interval inverts the test, so a
        simultaneous interval that misses 0 implies a Bonferroni — hence a Holm — rejection
        (not conversely: Holm is more powerful); the 5x2cv t is the exception (its statistic
        reads ``d_11``, its interval the mean). Bayesian rows always keep their credible
        interval at ``confidence_level``. The level of each row's interval is in the
        ``ci_level`` column (``interval='simultaneous'`` before replikit 0.2).
    ratio : float, optional
        The test-to-training size ratio ``n_test / n_train`` of every split, for the tests
        with the corrected variance (corrected t, TOST, Bayesian correlated t) when the scores
        do not record the sizes but the scheme is known: ``p / (1 - p)`` for repeated hold-out
        with a test share ``p``, ``1 / (k - 1)`` for k-fold CV. Given, it is used instead of
        the recorded sizes. Default: the recorded ``n_train``/``n_test``, else ``1/(k-1)``
        for a k-fold design (the corrected k-fold tests' own rule, which assumes the folds
        are k-fold CV); a hold-out design without sizes or ``ratio`` raises
        :class:`~replikit.errors.DataError`.

    Returns
    -------
    ComparisonTable
        One row per (study, pair, metric, test), valid tests first.

    Raises
    ------
    DataError
        A model, metric or study is not in the scores, or two models were not evaluated on the
        same splits.
    ParameterError
        A named test does not fit the design (e.g. the 5x2cv test on 10x10 scores).

    See Also
    --------
    compare_models : Fit the models on the same splits first.
    replikit.compare.corrected_repeated_kfold_ttest : One test of one pair.
    replikit.compare.audit : The comparison recipe of the audit report.

    Notes
    -----
    Corrected variance (Nadeau & Bengio 2003): ``var = (1/n + n_test/n_train) S^2`` with
    ``n = r k`` paired differences and ``t = mean(d) / sqrt(var)`` on ``n - 1`` df (Gardner &
    Brooks 2017, Table 1, rows 2-3). Holm's step-down: the i-th smallest of m p-values is
    multiplied by ``m - i + 1``, then made monotone.

    References
    ----------
    {refs:gardner2017,nadeau2003,bouckaert2004,dietterich1998,alpaydin1999,corani2015,holm1979}

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> rows = [{"study": "s", "model": m, "repeat": r, "fold": f, "metric": "accuracy",
    ...          "value": 0.8 + (0.03 if m == "rf" else 0) + 0.01 * rng.normal(),
    ...          "n_train": 900, "n_test": 100}
    ...         for m in ("lr", "rf") for r in range(10) for f in range(10)]
    >>> table = compare_scores(pd.DataFrame(rows))
    >>> list(table.frame["test"])
    ['corrected_repeated_kfold_t', 'bayesian_correlated_t']
    >>> table.frame["conclusion"].iloc[0]
    'rf better'
    """
    from . import resampled
    from ._pairing import _align, _model_part, _pair

    frame = _scores_frame(scores)
    (pairs, metrics, studies, mode, wanted, alternative, correction, alpha, confidence_level,
     tol, simultaneous) = _compare_iv(frame, a, b, metrics, tests, alternative, correction,
                                      study, alpha, confidence_level, tolerance, simultaneous)
    if ratio is not None:
        ratio = check_float(ratio, "ratio")
        if not ratio > 0:
            raise ParameterError("`ratio` must be > 0 (n_test / n_train of each split); got "
                                 f"{ratio!r}.")
    fast = None
    if mode == "recommended" and not simultaneous:
        from ._pairing import fast_recommended

        # every model on the same r x k grid everywhere: all pairs at once, the same rows
        fast = fast_recommended(frame, pairs, metrics, studies, alternative=alternative,
                                confidence_level=confidence_level,
                                tolerance={m: tol.rope(m) for m in metrics},
                                margins={m: tol.margin(m) for m in metrics},
                                higher_is_better=_higher_is_better, recommended=recommended_tests,
                                ratio=ratio)
    if fast is not None:
        return _finish(fast[0], [], [], pairs, metrics, studies, correction, alpha,
                       confidence_level, tol.value, simultaneous)
    rows, results = [], []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        groups = frame.groupby(["study", "metric"], sort=False, observed=True).indices
        everywhere = {m: set(pd.unique(g)) for m, g in
                      frame.groupby("metric", sort=False, observed=True)["model"]}
        for s in studies:
            for metric in metrics:
                # the (study, metric) block once; pairing then only looks at its rows
                idx = groups.get((s, metric))
                block = frame.iloc[idx] if idx is not None else frame
                present = set(pd.unique(block["model"])) if idx is not None else set()
                where = f" for metric {metric!r} in study {s!r}"
                parts: dict = {}
                for pa, pb in pairs:
                    if pa in present and pb in present:
                        for m in (pa, pb):
                            if m not in parts:
                                parts[m] = _model_part(block, m, where)
                        paired = _align(parts[pa], parts[pb], pa, pb, metric=metric, study=s,
                                        where=where)
                    elif idx is not None and {pa, pb} <= everywhere.get(metric, set()):
                        # a model that did not run in this study (it has scores elsewhere):
                        # the pair is compared where both ran, and the note says so
                        gone = ", ".join(repr(m) for m in (pa, pb) if m not in present)
                        warnings.warn(f"{pa!r} vs {pb!r} is not compared in study {s!r} "
                                      f"({metric!r}): {gone} has no scores there.",
                                      ReplikitWarning, stacklevel=2)
                        continue
                    else:  # a model, metric or study is absent: the full path names it
                        paired = _pair(frame, pa, pb, metric=metric, study=s)
                    where = f"study {s!r}, {pa!r} vs {pb!r}"
                    finite = _finite_moments(paired.d)
                    if not finite:
                        warnings.warn(f"{pa!r} - {pb!r} ({metric!r}): the differences of the "
                                      "scores or their mean and variance are not finite "
                                      "(values too large); the tests of this pair conclude "
                                      "nothing.", ReplikitWarning, stacklevel=2)
                    margin = tol.margin(metric)
                    for name in _choose_tests(mode, wanted, paired, margin, where,
                                              alternative):
                        kwargs = {}
                        if name == "bayesian_correlated_ttest":
                            kwargs["tolerance"] = tol.rope(metric)
                        else:
                            kwargs["alternative"] = alternative
                        if name == "equivalence_ttest":
                            kwargs["tolerance"] = margin
                        if name == "sorted_runs_ttest":
                            kwargs["sort"] = sort
                        if ratio is not None and name in _USES_RATIO:
                            kwargs["ratio"] = ratio
                        quiet = np.errstate(all="ignore") if not finite else nullcontext()
                        with quiet:
                            res = getattr(resampled, name)(paired, **kwargs)
                        rows.append(_row(res, name, s, paired, confidence_level))
                        results.append(res)
    notes = _emit_once(caught)
    out = pd.DataFrame(rows, columns=[c for c in _COLUMNS if c not in ("pvalue_adjusted",
                                                                        "reject")])
    return _finish(out, results, notes, pairs, metrics, studies, correction, alpha,
                   confidence_level, tol.value, simultaneous)


def _finish(out, results, notes, pairs, metrics, studies, correction, alpha, confidence_level,
            tolerance, simultaneous) -> ComparisonTable:
    """Adjust, conclude and sort the rows of :func:`compare_scores`."""
    if out.empty:
        return ComparisonTable(pd.DataFrame(columns=_COLUMNS), correction, alpha,
                               confidence_level, tolerance, notes=tuple(notes),
                               simultaneous=simultaneous)
    if simultaneous:
        _simultaneous(out, results, confidence_level)
    out["pvalue_adjusted"] = _adjust(out, correction)
    out = _conclude(out, alpha)
    order = {TEST_IDS[t]: i for i, t in enumerate(TESTS)}
    out["_invalid"] = ~out["valid"]
    out["_t"] = _positions(out["test"], {t: order[t] for t in pd.unique(out["test"])})
    out["_s"] = _positions(out["study"], {s: i for i, s in enumerate(studies)})
    out["_m"] = _positions(out["metric"], {m: i for i, m in enumerate(metrics)})
    pair_pos = {pair: i for i, pair in enumerate(pairs)}
    out["_p"] = [pair_pos[(x, y)] for x, y in zip(out["a"].to_numpy(object),
                                                   out["b"].to_numpy(object), strict=True)]
    out = (out.sort_values(["_invalid", "_s", "_m", "_p", "_t"], kind="stable")
           .drop(columns=["_invalid", "_t", "_s", "_m", "_p"])[_COLUMNS].reset_index(drop=True))
    out["valid"] = out["valid"].astype(bool)
    return ComparisonTable(out, correction, alpha, confidence_level, tolerance,
                           notes=tuple(notes), simultaneous=simultaneous)


def _default_metrics(models: dict) -> list[str]:
    from sklearn.base import is_classifier

    return ["accuracy"] if any(is_classifier(m) for m in models.values()) else ["r2"]


@renamed(rope="tolerance", margin="tolerance", **OLD_INTERVAL, values=OLD_INTERVAL_VALUES)
@fill_doc()
def compare_models(models: dict, X, y, *, scheme="10x10", metrics=None, tests="recommended",
                   alternative: str = "two-sided", correction: str | None = "holm",
                   study=None, alpha: float = 0.05, confidence_level: float = 0.95,
                   tolerance: float | dict | None = None, simultaneous: bool = False,
                   n_jobs: int | None = None, random_state=None,
                   backend: str | None = None) -> ComparisonTable:
    """Fit the models on the same splits of ``scheme`` and compare every pair.

    Runs :func:`replikit.experiment.run` once (all metrics from the same fits; the estimators
    are cloned, never fitted in place), then :func:`compare_scores`.

    Parameters
    ----------
    models : dict of str -> estimator
        At least two scikit-learn estimators.
    X : array-like of shape (n_samples, n_features)
        The features.
    y : array-like of shape (n_samples,)
        The outcome.
    scheme : str, Scheme or scikit-learn splitter, default '10x10'
        '10x10' (10 repeats of 10-fold CV, the design Gardner & Brooks 2017 recommend),
        '5x2', 'holdout:0.33x100', ... (see :func:`replikit.experiment.parse_scheme`).
    metrics : str or list of str, optional
        Default: 'accuracy' for classifiers, 'r2' otherwise.
    tests : {'recommended', 'all'} or str or list of str, default 'recommended'
        As in :func:`compare_scores`.
    alternative : {'two-sided', 'less', 'greater'}, default 'two-sided'
        As in :func:`compare_scores`.
    correction : {'holm', 'bonferroni', 'hochberg', 'none'} or None, default 'holm'
        As in :func:`compare_scores`.
    study : array-like of shape (n_samples,), optional
        Study labels: the scheme runs within each study and each study is compared on its own.
    alpha : float, default 0.05
        As in :func:`compare_scores`.
    confidence_level : float, default 0.95
        As in :func:`compare_scores`.
    tolerance : float or dict of str -> float, optional
        As in :func:`compare_scores` (``rope`` and ``margin`` before replikit 0.2).
    simultaneous : bool, default False
        As in :func:`compare_scores` (``interval='simultaneous'`` before replikit 0.2).
    n_jobs : int, optional
        Worker processes.
    random_state : None, int or numpy.random.Generator
        Root of the splits and of the estimators' own randomness.
    backend : {'serial', 'joblib', 'dask'}, optional
        Default: 'joblib' when ``n_jobs > 1``, else 'serial'. The result does not depend on it.

    Returns
    -------
    ComparisonTable
        With ``scores`` set to the runner's Scores.

    See Also
    --------
    compare_scores : The same comparison on scores you already have.
    replikit.experiment.run : The fits.

    References
    ----------
    {refs:gardner2017,bouckaert2004}

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from sklearn.tree import DecisionTreeClassifier
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> lr = make_pipeline(StandardScaler(), LogisticRegression())
    >>> table = compare_models({"lr": lr, "tree": DecisionTreeClassifier()}, X, y,
    ...                        scheme="5x2", random_state=0)
    >>> list(table.frame["test"])
    ['paired_t_5x2cv', 'combined_f_5x2cv', 'bayesian_correlated_t']
    """
    from ..experiment.runner import run

    if not isinstance(models, dict) or len(models) < 2:
        raise ParameterError("`models` must be a dict of at least two name -> estimator; got "
                             f"{type(models).__name__} of size "
                             f"{len(models) if hasattr(models, '__len__') else '?'}.")
    if metrics is None:
        metrics = _default_metrics(models)
    if backend is None:
        backend = "joblib" if n_jobs is not None and n_jobs > 1 else "serial"
    res = run(models, X, y, scheme=scheme, metrics=metrics, study=study, backend=backend,
              n_jobs=n_jobs, random_state=random_state, return_predictions=False)
    table = compare_scores(res, metrics=None, tests=tests, alternative=alternative,
                           correction=correction, alpha=alpha,
                           confidence_level=confidence_level, tolerance=tolerance,
                           simultaneous=simultaneous)
    return dataclasses.replace(table, scores=res.scores)
