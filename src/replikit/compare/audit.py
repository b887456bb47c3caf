"""The comparison audit: are the differences between the models real? (Gardner & Brooks 2017)

:func:`audit` is the comparison capability's one entry for a dataset and a set of models — the
recipe of the audit report's section 2, usable on its own. Every pair of models is fitted on the
same splits of one resampling design (through :func:`replikit.experiment.run`: one seeding rule,
the backends) on every row of the pooled data — or taken from a run the caller shares, see
:func:`audit_design` — and compared on the report's primary metric
and one secondary metric with the tests Gardner & Brooks (2017, Table 1) recommend for the
design, Holm-adjusted across pairs and metrics; the naive paired t is run beside them as the
contrast the paper warns about (sec. 3.4). Across studies, the models' mean scores per study
give a Friedman test and a Nemenyi critical-difference diagram (Demšar 2006).

The verdict is about the primary metric and names each pair once, by the *headline* test of the
design (:func:`replikit.compare.primary_test`): the corrected repeated k-fold t for r x k CV,
Alpaydın's combined 5x2cv F for 5x2 CV (quick mode). The intervals beside the Holm-adjusted
p-values are Bonferroni-simultaneous (``simultaneous=True`` of
:func:`~replikit.compare.compare_scores`): all of one test's intervals cover their differences
together with probability at least 95%.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .._compat import renamed_fields
from .._format import interval as _interval_text
from .._format import number, percent, pvalue
from .._random import root_seed_sequence, task_rng
from ..errors import DataError, NotApplicableError, ParameterError, ParameterTypeError
from ..results import Result, Verdict
from ._words import fill_doc, interval_alias, p_is, test_name

if TYPE_CHECKING:  # pandas is imported on use: the package binds `audit` eagerly
    import pandas as pd

__all__ = ["audit", "audit_scores", "ComparisonAudit", "ALPHA", "CONFIDENCE_LEVEL"]

#: Significance level of every decision of the audit (after the Holm adjustment).
ALPHA = 0.05
#: Joint level of the simultaneous intervals of each test.
CONFIDENCE_LEVEL = 0.95

_BAYES = "bayesian_correlated_t"
_MIN_STUDIES = 3  # a Friedman test over fewer studies says next to nothing
#: Fewest complete studies for the Bayesian posteriors across studies in the verdict.
_MIN_STUDIES_BAYES = 5
#: Posterior draws of the audit's Bayesian tests across studies: the signed-rank test's
#: independent draws (MC SE <= 0.5/sqrt(20000) = 0.0035) and the hierarchical sampler's
#: chains x draws after warm-up (2 x 2000 after 500, MC SE 0.01-0.03); together about a
#: second of CPU for tens of studies (the audit's budget for this step is a few seconds).
_BAYES_SAMPLES = 20_000
_HIER_CHAINS, _HIER_SAMPLES, _HIER_WARMUP = 2, 2000, 500


@dataclass(frozen=True, slots=True)
class _Plan:
    """Rows and resampling design of the comparison."""

    rows: int
    n_folds: int
    n_repeats: int
    stratify: bool
    min_class: int | None = None
    #: whether the time budget cut the repeats, and the folds (10 to 5)
    budgeted: bool = False
    fewer_folds: bool = False

    @property
    def scheme(self) -> str:
        """The scheme as :func:`replikit.experiment.parse_scheme` reads it (folds x repeats;
        ``'5x2'`` is Dietterich's five repetitions of 2-fold CV, so two repeats of 5-fold CV
        are written ``'kfold:5x2'``)."""
        if (self.n_repeats, self.n_folds) == (5, 2):
            return "5x2"
        spec = f"{self.n_folds}x{self.n_repeats}"
        return "kfold:" + spec if spec == "5x2" else spec


#: Row-fits per model the audit's comparison spends on data larger than 3,000 rows: 10-fold CV
#: repeated ``clip(round(ROW_FITS / n), 2, 10)`` times, so the work grows no faster than the rows
#: (anes, 13,440 rows: 2 repeats) and every row is used; up to 3,000 rows, the 10x10 of
#: Gardner & Brooks (2017).
ROW_FITS = 30_000


def _plan(n: int, min_class: int | None, quick: bool, cost=None) -> _Plan:
    """Every row; 10-fold CV repeated ``clip(round(ROW_FITS / n), 2, 10)`` times (5x2 CV with
    ``quick``), and no more repeats than the time budget affords.

    Fewer repeats on large data, never fewer rows: a row subsample changes the question (a
    model trained on 400 rows is not the model trained on 13,440) and the verdicts with it,
    while fewer repeats only add resampling noise, which the corrected t accounts for. For
    classification the folds are stratified, and their number drops to the rarest class's
    count when it has fewer than 10 rows (at least 2).

    ``cost(k)``, when given, is the seconds of one fold of every model under k-fold CV
    (:func:`replikit.experiment.budget.fit_seconds`): the repeats are at most
    :func:`~replikit.experiment.budget.affordable_repeats` of it (at least 2), and when two
    repeats of 10 folds would take more than :data:`~replikit.experiment.budget.
    POOLED_CV_SECONDS` on 15,000 rows or more, the CV has 5 folds (each model still trained
    on 80% of the rows, at least 12,000).
    """
    repeats = int(np.clip(round(ROW_FITS / max(n, 1)), 2, 10))
    if min_class is None:
        folds = 2 if quick else 10
    elif quick and min_class >= 2:
        return _Plan(n, 2, 5, True, min_class)
    else:
        folds = int(min(10, min_class))
        if folds < 2:
            raise NotApplicableError(
                f"the rarest class has {min_class} rows: too few for two stratified folds.",
                "collect more rows of the rare class or merge classes.")
    if quick:
        return _Plan(n, folds, 5, False)
    budgeted = fewer_folds = False
    if cost is not None:
        from ..experiment.budget import POOLED_CV_SECONDS, affordable_repeats

        if folds == 10 and n >= 15_000 and 2 * 10 * cost(10) > POOLED_CV_SECONDS:
            folds, fewer_folds = 5, True
        affordable = affordable_repeats(cost(folds), folds, repeats)
        budgeted = affordable < repeats
        repeats = affordable
    return _Plan(n, folds, repeats, min_class is not None, min_class, budgeted, fewer_folds)


def _fold_cost(dataset, models: dict):
    """``cost(k)``: the expected seconds of one fold of every model under k-fold CV of
    ``dataset`` (:func:`replikit.experiment.budget.fit_seconds`)."""
    from ..experiment.budget import TableSize, fit_seconds

    size = TableSize.of(dataset.X)
    n = size.n_rows

    def cost(k: int) -> float:
        train = size.with_rows(n - n // k)
        return sum(fit_seconds(m, train, dataset.task, n_predict=n // k)
                   for m in models.values())

    return cost


def audit_design(dataset, *, metric: str | None = None, models: dict | None = None,
                 quick: bool = False) -> dict:
    """The fits :func:`audit` needs, so that a caller can make them once and share them.

    Run the models with :func:`replikit.experiment.run` on every row of ``dataset`` with the
    returned scheme and metrics (and the audit's ``random_state``), then pass the result as
    ``audit(..., run=...)``. The report does this to share one cross-validation between the
    comparison and the error estimates (:func:`replikit.resampling.audit` reads its first
    repeat as K-fold CV).

    Parameters
    ----------
    dataset : Dataset
        The data (:func:`replikit.data.userdata.dataset_from_frame` or ``load_dataset``).
    metric : str, optional
        The primary metric; default the audit's rule (see :func:`audit`).
    models : dict of str -> estimator, optional
        The models, for the default metric's rule (ROC AUC needs probabilities).
    quick : bool, default False
        5x2 CV instead of repeated 10-fold CV.

    Returns
    -------
    dict
        ``scheme`` (a :class:`~replikit.experiment.Scheme`), ``metrics`` (the primary metric
        first), ``n_repeats``, ``n_folds`` and ``stratified``.

    See Also
    --------
    audit : The comparison audit that reads these fits.

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from replikit.data.userdata import dataset_from_frame
    >>> ds = dataset_from_frame(load_diabetes(as_frame=True).frame, target="target")
    >>> d = audit_design(ds)
    >>> d["n_repeats"], d["n_folds"], d["metrics"]
    (10, 10, ['r2', 'mae'])
    """
    from ..experiment.metrics import primary_metric
    from ..experiment.schemes import parse_scheme

    y = dataset.y
    classification = dataset.task == "classification"
    min_class = int(y.value_counts().min()) if classification else None
    cost = _fold_cost(dataset, models) if isinstance(models, dict) and models else None
    plan = _plan(len(y), min_class, bool(quick), cost)
    if metric is None:
        metric = primary_metric(dataset.task, int(y.nunique()) if classification else 0,
                                models)[0]
    return {"scheme": parse_scheme(plan.scheme, stratify=plan.stratify),
            "metrics": _metrics(dataset.task, metric), "n_repeats": plan.n_repeats,
            "n_folds": plan.n_folds, "stratified": plan.stratify}


def _run(models, X, y, plan: _Plan, metrics, root, n_jobs, engine=None):
    from ..experiment.engine import run_options
    from ..experiment.runner import run
    from ..experiment.schemes import parse_scheme

    return run(models, X, y, scheme=parse_scheme(plan.scheme, stratify=plan.stratify),
               metrics=metrics, random_state=root, return_predictions=False,
               **run_options(engine, n_jobs))


def _check_run(run, names: list[str], metrics: list[str], plan: _Plan, n: int) -> None:
    """A shared run must be the design's: the models, metrics and splits of every row."""
    f = getattr(getattr(run, "scores", None), "frame", None)
    if f is None:
        raise ParameterTypeError(f"`run` must be a RunResult; got {type(run).__name__}.")
    splits = f[["repeat", "fold"]].drop_duplicates()
    tested = f.loc[(f["repeat"] == 0) & (f["metric"] == metrics[0])].groupby("model")[
        "n_test"].sum()
    problems = []
    if set(f["model"]) != set(names):
        problems.append(f"models {sorted(set(f['model']))} (expected {sorted(names)})")
    if not set(metrics) <= set(f["metric"]):
        problems.append(f"metrics {sorted(set(f['metric']))} (expected {metrics})")
    if len(splits) != plan.n_repeats * plan.n_folds:
        problems.append(f"{len(splits)} splits (expected {plan.n_repeats} x {plan.n_folds})")
    if len(tested) and int(tested.min()) != n:
        problems.append(f"{int(tested.min())} rows tested per repeat (expected all {n})")
    if problems:
        raise ParameterError("`run` does not match the comparison's design (see "
                             "replikit.compare.audit_design): " + "; ".join(problems) + ".")


def _metrics(task: str, primary: str) -> list[str]:
    """The primary metric first (the one the verdict is about), then one secondary: MAE (R² when
    MAE is the primary) for regression, accuracy for classification (none when accuracy is the
    primary)."""
    if task == "regression":
        return [primary, "mae" if primary != "mae" else "r2"]
    return [primary] + (["accuracy"] if primary != "accuracy" else [])


def _tolerances(metrics: list[str], y: pd.Series) -> dict[str, float]:
    """The practical tolerance per metric (the half-width of the Bayesian rows' region of
    practical equivalence): 0.01 for scores on a unit scale; 1% of the outcome's SD for MAE
    and RMSE (outcome units), 1% of its variance for MSE."""
    sd = float(y.std()) if len(y) > 1 else 0.0
    out = {}
    for m in metrics:
        out[m] = 0.01 * sd if m in ("mae", "rmse") else (0.01 * sd * sd if m == "mse" else 0.01)
    return out


def _label(metric: str) -> str:
    from ..experiment.metrics import metric_label

    return metric_label(metric)


def _higher_is_better(metric: str) -> bool:
    from ..experiment.metrics import higher_is_better

    return higher_is_better(metric)


def _study_table(study_scores, models: list[str], metric: str):
    """The studies x models table of mean scores from ``study_scores``, complete rows only:
    ``(table or None, [(study, reason)] left out, note or None)``."""
    import pandas as pd

    from .multiple import scores_to_table

    if study_scores is None:
        return None, [], ("no per-study scores given (`study_scores`): no comparison across "
                          "studies.")
    if hasattr(study_scores, "scores") and not isinstance(study_scores, pd.DataFrame):
        study_scores = study_scores.scores  # RunResult
    if not isinstance(study_scores, pd.DataFrame):
        from ..data.tables import Scores

        if not isinstance(study_scores, Scores):
            raise ParameterTypeError(
                "`study_scores` must be a studies x models DataFrame, a DataFrame with columns "
                "study, model, score, a Scores table or a RunResult; got "
                f"{type(study_scores).__name__}.")
        table = scores_to_table(study_scores, metric=metric, by="study")
    elif {"study", "model", "score"} <= set(study_scores.columns):
        table = study_scores.pivot_table(index="study", columns="model", values="score",
                                         aggfunc="mean", sort=False)
    elif {"study", "model", "metric", "value"} <= set(study_scores.columns):
        table = scores_to_table(study_scores, metric=metric, by="study")
    else:
        table = study_scores
    table = table.reindex(columns=[m for m in models if m in table.columns])
    if table.shape[1] < 2:
        raise DataError(f"`study_scores`: needs the scores of at least two of the models "
                        f"{models}; found columns {list(study_scores.columns)}.")
    try:
        table = table.astype(float)
    except (TypeError, ValueError):
        raise DataError("`study_scores` must hold numeric scores.") from None
    values = table.to_numpy()
    table = table.where(np.isfinite(values))  # an inf mean is no score
    # a study scoring two or more models ranks them (the Skillings-Mack test takes the place
    # of Friedman's when some miss a model); one scoring fewer carries no ranking
    scored = np.isfinite(values).sum(axis=1)
    few = table.index[scored < 2]
    left_out = [(str(s), "fewer than two models have a score") for s in few]
    table = table.drop(index=few)
    if len(table) < _MIN_STUDIES:
        return None, left_out, (f"{len(table)} stud{'y' if len(table) == 1 else 'ies'} with a "
                                f"score for two or more models: fewer than {_MIN_STUDIES}, so "
                                "no Friedman test or critical-difference diagram (Demšar 2006 "
                                "compares models over many datasets).")
    table.index.name, table.columns.name = "study", "model"
    holes = int(table.isna().to_numpy().sum())
    note = None if not holes else (
        f"{holes} model-study cell{'s' if holes != 1 else ''} without a score across studies "
        "(a model that did not run there): the Skillings–Mack test (Skillings & Mack 1981) "
        "takes the place of Friedman's and each pair is compared on the studies scoring both.")
    return table, left_out, note


@fill_doc()
@interval_alias
@renamed_fields(rope="tolerance")
@dataclass(frozen=True, slots=True, eq=False)
class ComparisonAudit(Result):
    """The comparison audit of a dataset's models (Gardner & Brooks 2017): see :func:`audit`.

    Attributes
    ----------
    verdict : Verdict
        About the primary metric: which pairs differ (Holm-adjusted, by the headline test),
        which do not; ``estimate``/``ci_low``/``ci_high`` is the difference best − runner-up
        (models ranked by mean primary score) with its simultaneous interval, labelled
        ``'best minus runner-up, <metric>'``.
    primary_metric : str
        The metric the verdict is about (e.g. ``'roc_auc'``).
    metric_label : str
        How sentences name the primary metric (``'ROC AUC'``).
    metrics : tuple of str
        The metrics compared, primary first.
    models : tuple of str
        The models compared.
    scheme : str
        The resampling design, folds x repeats as :func:`replikit.experiment.parse_scheme`
        reads it (``'10x10'``, ``'7x10'``, ``'5x2'``).
    n_folds, n_repeats : int
        Folds per repeat and repeats of the design.
    stratified : bool
        Folds stratified by class.
    rows_used, n_rows : int
        Rows the models were compared on (every row of the dataset), and the dataset's rows.
    quick : bool
        5x2 CV instead of repeated 10-fold CV.
    alpha : float
        Significance level of every decision, after the Holm adjustment.
    confidence_level : float
        Joint level of each test's simultaneous intervals.
    simultaneous : bool
        True: the intervals are Bonferroni-simultaneous (see
        :func:`~replikit.compare.compare_scores`; ``interval='simultaneous'`` before replikit
        0.2).
    tolerance : dict of str -> float
        The practical tolerance per metric: the half-width of the Bayesian rows' region of
        practical equivalence (``rope`` before replikit 0.2).
    headline_test : str
        The test id whose decisions the verdict reports (``'corrected_repeated_kfold_t'``,
        ``'combined_f_5x2cv'``, ...).
    headline_method : str
        The headline test's full name.
    comparisons : pandas.DataFrame
        Every recommended test for every pair and metric (the frame of
        :class:`~replikit.compare.ComparisonTable`, with ``ci_level``), plus a boolean column
        ``headline`` marking the rows of :attr:`headline_test`.
    table : ComparisonTable
        The same comparisons as a table with a readable ``str`` and ``plot``.
    naive : ComparisonTable
        The naive paired t on the primary metric (invalid on resampled scores; the contrast).
    naive_rejections, valid_rejections : int
        Pairs the naive t and the headline test call different on the primary metric.
    mean_scores : pandas.DataFrame
        Mean score of each model (rows) on each metric (columns) over the splits.
    best, runner_up : str
        The models with the best and second-best mean primary score.
    scores : Scores
        The fold scores of every model on every split.
    study_table : pandas.DataFrame or None
        Studies x models mean scores across studies (studies scoring two or more models; NaN
        where a model did not run, and the rank tests are then Skillings–Mack's); None when
        there is no comparison across studies.
    nemenyi : NemenyiResult or None
        The Nemenyi test on :attr:`study_table` (its ``friedman`` attribute is the Friedman
        test).
    studies_left_out : tuple of (study, reason)
        Studies of ``study_scores`` left out of the comparison across studies (fewer than two
        models scored there).
    plackett_luce : PlackettLuceResult or None
        With three or more models on :attr:`study_table`: the Bayesian Plackett–Luce model of
        the studies' rankings (Calvo et al. 2018) — each model's posterior probability of being
        best and its expected rank with credible intervals; None otherwise.
    across_studies : tuple of BayesianComparison
        With at least five complete studies: the best model against the runner-up across
        studies — the Bayesian signed-rank test on the study means (Benavoli et al. 2014,
        2017) and, when ``study_scores`` holds fold scores, the hierarchical model (Corani et
        al. 2017); empty otherwise. The verdict reports them.
    notes : tuple of str
        What was done: the rows, the design, the intervals, what was left out and why.
    seconds_fits : float
        Time spent fitting the models on the splits.
    random_state_entropy : int
        Entropy of the root random state (pass it as ``random_state`` to reproduce a ``None``
        run).
    entry : str
        ``'data'`` (:func:`audit` fitted the models) or ``'scores'`` (:func:`audit_scores` read
        per-fold scores; ``rows_used`` and ``n_rows`` are then None).
    ratio : float or None
        The test-to-training size ratio given to the corrected tests (``'scores'`` entry);
        None when they read the recorded sizes (or did not run).
    ratio_source : str
        Where the ratio comes from, in words.
    skipped : dict
        Test -> why it did not run (e.g. the scheme of the scores is unknown).

    See Also
    --------
    audit : Builds it.
    ComparisonTable : The table of every test.

    References
    ----------
    {refs:gardner2017,demsar2006}

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from replikit.data.userdata import dataset_from_frame
    >>> ds = dataset_from_frame(load_diabetes(as_frame=True).frame, target="target")
    >>> res = audit(ds, models="lr,dummy", quick=True, random_state=0)
    >>> res.verdict.label
    'best minus runner-up, R²'
    """

    verdict: Verdict
    primary_metric: str
    metric_label: str
    metrics: tuple
    models: tuple
    scheme: str
    n_folds: int
    n_repeats: int
    stratified: bool
    rows_used: int
    n_rows: int
    quick: bool
    alpha: float
    confidence_level: float
    simultaneous: bool
    tolerance: dict
    headline_test: str
    headline_method: str
    comparisons: pd.DataFrame = field(repr=False)
    table: object = field(repr=False)
    naive: object = field(repr=False)
    naive_rejections: int = 0
    valid_rejections: int = 0
    mean_scores: pd.DataFrame = field(default=None, repr=False)
    best: str = ""
    runner_up: str = ""
    scores: object = field(default=None, repr=False)
    study_table: pd.DataFrame | None = field(default=None, repr=False)
    nemenyi: object | None = field(default=None, repr=False)
    studies_left_out: tuple = ()
    across_studies: tuple = ()
    plackett_luce: object | None = field(default=None, repr=False)
    notes: tuple = ()
    seconds_fits: float = 0.0
    random_state_entropy: int | None = None
    entry: str = "data"
    ratio: float | None = None
    ratio_source: str = ""
    skipped: dict = field(default_factory=dict)

    @property
    def _design(self) -> str:
        """The scheme in words for titles: ``'kfold:5x2'`` (two repeats of 5-fold CV, not
        Dietterich's 5x2) reads ``'5-fold x 2'``."""
        return (self.scheme.removeprefix("kfold:").replace("x", "-fold x ", 1)
                if self.scheme.startswith("kfold:") else self.scheme)

    @property
    def pairs(self) -> list[tuple[str, str]]:
        """The compared pairs ``(a, b)``, in the table's order."""
        f = self.comparisons
        return list(dict.fromkeys(zip(f["a"], f["b"], strict=True)))

    @property
    def headline(self) -> pd.DataFrame:
        """The rows the verdict reads: the headline test on the primary metric, one per pair."""
        f = self.comparisons
        return f[f["headline"] & (f["metric"] == self.primary_metric)].reset_index(drop=True)

    @property
    def friedman_rejects(self) -> bool | None:
        """Whether the Iman–Davenport F rejects equal mean ranks across studies at ``alpha``;
        None without a comparison across studies."""
        if self.nemenyi is None:
            return None
        return bool(self.nemenyi.friedman.f_pvalue <= self.alpha)

    def to_frame(self) -> pd.DataFrame:
        """Every test, pair and metric: a copy of :attr:`comparisons`."""
        return self.comparisons.copy()

    def ranks_frame(self) -> pd.DataFrame | None:
        """Across studies: ``model, mean_rank`` (1 = best) and ``mean_score``, best first; None
        without a comparison across studies."""
        if self.nemenyi is None:
            return None
        import pandas as pd

        ranks = self.nemenyi.mean_ranks.sort_values(kind="stable")
        return pd.DataFrame({"model": ranks.index.astype(str),
                             "mean_rank": ranks.to_numpy(),
                             "mean_score": self.study_table.mean().reindex(ranks.index)
                             .to_numpy()})

    @property
    def title(self) -> str:
        """``'Model comparisons'`` with the design and the headline test."""
        if self.entry != "data":
            return (f"Model comparisons (per-fold scores, {self._design} design; headline test: "
                    f"{self.headline_method})")
        return (f"Model comparisons ({self._design} CV on {number(self.rows_used)} rows; "
                f"headline test: {self.headline_method})")

    def to_dict(self) -> dict:
        """The numbers the report shows, in JSON types (the fold scores are left out).

        Returns
        -------
        dict
            The design, the settings, the verdict, ``comparisons`` (records), the naive t's
            and the headline test's rejections, the mean scores and the comparison across
            studies where there is one.
        """
        from ..results import to_jsonable

        out = {
            "verdict": self.verdict.to_dict(), "primary_metric": self.primary_metric,
            "metric_label": self.metric_label, "metrics": list(self.metrics),
            "models": list(self.models), "scheme": self.scheme, "n_folds": self.n_folds,
            "n_repeats": self.n_repeats, "stratified": self.stratified,
            "rows_used": self.rows_used, "n_rows": self.n_rows, "quick": self.quick,
            "alpha": self.alpha, "confidence_level": self.confidence_level,
            "simultaneous": self.simultaneous, "tolerance": self.tolerance,
            "headline_test": self.headline_test, "headline_method": self.headline_method,
            "comparisons": self.comparisons, "naive_rejections": self.naive_rejections,
            "valid_rejections": self.valid_rejections, "best": self.best,
            "runner_up": self.runner_up,
            "mean_scores": (None if self.mean_scores is None
                            else self.mean_scores.reset_index()),
            "study_table": (None if self.study_table is None
                            else self.study_table.reset_index()),
            "nemenyi": self.nemenyi, "studies_left_out": list(self.studies_left_out),
            "across_studies": list(self.across_studies),
            "plackett_luce": self.plackett_luce, "notes": list(self.notes),
            "seconds_fits": self.seconds_fits,
            "random_state_entropy": self.random_state_entropy, "entry": self.entry,
            "ratio": self.ratio, "ratio_source": self.ratio_source,
            "skipped": dict(self.skipped),
        }
        return to_jsonable(out)

    def plot(self, ax=None, *, metric: str | None = None, **kwargs):
        """Forest plot of every pair's mean difference with its simultaneous interval.

        The Holm-adjusted p-value is printed beside each row.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw; a new figure's axes when None.
        metric : str, optional
            The metric drawn (default: the primary).
        **kwargs
            Passed to :func:`~replikit.compare.plot_comparisons`.

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.
        """
        if self.table is None:
            raise NotApplicableError("no test within a study ran: "
                                     + "; ".join(f"{k}: {v}" for k, v in self.skipped.items()),
                                     "give the scheme of the scores (`scheme`, `ratio`).")
        kwargs.setdefault("p_column", "pvalue_adjusted")
        return self.table.plot(ax=ax, metric=metric or self.primary_metric, **kwargs)

    def plot_cd(self, ax=None, **kwargs):
        """Critical-difference diagram of the mean ranks across studies.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw; a new figure's axes when None.
        **kwargs
            Passed to :func:`~replikit.compare.plot_cd_diagram`.

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.
        """
        if self.nemenyi is None:
            raise NotApplicableError("no comparison across studies: " + (
                self.notes_about("studies") or "no per-study scores."),
                "pass `study_scores` with at least three complete studies.")
        from .plots import plot_cd_diagram

        return plot_cd_diagram(self.nemenyi, ax=ax, **kwargs)

    def across_frame(self) -> pd.DataFrame | None:
        """The posteriors across studies (:attr:`across_studies`), one row per test; None
        without them."""
        if not self.across_studies:
            return None
        import pandas as pd

        return pd.concat([r.to_frame() for r in self.across_studies], ignore_index=True)

    def notes_about(self, word: str) -> str:
        """The notes that mention ``word``, joined."""
        return " ".join(n for n in self.notes if word in n)

    def __str__(self) -> str:
        head = (f"Comparison audit ({self._design} CV on {number(self.rows_used)} of "
                f"{number(self.n_rows)} rows; headline test: {self.headline_method})"
                if self.entry == "data" else
                f"Comparison audit (per-fold scores, {self._design} design; headline test: "
                f"{self.headline_method})")
        lines = [head, str(self.verdict)]
        if self.nemenyi is not None:
            lines.append(f"Across {number(len(self.study_table))} studies: "
                         f"{_rank_tests_text(self.nemenyi)}.")
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)


def _rank_tests_text(nemenyi) -> str:
    """The rank tests across studies in a clause: Friedman (Iman–Davenport) and the Nemenyi
    critical difference, or Skillings–Mack when some study misses a model's score."""
    fr = nemenyi.friedman
    if getattr(fr, "missing", ()):
        return (f"Skillings–Mack {p_is(fr.pvalue)} ({len(fr.missing)} missing cells); largest "
                f"Nemenyi-type critical difference {number(nemenyi.critical_distance)} "
                "adjusted mean ranks")
    return (f"Friedman {p_is(fr.pvalue)}, Iman-Davenport {p_is(fr.f_pvalue)}; Nemenyi "
            f"critical difference {number(nemenyi.critical_distance)} mean ranks")


def _tolerance_iv(tolerance) -> float | None:
    """A given practical tolerance: a finite number > 0 in the primary metric's units."""
    if tolerance is None:
        return None
    ok = isinstance(tolerance, int | float | np.integer | np.floating) \
        and not isinstance(tolerance, bool)
    if not ok or not np.isfinite(tolerance) or tolerance <= 0:
        raise ParameterError("`tolerance` must be a number > 0 in the primary metric's units "
                             f"(the margin of practical equivalence); got {tolerance!r}.")
    return float(tolerance)


def _audit_iv(dataset, models, metric, quick, n_jobs, tolerance=None):
    from ..data.userdata import Dataset
    from ..experiment.metrics import check_metrics
    from ..experiment.models import default_models, make_models

    if not isinstance(dataset, Dataset):
        raise ParameterTypeError("`dataset` must be a replikit Dataset (see "
                                 "replikit.data.userdata.dataset_from_frame); got "
                                 f"{type(dataset).__name__}.")
    if models is None:
        models = default_models(dataset.task, quick=quick)
    elif isinstance(models, str | list | tuple):
        models = make_models(models, dataset.task)
    if not isinstance(models, dict):
        raise ParameterTypeError("`models` must be a dict of name -> estimator or model "
                                 f"aliases ('lr,rf,dummy'); got {type(models).__name__}.")
    if len(models) < 2:
        raise NotApplicableError("one model only: nothing to compare.",
                                 "give two or more models with --models.")
    n_classes = int(dataset.y.nunique()) if dataset.task == "classification" else 0
    if metric is None:
        from ..experiment.metrics import primary_metric

        metric = primary_metric(dataset.task, n_classes, models)[0]
    metric = check_metrics([metric], dataset.task, classes=dataset.classes)[0]
    if not isinstance(n_jobs, int | np.integer) or isinstance(n_jobs, bool) or n_jobs < 1:
        raise ParameterError(f"`n_jobs` must be a positive int; got {n_jobs!r}.")
    tolerance = _tolerance_iv(tolerance)
    return models, metric, bool(quick), int(n_jobs), tolerance


@fill_doc()
def audit(dataset, *, models=None, metric: str | None = None, study_scores=None,
          tolerance: float | None = None, quick: bool = False, random_state=None,
          n_jobs: int = 1, run=None, engine=None) -> ComparisonAudit:
    """Are the differences between the models real? Every pair compared with valid tests.

    The recipe (Gardner & Brooks 2017, sec. 4-5):

    1. **Design.** Repeated 10-fold CV (Table 1 row 3) on every row of the pooled data, all
       models on the same splits: the paper's 10 repeats (sec. 4) up to 3,000 rows, fewer
       above (``clip(round(30,000 / n), 2, 10)``: the work grows no faster than the data, and
       no row is dropped); 5x2 CV (row 1) with ``quick``. For classification the folds are
       stratified, and when the rarest class has fewer than 10 rows the folds drop to its
       count (at least 2; fewer: :class:`~replikit.errors.NotApplicableError`). Every fit goes
       through :func:`replikit.experiment.run` — or comes from ``run``.
    2. **Metrics.** The primary ``metric`` first — the one the verdict is about — and one
       secondary (MAE for regression, accuracy for classification).
    3. **Tests.** :func:`~replikit.compare.compare_scores` with the recommended tests of the
       design — the corrected repeated k-fold t, ``t = d̄ / sqrt((1/n + n_test/n_train) s²)``
       on n − 1 df (Nadeau & Bengio 2003; Bouckaert & Frank 2004), or for 5x2 CV Dietterich's
       t and Alpaydın's combined F — plus the Bayesian correlated t (Corani & Benavoli 2015)
       and the TOST equivalence test with the corrected variance
       (:func:`~replikit.compare.equivalence_ttest`, Schuirmann 1987), both with the practical
       ``tolerance`` (default ±0.01 on a 0–1 score; 1% of the outcome's SD for MAE and RMSE,
       1% of its variance for MSE).
       P-values are Holm-adjusted within each test across pairs and metrics; the intervals are
       Bonferroni-simultaneous at 95% over the same family (each at ``1 - 0.05/m``).
    4. **Contrast.** The naive paired t on the primary metric (invalid, Gardner & Brooks
       2017, eq. 2), to show
       how many differences it would have claimed.
    5. **Across studies.** With ``study_scores`` (each model's mean score per study), the
       Friedman test with the Iman–Davenport F and the Nemenyi critical difference of mean
       ranks (Demšar 2006, sec. 3.2); studies are the units there, not folds. With five or
       more complete studies the verdict adds the posterior probabilities that the best model
       is practically better than, equivalent to or worse than the runner-up on a new study:
       the hierarchical model of the fold scores (Corani et al. 2017; 2 chains x 2000 draws)
       when ``study_scores`` holds them, else the Bayesian signed-rank test on the study means
       (Benavoli et al. 2014, 2017; 20,000 draws), with the metric's tolerance — about a
       second of CPU.

    The verdict names each pair once, by the design's headline test
    (:func:`~replikit.compare.primary_test`: the corrected repeated k-fold t, or in quick mode
    the combined 5x2cv F, which uses all ten differences where Dietterich's t reads one; the
    better model is the one the mean difference favours); a disagreement of the other
    recommended test is a caveat. Each pair is **decided** when the headline test shows a
    difference or the TOST shows equivalence within ±``tolerance`` (both Holm-adjusted at
    ``alpha``), else **undecided**; a difference not shown is never read as equivalence. The
    light is ``'good'`` when every pair is decided, ``'warn'`` when some pair is undecided;
    ``Verdict.tolerance`` states the tolerance and the best − runner-up interval. Its key number is the mean difference of the best model (by
    mean primary score) and the next, with its simultaneous interval (none for the F test),
    labelled "best minus runner-up, <metric>".

    Parameters
    ----------
    dataset : Dataset
        The data (:func:`replikit.data.userdata.dataset_from_frame` or ``load_dataset``).
    models : dict of str -> estimator, str or list of str, optional
        At least two models (estimators or aliases such as ``'lr,rf,dummy'``); default: a
        linear model, a random forest and a baseline for the task.
    metric : str, optional
        The primary metric. Default: R² for regression; ROC AUC for two classes when every
        model gives probabilities, else balanced accuracy (the audit's rule).
    study_scores : DataFrame, Scores or RunResult, optional
        Each model's mean score on the primary metric per study for the comparison across
        studies: a studies x models table, a long frame with columns ``study, model, score``,
        or Scores (averaged per study and model). Studies without a score for every model are
        left out and named; fewer than three complete studies: no comparison across studies.
    tolerance : float, optional
        The practical tolerance on the primary metric, in its units: the margin of the TOST
        equivalence test and the half-width of the Bayesian rows' region of practical
        equivalence. Default: 0.01 for a score on a 0–1 scale (one point of R², AUC or
        accuracy), 1% of the outcome's SD for MAE and RMSE, 1% of its variance for MSE.
    quick : bool, default False
        5x2 CV instead of repeated 10-fold CV, on every row (a preview; lower power).
    random_state : None, int or numpy.random.Generator
        Root of the splits and the models' own randomness; the same value gives
        the same numbers whatever ``n_jobs``.
    n_jobs : int, default 1
        Worker processes for the fits (joblib backend when above 1).
    run : RunResult, optional
        The fits already made: :func:`replikit.experiment.run` of ``models`` on every row of
        ``dataset`` with the scheme and metrics of :func:`audit_design` (the report shares one such
        run between sections). Checked against the design; nothing is refitted.
    engine : Engine, optional
        Where the fits run and the store that keeps them
        (:class:`replikit.experiment.engine.Engine`; the audit passes its own, so every fit of
        every section goes to one cluster and one store); replaces ``n_jobs``.

    Returns
    -------
    ComparisonAudit
        The numbers, the verdict, ``to_frame()`` and ``plot()``.

    Raises
    ------
    NotApplicableError
        One model only, or the rarest class is too small for two stratified folds.

    See Also
    --------
    audit_design : The fits the audit needs, to share them.
    compare_scores : The tests of every pair, on scores you already have.
    replikit.resampling.audit : The audit of the error estimates.

    References
    ----------
    {refs:gardner2017,nadeau2003,bouckaert2004,dietterich1998,alpaydin1999,corani2015,holm1979,demsar2006,benavoli2014,benavoli2017,corani2017}

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from replikit.data.userdata import dataset_from_frame
    >>> ds = dataset_from_frame(load_diabetes(as_frame=True).frame, target="target")
    >>> res = audit(ds, models="lr,dummy", quick=True, random_state=0)
    >>> res.scheme, res.headline_test, res.metrics
    ('5x2', 'combined_f_5x2cv', ('r2', 'mae'))
    >>> print(res.verdict.sentence.split(" (lr vs")[0])
    On R² (5x2cv combined F test): lr better
    """
    from .api import primary_test, recommended_tests

    models, metric, quick, n_jobs, given = _audit_iv(dataset, models, metric, quick, n_jobs,
                                                     tolerance)
    names = [str(m) for m in models]
    root = root_seed_sequence(random_state)
    y = dataset.y.reset_index(drop=True)
    n = len(y)
    classification = dataset.task == "classification"
    min_class = int(y.value_counts().min()) if classification else None
    plan = _plan(n, min_class, quick, _fold_cost(dataset, models))
    metrics = _metrics(dataset.task, metric)
    t0 = time.perf_counter()
    if run is None:
        run = _run(models, dataset.X.reset_index(drop=True), y, plan, metrics, root, n_jobs,
                   engine)
    else:
        _check_run(run, names, metrics, plan, n)
    res = run
    seconds_fits = time.perf_counter() - t0
    tolerance = _tolerances(metrics, y)
    if given is not None:
        tolerance[metric] = given
    # the recommended tests and the equivalence test at the practical tolerance
    tests = recommended_tests(plan.n_repeats, plan.n_folds)
    if any(tolerance[m] > 0 for m in metrics):
        tests = tests[:-1] + ["equivalence_ttest"] + tests[-1:]
    head_name = primary_test(plan.n_repeats, plan.n_folds)
    j = _judge(res.scores, names=names, metric=metric, metrics=metrics, tests=tests,
               tolerance=tolerance, head={None: head_name}, study_scores=study_scores,
               root=root)
    label = _label(metric)
    notes = _notes(plan, n, len(y), quick, j.table, j.head_method, j.study_note, j.left_out)
    verdict = _verdict(j.frame, metric, label, j.head_id, j.best, j.runner_up, plan, n, len(y),
                       quick, j.left_out, j.across, j.higher, tolerance[metric],
                       "the tolerance given" if given is not None else _tolerance_why(metric),
                       study_table=j.study_table)
    return ComparisonAudit(
        verdict=verdict, primary_metric=metric, metric_label=label, metrics=tuple(metrics),
        models=tuple(names), scheme=plan.scheme, n_folds=plan.n_folds,
        n_repeats=plan.n_repeats, stratified=plan.stratify, rows_used=int(len(y)),
        n_rows=int(n), quick=quick, alpha=ALPHA, confidence_level=CONFIDENCE_LEVEL,
        simultaneous=j.table.simultaneous, tolerance=tolerance, headline_test=j.head_id,
        headline_method=j.head_method, comparisons=j.frame, table=j.table, naive=j.naive,
        naive_rejections=j.naive_rejections, valid_rejections=j.valid_rejections,
        mean_scores=j.mean_scores, best=j.best, runner_up=j.runner_up, scores=res.scores,
        study_table=j.study_table, nemenyi=j.nemenyi, studies_left_out=tuple(j.left_out),
        plackett_luce=j.plackett_luce,
        across_studies=tuple(j.across), notes=tuple(notes), seconds_fits=seconds_fits,
        random_state_entropy=root.entropy)


#: Scores on a 0–1 scale: their default practical tolerance is 0.01 (one point).
_UNIT_SCORES = frozenset({"r2", "r2_corr", "roc_auc", "accuracy", "balanced_accuracy",
                          "error_rate", "brier", "c_index", "c_index_uno", "mean_auc",
                          "integrated_brier_score"})
#: The primary metric of per-fold scores when none is named, first found wins (the data
#: entry's rule: a threshold-free score first, then accuracy, R², then the errors).
_PRIMARY_ORDER = ("c_index", "roc_auc", "balanced_accuracy", "accuracy", "r2", "error_rate",
                  "log_loss", "brier", "rmse", "mse", "mae", "c_index_uno")
_SECONDARY = {"classification": ("accuracy", "error_rate", "balanced_accuracy"),
              "regression": ("mae", "rmse", "mse", "r2"),
              "survival": ("c_index_uno",)}
#: What a scores table may say about its resampling (see :func:`audit_scores`).
SCORE_SCHEMES = ("kfold", "holdout", "recorded")
_NO_RATIO_TESTS = ("corrected t-tests, Bayesian correlated t-test and TOST equivalence test "
                   "(and the 5x2cv tests, which assume 2-fold CV)")


def _scores_iv(scores, metric, scheme, ratio, tolerance):
    from ..data.tables import Scores
    from ..experiment.metrics import CLASSIFICATION_METRICS

    if hasattr(scores, "scores") and not isinstance(scores, Scores) \
            and not hasattr(scores, "columns"):
        scores = scores.scores  # RunResult
    if not isinstance(scores, Scores):
        import pandas as pd

        if not isinstance(scores, pd.DataFrame):
            raise ParameterTypeError("`scores` must be a Scores table, a DataFrame in the "
                                     "Scores layout or a RunResult; got "
                                     f"{type(scores).__name__}.")
        scores = Scores(scores)
    present = [str(m) for m in scores.metrics]
    if metric is None:
        metric = next((m for m in _PRIMARY_ORDER if m in present), present[0])
    elif metric not in present:
        raise ParameterError(f"`metric`: {metric!r} is not a metric of the scores; they hold "
                             f"{', '.join(present)}.")
    if scheme is not None and scheme not in SCORE_SCHEMES:
        raise ParameterError(f"`scheme` must be one of {', '.join(SCORE_SCHEMES)} or None "
                             f"(unknown); got {scheme!r}.")
    if ratio is not None:
        ok = isinstance(ratio, int | float | np.integer | np.floating) \
            and not isinstance(ratio, bool)
        if not ok or not np.isfinite(ratio) or ratio <= 0:
            raise ParameterError("`ratio` must be a number > 0 (n_test / n_train of each "
                                 f"split); got {ratio!r}.")
        if scheme == "kfold":
            raise ParameterError("`ratio` goes with a hold-out scheme; k-fold CV fixes it at "
                                 "1/(k-1) (give `scheme='kfold'` alone).")
        ratio = float(ratio)
        scheme = scheme or "holdout"
    elif scheme == "holdout":
        raise ParameterError("`scheme='holdout'` needs `ratio` (n_test / n_train, p/(1-p) for "
                             "a test share p).")
    tolerance = _tolerance_iv(tolerance)
    f = scores.frame
    sub = f[f["metric"] == metric]
    names = [str(m) for m in _unique(sub["model"])]
    if len(names) < 2:
        raise NotApplicableError(f"the scores of {metric!r} hold one model only: nothing to "
                                 "compare.", "give the scores of two or more models.")
    task = "classification" if metric in CLASSIFICATION_METRICS | {"brier"} else "regression"
    full = [m for m in present
            if set(f.loc[f["metric"] == m, "model"].astype(str)) >= set(names)]
    second = next((m for m in _SECONDARY[task] if m in full and m != metric), None)
    metrics = [metric] + ([second] if second else [])
    return scores, names, metric, metrics, scheme, ratio, tolerance


def _unique(values):
    import pandas as pd

    return list(pd.unique(values))


def _designs(frame, metric) -> dict:
    """Study -> ``(n_repeats, n_folds)`` of the primary metric's scores (first model)."""
    sub = frame[frame["metric"] == metric]
    out = {}
    for study, g in sub.groupby("study", sort=False):
        g = g[g["model"] == g["model"].iloc[0]]
        out[study] = (int(g["repeat"].nunique()),
                      int(g.groupby("repeat")["fold"].nunique().max()))
    return out


def _sizes_recorded(frame, metrics) -> bool:
    if not {"n_train", "n_test"} <= set(frame.columns):
        return False
    sub = frame.loc[frame["metric"].isin(metrics), ["n_train", "n_test"]]
    return bool(len(sub)) and not sub.isna().any().any()


@fill_doc()
def audit_scores(scores, *, metric: str | None = None, scheme: str | None = None,
                 ratio: float | None = None, tolerance: float | None = None,
                 random_state=None) -> ComparisonAudit:
    """Are the differences between the models real? The audit's comparison on per-fold scores.

    The same recipe as :func:`audit` after its fits (one shared step, so the two entries give
    the same numbers on the same scores), for scores a user already has — the Scores layout,
    an mlr3 ``bmr$score()`` or a Weka Experimenter export (:func:`replikit.data.foreign.
    read_scores`), or :func:`replikit.experiment.scores_from_predictions`:

    1. **Within each study**, every pair of models on its common splits, with
       :func:`~replikit.compare.compare_scores`: the recommended tests of the study's design
       (Gardner & Brooks 2017, Table 1: the corrected repeated k-fold t for r x k CV, the
       corrected resampled t for repeated hold-out, the 5x2cv t and combined F for 5x2 CV),
       the TOST equivalence test with the corrected variance at the practical ``tolerance``
       (Schuirmann 1987) and the Bayesian correlated t (Corani & Benavoli 2015), on the
       primary ``metric`` and one secondary metric; p-values Holm-adjusted within each test
       over pairs, metrics and studies, intervals Bonferroni-simultaneous at 95% over the
       same family. The naive paired t runs beside them as the contrast (invalid).
    2. **The test-to-training size ratio** ``n_test / n_train`` of the corrected variance,
       ``var = (1/n + n_test/n_train) S²`` (Nadeau & Bengio 2003): the recorded ``n_train`` /
       ``n_test`` when the scores have them; else ``1/(k-1)`` with ``scheme='kfold'``; else
       ``ratio`` (``p/(1-p)`` for a hold-out test share ``p``) with ``scheme='holdout'``.
       With none of these (``scheme=None`` and no sizes) the tests that need the ratio are
       **skipped** and say why — never run on a guessed ``1/(k-1)`` — and so are the 5x2cv
       tests, which assume 2-fold CV, and the naive t.
    3. **Across studies** (three or more studies with a score for every model), the study
       means give the Friedman test with the Iman–Davenport F and the Nemenyi critical
       difference (Demšar 2006); with five or more, the hierarchical model of the fold
       scores (Corani et al. 2017) and the Bayesian signed-rank test on the study means
       (Benavoli et al. 2014, 2017) for the best model against the runner-up, as in
       :func:`audit`.

    **The light** (``verdict.level``), as in :func:`audit` and the audit's "The lights": a
    pair in a study is *decided* when the headline test of the study's design shows a
    difference or the TOST shows equivalence within ±``tolerance`` (both Holm-adjusted at
    alpha = 0.05); ``'good'`` (green) when every pair in every study is decided, ``'warn'``
    (amber) when one is not — and when the tests within studies were skipped (unknown
    scheme): the comparison across studies is reported but compares mean ranks, not every
    pair, so it does not earn a green light. Never ``'bad'``: a difference between models is
    not a failure. The key number is best − runner-up (ranked by mean primary score over
    all studies) with its simultaneous interval, from the study where that pair's Holm
    p-value is largest when there are several.

    **The tolerance** of the primary metric is ``tolerance``, else 0.01 for a score on a 0–1
    scale (R², ROC AUC, accuracy, balanced accuracy, error rate, the C-index, the mean
    time-dependent AUC and the integrated Brier score of survival models); an error in the outcome's
    units (MAE, RMSE, MSE, log loss) has no default without the outcome's SD, which scores do
    not carry: equivalence is then not tested for it (the Bayesian rows use a zero-width
    region), and the verdict says so.

    Parameters
    ----------
    scores : Scores, DataFrame or RunResult
        Columns ``study, model, repeat, fold, metric, value`` and optionally ``n_train,
        n_test``.
    metric : str, optional
        The primary metric. Default: the first of c_index, roc_auc, balanced_accuracy, accuracy, r2,
        error_rate, log_loss, brier, rmse, mse, mae in the scores.
    scheme : {'kfold', 'holdout', 'recorded'} or None
        How the scores were made where they do not record the sizes: ``'kfold'`` (each
        repeat splits the rows into k folds) or ``'holdout'`` (with ``ratio``). None or
        ``'recorded'``: from the recorded sizes, else unknown (the tests that need the ratio
        are skipped). Recorded sizes always take precedence.
    ratio : float, optional
        ``n_test / n_train`` of a hold-out scheme.
    tolerance : float, optional
        The practical tolerance on the primary metric, in its units (see above).
    random_state : None, int or numpy.random.Generator
        Root of the Bayesian tests' posterior draws across studies.

    Returns
    -------
    ComparisonAudit
        With ``entry='scores'``, ``ratio``, ``ratio_source`` and ``skipped``; ``rows_used``
        and ``n_rows`` are None.

    Raises
    ------
    ParameterError
        An unknown ``metric`` or ``scheme``, ``scheme='holdout'`` without ``ratio``, a bad
        ``ratio`` or ``tolerance``.
    NotApplicableError
        The scores of the primary metric hold one model.
    DataError
        Two models were not scored on the same splits.

    See Also
    --------
    audit : The same comparison, fitting the models on a dataset.
    compare_scores : The tests of every pair, with every option.
    replikit.experiment.scores_from_predictions : Scores from out-of-fold predictions.

    References
    ----------
    {refs:gardner2017,nadeau2003,bouckaert2004,corani2015,holm1979,demsar2006,benavoli2014,benavoli2017,corani2017}

    Examples
    --------
    >>> from replikit.data.examples import score_export
    >>> from replikit.data.foreign import read_scores
    >>> res = audit_scores(read_scores(score_export("weka")))
    >>> res.ratio_source, res.headline_test, res.metrics
    ('the recorded training and test set sizes', 'corrected_repeated_kfold_t', ('roc_auc', 'accuracy'))
    >>> res.verdict.level in ("good", "warn")
    True
    """
    from .api import primary_test

    scores, names, metric, metrics, scheme, ratio, given = _scores_iv(scores, metric, scheme,
                                                                      ratio, tolerance)
    root = root_seed_sequence(random_state)
    f = scores.frame
    designs = _designs(f, metric)
    studies = list(designs)
    skipped: dict = {}
    if _sizes_recorded(f, metrics):
        ratio, source = None, "the recorded training and test set sizes"
    elif scheme == "kfold":
        ks = {k for _, k in designs.values()}
        if min(ks) < 2:
            raise DataError("`scheme='kfold'`: a study's scores have one fold per repeat; "
                            "k-fold CV has two or more.")
        ratio = 1.0 / (ks.pop() - 1) if len(ks) == 1 else None
        source = ("1/(k-1) for the stated k-fold CV" + ("" if ratio is not None else
                                                         " (k of each study)"))
    elif scheme == "holdout":
        source = f"n_test/n_train = {number(ratio)} as stated for the hold-out scheme"
    else:
        ratio, source = None, "unknown"
        skipped[_NO_RATIO_TESTS] = (
            "the scores do not record the training and test set sizes and the scheme is not "
            "stated, so the test-to-training size ratio of the corrected variance is unknown; "
            "they are skipped, not run on a guessed 1/(k-1) (state how the folds were made: "
            "k-fold CV, `scheme='kfold'`, or repeated hold-out with its test share, "
            "`test_fraction` in the audit, `ratio` = n_test/n_train here)")
    tol = {m: (0.01 if m in _UNIT_SCORES else 0.0) for m in metrics}
    if given is not None:
        tol[metric] = given
    no_tolerance = [m for m in metrics if tol[m] == 0]
    heads = {s: primary_test(r, k) for s, (r, k) in designs.items()}
    j = _judge(scores, names=names, metric=metric, metrics=metrics,
               tests=None if skipped else "recommended", tolerance=tol, head=heads,
               study_scores=scores, root=root, ratio=ratio)
    label = _label(metric)
    r0, k0 = designs[studies[0]]
    scheme_text = "5x2" if (r0, k0) == (5, 2) else f"{k0}x{r0}"
    same = len(set(designs.values())) == 1
    notes = [f"per-fold scores of {number(len(names))} models in {number(len(studies))} "
             f"stud{'y' if len(studies) == 1 else 'ies'}"
             + (f", {r0} repeat{'s' if r0 != 1 else ''} of {k0}-fold resampling each."
                if same else ": " + "; ".join(f"{s} {r} x {k}"
                                              for s, (r, k) in designs.items()) + "."),
             f"Test-to-training size ratio of the corrected variance: {source}."]
    if j.table is not None:
        notes.append(_tests_note(j.table, j.head_method,
                                 "pairs x metrics x studies" if len(studies) > 1
                                 else "pairs x metrics"))
    for what, why in skipped.items():
        notes.append(f"Skipped: {what}: {why}.")
    for m in no_tolerance:
        notes.append(f"No equivalence test on {_label(m)}: an error in the outcome's units has "
                     "no default tolerance without the outcome's SD, which per-fold scores do "
                     "not carry (give `tolerance`).")
    if j.study_note:
        notes.append(j.study_note)
    if j.left_out:
        notes.append("Left out of the comparison across studies: "
                     + "; ".join(f"{s} ({r})" for s, r in j.left_out) + ".")
    caveats = []
    if any(r < 10 and (r, k) != (5, 2) and k >= 2 for r, k in designs.values()):
        caveats.append(f"{r0} repeat{'s' if r0 != 1 else ''} of {k0}-fold CV instead of the "
                       "10x10 of Gardner & Brooks (2017): more resampling noise, lower power"
                       if same else "fewer than 10 repeats of the CV in some studies: lower "
                       "power")
    if scheme == "kfold" and not _sizes_recorded(f, metrics):
        caveats.append("the sizes are not recorded: n_test/n_train = 1/(k-1) of equal folds, "
                       "as the stated k-fold scheme implies")
    if given is not None:
        why = "the tolerance given"
    elif metric in no_tolerance:
        why = ("an error in the outcome's units: no default without the outcome's SD; "
               "equivalence not tested")
    else:
        why = _tolerance_why(metric)
    verdict = _verdict(j.frame, metric, label, j.head_id, j.best, j.runner_up, None, None,
                       None, False, j.left_out, j.across, j.higher,
                       None if metric in no_tolerance else tol[metric], why, caveats=caveats,
                       skipped=next(iter(skipped.values()), None), study_table=j.study_table)
    if skipped and j.nemenyi is not None:
        text = (f"{verdict.sentence} Across {number(len(j.study_table))} studies: "
                f"{_rank_tests_text(j.nemenyi)}.")
        import dataclasses

        verdict = dataclasses.replace(verdict, sentence=text)
    return ComparisonAudit(
        verdict=verdict, primary_metric=metric, metric_label=label, metrics=tuple(metrics),
        models=tuple(names), scheme=scheme_text, n_folds=k0, n_repeats=r0, stratified=False,
        rows_used=None, n_rows=None, quick=False, alpha=ALPHA,
        confidence_level=CONFIDENCE_LEVEL, simultaneous=j.table is not None,
        tolerance=tol, headline_test=j.head_id, headline_method=j.head_method,
        comparisons=j.frame, table=j.table, naive=j.naive,
        naive_rejections=j.naive_rejections, valid_rejections=j.valid_rejections,
        mean_scores=j.mean_scores, best=j.best, runner_up=j.runner_up, scores=scores,
        study_table=j.study_table, nemenyi=j.nemenyi, studies_left_out=tuple(j.left_out),
        plackett_luce=j.plackett_luce,
        across_studies=tuple(j.across), notes=tuple(notes), seconds_fits=0.0,
        random_state_entropy=root.entropy, entry="scores", ratio=ratio, ratio_source=source,
        skipped=skipped)


@dataclass(frozen=True, slots=True)
class _Judged:
    """What :func:`_judge` finds: the tests of every pair and the comparison across studies."""

    table: object
    naive: object
    frame: pd.DataFrame
    head_id: str
    head_method: str
    mean_scores: pd.DataFrame
    best: str
    runner_up: str
    higher: bool
    valid_rejections: int
    naive_rejections: int
    study_table: pd.DataFrame | None
    left_out: list
    study_note: str | None
    nemenyi: object | None
    across: tuple
    plackett_luce: object | None = None


def _empty_comparisons() -> pd.DataFrame:
    import pandas as pd

    from .api import _COLUMNS

    frame = pd.DataFrame(columns=[*_COLUMNS, "headline"])
    frame["headline"] = frame["headline"].astype(bool)
    return frame


def _judge(scores, *, names, metric, metrics, tests, tolerance, head, study_scores, root,
           ratio=None) -> _Judged:
    """The comparison after the fits, shared by :func:`audit` and :func:`audit_scores`.

    ``tests``: the tests of :func:`compare_scores` (a list, or ``'recommended'``), or None when
    no test within a study can run (the comparison across studies still does); ``tolerance``:
    the practical tolerance per metric; ``head``: study -> the headline test's name (key None:
    every study); ``ratio``: n_test / n_train when the scores do not record the sizes.
    """
    from .api import TEST_IDS, TESTS, compare_scores

    f = scores.frame
    if tests is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the naive t's ValidityWarning: it is shown as such
            table = compare_scores(scores, metrics=metrics, tests=tests, tolerance=tolerance,
                                   alpha=ALPHA, confidence_level=CONFIDENCE_LEVEL,
                                   simultaneous=True, ratio=ratio)
            naive = compare_scores(scores, metrics=[metric], tests=["naive_paired_ttest"],
                                   alpha=ALPHA, confidence_level=CONFIDENCE_LEVEL)
        frame = table.frame.copy()
        naive_rejections = int(naive.frame["reject"].fillna(False).astype(bool).sum())
    else:
        table = naive = None
        frame = _empty_comparisons()
        naive_rejections = 0
    if None in head:
        head_ids = {None: TEST_IDS[head[None]]}
        frame["headline"] = (frame["test"] == head_ids[None]).to_numpy(bool)
    else:
        head_ids = {s: TEST_IDS[t] for s, t in head.items()}
        frame["headline"] = np.array([head_ids.get(s) == t for s, t in
                                      zip(frame["study"], frame["test"], strict=True)], bool)
    first = next(iter(head))
    head_id = head_ids[first]
    methods = frame.loc[frame["headline"], "method"]
    head_method = (str(methods.iloc[0]) if len(methods) else
                   "none (skipped)" if tests is None else TESTS[head[first]])

    mean_scores = (f.groupby(["model", "metric"], sort=False)["value"].mean().unstack("metric")
                   .reindex(index=[m for m in names if m in set(f["model"])], columns=metrics))
    higher = _higher_is_better(metric)
    order = mean_scores[metric].sort_values(ascending=not higher, kind="stable")
    best, runner_up = str(order.index[0]), str(order.index[1])

    primary_rows = frame[frame["headline"] & (frame["metric"] == metric)]
    valid_rejections = int(primary_rows["reject"].fillna(False).astype(bool).sum())

    study_table, left_out, study_note = _study_table(study_scores, names, metric)
    nemenyi = None
    across = ()
    if study_table is not None:
        from .multiple import nemenyi_test

        nemenyi = nemenyi_test(study_table, alpha=ALPHA, higher_is_better=higher)
        across = _across_studies(study_scores, study_table, best, runner_up, metric,
                                 tolerance[metric], root)
    pl = None
    if study_table is not None and study_table.shape[1] >= 3:
        from .rankings import plackett_luce

        pl = plackett_luce(study_table, higher_is_better=higher,
                           random_state=task_rng(root, ("compare-plackett-luce",)))
    return _Judged(table, naive, frame, head_id, head_method, mean_scores, best, runner_up,
                   higher, valid_rejections, naive_rejections, study_table, left_out,
                   study_note, nemenyi, tuple(across), pl)


def _across_studies(study_scores, study_table, best, runner_up, metric, tolerance,
                    root) -> list:
    """Best against runner-up across studies (>= 5 complete studies): the Bayesian signed-rank
    test on the study means and, with fold scores in ``study_scores``, the hierarchical model;
    seeded from the audit's root. Small posterior samples keep it to about a second (see
    :data:`_BAYES_SAMPLES`)."""
    import pandas as pd

    from .bayesian import bayesian_signed_rank_test, hierarchical_test

    if best not in study_table.columns or runner_up not in study_table.columns:
        return []
    study_table = study_table[[best, runner_up]].dropna()  # the studies scoring both
    if len(study_table) < _MIN_STUDIES_BAYES:
        return []
    out = [bayesian_signed_rank_test(study_table, best, runner_up, metric=metric,
                                     tolerance=tolerance, n_resamples=_BAYES_SAMPLES,
                                     random_state=task_rng(root, ("compare-across",)))]
    if hasattr(study_scores, "scores") and not isinstance(study_scores, pd.DataFrame):
        study_scores = study_scores.scores
    frame = getattr(study_scores, "frame", study_scores)
    if isinstance(frame, pd.DataFrame) and {"study", "model", "metric", "value", "fold"} \
            <= set(frame.columns):
        sub = frame[(frame["metric"] == metric) & frame["model"].isin([best, runner_up])
                    & frame["study"].isin(study_table.index)]
        wide = sub.pivot_table(index=["study", "repeat", "fold"] if "repeat" in sub.columns
                               else ["study", "fold"], columns="model", values="value")
        varying = (wide.shape[1] == 2 and
                   bool((wide[best] - wide[runner_up]).groupby(level="study").std().gt(0).any()))
        # two models scoring alike on every fold (two constant rules: C = 0.5 everywhere) leave
        # the hierarchical model nothing to fit; the signed-rank test above still reads them
        if len(sub) and sub.groupby(["study", "model"]).size().min() >= 2 and varying:
            out.insert(0, hierarchical_test(
                sub, best, runner_up, metric=metric, tolerance=tolerance,
                n_draws=_HIER_SAMPLES,
                n_chains=_HIER_CHAINS, n_warmup=_HIER_WARMUP,
                random_state=task_rng(root, ("compare-hierarchical",))))
    return out


def _top_within(study_table, higher: bool, pair) -> str:
    """A clause naming the model with the best mean rank within the studies when it is
    neither of the ``pair`` the posterior compares (gapminder: the pooled best pair gb and rf,
    while within every continent but one lr ranked first), else ''. Only the studies scoring
    every model count (a mean rank over different subsets of models would mislead)."""
    if study_table is not None:
        study_table = study_table.dropna()
    if study_table is None or study_table.shape[1] < 3 or len(study_table) < 2:
        return ""
    ranks = study_table.rank(axis=1, ascending=not higher).mean()
    top = str(ranks.idxmin())
    if top in pair or (ranks == ranks.min()).sum() > 1:
        return ""
    return (f" Within the studies {top} ranks best (mean rank {number(ranks[top])} of "
            f"{study_table.shape[1]}), ahead of both.")


def _across_sentence(res, higher: bool, study_table=None) -> tuple[str, str | None]:
    """The verdict's sentence about one posterior across studies, and a caveat when it favours
    the runner-up (the within-data verdict ranks the models by their mean score); with
    ``study_table``, the model ranked best within the studies when it is neither of the two."""
    top = _top_within(study_table, higher, (res.a, res.b))
    sentence, caveat = _across_words(res, higher)
    return sentence + top, caveat


def _across_words(res, higher: bool) -> tuple[str, str | None]:
    p_best = res.p_right if higher else res.p_left
    p_next = res.p_left if higher else res.p_right
    name = ("hierarchical model" if res.test == "hierarchical"
            else "Bayesian signed-rank test")
    text = (f"Across {number(res.n_datasets)} studies ({name}, practical tolerance "
            f"±{number(res.tolerance)}): P({res.a} better) = {number(p_best, 2)}, "
            f"P(practically equivalent) = {number(res.p_rope, 2)}, "
            f"P({res.b} better) = {number(p_next, 2)}")
    if p_best >= 0.95:
        return text + f": {res.a} better across studies.", None
    if p_next >= 0.95:
        return (text + f": {res.b} better across studies.",
                f"across studies the {name} favours {res.b}, not {res.a}")
    if res.p_rope >= 0.95:
        return text + ": practically equivalent across studies.", None
    return text + ": undecided across studies.", None


def _tests_note(table, head_method, family: str = "pairs x metrics") -> str:
    """How the tests were adjusted and the intervals made."""
    fam = table.frame.dropna(subset=["pvalue"]).groupby("test").size()
    m = int(fam.max()) if len(fam) else 0
    return (f"Headline test: {head_method}; p-values Holm-adjusted within each test over "
            f"{number(m)} comparison(s) ({family}); intervals "
            f"Bonferroni-simultaneous, jointly at {percent(CONFIDENCE_LEVEL)} over the "
            "same comparisons"
            + (f" (each at {percent(1 - (1 - CONFIDENCE_LEVEL) / m, 4)})" if m > 1
               else "")
            + "; Bayesian rows: 95% credible intervals.")


def _notes(plan, n, used, quick, table, head_method, study_note, left_out) -> list[str]:
    notes = []
    notes.append(f"all {number(n)} rows.")
    design = ("5x2 CV (quick mode)" if plan.scheme == "5x2" else
              f"{plan.n_repeats} repeats of {plan.n_folds}-fold CV")
    if plan.stratify:
        design += ", stratified by class"
    if plan.min_class is not None and plan.n_folds < 10 and plan.scheme != "5x2":
        design += (f"; {plan.n_folds} folds because the rarest class has {plan.min_class} "
                   "rows")
    notes.append(design + ".")
    notes.append(_tests_note(table, head_method))
    if study_note:
        notes.append(study_note)
    if left_out:
        notes.append("Left out of the comparison across studies: "
                     + "; ".join(f"{s} ({r})" for s, r in left_out) + ".")
    return notes


_PAIRS_LISTED = 3  # up to this many pairs the verdict names each; beyond, it groups by winner


def _where(r, by_study: bool) -> str:
    """`` in <study>`` when the comparisons span several studies."""
    return f" in {r.study}" if by_study else ""


def _grouped(main, rejected, by_study: bool = False) -> list[str]:
    """``'lr beats knn and dummy'`` per winning model, from the headline rows that reject."""
    wins: dict[str, list[str]] = {}
    for r, rej in zip(main.itertuples(), rejected, strict=True):
        if not rej:
            continue
        winner = str(r.conclusion).rsplit(" better", 1)[0]
        loser = r.b if winner == r.a else r.a
        wins.setdefault(winner, []).append(str(loser) + _where(r, by_study))
    out = []
    for winner, losers in wins.items():
        beaten = losers[0] if len(losers) == 1 else ", ".join(losers[:-1]) + " and " + losers[-1]
        out.append(f"{winner} beats {beaten}")
    return out


def _tolerance_why(metric: str) -> str:
    """Why the default tolerance of ``metric`` is what it is, in words."""
    if metric in ("mae", "rmse"):
        return "the default: 1% of the outcome's standard deviation"
    if metric == "mse":
        return "the default: 1% of the outcome's variance"
    return "the default: one point on a 0–1 score"


def _light(differ, equivalent) -> np.ndarray:
    """The card's light from each pair's decisions, vectorised over leading axes.

    ``differ`` and ``equivalent`` (..., n_pairs) booleans: the headline test shows a difference,
    the TOST shows equivalence within the tolerance (both after Holm's adjustment). A pair is
    decided by either; ``'good'`` when every pair is decided, else ``'warn'``. The validity
    study (:mod:`replikit.compare.validity`) simulates this same rule.
    """
    decided = np.asarray(differ, bool) | np.asarray(equivalent, bool)
    return np.where(decided.all(axis=-1), "good", "warn")


def _names(pairs: list[str]) -> str:
    return pairs[0] if len(pairs) == 1 else ", ".join(pairs[:-1]) + " and " + pairs[-1]


def _plan_caveats(plan, n, quick) -> list[str]:
    """The caveats of the data entry's resampling design."""
    caveats = []
    if quick:
        caveats.append("quick mode: 5x2 CV, lower power than 10x10 CV (Gardner & Brooks "
                       "2017, sec. 4)")
    elif plan.min_class is not None and plan.n_folds < 10:
        caveats.append(f"{plan.n_folds}-fold CV: the rarest class has {plan.min_class} rows")
    if not quick and plan.n_repeats < 10:
        caveats.append(f"{plan.n_repeats} repeats of the CV instead of the paper's 10 (the "
                       f"audit's {'time ' if plan.budgeted else ''}budget on {number(n)} rows"
                       f"{' for these models' if plan.budgeted else ''}; every row used): "
                       "more resampling noise")
    if not quick and plan.fewer_folds:
        caveats.append("5-fold CV instead of 10 (the audit's time budget for these models on "
                       f"{number(n)} rows): each model trained on 80% of the rows")
    return caveats


def _key(row, by_study: bool):
    return (row.study, row.a, row.b) if by_study else (row.a, row.b)


def _verdict(frame, metric, label, head_id, best, runner_up, plan, n, used, quick,
             left_out, across=(), higher=True, tolerance=0.01,
             tolerance_why="the default: one point on a 0–1 score", *, caveats=None,
             skipped: str | None = None, study_table=None) -> Verdict:
    """One sentence about the primary metric: each pair once, decided (a difference shown by
    the headline test, or equivalence within ±tolerance shown by the TOST) or undecided.

    ``plan``, ``n`` and ``quick`` give the data entry's caveats; the scores entry passes
    ``plan=None`` and its own ``caveats``. With several studies each pair is named with its
    study. ``tolerance=None``: no equivalence was tested (``tolerance_why`` says why).
    ``skipped``: why no test within a study ran (the light is then amber).
    """
    import pandas as pd

    main = frame[frame["headline"] & (frame["metric"] == metric)]
    caveats = list(caveats or []) if plan is None else _plan_caveats(plan, n, quick)
    by_study = "study" in main.columns and main["study"].nunique() > 1
    tol_text = (f"±{number(tolerance)} in {label} ({tolerance_why})" if tolerance is not None
                else f"no tolerance in {label} ({tolerance_why})")
    if skipped is not None or main.empty or main["pvalue_adjusted"].isna().all():
        parts = [f"No pair could be tested within a study on {label}: {skipped}."
                 if skipped is not None else
                 f"No test could be computed on {label} (every score was missing or "
                 "constant)."]
        for res in across[:1] if skipped is not None else ():
            sentence, caveat = _across_sentence(res, higher, study_table)
            parts.append(sentence)
            if caveat:
                caveats.append(caveat)
        return Verdict(" ".join(parts), label, "warn", caveats=tuple(caveats),
                       label=f"best minus runner-up, {label}",
                       tolerance=f"judged against {tol_text}: no interval could be computed")
    head_name = test_name(head_id)
    rejected = main["reject"].fillna(False).astype(bool).to_numpy()
    tost = frame[(frame["test"] == "equivalence_tost") & (frame["metric"] == metric)]
    tost_rej = {_key(r, by_study): (bool(r.reject) if pd.notna(r.reject) else False,
                                    r.pvalue_adjusted)
                for r in tost.itertuples()}
    equivalent = np.array([(not rej) and tost_rej.get(_key(r, by_study), (False, None))[0]
                           for r, rej in zip(main.itertuples(), rejected, strict=True)],
                          dtype=bool)
    level = str(_light(rejected, equivalent))
    found = [f"{r.conclusion} ({r.a} vs {r.b}{_where(r, by_study)}, "
             f"{p_is(r.pvalue_adjusted, 'Holm p')})"
             for r, rej in zip(main.itertuples(), rejected, strict=True) if rej]
    equiv = [f"{r.a} vs {r.b}{_where(r, by_study)}"
             for r, eq in zip(main.itertuples(), equivalent, strict=True) if eq]
    open_ = [f"{r.a} vs {r.b}{_where(r, by_study)}"
             for r, rej, eq in zip(main.itertuples(), rejected, equivalent, strict=True)
             if not (rej or eq)]
    how = f"Holm-adjusted, alpha = {number(ALPHA)}"
    parts = []
    if len(main) > _PAIRS_LISTED:  # many pairs: by winner, so the sentence stays readable
        if found:
            worst = float(main.loc[rejected, "pvalue_adjusted"].max())
            bound = f"≤ {pvalue(worst)}" if worst >= 0.001 else "< 0.001"
            parts.append(f"On {label} ({head_name}, {how}): "
                         + "; ".join(_grouped(main, rejected, by_study))
                         + f" (Holm p {bound}).")
    elif found:
        parts.append(f"On {label} ({head_name}): " + "; ".join(found) + ".")
    if equiv:
        parts.append(f"Shown equivalent within ±{number(tolerance)} (TOST equivalence test, "
                     f"{how}): " + (_names(equiv) if len(equiv) <= _PAIRS_LISTED
                                    else f"{number(len(equiv))} pairs") + ".")
    if open_:
        pairs = (_names(open_) if len(open_) <= _PAIRS_LISTED
                 else f"{number(len(open_))} of {number(len(main))} pairs")
        parts.append(f"Undecided on {label}: {pairs} — neither a difference "
                     + ("" if found else f"({head_name}, {how}) ")
                     + (f"nor equivalence within ±{number(tolerance)} shown."
                        if tolerance is not None else
                        "shown, and equivalence not tested (no tolerance)."))
    # the other valid frequentist tests of the design (the combined F beside the 5x2cv t)
    others = frame[~frame["headline"] & frame["valid"] & (frame["test"] != _BAYES)
                   & (frame["test"] != "equivalence_tost") & (frame["metric"] == metric)]
    head_reject = {_key(r, by_study): rej
                   for r, rej in zip(main.itertuples(), rejected, strict=True)}
    for _, g in others.groupby("test", sort=False):
        differ = [f"{r.a} vs {r.b}{_where(r, by_study)}" for r in g.itertuples()
                  if pd.notna(r.reject) and bool(r.reject) != head_reject.get(_key(r, by_study))]
        if differ:
            caveats.append(f"{g['method'].iloc[0]} decides otherwise on " + ", ".join(differ))
    if left_out:
        caveats.append(f"{number(len(left_out))} stud{'y' if len(left_out) == 1 else 'ies'} left out "
                       "of the comparison across studies")
    # the key number: best minus runner-up on the primary metric, from the headline row
    estimate = ci_low = ci_high = None
    bound = "no interval for best − runner-up"
    row = main[((main["a"] == best) & (main["b"] == runner_up))
               | ((main["a"] == runner_up) & (main["b"] == best))]
    in_study = ""
    if by_study and len(row):  # the study where the pair is least clear: its largest Holm p
        row = row.iloc[[int(np.argmax(row["pvalue_adjusted"].fillna(1.0).to_numpy(float)))]]
        in_study = (f" in {row['study'].iloc[0]} (the largest Holm p of "
                    f"{number(main['study'].nunique())} studies)")
    if len(row):
        r = row.iloc[0]
        sign = 1.0 if r["a"] == best else -1.0
        lo, hi = sign * float(r["ci_low"]), sign * float(r["ci_high"])
        estimate = sign * float(r["estimate"])
        text = (f"Best minus runner-up on {label}{in_study}: {best} − {runner_up} = "
                f"{number(estimate)}")
        if np.isfinite(lo) and np.isfinite(hi):
            ci_low, ci_high = min(lo, hi), max(lo, hi)
            ci = (f"simultaneous {percent(CONFIDENCE_LEVEL)} CI "
                  f"{_interval_text(ci_low, ci_high)}")
            text += f" ({ci})"
            bound = f"{best} − {runner_up} {number(estimate)}, {ci}"
        else:
            # the F test has no interval: the design's other valid t-type test gives one
            alt = frame[(frame["metric"] == metric) & frame["valid"] & ~frame["headline"]
                        & (frame["test"] != _BAYES) & (frame["test"] != "equivalence_tost")
                        & (frame["a"] == r["a"]) & (frame["b"] == r["b"])
                        & np.isfinite(frame["ci_low"].astype(float))
                        & np.isfinite(frame["ci_high"].astype(float))]
            if len(alt):
                a = alt.iloc[0]
                lo, hi = sign * float(a["ci_low"]), sign * float(a["ci_high"])
                ci_low, ci_high = min(lo, hi), max(lo, hi)
                ci = (f"simultaneous {percent(CONFIDENCE_LEVEL)} CI "
                      f"{_interval_text(ci_low, ci_high)}, {test_name(a['test'])}")
                text += f" ({ci})"
                bound = f"{best} − {runner_up} {number(estimate)}, {ci}"
            else:
                caveats.append(f"the {head_name} gives no interval for the difference")
                bound = f"{best} − {runner_up} {number(estimate)}, no interval ({head_name})"
        parts.append(text + ".")
    n_dec = int((rejected | equivalent).sum())
    tolerance_words = (f"judged against {tol_text}: {number(n_dec)} of {number(len(main))} "
                       f"pairs decided; {bound}")
    if across:  # the first posterior: the hierarchical model when there are fold scores
        sentence, caveat = _across_sentence(across[0], higher, study_table)
        parts.append(sentence)
        if caveat:
            caveats.append(caveat)
    return Verdict(" ".join(parts), label, level, estimate=estimate, ci_low=ci_low,
                   ci_high=ci_high, caveats=tuple(caveats),
                   label=f"best minus runner-up, {label}"
                   + (f", {row['study'].iloc[0]}" if in_study else ""),
                   tolerance=tolerance_words)
