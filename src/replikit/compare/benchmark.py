"""Comparisons across datasets from a benchmark table: one score per model and dataset.

A paper's results table or an OpenML study gives one number per model and dataset, not the
fold scores. The comparisons that need only that — Friedman with the Nemenyi and Wilcoxon-Holm
post hoc tests (Demšar 2006) and the Bayesian signed-rank test (Benavoli et al. 2014) — run on
it here (:func:`compare_benchmark`); the corrected resampled tests, which need the fold scores
of each dataset, are skipped with the reason said. :func:`read_benchmark` reads the table in
its long layout (dataset, model, score columns) or wide layout (one row per dataset, one column
per model).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import pandas as pd

from .._format import number
from .._format import pvalue as _p
from ..errors import DataError, ParameterError
from ..results import Result
from ._words import fill_doc

__all__ = ["BenchmarkComparison", "compare_benchmark", "read_benchmark", "SKIPPED_REASON"]

#: Column names recognised as the dataset and the model of a long benchmark table.
DATASET_NAMES = ("dataset", "data", "dataset_name", "dataset_id", "data_id", "task",
                 "task_id", "task_name", "problem", "study")
MODEL_NAMES = ("model", "model_name", "learner", "learner_id", "classifier", "algorithm",
               "method", "flow", "estimator")
#: Columns that say the table holds per-fold scores, not one value per model and dataset.
FOLD_NAMES = ("fold", "repeat", "iteration", "run", "key_fold", "key_run", "split")

#: Errors in the outcome's units: no default tolerance without the outcome's SD.
_ERRORS = frozenset({"mae", "mse", "rmse", "log_loss"})

SKIPPED_REASON = ("they need the fold scores of each model on each dataset, and a benchmark "
                  "table holds one value per model and dataset (give per-fold scores in the "
                  "Scores layout to run them)")


def _find(columns, names, given, what, param):
    if given is not None:
        if given not in columns:
            raise DataError(f"`{param}`: no column {given!r} in the benchmark table; found "
                            f"columns {list(map(str, columns))}.")
        return given
    lower = {str(c).lower(): c for c in columns}
    for name in names:
        if name in lower:
            return lower[name]
    return None


@fill_doc()
def read_benchmark(frame, *, dataset_column=None, model_column=None,
                   score_column=None, allow_missing: bool = False) -> pd.DataFrame:
    """A benchmark table as datasets x models, from its long or wide layout.

    Long: one row per model and dataset, with a dataset column (``dataset``, ``task``,
    ``task_id``, ... or ``dataset_column``), a model column (``model``, ``learner``,
    ``classifier``, ``algorithm``, ... or ``model_column``) and one numeric score column (the
    only numeric column left, or ``score_column``). Wide: one row per dataset, its label in the
    dataset column (or the first non-numeric column), one numeric column per model.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table as read from the file.
    dataset_column, model_column, score_column : str, optional
        The columns holding the dataset, the model and the score, where their names are not
        recognised. Giving ``model_column`` or ``score_column`` reads the table as long.
    allow_missing : bool, default False
        Keep cells without a score (a model that timed out on a dataset) as NaN instead of
        refusing the table; :func:`compare_benchmark` runs the Skillings–Mack test on them.

    Returns
    -------
    pandas.DataFrame
        One row per dataset (index: the dataset label), one column per model, every cell a
        finite score (or NaN where missing, with ``allow_missing``).

    Raises
    ------
    DataError
        A named column is missing, a model and dataset has more than one value (per-fold
        scores: use the Scores layout), a cell is missing, or no model columns are found.

    See Also
    --------
    compare_benchmark : The comparisons run on it.
    replikit.compare.friedman_test : Takes the table it returns.

    References
    ----------
    {refs:demsar2006}

    Examples
    --------
    >>> long = pd.DataFrame({"dataset": ["d1", "d1", "d2", "d2"], "model": ["a", "b"] * 2,
    ...                      "accuracy": [0.9, 0.8, 0.7, 0.75]})
    >>> read_benchmark(long).to_dict("index")
    {'d1': {'a': 0.9, 'b': 0.8}, 'd2': {'a': 0.7, 'b': 0.75}}
    """
    if not isinstance(frame, pd.DataFrame):
        raise ParameterError(f"`frame` must be a pandas DataFrame; got {type(frame).__name__}.")
    cols = list(frame.columns)
    folds = [c for c in cols if str(c).lower() in FOLD_NAMES]
    if folds:
        raise DataError(f"the table has column(s) {folds}: these are per-fold scores, not one "
                        "value per model and dataset; give them in the Scores layout (study, "
                        "model, repeat, fold, metric, value).")
    ds = _find(cols, DATASET_NAMES, dataset_column, "dataset", "dataset_column")
    mc = _find(cols, MODEL_NAMES, model_column, "model", "model_column")
    if mc is not None or score_column is not None:  # long
        if mc is None:
            raise DataError(f"`model_column`: no model column recognised (one of "
                            f"{', '.join(MODEL_NAMES[:5])}, ...); found columns "
                            f"{list(map(str, cols))}.")
        if ds is None:
            raise DataError(f"`dataset_column`: no dataset column recognised (one of "
                            f"{', '.join(DATASET_NAMES[:5])}, ...); found columns "
                            f"{list(map(str, cols))}.")
        if score_column is not None:
            sc = _find(cols, (), score_column, "score", "score_column")
        else:
            numeric = [c for c in cols if c not in (ds, mc)
                       and pd.api.types.is_numeric_dtype(frame[c])
                       and not pd.api.types.is_bool_dtype(frame[c])]
            if len(numeric) != 1:
                raise DataError(f"`score_column`: expected one numeric score column besides "
                                f"{ds!r} and {mc!r}; found {len(numeric)}: "
                                f"{list(map(str, numeric))}.")
            sc = numeric[0]
        if not pd.api.types.is_numeric_dtype(frame[sc]):
            raise DataError(f"`score_column`: column {sc!r} must hold numbers; found "
                            f"{frame[sc].dtype}.")
        dup = frame.duplicated([ds, mc], keep=False)
        if dup.any():
            first = frame.loc[dup, [ds, mc]].iloc[0].tolist()
            raise DataError(f"the table has {int(dup.sum())} rows sharing a (dataset, model) "
                            f"pair, first {tuple(first)}: a benchmark table has one value per "
                            "model and dataset (per-fold scores go in the Scores layout).")
        wide = frame.pivot(index=ds, columns=mc, values=sc)
        wide = wide.reindex(index=pd.unique(frame[ds]), columns=pd.unique(frame[mc]))
    else:  # wide
        if ds is None:
            text = [c for c in cols if not pd.api.types.is_numeric_dtype(frame[c])]
            if not text:
                raise DataError("`dataset_column`: no column of dataset labels found (a wide "
                                "table has one text column naming the dataset); found "
                                f"columns {list(map(str, cols))}.")
            ds = text[0]
        models = [c for c in cols if c != ds]
        nonnum = [c for c in models if not pd.api.types.is_numeric_dtype(frame[c])]
        if nonnum:
            raise DataError(f"the wide table's model columns must hold numbers; column(s) "
                            f"{list(map(str, nonnum))} do not (a long table needs a model "
                            "column: name it with `model_column`).")
        if frame[ds].duplicated().any():
            raise DataError(f"the dataset column {ds!r} repeats "
                            f"{frame.loc[frame[ds].duplicated(), ds].iloc[0]!r}: a wide table "
                            "has one row per dataset.")
        wide = frame.set_index(ds)[models]
    wide = wide.astype(float)
    wide.index.name = str(ds)
    wide.columns.name = "model"
    values = wide.to_numpy()
    inf = np.isinf(values)
    if inf.any():  # a score, but not a number a rank test can use
        r, c = np.argwhere(inf)[0]
        raise DataError(f"the benchmark table has {int(inf.sum())} infinite score(s), first "
                        f"dataset {wide.index[r]!r}, model {wide.columns[c]!r} "
                        f"({values[r, c]:g}); leave a cell empty where the model has no score.")
    bad = np.isnan(values) if not allow_missing else np.zeros_like(inf)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        raise DataError(f"the benchmark table misses {int(bad.sum())} score(s) (every model "
                        f"needs one on every dataset), first dataset {wide.index[r]!r}, model "
                        f"{wide.columns[c]!r}.")
    return wide


def _effects_as(row, same_order: bool) -> dict:
    """The effect-size columns of a Wilcoxon-Holm row, for ``a - b`` (turned when the row
    holds ``b - a``)."""
    from .multiple import EFFECT_COLUMNS

    out = {c: row[c] for c in EFFECT_COLUMNS}
    if not same_order:
        for name in ("mean_difference", "rank_biserial"):
            lo, hi = out[f"{name}_ci_low"], out[f"{name}_ci_high"]
            out[name], out[f"{name}_ci_low"], out[f"{name}_ci_high"] = -out[name], -hi, -lo
    return out


@fill_doc()
@dataclass(frozen=True)
class BenchmarkComparison(Result):
    """Comparisons of k models across N datasets from one score per model and dataset.

    Attributes
    ----------
    table : pandas.DataFrame
        The scores, datasets x models.
    friedman : FriedmanResult
        The omnibus rank test.
    nemenyi : NemenyiResult
        Every pair's mean-rank difference against the critical difference.
    holm : pandas.DataFrame
        Pairwise Wilcoxon signed-rank tests, Holm-adjusted (:func:`wilcoxon_holm`), with each
        pair's effect sizes (mean difference and matched-pairs rank-biserial correlation with
        their intervals and label).
    bayesian : pandas.DataFrame
        One row per pair: the Bayesian signed-rank test's probabilities that ``a`` is
        practically worse than, equivalent to or better than ``b`` (``p_worse``, ``p_rope``,
        ``p_better``; direction-aware) and its decision.
    skipped : dict
        Test -> why it was not run.
    higher_is_better : bool
        The direction of the scores.
    alpha, tolerance : float
        The significance level of the post hoc tests and the Bayesian test's practical
        tolerance, in score units (0: no region of practical equivalence, equivalence not
        tested).
    metric : str
        What the scores are (``'score'`` when the table does not say).
    tolerance_why : str
        Where the tolerance comes from, in words.
    plackett_luce : PlackettLuceResult or None
        With three or more models: the Bayesian Plackett–Luce model of the datasets' rankings
        (Calvo et al. 2018) — each model's posterior probability of being best and its
        expected rank with credible intervals (:func:`plackett_luce`); None with two.
    verdict : Verdict
        Whether each pair of models is decided across datasets, and the light (see
        :func:`compare_benchmark`).

    See Also
    --------
    compare_benchmark : Builds it.

    References
    ----------
    {refs:demsar2006,benavoli2014}

    Examples
    --------
    >>> t = pd.DataFrame({"a": [0.9, 0.8, 0.85, 0.7, 0.8], "b": [0.7, 0.75, 0.8, 0.6, 0.7]})
    >>> res = compare_benchmark(t, n_resamples=2000, random_state=0)
    >>> res.friedman.n_datasets, list(res.bayesian["decision"])
    (5, ['a better'])
    """

    table: pd.DataFrame = field(repr=False)
    friedman: object = field(repr=False)
    nemenyi: object = field(repr=False)
    holm: pd.DataFrame = field(repr=False)
    bayesian: pd.DataFrame = field(repr=False)
    skipped: dict = field(default_factory=dict)
    higher_is_better: bool = True
    alpha: float = 0.05
    tolerance: float = 0.01
    metric: str = "score"
    tolerance_why: str = "the default: one point on a 0–1 score"
    plackett_luce: object | None = field(default=None, repr=False)

    @property
    def missing(self) -> list:
        """The ``(dataset, model)`` cells of :attr:`table` without a score."""
        from .multiple import _missing_cells

        return list(_missing_cells(self.table))

    @property
    def title(self) -> str:
        return (f"Benchmark: {self.table.shape[1]} models on {self.table.shape[0]} datasets "
                f"({'higher' if self.higher_is_better else 'lower'} is better)")

    def to_frame(self) -> pd.DataFrame:
        """One row per pair: mean ranks, Nemenyi, Wilcoxon-Holm and the Bayesian test.

        Returns
        -------
        pandas.DataFrame
            Columns a, b, rank_difference, critical_difference, nemenyi_differs,
            wilcoxon_pvalue, holm_pvalue, p_worse, p_rope, p_better, decision, then ``n``
            (datasets scoring both) and the effect sizes of :func:`wilcoxon_holm` (mean
            difference and rank-biserial correlation with intervals and label). With missing
            cells the ranks are the Skillings–Mack adjusted mean ranks and
            ``nemenyi_differs`` is the pair's Nemenyi-type p-value below alpha.
        """
        nem = self.nemenyi.significant
        incomplete = bool(self.missing)
        ranks = self.friedman.mean_ranks
        cd = float(self.nemenyi.critical_distance)
        h = self.holm.set_index(["a", "b"])
        rows = []
        for _, r in self.bayesian.iterrows():
            a, b = r["a"], r["b"]
            diff = float(ranks[a] - ranks[b])
            hr = h.loc[(a, b)] if (a, b) in h.index else h.loc[(b, a)]
            rows.append({"a": a, "b": b, "mean_rank_a": float(ranks[a]),
                         "mean_rank_b": float(ranks[b]), "rank_difference": diff,
                         "critical_difference": cd,
                         "nemenyi_differs": bool(nem.loc[a, b]) if incomplete
                         else abs(diff) > cd,
                         "wilcoxon_pvalue": float(hr["pvalue"]),
                         "holm_pvalue": float(hr["pvalue_adjusted"]),
                         "p_worse": r["p_worse"], "p_rope": r["p_rope"],
                         "p_better": r["p_better"], "decision": r["decision"],
                         "n": int(hr["n"]), **_effects_as(hr, (a, b) in h.index)})
        return pd.DataFrame(rows)

    def decisions(self) -> pd.DataFrame:
        """Each pair's decision across datasets, as the light reads it.

        Returns
        -------
        pandas.DataFrame
            One row per pair: ``a, b, holm_pvalue, difference`` (the Wilcoxon signed-rank test
            shows a difference: Holm-adjusted p <= alpha), ``p_worse, p_rope, p_better``
            (Bayesian signed-rank test), ``bayes`` (``'better'``, ``'worse'``,
            ``'equivalent'`` when that posterior probability is at least 0.95, else
            ``'undecided'``; ``a`` against ``b``), ``decided`` and ``conclusion`` in words.
        """
        f = self.to_frame()
        holm = f["holm_pvalue"].to_numpy(float)
        differ = holm <= self.alpha
        probs = f[["p_worse", "p_rope", "p_better"]].to_numpy(float)
        best = np.argmax(probs, axis=1)
        sure = probs.max(axis=1) >= 0.95
        bayes = np.where(sure, np.array(["worse", "equivalent", "better"])[best], "undecided")
        words = []
        for r, dif, by in zip(f.itertuples(), differ, bayes, strict=True):
            # a Wilcoxon difference points the way the mean ranks do
            if by == "better" or (dif and by != "worse" and r.mean_rank_a < r.mean_rank_b):
                words.append(f"{r.a} better")
            elif by == "worse" or dif:
                words.append(f"{r.b} better")
            elif by == "equivalent":
                words.append(f"equivalent within ±{number(self.tolerance)}")
            else:
                words.append("undecided")
        return pd.DataFrame({"a": f["a"], "b": f["b"], "holm_pvalue": holm,
                             "difference": differ, "p_worse": probs[:, 0],
                             "p_rope": probs[:, 1], "p_better": probs[:, 2], "bayes": bayes,
                             "decided": differ | sure, "conclusion": words})

    @property
    def best(self) -> tuple[str, str]:
        """``(best, runner_up)``: the two best mean ranks (Friedman; 1 = best)."""
        ranks = self.friedman.mean_ranks.sort_values(kind="stable")
        return str(ranks.index[0]), str(ranks.index[1])

    @property
    def verdict(self):
        """The light across datasets: is every pair of models decided?

        A pair is **decided** when the Wilcoxon signed-rank test across datasets shows a
        difference (Holm-adjusted p <= alpha; Demšar 2006), or the Bayesian signed-rank test
        (Benavoli et al. 2014) puts at least 0.95 of its posterior on one region: practically
        better, practically worse, or equivalent within ±tolerance. ``'good'`` when every pair
        is decided, ``'warn'`` when one is not — the rule of the comparison within a dataset
        (a difference or equivalence shown for every pair). Never ``'bad'``. The key number
        is the best model minus the runner-up (by mean rank): the mean difference of their
        scores over the datasets with its 95% t interval (datasets as the units).
        """
        from scipy import stats

        from .._format import interval as _interval_text
        from .._format import percent
        from ..results import Verdict

        dec = self.decisions()
        best, second = self.best
        d = (self.table[best] - self.table[second]).dropna().to_numpy(float)
        n = d.size
        est = float(d.mean())
        se = float(d.std(ddof=1) / np.sqrt(n)) if n > 1 else float("nan")
        if np.isfinite(se) and se > 0:
            lo, hi = stats.t.interval(0.95, n - 1, loc=est, scale=se)
        else:
            lo = hi = est
        from ..experiment.metrics import METRIC_LABELS

        fr = self.friedman
        label = METRIC_LABELS.get(self.metric, self.metric)  # 'roc_auc' reads 'ROC AUC'
        n_dec = int(dec["decided"].sum())
        shown = [f"{c} ({a} vs {b})" for a, b, c, ok in zip(dec["a"], dec["b"],
                                                            dec["conclusion"], dec["decided"],
                                                            strict=True) if ok]
        open_ = [f"{a} vs {b}" for a, b, ok in zip(dec["a"], dec["b"], dec["decided"],
                                                    strict=True) if not ok]
        def p_is(value) -> str:  # "p = 0.012" or "p < 0.001"
            text = _p(value)
            return f"p {text}" if text.startswith("<") else f"p = {text}"

        miss = self.missing
        n_all = len(self.table)
        test = (f"Skillings–Mack {p_is(fr.pvalue)}, the Friedman test with {len(miss)} missing "
                f"cell{'s' if len(miss) != 1 else ''}" if miss else
                f"Friedman {p_is(fr.pvalue)}, Iman–Davenport {p_is(fr.f_pvalue)}")
        rank = "adjusted mean rank" if miss else "mean rank"
        parts = [f"Across {n_all} datasets ({test}): {best} has the best {rank} "
                 f"({number(float(fr.mean_ranks[best]))}), then {second} "
                 f"({number(float(fr.mean_ranks[second]))})."]
        if shown:
            parts.append("Decided (Wilcoxon–Holm or Bayesian signed-rank >= 0.95): "
                         + ("; ".join(shown) if len(shown) <= 4
                            else f"{len(shown)} of {len(dec)} pairs") + ".")
        if open_:
            parts.append("Undecided: " + (", ".join(open_) if len(open_) <= 4 else
                                          f"{len(open_)} of {len(dec)} pairs")
                         + " — neither a difference nor "
                         + (f"equivalence within ±{number(self.tolerance)}"
                            if self.tolerance > 0 else "equivalence (not tested)")
                         + " shown.")
        ci = f"95% CI {_interval_text(float(lo), float(hi))}"
        over = f" over the {n} datasets scoring both" if n < n_all else ""
        parts.append(f"{best} − {second} = {number(est)} on average{over} ({ci}).")
        caveats = []
        if miss:
            caveats.append(f"{len(miss)} of {self.table.size} cells have no score; the rank "
                           "tests use the Skillings–Mack adjusted ranks and each pair's tests "
                           "the datasets scoring both")
        if n < 5:
            caveats.append(f"{n} datasets: the rank tests have little power")
        tol = (f"±{number(self.tolerance)} in {label} ({self.tolerance_why})"
               if self.tolerance > 0 else f"no tolerance in {label} ({self.tolerance_why})")
        return Verdict(" ".join(parts), label, "good" if n_dec == len(dec) else "warn",
                       estimate=est, ci_low=float(min(lo, hi)), ci_high=float(max(lo, hi)),
                       caveats=tuple(caveats), label=f"best minus runner-up, {label}",
                       tolerance=f"judged against {tol}: {n_dec} of {len(dec)} pairs "
                                 f"decided; {best} − {second} {number(est)}, {ci} "
                                 f"({percent(0.95)} t interval over datasets)")

    def __str__(self) -> str:
        f = self.friedman
        lines = [self.title,
                 f"Friedman chi2 = {f.statistic:.4g} (df {f.df}), p = {f.pvalue:.3g}; "
                 f"Iman-Davenport F = {f.f_statistic:.4g}, p = {f.f_pvalue:.3g}; Nemenyi "
                 f"critical difference {self.nemenyi.critical_distance:.4g} at alpha = "
                 f"{self.alpha:g}.",
                 "Mean ranks (1 = best): " + ", ".join(
                     f"{m} {v:.3f}" for m, v in f.mean_ranks.sort_values().items()),
                 self.to_frame().to_string(index=False, float_format=lambda v: f"{v:.4g}")]
        miss = self.missing
        if miss:
            from .multiple import _cells_text

            lines[1] = (f"Skillings-Mack T = {f.statistic:.4g} (df {f.df}), p = "
                        f"{f.pvalue:.3g} (Friedman with missing cells); largest Nemenyi-type "
                        f"critical difference {self.nemenyi.critical_distance:.4g} at alpha = "
                        f"{self.alpha:g}.")
            lines.insert(2, f"Missing cells ({len(miss)}, dataset/model): "
                            f"{_cells_text(miss)}; pairwise tests use each pair's datasets.")
        lines += [f"skipped: {name}: {why}." for name, why in self.skipped.items()]
        return "\n".join(lines)


@fill_doc()
def compare_benchmark(table, a=None, b=None, *, dataset_column=None, model_column=None,
                      score_column=None, higher_is_better: bool = True, alpha: float = 0.05,
                      tolerance: float | None = None, n_resamples: int = 20_000,
                      random_state=0, metric: str | None = None) -> BenchmarkComparison:
    """Compare models across datasets from a benchmark table (one score per model and dataset).

    Runs the Friedman test with the Nemenyi critical difference and pairwise Wilcoxon
    signed-rank tests with Holm's correction (Demšar 2006), and the Bayesian signed-rank test
    of every pair with a practical tolerance (Benavoli et al. 2014). A table with missing
    cells (NaN, or a long table without a row for some model and dataset) gets the
    Skillings–Mack test (Skillings & Mack 1981) and the Nemenyi-type test on its adjusted rank
    sums; the Wilcoxon and Bayesian tests use each pair's complete datasets, and the result
    names the missing cells (``missing``). The corrected resampled
    tests need the fold scores of each dataset; they are skipped and the result says why.

    Parameters
    ----------
    table : pandas.DataFrame
        Long (dataset, model, score) or wide (one row per dataset, one column per model); see
        :func:`read_benchmark`.
    a, b : str, optional
        One pair of models for the Bayesian test (default: every pair).
    dataset_column, model_column, score_column : str, optional
        Columns where their names are not recognised.
    higher_is_better : bool, default True
        False for errors and losses.
    alpha : float, default 0.05
        Significance level of the Nemenyi and Holm post hoc tests.
    tolerance : float, optional
        Half-width of the Bayesian test's region of practical equivalence, in score units.
        Default: 0.01 (one point) when every score lies in [0, 1] and ``metric`` is not an
        error in the outcome's units (mae, mse, rmse, log_loss); otherwise no default — 0, so
        equivalence is not tested (the verdict says so).
    n_resamples : int, default 20000
        Posterior draws of each Bayesian test.
    random_state : int or numpy.random.Generator, default 0
        Seeds the Bayesian tests' draws.
    metric : str, optional
        What the scores are, for sentences (default: the score column, or ``'score'``).

    Returns
    -------
    BenchmarkComparison
        Its ``verdict`` is green when every pair is decided across datasets: a difference
        shown by the Wilcoxon signed-rank test (Holm-adjusted) or a Bayesian signed-rank
        posterior of at least 0.95 for one region (better, worse, or equivalent within
        ±tolerance); amber otherwise (:attr:`BenchmarkComparison.verdict`).

    See Also
    --------
    read_benchmark : Reads the table.
    replikit.compare.friedman_test, replikit.compare.nemenyi_test : The rank tests.
    replikit.compare.bayesian_signed_rank_test : The Bayesian test.

    References
    ----------
    {refs:demsar2006,benavoli2014}

    Examples
    --------
    >>> wide = pd.DataFrame({"dataset": list("pqrstu"), "a": [.9, .8, .85, .7, .8, .75],
    ...                      "b": [.7, .75, .8, .6, .7, .7], "c": [.8, .7, .9, .65, .75, .7]})
    >>> res = compare_benchmark(wide, n_resamples=2000)
    >>> res.friedman.n_models, round(res.friedman.statistic, 3)
    (3, 7.913)
    """
    from .bayesian import bayesian_signed_rank_test
    from .multiple import _nemenyi, friedman_test, wilcoxon_holm

    if not 0 < alpha < 1:
        raise ParameterError(f"`alpha` must lie in (0, 1); got {alpha!r}.")
    if not isinstance(table, pd.DataFrame):
        table = pd.DataFrame(np.asarray(table, dtype=float))
    if (dataset_column or model_column or score_column
            or not all(pd.api.types.is_numeric_dtype(t) for t in table.dtypes)):
        wide = read_benchmark(table, dataset_column=dataset_column, model_column=model_column,
                              score_column=score_column, allow_missing=True)
    else:  # already datasets x models, the index naming the datasets
        wide = read_benchmark(table.rename_axis("dataset").reset_index(),
                              dataset_column="dataset", allow_missing=True)
    if wide.shape[1] < 2 or wide.shape[0] < 2:
        raise DataError(f"a benchmark comparison needs at least 2 models and 2 datasets; got "
                        f"{wide.shape[1]} model(s) on {wide.shape[0]} dataset(s).")
    models = [str(m) for m in wide.columns]
    wide.columns = models
    metric = str(metric or score_column or "score")
    if tolerance is None:
        values = wide.to_numpy(float)
        values = values[~np.isnan(values)]
        unit = bool(((values >= 0) & (values <= 1)).all())
        if unit and metric not in _ERRORS:
            tolerance, why = 0.01, "the default: one point on a 0–1 score"
        else:
            tolerance, why = 0.0, ("no default for scores outside 0–1 or an error in the "
                                   "outcome's units: equivalence not tested")
    else:
        why = "the tolerance given"
        if isinstance(tolerance, bool) or not np.isfinite(float(tolerance)) \
                or float(tolerance) < 0:
            raise ParameterError(f"`tolerance` must be a number >= 0 in score units; got "
                                 f"{tolerance!r}.")
        tolerance = float(tolerance)
    for name, given in (("a", a), ("b", b)):
        if given is not None and given not in models:
            raise ParameterError(f"`{name}`: no model {given!r} in the table; models are "
                                 f"{models}.")
    fried = friedman_test(wide, higher_is_better=higher_is_better)
    nem = _nemenyi(fried, alpha, wide)
    holm = wilcoxon_holm(wide, alpha=alpha)
    pairs = ([(a, b)] if a is not None and b is not None
             else [(x, y) for x, y in combinations(models, 2)
                   if (a is None and b is None) or a in (x, y) or b in (x, y)])
    rng = np.random.default_rng(random_state)
    sign = 1.0 if higher_is_better else -1.0  # the test reads "a better" as a - b > tolerance
    rows = []
    for x, y in pairs:
        both = wide[[x, y]].dropna()  # the datasets scoring both
        if len(both) < 2:
            raise DataError(f"models {x!r} and {y!r} share {len(both)} dataset(s) with scores; "
                            "the Bayesian signed-rank test needs at least 2.")
        res = bayesian_signed_rank_test((sign * both[x].to_numpy(), sign * both[y].to_numpy()),
                                        tolerance=tolerance, n_resamples=n_resamples,
                                        random_state=rng)
        rows.append({"a": x, "b": y, "mean_difference": float((both[x] - both[y]).mean()),
                     "p_worse": res.p_left, "p_rope": res.p_rope, "p_better": res.p_right,
                     "decision": res.decision()})
    pl = None
    if wide.shape[1] >= 3:  # two models: the pairwise tests say it all
        from .rankings import plackett_luce

        pl = plackett_luce(wide, higher_is_better=higher_is_better, random_state=rng)
    return BenchmarkComparison(table=wide, friedman=fried, nemenyi=nem, holm=holm,
                               bayesian=pd.DataFrame(rows), plackett_luce=pl,
                               skipped={"corrected resampled tests": SKIPPED_REASON},
                               higher_is_better=higher_is_better, alpha=alpha,
                               tolerance=tolerance, metric=metric, tolerance_why=why)
