"""The cross-study replicability audit of a multi-study dataset (Parmigiani 2023).

:func:`audit` is the entry of the audit report's section. From data and models it builds the
fixed rules of Parmigiani (2023) (each model trained once on a random half of every study), assesses the
rule with the highest average utility for its users (``U_k`` per study with bootstrap intervals,
the smallest ε, distances, permutation tests, dominance of the other rules), then the training
technique behind it: the cross-study validation matrix and leave-one-study-out on the report's
primary metric. Every fit is a :func:`replikit.experiment.run` call.

The package binds :func:`audit` eagerly (``replikit.multistudy.audit`` is the function, not
this module), so this module imports nothing heavy at import time.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .._compat import renamed_fields
from .._format import number, pvalue
from .._random import root_seed_sequence, task_int_seed, task_rng
from .._validation import check_int
from ..errors import NotApplicableError, ParameterTypeError
from ..results import ConfidenceInterval, Result, Verdict, to_jsonable

if TYPE_CHECKING:
    import pandas as pd

    from ..data.tables import Predictions
    from ..methods import PermutationMethod
    from .analysis import Assessment
    from .conjunction import ReplicatedIn
    from .equivalence import EpsilonTest
    from .training import CrossStudyResult, LeaveOneStudyOutResult
    from .utilities import StudyUtilities

__all__ = ["MultiStudyAudit", "audit", "audit_predictions", "MIN_STUDY_ROWS", "MIN_PER_CLASS",
           "MIN_UNITS", "LOSO_BUDGET", "ALPHA", "DEFAULT_TOLERANCE", "HALF_SPLIT"]

MIN_STUDY_ROWS = 20  # rows a study needs to be halved and cross-validated within itself
MIN_PER_CLASS = 4  # rows of every class a study needs (classification)
MIN_UNITS = 10  # held-out units a study needs to enter the rule's assessment
#: Row-fits (K fits x rows per fit) above which leave-one-study-out of a costly rule model
#: (not linear, not a baseline) uses the linear model instead. A count, not a time measured on
#: this machine, so that the choice — and the report — is the same on every machine.
LOSO_BUDGET = 100_000
_CHEAP = ("LinearRegression", "Ridge", "RidgeCV", "Lasso", "LassoCV", "ElasticNet",
          "ElasticNetCV", "LogisticRegression", "LogisticRegressionCV", "DummyRegressor",
          "DummyClassifier", "LinearDiscriminantAnalysis")
ALPHA = 0.05  # level of the verdict's confidence bounds and of the permutation test
#: The default tolerance of the card's light: 10% of the pooled loss (mean squared error,
#: Brier score or error rate). A rule whose loss differs between any two studies by less than a
#: tenth of its typical loss serves every study's users about equally; a larger gap is one a
#: user of the worse study would notice. It is a share, not a number in the metric's units, so that it means the same on any
#: scale; ``tolerance=`` (``--tolerance`` on the command line) changes it.
DEFAULT_TOLERANCE = 0.10

#: How :func:`audit` trains its rules: the first caveat of its verdict.
HALF_SPLIT = "each rule is trained on half of every study and assessed on the other half"

UTILITY_LABELS = {"brier": "minus the Brier score", "accuracy": "accuracy",
                  "squared": "minus the squared error"}
#: The quantity whose spread across studies the verdict's key number is (the spread of U_k and
#: of -U_k are the same).
UTILITY_QUANTITIES = {"brier": "Brier score", "accuracy": "accuracy",
                      "squared": "mean squared error"}
UTILITY_DESCRIPTIONS = {
    "brier": ("minus the Brier score, U = −½ Σ_c (p(c) − I{y = c})² (0 is perfect; a proper "
              "score)"),
    "accuracy": "accuracy I{φ = y}",
    "squared": "U = −(y − φ)², so U_k = −MSE_k",
}


@renamed_fields(cv="n_folds", smallest_epsilon="smallest_tolerance")
@dataclass(frozen=True, slots=True)
class MultiStudyAudit(Result):
    """Everything :func:`audit` computes.

    Attributes
    ----------
    rule : str
        The model assessed: the fixed rule with the highest average utility.
    utility : {'brier', 'accuracy', 'squared'}
        The users' utility (see :func:`audit`).
    mean_utility : dict
        Model -> average utility over every held-out unit (the rule choice).
    utilities : StudyUtilities
        ``U_k`` of the rule in every study assessed (eq. 1), the K×K matrix ``U_k − U_k'``
        (sec. 3.2) and the smallest ε (Defs. 3.1, 3.2).
    assessment : Assessment
        :func:`~replikit.multistudy.assess` of the rule: distances (Def. 5.1), the within-study
        bootstrap (sec. 6.1) and the permutation tests (sec. 6.2).
    conjunction : ReplicatedIn or None
        "The assessed rule beats rule r in at least u of the K studies" for every other rule:
        per study a one-sided paired t-test of the unit utilities (the same held-out units),
        combined by Fisher's partial conjunction with BH across the rules at ``ALPHA``
        (Benjamini & Heller 2008); ``None`` with a single model.
    equivalence : EpsilonTest
        :func:`~replikit.multistudy.epsilon_test` of the rule's utilities (delta-method SEs,
        level ``ALPHA``): the smallest ε shown at level ``ALPHA`` (the upper confidence bound
        of ``max|Δ|``, the headline) and the bias-aware spread estimate.
    rules : DataFrame
        Every rule: ``rule, mean_utility, smallest_tolerance`` (observed) and, against the
        assessed rule,
        ``dominated`` (the assessed rule dominates it, Def. 3.3), ``dominates`` (it dominates
        the assessed rule) and ``region`` (Fig. 1). The assessed rule's row comes first.
    rule_utilities : dict
        Model -> its :class:`StudyUtilities` on the studies assessed.
    predictions : Predictions
        Every model's predictions of the held-out halves (the run's output with each unit's
        study), ready for the other functions of :mod:`replikit.multistudy`.
    cross_study : CrossStudyResult
        Cross-study validation of the rule's training technique on ``metric`` (Bernau et al.
        2014; Parmigiani 2023, sec. 7.4).
    loso : LeaveOneStudyOutResult
        Leave-one-study-out on ``metric`` of ``loso_model``.
    loso_model : str
        The rule's model, or ``'lr'`` when the rule's model is neither linear nor a baseline
        and its leave-one-study-out would take more than ``LOSO_BUDGET`` row-fits.
    loso_row_fits : int
        The row-fits of the rule's leave-one-study-out: K fits on the left-in rows.
    metric : str
        The metric of the cross-study matrix and of leave-one-study-out.
    n_train : int
        Rows the rules were trained on (half of every study).
    n_resamples : int
        Bootstrap resamples.
    permutation : PermutationMethod
        The permutation tests' settings.
    n_folds : int
        Folds of the within-study cross-validation (the matrix's diagonal).
    tv_bins : int
        Quantile bins of continuous (φ(x), y) in the total variation distance.
    quick : bool
        Fewer resamples, permutations and folds.
    studies_left_out : tuple of (study, reason)
        Studies too small for the audit (fewer than ``MIN_STUDY_ROWS`` rows, or for
        classification fewer than ``MIN_PER_CLASS`` rows of a class).
    studies_dropped : tuple
        Studies with fewer than ``MIN_UNITS`` held-out units, left out of the rule's assessment.
    seconds : float
        Time taken.
    notes : tuple of str
        What was done: studies left out and why, the model of leave-one-study-out, the notes of
        the assessment, the matrix and leave-one-study-out.
    verdict : Verdict
        The conclusion: the bias-aware spread with its interval ``[lower, upper]`` (95%
        confidence bounds of the largest difference), the light judged against
        :attr:`tolerance` and the caveats.
    tolerance : float
        The tolerance ε the light is judged against, in the utility's units.
    tolerance_share : float or None
        ε as a share of :attr:`pooled_loss` when the tolerance is relative (the default,
        ``DEFAULT_TOLERANCE``), else ``None``.
    pooled_loss : float
        The rule's loss over every held-out unit assessed (mean squared error, Brier score or
        error rate), the reference of a relative tolerance.
    design : str
        How the rules' predictions were made, in words (the verdict's first caveat):
        :data:`HALF_SPLIT` for :func:`audit`; for :func:`audit_predictions` whether they are
        read as one fixed rule per model or as a training procedure refitted per fold.
    fits_per_rule : int or None
        Folds per model in the repeat used (:func:`audit_predictions`): 1 is read as one fixed
        rule, more as a training procedure refitted per fold (at least that many fits; more
        when the folds were made within each study); ``None`` for :func:`audit` (one fit per
        rule).

    See Also
    --------
    audit : Computes it.
    Assessment : The analysis of the rule assessed.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.linear_model import LinearRegression
    >>> from replikit.data.userdata import dataset_from_frame
    >>> from replikit.multistudy import audit
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"x": rng.normal(size=120), "site": np.repeat(["a", "b", "c"], 40)})
    >>> df["y"] = df.x + rng.normal(size=120)
    >>> a = audit(dataset_from_frame(df, target="y", study="site"),
    ...           models={"lr": LinearRegression()}, quick=True, random_state=0)
    >>> a.verdict.label
    'largest difference between studies, mean squared error'
    """

    rule: str
    utility: str
    mean_utility: dict
    utilities: StudyUtilities
    assessment: Assessment
    rules: pd.DataFrame
    rule_utilities: dict = field(repr=False)
    predictions: Predictions = field(repr=False)
    cross_study: CrossStudyResult = field(repr=False)
    loso: LeaveOneStudyOutResult = field(repr=False)
    loso_model: str = ""
    loso_row_fits: int = 0
    metric: str = ""
    n_train: int = 0
    n_resamples: int = 0
    permutation: PermutationMethod | None = None
    n_folds: int = 5
    tv_bins: int = 10
    quick: bool = False
    studies_left_out: tuple = ()
    studies_dropped: tuple = ()
    seconds: float = 0.0
    notes: tuple = ()
    verdict: Verdict | None = None
    equivalence: EpsilonTest | None = field(default=None, repr=False)
    conjunction: ReplicatedIn | None = field(default=None, repr=False)
    tolerance: float = float("nan")
    tolerance_share: float | None = None
    pooled_loss: float = float("nan")
    design: str = HALF_SPLIT
    fits_per_rule: int | None = None

    @property
    def title(self) -> str:
        return (f"Cross-study replicability of {self.rule} ({self.utility_label}; "
                "Parmigiani 2023)")

    @property
    def utility_label(self) -> str:
        """The utility in words (``'minus the Brier score'``, ...)."""
        return UTILITY_LABELS[self.utility]

    @property
    def utility_description(self) -> str:
        """The utility's formula in words."""
        return UTILITY_DESCRIPTIONS[self.utility]

    @property
    def statistic(self) -> float:
        """``max|U_k − U_k'|``: the observed smallest ε of absolute ε-replicability (Def. 3.1),
        a maximum of noisy differences, biased upward (see :attr:`spread`)."""
        return self.assessment.statistic

    @property
    def spread(self) -> float:
        """The bias-aware estimate of the studies' true ``max|θ_k − θ_k'|`` (empirical Bayes,
        :func:`~replikit.multistudy.epsilon_test`)."""
        return self.equivalence.estimate

    @property
    def smallest_tolerance(self) -> float:
        """The smallest tolerance ε for which ε-replicability is shown at level ``ALPHA``: the
        upper ``1 − ALPHA`` confidence bound of ``max|Δ|`` (intersection–union test)."""
        return self.equivalence.smallest_tolerance

    @property
    def lower_bound(self) -> float:
        """A lower ``1 − ALPHA`` confidence bound of the true ``max|Δ|`` (Bonferroni over the
        pairs of studies, see :func:`~replikit.multistudy.epsilon_test`): the card is red when
        it exceeds :attr:`tolerance`."""
        return self.equivalence.lower_bound

    @property
    def pvalue(self) -> float:
        """Permutation p-value of :attr:`statistic` (exact replicability as the null)."""
        return self.assessment.pvalue

    @property
    def alternative(self) -> str:
        """``'greater'``: a large spread speaks against exact replicability."""
        return self.assessment.alternative

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """Interval ``[lower, upper]`` of the true ``max|Δ|``, each end a ``confidence_level``
        bound: the largest pairwise Bonferroni lower bound (at 0.95, :attr:`lower_bound`) and the
        largest pairwise upper bound of the intersection–union test (at 0.95,
        :attr:`smallest_tolerance`) — the interval the verdict's light rests on. The
        percentile bootstrap interval of the biased maximum stays in ``assessment``.

        Parameters
        ----------
        confidence_level : float, default 0.95
            Level of the interval.

        Returns
        -------
        ConfidenceInterval
            ``(lower, upper)``.
        """
        return self.equivalence.confidence_interval(confidence_level)

    def utility_intervals(self, confidence_level: float = 0.95) -> np.ndarray:
        """Bootstrap percentile intervals of every ``U_k``.

        Parameters
        ----------
        confidence_level : float, default 0.95
            Level of the intervals.

        Returns
        -------
        ndarray of shape (K, 2)
            Low and high end per study.
        """
        return self.assessment.bootstrap.utility_interval(confidence_level)

    def to_frame(self) -> pd.DataFrame:
        """One row per study assessed.

        Returns
        -------
        DataFrame
            ``study, n, utility, se, ci_low, ci_high`` (within-study bootstrap, 95% percentile
            interval) and, for classification, ``sensitivity``, ``specificity`` and
            ``prevalence``.
        """
        su, boot = self.utilities, self.assessment.bootstrap
        ci = self.utility_intervals()
        out = su.to_frame()[["study", "n", "utility"]].copy()
        out["se"] = boot.utility_se()
        out["ci_low"], out["ci_high"] = ci[:, 0], ci[:, 1]
        for c in ("sensitivity", "specificity", "prevalence"):
            if c in su.table:
                out[c] = su.table[c].to_numpy()
        return out.reset_index(drop=True)

    def plot(self, ax=None):
        """``U_k`` per study with 95% bootstrap intervals.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (default: a new figure).

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on.
        """
        from .plots import plot_study_utilities

        return plot_study_utilities(self.utilities, self.utility_intervals(), ax=ax)

    def to_dict(self) -> dict[str, Any]:
        """The numbers of the audit in JSON types (without the predictions and resamples).

        Returns
        -------
        dict
            The rule, utility, studies, spread, smallest ε shown, p-value, the equivalence
            test, the rules compared, the cross-study matrix, leave-one-study-out, the settings,
            the notes and the verdict.
        """
        return to_jsonable({
            "rule": self.rule, "utility": self.utility, "mean_utility": self.mean_utility,
            "studies": self.to_frame(), "statistic": self.statistic, "spread": self.spread,
            "smallest_tolerance": self.smallest_tolerance, "lower_bound": self.lower_bound,
            "tolerance": self.tolerance, "tolerance_share": self.tolerance_share,
            "pooled_loss": self.pooled_loss, "pvalue": self.pvalue,
            "alternative": self.alternative,
            "equivalence": self.equivalence, "rules": self.rules,
            "conjunction": None if self.conjunction is None else self.conjunction.table,
            "cross_study": self.cross_study,
            "loso": None if self.loso is None else self.loso.scores,
            "loso_model": self.loso_model, "loso_row_fits": self.loso_row_fits,
            "metric": self.metric, "n_train": self.n_train, "n_resamples": self.n_resamples,
            "permutation_n_resamples": (None if self.permutation is None
                                        else self.permutation.n_resamples),
            "n_folds": self.n_folds, "tv_bins": self.tv_bins, "quick": self.quick,
            "studies_left_out": [list(x) for x in self.studies_left_out],
            "studies_dropped": list(self.studies_dropped), "seconds": self.seconds,
            "notes": list(self.notes), "verdict": self.verdict, "design": self.design,
            "fits_per_rule": self.fits_per_rule})

    def __str__(self) -> str:
        return (f"{self.title}\n  {self.utilities.K} studies; max |U_k - U_k'| = "
                f"{number(self.statistic, 4)} observed, {number(self.spread, 4)} bias-aware; "
                f"replicable within any ε >= {number(self.smallest_tolerance, 4)} (95% upper "
                f"bound); permutation p = {pvalue(self.pvalue)}\n  {self.verdict}")


def _study_subset(d, min_rows: int, min_per_class: int):
    """The dataset restricted to studies with ``min_rows`` rows and (classification)
    ``min_per_class`` rows of every class; and ``[(study, reason)]`` for those left out, in the
    order the studies first appear."""
    import dataclasses

    import pandas as pd

    study = d.study.astype(str)
    left_out = []
    classes = sorted(pd.unique(d.y)) if d.task == "classification" else []
    names = dict(enumerate(d.classes)) if d.classes else {}
    for s in pd.unique(study):
        rows = (study == s).to_numpy()
        n = int(rows.sum())
        if n < min_rows:
            left_out.append((s, f"{n} row{'s' if n != 1 else ''} (fewer than {min_rows})"))
            continue
        if classes:
            counts = pd.Series(d.y[rows]).value_counts()
            short = [c for c in classes if counts.get(c, 0) < min_per_class]
            if short:
                shown = ", ".join(str(names.get(c, c)) for c in short)
                left_out.append((s, f"class{'es' if len(short) > 1 else ''} {shown} "
                                    f"{'absent' if min_per_class == 1 else 'too rare'}"))
    if not left_out:
        return d, []
    out = {s for s, _ in left_out}
    mask = ~study.isin(out).to_numpy()
    sub = dataclasses.replace(d, X=d.X[mask].reset_index(drop=True),
                              y=d.y[mask].reset_index(drop=True),
                              study=d.study[mask].reset_index(drop=True))
    return sub, left_out


def _tolerance_iv(tolerance) -> tuple[float, bool]:
    """``(value, relative)`` from ``None`` (the default share), a number >= 0 (the utility's
    units), a string ``'N%'`` or ``'N'``, or an object with ``value`` and ``relative`` (the
    report's Tolerance)."""
    from ..errors import ParameterError

    if tolerance is None:
        return DEFAULT_TOLERANCE, True
    if hasattr(tolerance, "value") and hasattr(tolerance, "relative"):
        value, relative = float(tolerance.value), bool(tolerance.relative)
        text = repr(tolerance)
    else:
        text = str(tolerance).strip() if isinstance(tolerance, str) else None
        relative = bool(text and text.endswith("%"))
        try:
            value = float(text[:-1]) / 100 if relative else float(tolerance)
        except (TypeError, ValueError):
            value = float("nan")
        text = repr(tolerance)
    if not (value >= 0 and math.isfinite(value)) or (relative and value > 1):
        raise ParameterError(f"`tolerance` must be a number >= 0 in the utility's units or a "
                             f"share of the pooled loss such as '10%'; got {text}.")
    return value, relative


def _audit_iv(dataset, models, metric, quick, n_jobs):
    from ..data.userdata import Dataset
    from .training import get_metric

    if not isinstance(dataset, Dataset):
        raise ParameterTypeError(f"`dataset` must be a replikit Dataset (load_dataset, "
                                 f"dataset_from_frame); got {type(dataset).__name__}.")
    if models is not None and (not isinstance(models, dict) or not models):
        raise ParameterTypeError(f"`models` must be a non-empty dict of name -> estimator or "
                                 f"None; got {models!r}.")
    n_jobs = check_int(n_jobs, "n_jobs", min_value=1)
    classification = dataset.task == "classification"
    if metric is None:
        metric = "balanced_accuracy" if classification else "r2"
    n_classes = int(dataset.y.nunique()) if classification else None
    get_metric(metric, task=dataset.task, n_classes=n_classes)
    return metric, bool(quick), n_jobs


def audit(dataset, *, models=None, metric=None, tolerance=None, quick: bool = False,
          random_state=None, n_jobs: int = 1, engine=None, progress=None) -> MultiStudyAudit:
    """Whether a prediction rule is replicable across studies, for its users (Parmigiani 2023).

    The recipe:

    1. **Studies.** Studies with fewer than ``MIN_STUDY_ROWS`` = 20 rows, or for
       classification fewer than ``MIN_PER_CLASS`` = 4 rows of some class, are left out with
       the reason (every study is halved and cross-validated within itself);
       :class:`~replikit.errors.NotApplicableError` when fewer than two remain, or when the data
       have a single study.
    2. **Fixed rules.** Every model is trained once on a random half of every study's rows and
       applied, unchanged, to the other half of every study — the fixed rule φ of sec. 3, which
       must not be trained on the units that assess it. One :func:`replikit.experiment.run` per
       model with the :class:`~replikit.experiment.cross_study.StudyHoldOut` scheme (the same
       half split for every model); its Predictions feed
       :func:`~replikit.multistudy.from_predictions` directly.
    3. **Utility** (eqs. 1–4): for regression ``U = −(y − φ)²`` (so ``U_k = −MSE_k``); for
       classifiers with probabilities minus the Brier score ``−½ Σ_c (p(c) − I{y = c})²`` (a
       proper score: with 14% cases, always predicting "no case" is 86% accurate in every
       study, a replicable but useless rule); else accuracy.
    4. **The rule assessed** is the one with the highest mean utility over all held-out units.
       Studies with fewer than ``MIN_UNITS`` = 10 held-out units leave its assessment (a study
       of one or two units has a point-mass ``F_k`` at total variation near 1 from every
       other), when at least two studies remain.
    5. :func:`~replikit.multistudy.assess`: ``U_k`` with within-study bootstrap intervals,
       ``max|U_k − U_k'|`` (Def. 3.1) with its bootstrap interval (the ε interval), its relative
       form (Def. 3.2), total variation distances (Def. 5.1; fewer quantile bins when studies
       are small: ``clip(sqrt(min n_k / 5), 2, 10)``) and permutation tests of study labels
       (sec. 6.2): 1000 resamples and 999 permutations, 200 and 199 with ``quick``. Then
       :func:`~replikit.multistudy.equivalence.epsilon_test` (delta-method SEs, level
       ``ALPHA``): the smallest ε shown at level ``ALPHA`` — an upper confidence bound of the
       true ``max|Δ|`` from the intersection–union test of pairwise TOSTs — and the
       empirical-Bayes estimate of the spread, which replace the observed maximum (biased
       upward) and its percentile bootstrap interval as the headline.
    6. **Dominance** (Def. 3.3) of every other rule by the assessed one, on the same studies.
    7. **Training technique**: the cross-study validation matrix of the rule's model (5-fold
       within-study CV on the diagonal, 3 with ``quick``) and leave-one-study-out, on the
       primary ``metric``; leave-one-study-out uses the linear model ``lr`` instead when the
       rule's model is neither linear nor a baseline and K fits on the left-in rows exceed
       ``LOSO_BUDGET`` = 100,000 row-fits (a count, so every machine makes the same choice).

    Parameters
    ----------
    dataset : Dataset
        With study labels (:class:`replikit.data.userdata.Dataset`).
    models : dict of str -> estimator, optional
        Default: :func:`replikit.experiment.default_models` for the task.
    metric : str, optional
        The primary metric of the cross-study matrix and leave-one-study-out (the report passes
        its own); default ``'r2'`` for regression, ``'balanced_accuracy'`` for classification.
    tolerance : float or str, optional
        The practical tolerance ε the light is judged against: a number in the utility's units
        (``0.05`` of accuracy, ``25`` of squared error) or a share of the pooled loss
        (``'10%'``: of the mean squared error, the Brier score or the error rate over every
        held-out unit). Default ``DEFAULT_TOLERANCE``, 10% of the pooled loss.
    quick : bool
        Fewer resamples, permutations and folds (a preview).
    random_state : None, int or Generator
        The random state; the half split, every fit, the bootstrap and the permutations draw
        from streams derived from it, so results are bit-identical whatever ``n_jobs``.
    n_jobs : int
        Worker processes of the runner (cross-study matrix, leave-one-study-out).
    engine : Engine, optional
        Where the fits run and the store that keeps them
        (:class:`replikit.experiment.engine.Engine`; the audit passes its own, so every fit of
        every section goes to one cluster and one store); replaces ``n_jobs``.
    progress : callable, optional
        Called with 1 after each fit of the rules, the cross-study matrix and
        leave-one-study-out (the audit's progress lines).

    Returns
    -------
    MultiStudyAudit
        Every number of the report's section, with a verdict.

    Raises
    ------
    NotApplicableError
        One study, or fewer than two studies large enough.

    See Also
    --------
    assess : The analysis of one fixed rule's predictions.
    epsilon_test : The test of ε-replicability.
    cross_study_matrix : Cross-study validation of a training technique.

    Notes
    -----
    Parmigiani (2023): eqs. 1–4, Defs. 3.1–3.3, 5.1, secs. 6.1–6.2 and 7.4; Berger (1982) for
    the intersection–union test. The verdict states the utility, the bias-aware spread (its
    estimate, with ``[lower, upper]`` 95% confidence bounds of the largest difference as
    interval), the observed maximum, the permutation p-value and the caveats. Its light is
    earned against the tolerance ε: ``'good'`` when the upper bound (the smallest ε shown at
    level ``ALPHA``) is at most ε — the data show every pair of studies within ε; ``'bad'``
    when the lower bound (Bonferroni over the pairs) exceeds ε — the data show some pair
    farther apart; ``'warn'`` otherwise. A permutation test that does not reject exact
    replicability is never read as replicability. The rule's false-green rate at the boundary
    and its power are measured in :mod:`replikit.multistudy.validity` (docs/multistudy.md).

    References
    ----------
    .. [1] Parmigiani, G. (2023). Defining Replicability of Prediction Rules. Statistical
       Science, 38(4), 543–556. https://doi.org/10.1214/23-STS891
    .. [2] Berger, R. L. (1982). Multiparameter Hypothesis Testing and Acceptance Sampling.
       Technometrics, 24(4), 295–300.
    .. [3] Benjamini, Y. & Heller, R. (2008). Screening for Partial Conjunction Hypotheses.
       Biometrics, 64(4), 1215–1222.
    .. [4] Bernau, C., Riester, M., Boulesteix, A., Parmigiani, G., Huttenhower, C., Waldron,
       L. & Trippa, L. (2014). Cross-Study Validation for the Assessment of Prediction
       Algorithms. Bioinformatics, 30(12), i105–i112.
    .. [5] Brier, G. W. (1950). Verification of Forecasts Expressed in Terms of Probability.
       Monthly Weather Review, 78(1), 1–3.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from sklearn.linear_model import LinearRegression
    >>> from replikit.data.userdata import dataset_from_frame
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"x": rng.normal(size=120), "site": np.repeat(["a", "b", "c"], 40)})
    >>> df["y"] = df.x + rng.normal(size=120)
    >>> a = audit(dataset_from_frame(df, target="y", study="site"),
    ...           models={"lr": LinearRegression()}, quick=True, random_state=0)
    >>> a.rule, a.utility, a.utilities.K, a.verdict.level in ("good", "warn")
    ('lr', 'squared', 3, True)
    """
    t0 = time.perf_counter()
    metric, quick, n_jobs = _audit_iv(dataset, models, metric, quick, n_jobs)
    tol_value, tol_relative = _tolerance_iv(tolerance)
    d = dataset
    if d.study is None or d.n_studies < 2:
        raise NotApplicableError(
            "one study only: replicability across studies needs at least two (Parmigiani "
            "2023).",
            advice="give the study labels (the column of studies, sites or years: --study on "
                   "the command line, `study` of the Dataset).")
    d, left_out = _study_subset(d, MIN_STUDY_ROWS, MIN_PER_CLASS)
    if d.study.nunique() < 2:
        classification = d.task == "classification"
        raise NotApplicableError(
            f"fewer than two studies have {MIN_STUDY_ROWS} rows"
            + (f" and {MIN_PER_CLASS} rows of every class" if classification else "")
            + f" ({len(left_out)} stud{'y' if len(left_out) == 1 else 'ies'} too small).",
            advice="pool small studies into larger units.")
    from ..experiment.models import default_models
    from ..methods import PermutationMethod

    models = models or default_models(d.task, quick=quick)
    root = root_seed_sequence(random_state)
    utility = _utility(d.task, models)
    n_resamples, n_folds = (200, 3) if quick else (1000, 5)
    permutation = PermutationMethod(199 if quick else 999)
    # 2-3: the fixed rules and their utilities; 4: the best rule, small studies out
    fits = _fixed_rules(d, models, utility, task_int_seed(root, "multistudy-rules"), engine,
                        progress)
    j = _assess_best(fits.rules, utility, n_resamples, permutation, root, tol_value,
                     tol_relative)
    best = j.best
    # 7: the training technique
    tech = _technique(d, models, best, fits, metric, n_folds, root, n_jobs, engine, progress)
    notes = _notes(left_out, j.dropped, tech, best, j.assessment)
    verdict = _verdict(best, utility, j.utilities, j.assessment, j.equivalence, j.conjunction,
                       left_out, j.dropped, quick, tech.loso_model, n_resamples, permutation,
                       tolerance=j.tolerance, share=tol_value if tol_relative else None,
                       loss=j.pooled_loss, default=tolerance is None)
    return MultiStudyAudit(
        rule=best, utility=utility, mean_utility=j.means, utilities=j.utilities,
        assessment=j.assessment, rules=j.rules, equivalence=j.equivalence,
        conjunction=j.conjunction, rule_utilities=j.rule_utilities,
        predictions=fits.predictions, cross_study=tech.cross_study, loso=tech.loso,
        loso_model=tech.loso_model, loso_row_fits=tech.loso_row_fits,
        metric=tech.cross_study.metric, n_train=fits.n_train, n_resamples=n_resamples,
        permutation=permutation, n_folds=n_folds, tv_bins=j.bins, quick=quick,
        studies_left_out=tuple(left_out), studies_dropped=tuple(j.dropped),
        seconds=time.perf_counter() - t0, notes=notes, verdict=verdict, tolerance=j.tolerance,
        tolerance_share=tol_value if tol_relative else None, pooled_loss=j.pooled_loss)


#: The first caveat of :func:`audit_predictions` when each model's predictions come from one
#: fit (fold 0 only), and when they come from several (one per fold).
ONE_FIT = ("the predictions are read as one fixed rule per model (one fit in the table); if "
           "that fit was made within each study, what is assessed is the training procedure "
           "(Parmigiani (2023), sec. 7.4), not one fixed rule")
REFITTED = ("the predictions are out-of-fold: each model was refitted per fold ({k} folds in "
            "the table, within each study or on the pooled studies), so what is assessed is its "
            "training procedure (Parmigiani (2023), sec. 7.4), not one fixed rule applied to "
            "every study")


def _predictions_iv(predictions, utility, task):
    """``(Predictions, utility, repeat, fits per model)``: the table checked, the utility
    chosen (Brier with every model's class probabilities, else accuracy for labels, squared
    error for a continuous outcome), the first repeat, the folds of that repeat."""
    import pandas as pd

    from ..data.tables import Predictions
    from ..errors import DataError, ParameterError

    if isinstance(predictions, pd.DataFrame):
        predictions = Predictions(predictions)
    if not isinstance(predictions, Predictions):
        raise ParameterTypeError("`predictions` must be a replikit Predictions table or a "
                                 "DataFrame with study, model, repeat, fold, row, y_true, "
                                 f"y_pred; got {type(predictions).__name__}.")
    if utility is not None and utility not in UTILITY_LABELS:
        raise ParameterError(f"`utility` must be one of {', '.join(UTILITY_LABELS)} or None; "
                             f"got {utility!r}.")
    if task is not None and task not in ("classification", "regression"):
        raise ParameterError("`task` must be 'classification', 'regression' or None; got "
                             f"{task!r}.")
    f = predictions.frame
    studies = pd.unique(f["study"])
    if len(studies) < 2:
        raise NotApplicableError(
            f"one study only ({studies[0]!r}): replicability across studies needs at least "
            "two (Parmigiani 2023).",
            advice="give the predictions' study column (`study`; --study names it on the "
                   "command line).")
    repeat = f["repeat"].min()
    f = f[f["repeat"] == repeat]
    if task is None:
        from ._data import _is_discrete

        task = ("classification" if _is_discrete(f["y_true"].to_numpy())
                and _is_discrete(f["y_pred"].to_numpy()) else "regression")
    proba = [c for c in f.columns if str(c).startswith("proba_")]
    if utility is None:
        if task != "classification":
            utility = "squared"
        else:
            utility = "brier" if proba and not f[proba].isna().any().any() else "accuracy"
    elif utility == "brier" and (not proba or f[proba].isna().any().any()):
        raise DataError("`utility`: the Brier score needs every model's class probabilities "
                        "(proba_<class> columns without gaps); the predictions have "
                        + ("none" if not proba else "gaps") + ".")
    folds = int(f.groupby("model", sort=False)["fold"].nunique().max())
    return predictions, utility, repeat, folds


def audit_predictions(predictions, *, utility: str | None = None, tolerance=None,
                      task: str | None = None, quick: bool = False,
                      random_state=None) -> MultiStudyAudit:
    """Whether the rules behind a table of predictions are replicable across studies, for
    their users (Parmigiani 2023): the judgment of :func:`audit` on predictions a user already
    has.

    Each model of the table is a rule; its predictions in each study give the utilities
    ``U_k`` (eq. 1). As in :func:`audit` (steps 4-6, the same code): the rule with the highest
    mean utility over every unit is assessed (studies with fewer than ``MIN_UNITS`` units left
    out when two remain), :func:`~replikit.multistudy.assess` and
    :func:`~replikit.multistudy.equivalence.epsilon_test` judge its spread against the
    tolerance ε, and the other rules are compared with it (dominance, partial conjunction).
    Nothing is fitted, so there is no cross-study validation matrix nor leave-one-study-out
    (``cross_study`` and ``loso`` are ``None``).

    What is assessed depends on how the predictions were made, which a table can only partly
    show. Parmigiani (2023) asks about a *fixed* rule φ, trained on none of the studies and
    applied unchanged to each (sec. 3). Out-of-fold predictions made by refitting a model per
    fold (within each study, or on pooled studies) are predictions of several rules: their
    ``U_k`` measure how well the *training procedure* serves each study, which is the
    replicability of a training technique (sec. 7.4) — a meaningful question, so the analysis
    is run, and the verdict's first caveat says which was read (:data:`ONE_FIT` when each
    model has one fold in the table, :data:`REFITTED` when it has several). A table with one
    study is refused.

    Parameters
    ----------
    predictions : Predictions or DataFrame
        ``study, model, repeat, fold, row, y_true, y_pred`` and optional ``proba_<class>``
        columns; the first repeat is used (each unit once).
    utility : {'brier', 'accuracy', 'squared'}, optional
        The users' utility. Default: minus the Brier score when every model has class
        probabilities, accuracy for other labels, minus the squared error for a continuous
        outcome.
    tolerance : float or str, optional
        The tolerance ε of the light, as in :func:`audit` (default 10% of the pooled loss).
    task : {'classification', 'regression'}, optional
        Default: classification when outcomes and predictions are labels.
    quick : bool, default False
        200 bootstrap resamples and 199 permutations instead of 1000 and 999.
    random_state : None, int or Generator
        The bootstrap and permutations draw from streams derived from it.

    Returns
    -------
    MultiStudyAudit
        With ``design`` (how the predictions are read), ``fits_per_rule``, and no
        ``cross_study`` / ``loso``.

    Raises
    ------
    NotApplicableError
        One study only.
    ParameterError, DataError
        A utility the predictions cannot give (Brier without probabilities).

    See Also
    --------
    audit : From data and models (trains the fixed rules itself).
    assess : The analysis of one rule's predictions.

    Notes
    -----
    The light is that of :func:`audit`: ``'good'`` when the 95% upper confidence bound of the
    largest difference between two studies' utilities (intersection–union test of pairwise
    equivalence tests, Berger (1982)) is at most ε, ``'bad'`` when its Bonferroni 95% lower
    bound exceeds ε, ``'warn'`` otherwise (:func:`~replikit.multistudy.kernels.card_light`).

    References
    ----------
    .. [1] Parmigiani, G. (2023). Defining Replicability of Prediction Rules. Statistical
       Science, 38(4), 543–556. https://doi.org/10.1214/23-STS891
    .. [2] Berger, R. L. (1982). Multiparameter Hypothesis Testing and Acceptance Sampling.
       Technometrics, 24(4), 295–300.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> y = rng.normal(size=300)
    >>> f = pd.DataFrame({"study": np.repeat(["a", "b", "c"], 100), "model": "lm",
    ...                   "repeat": 0, "fold": 0, "row": np.arange(300), "y_true": y,
    ...                   "y_pred": y + rng.normal(size=300)})
    >>> a = audit_predictions(f, quick=True, random_state=0)
    >>> a.rule, a.utility, a.utilities.K, a.fits_per_rule, a.cross_study is None
    ('lm', 'squared', 3, 1, True)
    """
    from ..methods import PermutationMethod
    from ._data import from_predictions
    from .utilities import study_utilities

    t0 = time.perf_counter()
    tol_value, tol_relative = _tolerance_iv(tolerance)
    table, utility, repeat, folds = _predictions_iv(predictions, utility, task)
    root = root_seed_sequence(random_state)
    n_resamples = 200 if quick else 1000
    permutation = PermutationMethod(199 if quick else 999)
    rules = {}
    for name in _in_order(table.frame["model"]):
        data = from_predictions(table, model=name, repeat=repeat)
        rules[name] = (data, study_utilities(data, utility))
    j = _assess_best(rules, utility, n_resamples, permutation, root, tol_value, tol_relative)
    design = ONE_FIT if folds == 1 else REFITTED.format(k=folds)
    notes: list[str] = [f"{design}."]
    repeats = table.frame["repeat"].nunique()
    if repeats > 1:
        notes.append(f"the predictions hold {repeats} repeats; the first ({repeat}) is used, "
                     "each unit once")
    if j.dropped:
        notes.append(f"{len(j.dropped)} stud{'y' if len(j.dropped) == 1 else 'ies'} with fewer "
                     f"than {MIN_UNITS} units left out of the rule's assessment: "
                     + _listing(j.dropped))
    notes += list(j.assessment.notes)
    verdict = _verdict(j.best, utility, j.utilities, j.assessment, j.equivalence,
                       j.conjunction, [], j.dropped, quick, j.best, n_resamples, permutation,
                       tolerance=j.tolerance, share=tol_value if tol_relative else None,
                       loss=j.pooled_loss, default=tolerance is None, design=design)
    return MultiStudyAudit(
        rule=j.best, utility=utility, mean_utility=j.means, utilities=j.utilities,
        assessment=j.assessment, rules=j.rules, equivalence=j.equivalence,
        conjunction=j.conjunction, rule_utilities=j.rule_utilities, predictions=table,
        cross_study=None, loso=None, loso_model="", metric="", n_train=0,
        n_resamples=n_resamples, permutation=permutation, n_folds=0, tv_bins=j.bins,
        quick=bool(quick), studies_dropped=tuple(j.dropped),
        seconds=time.perf_counter() - t0, notes=tuple(dict.fromkeys(notes)), verdict=verdict,
        tolerance=j.tolerance, tolerance_share=tol_value if tol_relative else None,
        pooled_loss=j.pooled_loss, design=design, fits_per_rule=folds)


def _in_order(values) -> list:
    """Distinct values in order of appearance."""
    import pandas as pd

    return list(pd.unique(values))


@dataclass(frozen=True, slots=True)
class _Best:
    """The assessed rule and everything judged of it (steps 4-6 of :func:`audit`)."""

    best: str
    means: dict
    utilities: Any
    assessment: Any
    equivalence: Any
    conjunction: Any
    rules: Any
    rule_utilities: dict
    dropped: list
    bins: int
    tolerance: float
    pooled_loss: float


def _assess_best(rules, utility, n_resamples, permutation, root, tol_value,
                 tol_relative) -> _Best:
    """Steps 4-6 of :func:`audit` on the rules ``{name: (MultiStudyData, StudyUtilities)}``:
    the rule with the highest mean utility, its studies with fewer than ``MIN_UNITS`` units out,
    :func:`assess`, :func:`epsilon_test`, the tolerance in the utility's units, dominance and
    the partial conjunction against the other rules. Shared by :func:`audit` and
    :func:`audit_predictions`, so both judge the rule alike."""
    from .analysis import assess
    from .equivalence import epsilon_test
    from .kernels import pooled_loss
    from .utilities import study_utilities

    means = {n: float(np.average(su.utility, weights=su.n)) for n, (_, su) in rules.items()}
    best = max(means, key=means.get)
    data_best = rules[best][0]
    small = data_best.sizes < MIN_UNITS
    dropped: list = []
    if small.any() and (~small).sum() >= 2:
        dropped = [data_best.studies[k] for k in np.flatnonzero(small)]
        data_best = data_best.subset(~small[data_best.codes])
    su = study_utilities(data_best, utility)
    # 5: continuous (φ, y) get fewer quantile bins when studies are small, so that the cells of
    # the TV distance hold a few units each (about 5 per cell pair in the smallest study)
    bins = int(np.clip(math.sqrt(data_best.sizes.min() / 5.0), 2, 10))
    res = assess(data_best, utility, n_resamples=n_resamples, permutation=permutation,
                 bins=bins, random_state=task_rng(root, "multistudy-assess"))
    eq = epsilon_test(res, alpha=ALPHA)
    loss = float(pooled_loss(su.utility, su.n, utility))
    tol = tol_value * abs(loss) if tol_relative else tol_value
    # 6: the other rules against the assessed one, on the same studies
    rules_tab, rule_utilities = _dominance(rules, means, best, su, data_best.studies, utility)
    conj = _conjunction(rules, best, data_best.studies, utility)
    return _Best(best, means, su, res, eq, conj, rules_tab, rule_utilities, dropped, bins, tol,
                 loss)


def _utility(task: str, models: dict) -> str:
    if task != "classification":
        return "squared"
    return "brier" if all(hasattr(m, "predict_proba") for m in models.values()) else "accuracy"


@dataclass(frozen=True, slots=True)
class _Rules:
    """The fixed rules: ``{name: (MultiStudyData, StudyUtilities)}``, every model's
    Predictions of the held-out halves, each model's fit seconds, the training rows."""

    rules: dict
    predictions: Any
    fit_seconds: dict
    n_train: int


def _fixed_rules(d, models, utility, seed, engine=None, progress=None) -> _Rules:
    """Every model trained once on half of every study, applied to the other halves: one run
    per model (the same split for each: the split stream depends on the random state only) to
    time each model's fit for the leave-one-study-out budget."""
    import pandas as pd

    from ..data.tables import Predictions
    from ..experiment.cross_study import StudyHoldOut
    from ..experiment.engine import run_options
    from ..experiment.runner import run
    from ._data import from_predictions
    from .utilities import study_utilities

    labels = d.study.to_numpy()
    groups = d.study.astype(str).to_numpy()
    metric = "accuracy" if d.task == "classification" else "mse"  # the runner's own score
    frames, rules, seconds = [], {}, {}
    n_train = 0
    for name, est in models.items():
        res = run({name: est}, d.X, d.y, scheme=StudyHoldOut(0.5), metrics=[metric],
                  groups=groups, random_state=seed, return_predictions=True,
                  progress=progress or False, **run_options(engine, 1))
        seconds[name] = float(res.provenance["fit_seconds"])
        n_train = int(res.scores.frame["n_train"].iloc[0])
        f = res.predictions.frame
        f = f.assign(study=labels[f["row"].to_numpy()])  # the runner's 'all': each unit's study
        frames.append(f)
        data = from_predictions(Predictions(f), model=name)
        rules[name] = (data, study_utilities(data, utility))
    return _Rules(rules, Predictions(pd.concat(frames, ignore_index=True)), seconds, n_train)


def _dominance(rules, means, best, su, studies, utility):
    """The rules table (assessed rule first) and every rule's utilities on ``studies``."""
    import pandas as pd

    from .measures import dominance
    from .utilities import study_utilities

    kept = list(studies)
    rule_utilities, rows = {best: su}, []
    for name, (dat, s) in rules.items():
        if name == best:
            continue
        if len(kept) < dat.K:
            mask = np.isin(np.asarray(dat.studies, dtype=object)[dat.codes], kept)
            s = study_utilities(dat.subset(mask), utility)
        rule_utilities[name] = s
        dres = dominance(su, s, names=(best, name))
        rows.append({"rule": name, "mean_utility": means[name],
                     "smallest_tolerance": s.smallest_tolerance(),
                     "dominated": dres.a_dominates_b, "dominates": dres.b_dominates_a,
                     "region": dres.region})
    first = {"rule": best, "mean_utility": means[best],
             "smallest_tolerance": su.smallest_tolerance("absolute"), "dominated": False,
             "dominates": False, "region": ""}
    return pd.DataFrame([first, *rows]), rule_utilities


@dataclass(frozen=True, slots=True)
class _Technique:
    cross_study: Any
    loso: Any
    loso_model: str
    loso_row_fits: int


def _technique(d, models, best, fits, metric, n_folds, root, n_jobs, engine=None,
               progress=None) -> _Technique:
    """Cross-study validation and leave-one-study-out of the rule's model on ``metric``;
    leave-one-study-out of ``lr`` when the rule's would exceed ``LOSO_BUDGET``."""
    from ..experiment.models import make_model
    from .training import cross_study_matrix, leave_one_study_out

    csv = cross_study_matrix(models[best], d.X, d.y, d.study, n_folds=n_folds, task=d.task,
                             metric=metric, random_state=task_int_seed(root, "multistudy-csv"),
                             n_jobs=n_jobs, engine=engine, progress=progress)
    K, n = d.n_studies, len(d.y)
    row_fits = int(round(K * n * (1 - 1 / K)))
    name, est = best, models[best]
    final = est.steps[-1][1] if hasattr(est, "steps") else est
    if row_fits > LOSO_BUDGET and best != "lr" and type(final).__name__ not in _CHEAP:
        name, est = "lr", make_model("lr", d.task)
    loso = leave_one_study_out(est, d.X, d.y, d.study, task=d.task, model_name=name,
                               metric=metric, random_state=task_int_seed(root, "multistudy-loso"),
                               n_jobs=n_jobs, engine=engine, progress=progress)
    return _Technique(csv, loso, name, row_fits)


def _listing(items, limit: int = 15) -> str:
    items = [str(i) for i in items]
    return "; ".join(items[:limit]) + (" ..." if len(items) > limit else "")


def _notes(left_out, dropped, tech, best, res) -> tuple:
    notes: list[str] = []
    if left_out:
        notes.append(f"{len(left_out)} stud{'y' if len(left_out) == 1 else 'ies'} left out (too "
                     f"small to halve and cross-validate): "
                     + _listing(f"{s} ({why})" for s, why in left_out))
    if dropped:
        notes.append(f"{len(dropped)} stud{'y' if len(dropped) == 1 else 'ies'} with fewer than "
                     f"{MIN_UNITS} held-out units left out of the rule's assessment: "
                     + _listing(dropped))
    if tech.loso_model != best:
        notes.append(f"leave-one-study-out uses {tech.loso_model}: {best} would need "
                     f"{tech.loso_row_fits:,} row-fits, over the budget of {LOSO_BUDGET:,}")
    notes += [*res.notes, *tech.cross_study.notes, *tech.loso.notes]
    return tuple(dict.fromkeys(notes))


def _conjunction(rules, best, studies, utility):
    """Per study, a one-sided paired t-test that ``best`` has the higher mean unit utility
    than each other rule on the same held-out units; then :func:`replicated_in` (Fisher)."""
    import pandas as pd
    from scipy import stats

    from .conjunction import replicated_in
    from .utilities import unit_utilities

    if len(rules) < 2:
        return None
    kept = list(studies)

    def units(name):
        dat = rules[name][0]
        values, _ = unit_utilities(dat, utility)
        labels = np.asarray(dat.studies, dtype=object)[dat.codes]
        return pd.DataFrame({"row": dat.row, "study": labels, "u": values})

    ref = units(best)
    ref = ref[ref["study"].isin(kept)]
    rows = []
    for name in rules:
        if name == best:
            continue
        # a unit is its (study, row): a predictions table may number rows within each study
        m = ref.merge(units(name)[["study", "row", "u"]], on=["study", "row"],
                      suffixes=("", "_other"))
        for study, g in m.groupby("study", sort=False):
            diff = (g["u"] - g["u_other"]).to_numpy()
            n, mean, sd = diff.size, diff.mean(), diff.std(ddof=1) if diff.size > 1 else 0.0
            if sd > 0:
                p = float(stats.t.sf(mean / (sd / np.sqrt(n)), n - 1))
            else:  # identical or constant differences: the sign decides
                p = 0.0 if mean > 0 else 1.0
            rows.append({"study": study, "finding": f"{best} beats {name}", "pvalue": p})
    return replicated_in(pd.DataFrame(rows), method="fisher", alpha=ALPHA)


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def _verdict(best, utility, su, res, eq, conj, left_out, dropped, quick, loso_name,
             n_resamples, permutation, *, tolerance, share, loss, default,
             design: str = HALF_SPLIT) -> Verdict:
    from .kernels import card_light

    p = res.pvalue
    label = UTILITY_LABELS[utility]
    quantity = UTILITY_QUANTITIES[utility]
    level = f"{number(100 * (1 - ALPHA))}%"
    low, high = float(eq.lower_bound), float(eq.smallest_tolerance)
    light = card_light(low, high, tolerance)
    loss_word = "error rate" if utility == "accuracy" else quantity
    if share is not None:
        tol_words = (f"{number(tolerance)} ({number(100 * share)}% of the pooled {loss_word}, "
                     f"{number(loss)}" + (", the default" if default else "") + ")")
    else:
        tol_words = f"{number(tolerance)} (in units of the {quantity})"
    described = (f" {best}'s average utility ({label}) differs across {su.K} studies by an "
                 f"estimated {number(eq.estimate)}, on {_article(quantity)} {quantity} of about "
                 f"{number(abs(loss) if utility != 'accuracy' else 1 - loss)} (empirical "
                 f"Bayes; the largest observed difference, {number(eq.statistic)}, is biased "
                 f"upward).")
    if light == "good":
        sentence = (f"{best} is replicable across the {su.K} studies within ε = {tol_words}: "
                    f"the data show every two studies within {number(high)} of each other "
                    f"({level} upper confidence bound of the largest difference).")
    elif light == "bad":
        sentence = (f"{best} is not replicable across the {su.K} studies within ε = "
                    f"{tol_words}: the data show some two studies at least {number(low)} apart "
                    f"({level} lower confidence bound of the largest difference, Bonferroni "
                    f"over the {su.K * (su.K - 1) // 2} pairs).")
    else:
        sentence = (f"The data cannot tell whether {best} serves the {su.K} studies alike within "
                    f"ε = {tol_words}: the largest difference between them lies between "
                    f"{number(low)} and {number(high)} ({level} confidence bounds).")
    sentence += described
    sentence += (f" A permutation test of study labels gives p = {pvalue(p)} against exact "
                 "equality of the studies.")
    if conj is not None:
        rows = list(conj.table.itertuples(index=False))
        shown = [f"{r.finding.split(' beats ', 1)[1]} in at least {r.replicated_in}"
                 for r in rows if r.replicated_in > 0]
        never = [r.finding.split(" beats ", 1)[1] for r in rows if r.replicated_in == 0]
        how = f"paired t-tests per study, Fisher partial conjunction, FDR {number(ALPHA)}"
        if shown:
            sentence += (" Its utility is shown higher than that of " + ", ".join(shown)
                         + f" of the {su.K} studies"
                         + (f", and in no study shown higher than that of {', '.join(never)}"
                            if never else "") + f" ({how}).")
        else:
            sentence += (f" In no study is its utility shown higher than that of another rule "
                         f"({how}).")
    caveats: list[Any] = [design]
    if left_out:
        caveats.append(f"{len(left_out)} stud{'y' if len(left_out) == 1 else 'ies'} too small "
                       "left out")
    if dropped:
        caveats.append(f"{len(dropped)} stud{'y' if len(dropped) == 1 else 'ies'} with fewer "
                       f"than {MIN_UNITS} held-out units left out of the assessment")
    if loso_name != best:
        caveats.append(f"leave-one-study-out of {loso_name} instead of {best} (budget of "
                       "row-fits)")
    if quick:
        caveats.append(f"quick mode: {number(n_resamples)} bootstrap resamples, "
                       f"{number(permutation.n_resamples)} permutations")
    bound = {"good": f"{level} upper bound {number(high)}",
             "bad": f"{level} lower bound {number(low)}"}.get(
        light, f"{level} bounds {number(low)} to {number(high)}")
    return Verdict(sentence, metric=f"utility: {label}", level=light,
                   estimate=float(eq.estimate), ci_low=low, ci_high=high,
                   caveats=tuple(caveats), label=f"largest difference between studies, {quantity}",
                   tolerance=f"judged against ε = {tol_words}: {bound}")
