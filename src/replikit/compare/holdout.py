"""Models compared on one held-out test set: the audit's comparison when predictions come from
a single split.

Out-of-fold predictions from one train/test split (one fold, one repeat per study) leave the
corrected resampled tests nothing to resample: there is one score per model. What the data do
support is a comparison of the *fitted* models on the test rows — the paired bootstrap
(Berg-Kirkpatrick et al. 2012) and the approximate randomization test (Noreen 1989; Dror et al.
2018) of :mod:`replikit.compare.testset`, for the primary metric whatever it is (balanced
accuracy, ROC AUC, R², ...). :func:`audit_test_set` runs them for every pair of models in every
study, adjusts over the family and reads the card's light from them by the rule of the other
entries: a pair is decided when a difference is shown (Holm-adjusted bootstrap p <= alpha) or
equivalence within the tolerance (the Bonferroni-simultaneous ``1 - 2 alpha`` bootstrap
interval inside ±tolerance, a TOST of each pair at ``alpha / m``); green when every pair is
decided, amber otherwise, never red.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import pandas as pd

from .._format import interval as _interval_text
from .._format import number
from .._random import root_seed_sequence, task_rng
from .._validation import check_int
from ..errors import DataError, NotApplicableError, ParameterError
from ..results import Result, Verdict
from ._words import fill_doc

__all__ = ["TestSetAudit", "audit_test_set", "is_single_split"]

ALPHA = 0.05
#: Bootstrap and randomization resamples per pair (the p-value's Monte Carlo SE is at most
#: 0.011 at 2,000; the simultaneous interval's tails hold 2000 * alpha / (2 m) draws).
N_RESAMPLES = 2000


@fill_doc()
def is_single_split(predictions) -> bool:
    """Whether every study and model of out-of-fold predictions has one fold of one repeat
    (a hold-out test set), where only the tests on that test set can compare the models.

    Parameters
    ----------
    predictions : Predictions or pandas.DataFrame
        Columns ``study, model, repeat, fold`` (and the predictions).

    Returns
    -------
    bool
        True when each ``(study, model)`` has one ``repeat`` and one ``fold``; False
        otherwise, or when the columns are not there.

    See Also
    --------
    audit_test_set : The comparison such predictions get.

    References
    ----------
    {refs:dietterich1998}

    Examples
    --------
    >>> f = pd.DataFrame({"study": "s", "model": ["a", "b"], "repeat": 0, "fold": 0})
    >>> is_single_split(f), is_single_split(f.assign(fold=[0, 1]).pipe(
    ...     lambda d: pd.concat([d, d.assign(fold=1 - d["fold"])])))
    (True, False)
    """
    f = getattr(predictions, "frame", predictions)
    if not isinstance(f, pd.DataFrame) or not {"study", "model", "repeat",
                                               "fold"} <= set(f.columns):
        return False
    sizes = f.groupby(["study", "model"], sort=False, observed=True)[["repeat", "fold"]].nunique()
    return bool(len(sizes)) and bool((sizes.to_numpy() == 1).all())


@fill_doc()
@dataclass(frozen=True, slots=True, eq=False)
class TestSetAudit(Result):
    """Every pair of models compared on one held-out test set per study.

    Attributes
    ----------
    verdict : Verdict
        The light (every pair decided: green; else amber), the sentence and the key number:
        best minus runner-up on the metric with its Bonferroni-simultaneous bootstrap interval.
    metric, metric_label : str
        The metric compared and its name in words.
    higher_is_better : bool
        Its direction.
    tolerance : float or None
        The practical tolerance of the equivalence decision (None: not tested).
    tolerance_why : str
        Where it comes from.
    alpha : float
        Family-wise level of the decisions.
    n_resamples : int
        Bootstrap and randomization resamples per pair.
    comparisons : pandas.DataFrame
        One row per study and pair: ``study, a, b, n, metric_a, metric_b, estimate`` (a − b),
        ``ci_low, ci_high`` (simultaneous, level ``1 - alpha``), ``eq_low, eq_high`` (the
        ``1 - 2 alpha`` simultaneous interval the equivalence decision reads), ``pvalue``
        (bootstrap), ``pvalue_mcse``, ``pvalue_adjusted`` (Holm), ``randomization_pvalue``,
        ``differ``, ``equivalent``, ``conclusion``.
    best, runner_up : str
        The two models with the best mean metric over the studies.
    notes : tuple of str
        What was done.

    See Also
    --------
    audit_test_set : Builds it.
    paired_bootstrap_test, randomization_test : The tests of one pair.

    References
    ----------
    {refs:bergkirkpatrick2012,noreen1989,dror2018}

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 400)
    >>> rows = [pd.DataFrame({"model": m, "row": np.arange(400), "y_true": y,
    ...                       "y_pred": np.where(rng.random(400) < acc, y, 1 - y)})
    ...         for m, acc in (("a", 0.9), ("b", 0.7))]
    >>> res = audit_test_set(pd.concat(rows), metric="accuracy", n_resamples=500,
    ...                      random_state=0)
    >>> res.comparisons["conclusion"].tolist()
    ['a better']
    """

    verdict: Verdict
    metric: str
    metric_label: str
    higher_is_better: bool
    tolerance: float | None
    tolerance_why: str
    alpha: float
    n_resamples: int
    comparisons: pd.DataFrame = field(repr=False)
    best: str = ""
    runner_up: str = ""
    notes: tuple = ()

    @property
    def title(self) -> str:
        return (f"Models compared on one test set ({self.metric_label}; paired bootstrap and "
                "randomization tests)")

    def to_frame(self) -> pd.DataFrame:
        """One row per study and pair (see :attr:`comparisons`)."""
        return self.comparisons.copy()

    def plot(self, ax=None):
        """Each pair's difference ``a - b`` with its simultaneous interval, the tolerance
        band shaded; returns the Axes."""
        from .._plotting import new_axes

        ax = ax if ax is not None else new_axes()
        f = self.comparisons
        multi = f["study"].nunique() > 1
        labels = [f"{r.a} − {r.b}" + (f" ({r.study})" if multi else "")
                  for r in f.itertuples()]
        y = np.arange(len(f))[::-1]
        if self.tolerance:
            ax.axvspan(-self.tolerance, self.tolerance, color="0.9", zorder=0,
                       label=f"±{number(self.tolerance)} tolerance")
        ax.axvline(0, color="0.5", lw=0.8)
        ax.hlines(y, f["ci_low"], f["ci_high"], color="tab:blue", gid="interval")
        ax.plot(f["estimate"], y, "o", color="tab:blue")
        ax.set_yticks(y, labels)
        ax.set_xlabel(f"difference in {self.metric_label} (a − b), simultaneous "
                      f"{number(100 * (1 - self.alpha))}% bootstrap interval")
        if self.tolerance:
            ax.legend(loc="best", fontsize=8)
        return ax

    def __str__(self) -> str:
        cols = ["study", "a", "b", "estimate", "ci_low", "ci_high", "pvalue_adjusted",
                "randomization_pvalue", "conclusion"]
        return "\n".join([self.title, str(self.verdict),
                          self.comparisons[cols].to_string(index=False,
                                                           float_format=lambda v: f"{v:.4g}"),
                          *(f"note: {n}" for n in self.notes)])


def _pairs_of(frame: pd.DataFrame, metric: str):
    """Per study and pair: ``(study, a, b, y_true, pred_a, pred_b)`` aligned on (fold, row);
    ``pred`` is the positive class's probability for ROC AUC."""
    proba = None
    if metric == "roc_auc":
        cols = [c for c in frame.columns if str(c).startswith("proba_")]
        if not cols:
            raise DataError("ROC AUC on one test set needs the predicted probabilities "
                            "(`proba_<class>` columns); found none.")
        labels = sorted(pd.unique(frame["y_true"]))
        pos = f"proba_{labels[-1]}"
        proba = pos if pos in cols else None
        if proba is None and len(cols) == 1 and len(labels) == 2:
            proba = cols[0]
            if str(cols[0]) != f"proba_{labels[-1]}":  # the other class: its complement
                frame = frame.assign(**{cols[0]: 1.0 - frame[cols[0]]})
        if proba is None:
            raise DataError(f"ROC AUC on one test set needs `{pos}` (the probability of the "
                            f"positive class, {labels[-1]!r}); found {cols}.")
    value = proba or "y_pred"
    for study, sub in frame.groupby("study", sort=False, observed=True):
        wide = sub.pivot_table(index=["fold", "row"], columns="model", values=value,
                               aggfunc="first", observed=True, sort=False).sort_index()
        # sorted by (fold, row): the resamples do not depend on the order of the file's rows
        truth = sub.drop_duplicates(["fold", "row"]).set_index(["fold", "row"])["y_true"]
        models = [m for m in pd.unique(sub["model"]) if m in wide.columns]
        for a, b in combinations(models, 2):
            both = wide[[a, b]].dropna()
            if len(both) < 2:
                continue
            yield (str(study), str(a), str(b), truth.reindex(both.index).to_numpy(),
                   both[a].to_numpy(), both[b].to_numpy())


def _audit_iv(predictions, metric, n_resamples, tolerance):
    f = getattr(predictions, "frame", predictions)
    if not isinstance(f, pd.DataFrame):
        raise ParameterError(f"`predictions` must be a Predictions table or a DataFrame; got "
                             f"{type(predictions).__name__}.")
    need = {"model", "row", "y_true", "y_pred"}
    if not need <= set(f.columns):
        raise DataError(f"`predictions` needs columns {sorted(need)}; found "
                        f"{list(map(str, f.columns))}.")
    f = f.copy()
    for col, default in (("study", "all"), ("repeat", 0), ("fold", 0)):
        if col not in f.columns:
            f[col] = default
    if not is_single_split(f):
        raise NotApplicableError("`predictions` hold several folds or repeats: compare them "
                                 "with the corrected resampled tests (`audit_scores` on their "
                                 "per-fold scores), not on one test set.")
    if f["model"].nunique() < 2:
        raise NotApplicableError(f"`predictions` hold {f['model'].nunique()} model; the "
                                 "comparison needs two or more.")
    n_resamples = check_int(n_resamples, "n_resamples", min_value=100)
    if tolerance is not None and (isinstance(tolerance, bool)
                                  or not np.isfinite(float(tolerance)) or float(tolerance) < 0):
        raise ParameterError(f"`tolerance` must be a number >= 0 in metric units or None; got "
                             f"{tolerance!r}.")
    return f, n_resamples


@fill_doc()
def audit_test_set(predictions, *, metric: str | None = None, tolerance: float | None = None,
                   n_resamples: int = N_RESAMPLES, random_state=None) -> TestSetAudit:
    """Compare every pair of models on one held-out test set per study (the audit's
    comparison when predictions come from a single split).

    For each study and pair ``(a, b)``: the paired bootstrap test of ``metric(a) -
    metric(b)`` over the test rows (shifted p-value and percentile interval; Berg-Kirkpatrick
    et al. 2012) and the approximate randomization test (Noreen 1989), both from
    :mod:`replikit.compare.testset`. Over the ``m`` pairs x studies: Holm-adjusted bootstrap
    p-values (a difference is shown when ``<= alpha``), Bonferroni-simultaneous intervals at
    ``1 - alpha`` (shown) and ``1 - 2 alpha`` (equivalence shown when inside ±tolerance: a
    TOST of each pair at ``alpha / m``). The light: green when every pair is decided, amber
    otherwise.

    These tests compare the two *fitted* models on these rows; a second training run (other
    data, another seed) is not in them, so they do not say which learning algorithm is better
    (Dietterich 1998) — the card says so.

    Parameters
    ----------
    predictions : Predictions or pandas.DataFrame
        Out-of-fold predictions with one fold of one repeat per study and model (columns
        ``study, model, repeat, fold, row, y_true, y_pred`` and ``proba_*`` for ROC AUC).
    metric : str, optional
        The metric (a name of :data:`replikit.compare.testset.SCORINGS`); default the primary
        metric of the audit's data entry (R², ROC AUC with probabilities of two classes,
        else balanced accuracy).
    tolerance : float, optional
        Practical tolerance in metric units; default 0.01 on a 0–1 score, 1% of the outcome's
        SD for MAE/RMSE (1% of its variance for MSE).
    n_resamples : int, default 2000
        Resamples of each test (>= 100).
    random_state : None, int or numpy.random.Generator
        Root of the seeds (each pair's tests get their own, keyed by study and pair).

    Returns
    -------
    TestSetAudit

    Raises
    ------
    NotApplicableError
        Several folds or repeats (use :func:`audit_scores`), or one model.

    See Also
    --------
    paired_bootstrap_test, randomization_test : The tests of one pair.
    is_single_split : When predictions are from one split.
    audit_scores : The comparison of per-fold scores (several folds or repeats).
    DataError
        Missing columns; ROC AUC without the positive class's probabilities.

    References
    ----------
    {refs:bergkirkpatrick2012,noreen1989,dror2018,dietterich1998}

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> y = rng.normal(size=300)
    >>> preds = pd.concat([pd.DataFrame({"model": m, "row": np.arange(300), "y_true": y,
    ...                                  "y_pred": y + rng.normal(0, sd, 300)})
    ...                    for m, sd in (("good", 0.5), ("poor", 1.0))])
    >>> res = audit_test_set(preds, n_resamples=500, random_state=0)
    >>> res.metric, res.best, res.verdict.level
    ('r2', 'good', 'good')
    """
    from ..experiment.metrics import METRIC_LABELS, higher_is_better
    from ..experiment.scoring import primary_metric_of
    from .audit import _tolerance_why, _tolerances
    from .multiple import adjust_pvalues
    from .testset import SCORINGS, paired_bootstrap_test, randomization_test

    frame, n_resamples = _audit_iv(predictions, metric, n_resamples, tolerance)
    if metric is None:
        metric = primary_metric_of(frame)
    if metric not in SCORINGS:
        raise ParameterError(f"`metric` must be one of {list(SCORINGS)}; got {metric!r}.")
    label = METRIC_LABELS.get(metric, metric)
    higher = higher_is_better(metric)
    if tolerance is None:
        y = pd.to_numeric(frame["y_true"], errors="coerce")
        tol = _tolerances([metric], y)[metric] if y.notna().all() or metric not in (
            "mae", "rmse", "mse") else None
        why = _tolerance_why(metric)
    else:
        tol, why = float(tolerance), "the tolerance given"
    root = root_seed_sequence(random_state)
    pairs = list(_pairs_of(frame, metric))
    if not pairs:
        raise NotApplicableError("no two models share two or more test rows in any study.")
    m = len(pairs)
    rows = []
    for study, a, b, y, pa, pb in pairs:
        key = ("test-set", study, a, b)
        boot = paired_bootstrap_test(y, pa, pb, scoring=metric, n_resamples=n_resamples,
                                     random_state=task_rng(root, (*key, "bootstrap")))
        rand = randomization_test(y, pa, pb, scoring=metric, n_resamples=n_resamples,
                                  random_state=task_rng(root, (*key, "randomization")))
        ci = boot.confidence_interval(confidence_level=1 - ALPHA / m)
        eq = boot.confidence_interval(confidence_level=1 - 2 * ALPHA / m)
        rows.append({"study": study, "a": a, "b": b, "n": int(y.size),
                     "metric_a": boot.extra.get("metric_a"),
                     "metric_b": boot.extra.get("metric_b"), "estimate": boot.estimate,
                     "ci_low": ci.low, "ci_high": ci.high, "eq_low": eq.low,
                     "eq_high": eq.high, "pvalue": boot.pvalue,
                     "pvalue_mcse": boot.pvalue_mcse,
                     "randomization_pvalue": rand.pvalue})
    out = pd.DataFrame(rows)
    out["pvalue_adjusted"] = adjust_pvalues(out["pvalue"].to_numpy(float))
    out["differ"] = out["pvalue_adjusted"] <= ALPHA
    out["equivalent"] = (~out["differ"] & (tol is not None and tol > 0)
                         & (out["eq_low"] >= -(tol or 0)) & (out["eq_high"] <= (tol or 0)))
    sign = np.where(out["estimate"] > 0, 1, -1) * (1 if higher else -1)
    out["conclusion"] = np.where(
        out["differ"], np.where(sign > 0, out["a"] + " better", out["b"] + " better"),
        np.where(out["equivalent"], "equivalent", "undecided"))
    means = pd.concat([out[["a", "metric_a"]].set_axis(["model", "value"], axis=1),
                       out[["b", "metric_b"]].set_axis(["model", "value"], axis=1)])
    order = (means.groupby("model", sort=False)["value"].mean()
             .sort_values(ascending=not higher, kind="stable"))
    best, runner_up = str(order.index[0]), str(order.index[1])
    verdict = _verdict(out, best, runner_up, label, tol, why, m, frame["study"].nunique())
    notes = (f"{m} comparison(s) (pairs x studies) on one test set each; {n_resamples:,} "
             "bootstrap and randomization resamples per pair; p-values Holm-adjusted, "
             "intervals Bonferroni-simultaneous at "
             f"{number(100 * (1 - ALPHA))}% (each at {number(100 * (1 - ALPHA / m), 4)}%).",)
    return TestSetAudit(verdict=verdict, metric=metric, metric_label=label,
                        higher_is_better=higher, tolerance=tol, tolerance_why=why,
                        alpha=ALPHA, n_resamples=n_resamples, comparisons=out, best=best,
                        runner_up=runner_up, notes=notes)


def _verdict(out, best, runner_up, label, tol, why, m, n_studies) -> Verdict:
    decided = out["differ"] | out["equivalent"]
    pair = out[((out["a"] == best) & (out["b"] == runner_up))
               | ((out["a"] == runner_up) & (out["b"] == best))]
    row = pair.loc[pair["pvalue_adjusted"].idxmax()] if len(pair) else out.iloc[0]
    flip = row["a"] != best
    est = -row["estimate"] if flip else row["estimate"]
    lo, hi = (-row["ci_high"], -row["ci_low"]) if flip else (row["ci_low"], row["ci_high"])
    where = f" in {row['study']}" if n_studies > 1 else ""
    shown = [f"{r.conclusion} ({r.a} vs {r.b}" + (f", {r.study}" if n_studies > 1 else "")
             + ")" for r in out[decided].itertuples()]
    open_ = [f"{r.a} vs {r.b}" + (f" ({r.study})" if n_studies > 1 else "")
             for r in out[~decided].itertuples()]
    parts = [f"On one test set{' per study' if n_studies > 1 else ''} ({int(out['n'].max()):,} "
             f"rows{' at most' if n_studies > 1 else ''}), paired bootstrap tests of {label} "
             "(Holm-adjusted)"]
    parts[0] += (": " + ("; ".join(shown) if len(shown) <= 4 else
                         f"{len(shown)} of {m} pairs decided") + "." if shown else
                 ": no pair decided.")
    if len(open_):
        parts.append("Undecided: " + (", ".join(open_) if len(open_) <= 4 else
                                      f"{len(open_)} of {m} pairs")
                     + " — neither a difference nor "
                     + (f"equivalence within ±{number(tol)} shown." if tol else
                        "equivalence (not tested) shown."))
    ci = _interval_text(float(lo), float(hi))
    parts.append(f"{best} − {runner_up}{where} = {number(float(est))} (simultaneous "
                 f"{number(100 * (1 - ALPHA))}% bootstrap CI {ci}).")
    caveats = ("one test set: these compare the two fitted models on these rows; another "
               "training run is not in them, so they do not say which learning algorithm is "
               "better (Dietterich (1998))",)
    tol_text = (f"±{number(tol)} in {label} ({why})" if tol else
                f"no tolerance in {label} ({why})")
    return Verdict(" ".join(parts), label, "good" if bool(decided.all()) else "warn",
                   estimate=float(est), ci_low=float(lo), ci_high=float(hi), caveats=caveats,
                   label=f"best minus runner-up, {label}",
                   tolerance=f"judged against {tol_text}: {int(decided.sum())} of {m} pairs "
                             f"decided; {best} − {runner_up} {number(float(est))}, "
                             f"simultaneous {number(100 * (1 - ALPHA))}% CI {ci}")
