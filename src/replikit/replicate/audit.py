"""The replication audit of a multi-study dataset (Study 1 of Vijayakumar & Cheung (2021) on the
user's data).

:func:`audit` treats the first study (in natural order: numerically when every label is a
number, else as they appear) as the original and every other study as a replication of the R²
of a least-squares linear model and of each audited model. Per study, the paper's design
(:class:`~replikit.replicate.design.HoldOutCV`): a 2:1 train/test split and K-fold CV on the
training part. The fold R² are pooled within each study by random and by fixed effects (the
paper's first stage), the test R² gets the delta-method SE from its predictions (calibrated
for a fitted model's test-set R²; the paper's eq. 1, Olkin & Finn (1995), under-covers there
— see docs/replicate.md, "R² by sample type"); then the three aims: inconsistency (95% CI of
replication − original excludes 0), consistency (90% CI inside ±tolerance, TOST) and the
fixed/random-effects combination of all studies.

Every model is fitted on the same kind of splits: the audited scikit-learn models by
:func:`replikit.experiment.run` on :class:`HoldOutCV` within each study, the linear model by the
batched closed-form least squares of :mod:`._fits`, whose fold labels come from the same scheme
and the same per-study random stream, so it predicts what ``run`` with ``LinearRegression``
predicts.

The package binds :func:`audit` eagerly (``replikit.replicate.audit`` is the function, not this
module), so this module imports nothing heavy at import time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .._compat import REMOVED_IN, renamed
from .._format import interval as _interval_text
from .._format import number
from .._random import root_seed_sequence
from .._validation import check_choice, check_float, check_int
from ..errors import DataError, NotApplicableError, ParameterError, ParameterTypeError
from ..results import Result, Verdict
from .design import HoldOutCV, fold_labels_from_masks

if TYPE_CHECKING:
    import pandas as pd

    from .analysis import ReplicationAnalysis
    from .meta import MetaResult

__all__ = ["ReplicationAudit", "audit", "LINEAR_MODEL"]

LINEAR_MODEL = "linear model"
MIN_FOLD_ROWS = 20  # an R2 on fewer held-out rows is mostly noise (and often negative)
#: CV folds of the audited models' within-study fits (refitted per fold by the runner; the
#: batched linear model uses 10, as Vijayakumar & Cheung (2021) do)
AUDITED_N_FOLDS = 5
_CV_RANDOM = "CV, folds RE"
_CV_FIXED = "CV, folds FE"
#: With fewer studies than this, the pooled intervals and prediction intervals use Knapp-Hartung
#: t(k-1) (Knapp & Hartung 2003; IntHout, Ioannidis & Borm 2014, BMC Med Res Methodol 14:25: the
#: z interval of a random-effects mean is too narrow with few studies); z from this many on.
KNHA_BELOW = 20
#: The default practical tolerance of the replication (±, in test R²).
DEFAULT_TOLERANCE = 0.05
#: Level of the one-sided tests behind the light: the pooled difference's 90% interval
#: inside ±tolerance (TOST at 0.05) or entirely outside it; each replication's TOST.
LIGHT_ALPHA = 0.05


def _order(labels) -> list[str]:
    """Study labels in natural order: numerically when every label is a number, else as they
    appear."""
    labels = [str(s) for s in labels]
    try:
        return sorted(labels, key=float)
    except (TypeError, ValueError):
        return labels


def _plural(n: int, one: str, many: str) -> str:
    return one if n == 1 else many


def _shown(items, limit: int = 15) -> str:
    items = [str(s) for s in items]
    return ", ".join(items[:limit]) + (" ..." if len(items) > limit else "")


class _Design(dict):
    """The audit's design; the keys of replikit 0.1 (``n_splits``, ``audited_n_splits``,
    ``margin``, ``ci``) still read, with a FutureWarning."""

    OLD = {"n_splits": "n_folds", "audited_n_splits": "audited_n_folds",
           "margin": "tolerance", "ci": "meta_interval"}

    def _new(self, key):
        if key in self.OLD and key not in self:
            import warnings

            warnings.warn(f"the design key {key!r} is now {self.OLD[key]!r}; the old name will "
                          f"stop working in replikit {REMOVED_IN}.", FutureWarning, stacklevel=3)
            return self.OLD[key]
        return key

    def __getitem__(self, key):
        return super().__getitem__(self._new(key))

    def get(self, key, default=None):
        return super().get(self._new(key), default)


@dataclass(frozen=True, slots=True)
class ReplicationAudit(Result):
    """The result of :func:`audit`: the replication of a linear model's (and the audited
    models') R² across studies.

    Attributes
    ----------
    original : str
        The original study.
    studies : tuple of str
        The studies analyzed (original first, then the replications in natural order).
    analysis : ReplicationAnalysis
        The three aims for every (model, kind of estimate): ``table`` (one row per
        replication), ``pooled`` (FE and RE pooling), ``estimates`` (one row per study) and
        ``meta`` (the :class:`~replikit.replicate.MetaResult` of each pooling).
    summary : pandas.DataFrame
        Per (model, kind of estimate): replications, how many are inconsistent (95% CI of the
        difference excludes 0) and how many consistent (90% CI inside ±tolerance).
    verdict : Verdict
        About the linear model's test R²: the sentence, its level, the random-effects pooled
        test R² with its 95% CI, and the caveats.
    models : tuple of str
        Models in the analysis (the linear model first).
    models_left_out : dict
        Model -> reason (its R² is outside [0, 1) in the original or in all but one study).
    studies_left_out : tuple of (str, str)
        Studies left out of every model, with the reason (too few rows for the design, an
        outcome constant in a fold or in the test part).
    studies_outside : dict
        Model -> tuple of (study, reason): studies whose fold or test R² is outside [0, 1)
        (the fold R²'s Olkin–Finn SE does not apply), left out of that model only.
    design : dict
        The design: ``n_folds`` (the linear model's CV folds), ``min_fold_rows``,
        ``train_share``, ``audited_n_folds`` (the audited models' CV folds, None without
        audited models), ``min_rows`` (the smallest study analyzed), ``n_features``,
        ``tolerance``, ``tau2_method``, ``meta_interval`` (``'knha'`` with fewer than
        :data:`KNHA_BELOW` studies, else ``'wald'``) and ``quick``. Every row of every study
        is used.
    notes : tuple of str
        What was done, in words (fold counts, what was left out and why).
    metareg : MetaRegression or None
        Meta-regression of the linear model's test R² on the study-level moderators
        (:attr:`moderators`), with the random-effects model's τ² estimator and interval; None
        without moderators or when too few studies.
    moderators : tuple of str
        The study-level columns used as moderators.
    moderator_source : {'given', 'found', 'none'}
        Moderators given by the caller, found in the data (columns constant within every
        study), or none.
    influence : Influence or None
        Influence diagnostics of the random-effects pooling of the linear model's test R²
        (k >= 3).
    small_study : SmallStudyEffects or None
        Funnel-plot tests and trim-and-fill of that pooling (k >= 3), on the ``r2_z`` scale
        (``atanh(sqrt(R²))``, :mod:`~replikit.replicate.transforms`): on the raw scale the SE
        of an R² shrinks as R² grows, which alone makes the funnel asymmetric.

    See Also
    --------
    audit : Builds it.
    ReplicationAnalysis : The three aims it holds.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from replikit.data.userdata import dataset_from_frame
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame(rng.normal(size=(900, 2)), columns=["x1", "x2"])
    >>> df["y"] = df.x1 + 0.5 * df.x2 + rng.normal(size=900)
    >>> df["year"] = np.repeat([1990, 1992, 1994], 300)
    >>> res = audit(dataset_from_frame(df, target="y", study="year"), models={},
    ...             quick=True, random_state=0)
    >>> res.verdict.label
    'random-effects pooled test R2, linear model'
    """

    original: str
    studies: tuple
    analysis: ReplicationAnalysis = field(repr=False)
    summary: pd.DataFrame = field(repr=False)
    verdict: Verdict
    models: tuple
    models_left_out: dict
    studies_left_out: tuple
    studies_outside: dict
    design: dict
    notes: tuple = ()
    metareg: object = field(default=None, repr=False)
    moderators: tuple = ()
    moderator_source: str = "none"
    influence: object = field(default=None, repr=False)
    small_study: object = field(default=None, repr=False)

    @property
    def title(self) -> str:
        return "Replication across studies"

    @property
    def table(self) -> pd.DataFrame:
        """One row per (model, kind of estimate, replication) — see
        :meth:`ReplicationAnalysis.to_frame`."""
        return self.analysis.table

    @property
    def pooled(self) -> pd.DataFrame:
        """One row per (model, kind of estimate, pooling): the combination of all studies."""
        return self.analysis.pooled

    @property
    def estimates(self) -> pd.DataFrame:
        """One row per (model, kind of estimate, study): estimate, SE and 95% CI."""
        return self.analysis.estimates

    def to_frame(self) -> pd.DataFrame:
        """The per-replication table (a copy of :attr:`table`).

        Returns
        -------
        pandas.DataFrame
            One row per (model, kind of estimate, replication).
        """
        return self.analysis.table.copy()

    def to_dict(self) -> dict:
        """Every number of the audit in JSON types.

        Returns
        -------
        dict
            The verdict, the studies, the design, the summary, the per-replication, pooled
            and per-study tables, what was left out and why, the notes, and the
            meta-regression, influence and small-study results where there are some.
        """
        from ..results import to_jsonable

        return to_jsonable({
            "original": self.original, "studies": self.studies, "verdict": self.verdict,
            "models": self.models, "design": dict(self.design), "summary": self.summary,
            "replications": self.table, "pooled": self.pooled, "estimates": self.estimates,
            "models_left_out": self.models_left_out, "studies_left_out": self.studies_left_out,
            "studies_outside": self.studies_outside, "notes": self.notes,
            "moderators": self.moderators, "moderator_source": self.moderator_source,
            "metareg": self.metareg, "influence": self.influence,
            "small_study": self.small_study})

    def meta(self, model: str = LINEAR_MODEL, source: str = "test",
             pooling: str = "random") -> MetaResult:
        """The meta-analysis of one model's estimates of one kind.

        Parameters
        ----------
        model : str, default 'linear model'
            The model.
        source : {'test', 'cv', 'cv_fixed'}, default 'test'
            Test R², CV R² with folds pooled by random effects, or by fixed effect.
        pooling : {'fixed', 'random'}, default 'random'
            The pooling of the studies.

        Returns
        -------
        MetaResult
            The meta-analysis.
        """
        key = (model, _source_name(source, self.design["tau2_method"]), pooling)
        if key not in self.analysis.meta:
            raise ParameterError(f"no pooled result for model {model!r}, source {source!r}, "
                                 f"pooling {pooling!r}; models are {list(self.models)}, "
                                 "sources 'test', 'cv' (folds RE) and 'cv_fixed' (folds FE).")
        return self.analysis.meta[key]

    def plot(self, ax=None, *, kind: str = "forest", model: str = LINEAR_MODEL,
             source: str = "test", title: str | None = None):
        """A figure of one model's estimates.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw (default: a new figure).
        kind : {'forest', 'differences', 'funnel', 'bubble', 'influence', 'baujat'}
            ``'forest'`` (default): metafor-style forest plot of the studies and their
            random-effects pooling; ``'differences'``: replication − original with 95% CIs (a
            CI missing 0 is an inconsistent replication); ``'funnel'``: contour-enhanced
            funnel plot with the trim-and-fill studies and Egger's line; ``'bubble'``: the
            meta-regression on the first numeric moderator; ``'influence'``: the influence
            diagnostics (several panels); ``'baujat'``: the Baujat plot. The last four are
            about the linear model's test R².
        model : str, default 'linear model'
            The model of ``'forest'`` and ``'differences'``.
        source : {'test', 'cv', 'cv_fixed'}, default 'test'
            Test R², CV R² with folds pooled by random effects, or by fixed effect.
        title : str, optional
            A title.

        Returns
        -------
        matplotlib.axes.Axes or numpy.ndarray of Axes
            The axes drawn on (an array of panels for ``'influence'``).
        """
        from .plots import baujat_plot, forest_plot, plot_differences

        kind = check_choice(kind, "kind", ("forest", "differences", "funnel", "bubble",
                                           "influence", "baujat"))
        if kind in ("funnel", "influence", "baujat"):
            if self.small_study is None or self.influence is None:
                raise ParameterError(f"`kind`={kind!r} needs at least 3 studies; got "
                                     f"{len(self.studies)}.")
            if kind == "funnel":
                return self.small_study.plot(ax=ax, contours=(0.90, 0.95, 0.99),
                                             xlabel="atanh(sqrt(test R²)), linear model",
                                             title=title or "Funnel plot of the test R² "
                                                            "(atanh of its square root)")
            if kind == "influence":
                return self.influence.plot(ax=ax, title=title)
            return baujat_plot(self.meta(), ax=ax, title=title)
        if kind == "bubble":
            if self.metareg is None:
                raise ParameterError("`kind`='bubble' needs a meta-regression: give "
                                     "study-level `moderators` (none were used).")
            return self.metareg.plot(ax=ax, title=title, ylabel="test R², linear model")
        name = _source_name(source, self.design["tau2_method"])
        if kind == "forest":
            what = "test R²" if name == "test" else f"CV R² ({name[4:]})"
            return forest_plot(self.meta(model, source, "random"), ax=ax, refline=None,
                               xlabel=f"{what}, {model}", title=title)
        rows = self.table[(self.table["model"] == model) & (self.table["source"] == name)]
        if rows.empty:
            raise ParameterError(f"no replications for model {model!r}, source {source!r}; "
                                 f"models are {list(self.models)}.")
        return plot_differences(rows, ax=ax, title=title)

    def __str__(self) -> str:
        lines = [str(self.verdict), self.summary.to_string(index=False)]
        lines.extend(f"note: {n}" for n in self.notes)
        return "\n".join(lines)


def _source_name(source: str, tau2_method: str) -> str:
    names = {"test": "test", "cv": f"{_CV_RANDOM} ({tau2_method})", "cv_fixed": _CV_FIXED}
    if source in names.values():
        return source
    return names[check_choice(source, "source", tuple(names))]


@dataclass(frozen=True, slots=True)
class _Fit:
    """Per-study CV and test results of one model: fold R2 (K,), fold sizes (K,), test
    outcomes and predictions."""

    fold_r2: np.ndarray
    fold_n: np.ndarray
    test_y: np.ndarray
    test_pred: np.ndarray


def _audit_iv(dataset, models, tolerance, tau2_method, quick, n_jobs):
    for attr in ("X", "y", "study", "task"):
        if not hasattr(dataset, attr):
            raise ParameterTypeError("`dataset` must be a replikit Dataset (X, y, study, task); "
                                     f"got {type(dataset).__name__}.")
    if models is not None and not isinstance(models, dict):
        raise ParameterTypeError(f"`models` must be a dict of name -> estimator or None; got "
                                 f"{type(models).__name__}.")
    from .meta import TAU2_METHODS

    given = tolerance is not None
    tolerance = check_float(DEFAULT_TOLERANCE if tolerance is None else tolerance, "tolerance")
    if not tolerance > 0:
        raise ParameterError(f"`tolerance` must be > 0 (the region is ±tolerance); got "
                             f"{tolerance}.")
    tau2_method = check_choice(str(tau2_method).upper(), "tau2_method", TAU2_METHODS)
    n_jobs = check_int(n_jobs, "n_jobs", min_value=1)
    return tolerance, given, tau2_method, bool(quick), n_jobs


def _rows(study: np.ndarray, order) -> np.ndarray:
    """Sorted rows of the studies in ``order``."""
    return np.flatnonzero(np.isin(study, list(order)))


def _fold_labels(scheme: HoldOutCV, study: np.ndarray, order, root) -> dict:
    """Fold labels of every study's rows from the scheme's masks, drawn as
    :func:`replikit.experiment.run` draws the splits of ``scheme`` within study ``s`` (from
    :func:`replikit.experiment.study_split_rng`), so the batched fits use the runner's splits."""
    from ..experiment.runner import study_split_rng

    out = {}
    for s in order:
        _, test = scheme.masks(int((study == s).sum()), random_state=study_split_rng(root, s))
        out[s] = fold_labels_from_masks(test)
    return out


def _constant_part(y: np.ndarray, labels: np.ndarray) -> bool:
    """True when the outcome is constant in a CV fold or in the test part (R2 undefined)."""
    for f in np.unique(labels):
        part = y[labels == f]
        if np.all(part == part[0]):
            return True
    return False


def _linear_fits(X, y, study, order, labels) -> dict[str, _Fit]:
    from ._fits import ols_cv_test

    out = {}
    for s in order:
        idx = np.flatnonzero(study == s)
        r = ols_cv_test(X[idx][None], y[idx][None], labels[s][None])
        out[s] = _Fit(r["fold_r2"][0], r["fold_n"], r["test_y"][0], r["test_pred"][0])
    return out


def audit_design(dataset=None, *, quick: bool = False) -> dict:
    """The within-study fits :func:`audit` makes, so that a caller can make them once and
    share them.

    Run the audited models with :func:`replikit.experiment.run` on this ``scheme`` (``study=``
    the study labels, ``return_predictions=True``, the audit's ``random_state``) and pass the
    result as ``audit(..., study_run=...)``; the run may hold more studies and more models (a
    baseline) than the audit uses, and other metrics besides.

    Parameters
    ----------
    dataset : Dataset, optional
        The data (unused: the design is the same for every dataset; accepted so that every
        capability's ``audit_design`` is called alike).
    quick : bool, default False
        The audit's quick mode (unused: the audited models use 5 folds either way).

    Returns
    -------
    dict
        ``scheme``: :class:`HoldOutCV` with 5 folds on every row of each study, fewer where a
        fold would hold fewer than ``MIN_FOLD_ROWS`` rows (the batched linear model uses 10,
        on the same train/test parts); ``metrics``: ``['r2']``.

    See Also
    --------
    audit : The audit these fits are for.

    Examples
    --------
    >>> audit_design()["scheme"].n_folds
    5
    """
    return {"scheme": HoldOutCV(AUDITED_N_FOLDS, min_fold_rows=MIN_FOLD_ROWS),
            "metrics": ["r2"]}


def _run(models, X, y, study, scheme, root, n_jobs, engine=None):
    from ..experiment import run
    from ..experiment.engine import run_options

    return run(models, X, y, scheme=scheme, metrics=["r2"], study=study, random_state=root,
               return_predictions=True, **run_options(engine, n_jobs))


def _runner_fits(res, models, study, order, scheme, labels) -> dict[str, dict]:
    """The audited models' fold R2s and test predictions per study, from a run of ``scheme``
    within studies; checked against the splits the linear model used (``labels``)."""
    scores = res.scores.frame
    preds = getattr(res.predictions, "frame", None)
    if preds is None or "r2" not in set(scores["metric"]):
        raise ParameterError("`study_run` must hold predictions and the 'r2' metric "
                             "(run(..., metrics=['r2'], return_predictions=True)).")
    scores = scores[scores["metric"] == "r2"]
    s_col = scores["study"].astype(str)
    p_col = preds["study"].astype(str)
    out: dict[str, dict] = {name: {} for name in models}
    for s in order:
        k = scheme.folds_for(int((study == s).sum()))
        sc = scores[s_col == s]
        pr = preds[(p_col == s) & (preds["fold"] == k)]
        for name in models:
            folds = sc[(sc["model"] == name) & (sc["fold"] < k)].sort_values("fold")
            test = pr[pr["model"] == name].sort_values("row")
            n_test = int((labels[s] < 0).sum())
            if len(folds) != k or len(test) != n_test:
                raise ParameterError(
                    f"`study_run` does not hold the design's splits of study {s!r} for model "
                    f"{name!r} ({len(folds)} CV folds and {len(test)} test rows; expected {k} "
                    f"and {n_test}; see replikit.replicate.audit_design).")
            out[name][s] = _Fit(folds["value"].to_numpy(float), folds["n_test"].to_numpy(int),
                                test["y_true"].to_numpy(float), test["y_pred"].to_numpy(float))
    return out


def _study_estimates(fits: dict[str, _Fit], k: int, tau2_method: str):
    """Estimates per kind of source, and per source the studies that cannot enter it.

    Each source stands alone: a fold R² outside [0, 1) (where the fold's Olkin–Finn SE does
    not apply: ``4 R² (1 − R²)² / N`` is 0 at R² = 0 and meaningless below) keeps the study out
    of the two CV poolings only; its test R², whose delta-method SE holds for any value
    (negative included), still enters. Returns ``(per_source, outside)`` with ``outside`` a
    dict source -> list of (study, reason)."""
    from .estimates import from_folds, from_predictions

    per_source: dict[str, list] = {}
    outside: dict[str, list] = {}
    makers = {f"{_CV_RANDOM} ({tau2_method})": lambda f, s: from_folds(
                  f.fold_r2, f.fold_n, pooling="random", tau2_method=tau2_method, k=k,
                  label=s),
              _CV_FIXED: lambda f, s: from_folds(f.fold_r2, f.fold_n, pooling="fixed", k=k,
                                                 label=s),
              "test": lambda f, s: from_predictions(f.test_y, f.test_pred, k=k, label=s)}
    for s, f in fits.items():
        for name, make in makers.items():
            try:
                est = make(f, s)
            except DataError as exc:
                if name != "test" and np.any((f.fold_r2 < 0) | (f.fold_r2 >= 1)):
                    bad = f.fold_r2[(f.fold_r2 < 0) | (f.fold_r2 >= 1)]
                    why = (f"a CV fold's R2 is outside [0, 1) ({number(float(bad[0]), 3)}), "
                           "where the fold's Olkin-Finn SE does not apply")
                else:
                    why = " ".join(str(exc).split())
                outside.setdefault(name, []).append((s, why))
                continue
            per_source.setdefault(name, []).append(est)
    return per_source, outside


def _outside_words(outside: dict) -> tuple:
    """One (study, reason) per study from :func:`_study_estimates`' per-source lists, saying
    which estimates it is left out of."""
    out: dict[str, tuple[list, str]] = {}
    for name, items in outside.items():
        for s, why in items:
            which = "test R2" if name == "test" else "CV R2"
            names, _ = out.setdefault(s, ([], why))
            if which not in names:
                names.append(which)
    return tuple((s, f"left out of the {' and '.join(names)}: {why}")
                 for s, (names, why) in out.items())


@renamed(margin="tolerance")
def audit(dataset, *, models: dict | None = None, original: str | None = None,
          tolerance: float | None = None, tau2_method: str = "REML", quick: bool = False,
          moderators=None, random_state=None, n_jobs: int = 1,
          study_run=None, engine=None) -> ReplicationAudit:
    """Does each later study reproduce the R² of the first? The three aims of Vijayakumar &
    Cheung (2021) on a dataset.

    Parameters
    ----------
    dataset : Dataset
        A regression dataset with study labels (:class:`replikit.data.userdata.Dataset`).
    models : dict of str -> estimator, optional
        The audited models, besides the linear model (default: the audit's line-up for
        regression, ``lr`` and ``rf``). Constant baselines (``DummyRegressor``) are dropped: they
        have no R² to replicate.
    original : str, optional
        The original study (default: the first usable study in natural order).
    tolerance : float, optional
        Region of equivalence ±tolerance in test R², of the consistency tests (TOST) and of
        the card's light (default 0.05, :data:`DEFAULT_TOLERANCE`: five points of R², a
        difference a reader of a reported R² would notice).
    tau2_method : str, default 'REML'
        τ² estimator of every random-effects pooling (``'REML'``, ``'DL'``, ...).
    quick : bool, default False
        Fewer folds (5) for every model (every row is still used).
    moderators : str or sequence of str, optional
        Study-level columns of the data (one value per study) to explain the differences
        between the studies' test R² by a meta-regression. Default: every column constant
        within every study (and not across studies) is used, as many as the number of studies
        allows (k − 3); ``()`` turns the meta-regression off.
    random_state : None, int or Generator, optional
        Root of every random choice (splits, model fits).
    n_jobs : int, default 1
        Worker processes for the audited models (the joblib backend of
        :func:`replikit.experiment.run` when above 1; the numbers do not depend on it).
    study_run : RunResult, optional
        The audited models' fits already made (:func:`audit_design`: the report shares one
        within-study run between this section, the comparison across studies and the
        generalizability section); checked against the linear model's splits, nothing is
        refitted.
    engine : Engine, optional
        Where the fits run and the store that keeps them
        (:class:`replikit.experiment.engine.Engine`; the audit passes its own, so every fit of
        every section goes to one cluster and one store); replaces ``n_jobs``.

    Returns
    -------
    ReplicationAudit
        The verdict, the tables, the design and what was left out.

    Raises
    ------
    NotApplicableError
        Fewer than two studies, a classification target, fewer than two studies large enough
        for the design (``max(30, 3 (p + 2))`` rows with p predictors), or a linear-model R²
        outside [0, 1) in all but one study (with advice on what to do).
    ParameterError
        ``original`` is not a study of ``dataset``, or a bad ``tolerance``/``tau2_method``, or
        a moderator that is not a column of the data.
    DataError
        A moderator that varies within a study.

    See Also
    --------
    analyze_replications : The three aims on study estimates.
    audit_design : The within-study fits of the audited models.

    Notes
    -----
    Study 1 of Vijayakumar & Cheung (2021): per study a 2:1 train/test split and K-fold CV on
    the training part (K = 10, or 5 with ``quick``; fewer where a fold would hold fewer than 20
    rows, at least 2); fold R² pooled by FE and RE meta-analysis (Figures 1-2) with the
    Olkin–Finn SE ``SE² = 4 R² (1 − R²)² / N`` (eq. 1), test R² with the delta-method SE from
    its predictions (:func:`~replikit.replicate.estimates.r2_delta_se`); the difference
    replication − original with the simple asymptotic (Wald) interval (eq. 2); inconsistency
    (95% CI excludes 0, Figures 3 and 6A), consistency (90% CI inside ±tolerance, Figures 4 and
    6B) and the FE/RE combination (Figures 7-8), with Knapp & Hartung (2003) t(k − 1)
    intervals (and prediction intervals) when there are fewer than :data:`KNHA_BELOW` studies
    (IntHout et al. 2014), Wald intervals from there on. Then, on the linear model's test R²: a
    meta-regression on study-level moderators (:func:`~replikit.replicate.meta_regression`),
    influence diagnostics (:func:`~replikit.replicate.influence`) and small-study effects
    (:func:`~replikit.replicate.small_study_effects`). The audited models are fitted by
    :func:`replikit.experiment.run` on every row with 5-fold CV on the same training parts.
    A study whose fold or test R² of a model is outside [0, 1) is left out of that model's
    analysis (the fold R²'s Olkin–Finn SE needs a squared correlation), and a model whose R²
    is outside [0, 1) in the original study is left out. ``margin`` is the old name of
    ``tolerance`` (it still works, with a FutureWarning).

    References
    ----------
    .. [1] Vijayakumar, R. & Cheung, M. W. (2021). Assessing Replicability of Machine Learning
       Results: An Introduction to Methods on Predictive Accuracy in Social Sciences. Social
       Science Computer Review, 39(5), 768–801. https://doi.org/10.1177/0894439319888445
    .. [2] Olkin, I. & Finn, J. D. (1995). Correlations Redux. Psychological Bulletin, 118(1),
       155–164. https://doi.org/10.1037/0033-2909.118.1.155
    .. [3] Schuirmann, D. J. (1987). A Comparison of the Two One-Sided Tests Procedure and the
       Power Approach for Assessing the Equivalence of Average Bioavailability. Journal of
       Pharmacokinetics and Biopharmaceutics, 15(6), 657–680. https://doi.org/10.1007/BF01068419
    .. [4] Knapp, G. & Hartung, J. (2003). Improved Tests for a Random Effects Meta-Regression
       with a Single Covariate. Statistics in Medicine, 22(17), 2693–2710.
       https://doi.org/10.1002/sim.1482
    .. [5] IntHout, J., Ioannidis, J. P. A. & Borm, G. F. (2014). The Hartung-Knapp-Sidik-Jonkman
       Method for Random Effects Meta-Analysis Is Straightforward and Considerably Outperforms
       the Standard DerSimonian-Laird Method. BMC Medical Research Methodology, 14, 25.
       https://doi.org/10.1186/1471-2288-14-25
    .. [6] Viechtbauer, W. (2010). Conducting Meta-Analyses in R with the metafor Package.
       Journal of Statistical Software, 36(3), 1–48. https://doi.org/10.18637/jss.v036.i03

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from replikit.data.userdata import dataset_from_frame
    >>> from replikit.experiment import make_models
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame(rng.normal(size=(900, 2)), columns=["x1", "x2"])
    >>> df["y"] = df.x1 + 0.5 * df.x2 + rng.normal(size=900)
    >>> df["year"] = np.repeat([1990, 1992, 1994], 300)
    >>> res = audit(dataset_from_frame(df, target="y", study="year"),
    ...             models=make_models("lr", "regression"), quick=True, random_state=0)
    >>> res.original, res.models
    ('1990', ('linear model', 'lr'))
    >>> res.summary["replications"].tolist()  # (2 models) x (CV RE, CV FE, test)
    [2, 2, 2, 2, 2, 2]
    >>> res.verdict.level  # 100 test rows per study: too few to show ±0.05 either way
    'warn'
    >>> print(res.verdict.tolerance)
    judged against ±0.05 in test R² (the default): pooled difference 0.018, 90% CI [-0.584,
    0.62]
    """
    tolerance, given, tau2_method, quick, n_jobs = _audit_iv(dataset, models, tolerance,
                                                             tau2_method,
                                                      quick, n_jobs)
    d = dataset
    mod_cols, mod_source = _moderators_iv(d, moderators)
    if d.study is None or d.study.nunique() < 2:
        raise NotApplicableError(
            "needs at least two studies (an original and a replication).",
            advice="give the study labels (the column of studies, sites or years: --study on "
                   "the command line, `study` of the Dataset).")
    if d.task != "regression":
        raise NotApplicableError(
            "this analysis replicates the R2 of a linear model, which needs a continuous "
            f"outcome; the target is {d.task}.",
            advice="to check a reported AUC or accuracy against a replication, audit the "
                   "studies' reported values with `replikit audit --estimates FILE` (one row "
                   "per study: auc or accuracy, n, role) or `replikit replicate`.")
    import pandas as pd

    from .analysis import analyze_replications

    X = d.X.to_numpy(float)
    y = d.y.to_numpy(float)
    study = d.study.astype(str).to_numpy()
    p = X.shape[1]
    min_rows = max(30, 3 * (p + 2))  # a test third of at least 10 rows and > p + 1
    all_studies = _order(pd.unique(study))
    if original is not None and str(original) not in all_studies:
        raise ParameterError(f"`original`: study {str(original)!r} not found; the studies are "
                             f"{_shown([repr(s) for s in all_studies], 12)}.")
    sizes = {s: int((study == s).sum()) for s in all_studies}
    left_out = [(s, f"{n} row{_plural(n, '', 's')} (fewer than {min_rows})")
                for s, n in sizes.items() if n < min_rows]
    kept = [s for s in all_studies if sizes[s] >= min_rows]
    if len(kept) < 2:
        raise NotApplicableError(
            f"fewer than two studies have the {min_rows} rows a 2:1 train/test split with {p} "
            f"predictors needs ({len(left_out)} smaller "
            f"{_plural(len(left_out), 'study', 'studies')}: "
            f"{_shown(f'{s} ({sizes[s]} rows)' for s, _ in left_out)}).",
            advice="pool small studies into larger units, or use fewer predictors.")

    from ..experiment.models import default_models

    audited = dict(models) if models is not None else default_models(d.task, quick=quick)
    audited = {str(k): v for k, v in audited.items()
               if type(v).__name__ not in ("DummyRegressor", "DummyClassifier")}
    if LINEAR_MODEL in audited:
        raise ParameterError(f"`models`: the name {LINEAR_MODEL!r} is the audit's own batched "
                             "least squares; give the model another name.")
    n_folds = 5 if quick else 10
    scheme = HoldOutCV(n_folds, min_fold_rows=MIN_FOLD_ROWS)
    aud_scheme = audit_design(quick=quick)["scheme"]
    root = root_seed_sequence(random_state)

    # every row of every kept study; the audited models (refitted by the runner, so with fewer
    # CV folds than the batched linear model) on the same train/test parts
    rows = _rows(study, kept)
    lin_labels = _fold_labels(scheme, study[rows], kept, root)
    constant = [s for s in kept
                if _constant_part(y[rows][study[rows] == s], lin_labels[s])]
    left_out += [(s, "the outcome is constant in a CV fold or in the test part (R2 undefined)")
                 for s in constant]
    kept = [s for s in kept if s not in constant]
    if len(kept) < 2:
        raise NotApplicableError(
            "fewer than two studies have an outcome that varies in every CV fold and test part.",
            advice="check the outcome column; pool small studies into larger units.")
    fits = {LINEAR_MODEL: _linear_fits(X[rows], y[rows], study[rows], kept, lin_labels)}
    if audited:
        sel = rows[np.isin(study[rows], kept)]
        if study_run is None:
            study_run = _run(audited, d.X.iloc[sel].reset_index(drop=True), y[sel],
                             study[sel], aud_scheme, root, n_jobs, engine)
        fits.update(_runner_fits(study_run, audited, study, kept, aud_scheme, lin_labels))

    per_model, outside, by_source = {}, {}, {}
    for model, model_fits in fits.items():
        per_model[model], bad = _study_estimates(model_fits, p, tau2_method)
        by_source[model] = bad
        if bad:
            outside[model] = _outside_words(bad)
    bad_linear = {s for s, _ in by_source[LINEAR_MODEL].get("test", ())}
    usable = [s for s in kept if s not in bad_linear]
    if len(usable) < 2:
        raise NotApplicableError(
            f"the linear model's test R2 is undefined in all but {len(usable)} of {len(kept)} "
            "studies.",
            advice="check that the outcome varies within each study's test part.")
    if original is None:
        original = usable[0]
    original = str(original)
    if original not in usable:
        why = dict(left_out).get(original) or dict(outside.get(LINEAR_MODEL, ())).get(original)
        raise NotApplicableError(
            f"the original study {original!r} cannot be analyzed: {why}.",
            advice="choose another original study, or leave `original` unset to use the first "
                   "usable one.")
    models_left_out, groups, sources_left_out = {}, {}, {}
    for model, sources in per_model.items():
        labels = [e.label for e in sources.get("test", [])]
        if original not in labels or len(labels) < 2:
            models_left_out[model] = ("no test R2 in the original study or in all but one "
                                      "study")
            continue
        for name, ests in sources.items():
            names = [e.label for e in ests]
            if original not in names or len(names) < 2:  # e.g. a CV fold R2 <= 0 there
                sources_left_out.setdefault(model, []).append(name)
                continue
            groups[(model, name)] = ests
    meta_interval = "knha" if len(usable) < KNHA_BELOW else "wald"
    res = analyze_replications(groups, original, tolerance=tolerance, interval="wald",
                               tau2_method=tau2_method, meta_interval=meta_interval)
    summary = _summary(res.table, tolerance)
    analyzed = tuple(m for m in fits if m not in models_left_out)
    studies = (original,) + tuple(s for s in usable if s != original)
    design = _Design(n_folds=n_folds, min_fold_rows=MIN_FOLD_ROWS, train_share=2 / 3,
                     audited_n_folds=AUDITED_N_FOLDS if audited else None, min_rows=min_rows,
                     n_features=p, tolerance=tolerance, tolerance_given=given,
                     tau2_method=tau2_method, quick=quick,
                     meta_interval=meta_interval)
    verdict = _verdict(res, original, tolerance, left_out, outside, models_left_out, design,
                       bool(audited), groups[(LINEAR_MODEL, "test")])
    notes = _notes(design, left_out, outside, models_left_out, tuple(audited))
    notes += tuple(f"{model}: {name} left out (the original study, or all but one, has no "
                   "estimate there)" for model, names in sources_left_out.items()
                   for name in names)
    pooled = res.meta[(LINEAR_MODEL, "test", "random")]
    why = _why(d, pooled, mod_cols, mod_source)
    return ReplicationAudit(original, studies, res, summary, verdict, analyzed, models_left_out,
                            tuple(left_out), outside, design, notes + why["notes"],
                            why["metareg"], why["moderators"], why["source"], why["influence"],
                            why["small_study"])


def _summary(table: pd.DataFrame, tolerance: float) -> pd.DataFrame:
    import pandas as pd

    rows = []
    for (model, source), sub in table.groupby(["model", "source"], sort=False):
        rows.append({"model": model, "estimate": source, "replications": len(sub),
                     "inconsistent (95% CI excludes 0)":
                         int((sub["inconsistency"] == "inconsistent").sum()),
                     f"consistent (90% CI inside ±{number(tolerance)})":
                         int((sub["consistency"] == "consistent").sum())})
    return pd.DataFrame(rows)


def _light(y0, v0, y, v, tolerance: float, *, tau2_method: str = "REML",
           interval: str = "knha") -> dict:
    """The replication card's light from the studies' test R², vectorised over leading axes.

    ``y0``, ``v0`` (...): the original's estimate and sampling variance; ``y``, ``v`` (..., m):
    the replications'. The replications are pooled by random effects (``tau2_method``, with
    Knapp–Hartung t(m − 1) when ``interval='knha'``; one replication is its own pool) and the
    pooled difference ``mu − y0`` gets the variance ``Var(mu) + v0`` and a two-sided 90%
    interval (t(m − 1) under Knapp–Hartung, else z). Each replication's difference gets the
    Wald interval of :func:`~replikit.replicate.consistency` (90%, TOST) and of
    :func:`~replikit.replicate.inconsistency` (95%).

    ``'good'``: the pooled difference's 90% interval lies inside ±tolerance (TOST at 0.05), or
    every replication is shown consistent (an intersection–union test: "all k" at level 0.05
    needs no multiplicity adjustment, Berger 1982); ``'bad'``: that interval lies entirely
    outside ±tolerance (the one-sided test that the pooled difference exceeds the tolerance, at
    0.05); ``'warn'`` otherwise. The validity study simulates this same function.
    """
    from scipy import stats

    from . import _rma

    y, v = np.asarray(y, float), np.asarray(v, float)
    y0, v0 = np.asarray(y0, float), np.asarray(v0, float)
    m = y.shape[-1]
    if m >= 2:
        fit = _rma.fit(y, v, method=tau2_method, interval=interval)
        mu, var_mu = fit.beta[..., 0], fit.vb[..., 0, 0]
        q = (stats.t.ppf(1 - LIGHT_ALPHA, m - 1) if interval == "knha"
             else stats.norm.ppf(1 - LIGHT_ALPHA))
    else:
        mu, var_mu = y[..., 0], v[..., 0]
        q = stats.norm.ppf(1 - LIGHT_ALPHA)
    diff = mu - y0
    half = q * np.sqrt(var_mu + v0)
    low, high = diff - half, diff + half
    d = y - y0[..., None]
    se = np.sqrt(v + v0[..., None])
    z90, z95 = stats.norm.ppf(1 - LIGHT_ALPHA), stats.norm.ppf(0.975)
    consistent = (d - z90 * se > -tolerance) & (d + z90 * se < tolerance)
    inconsistent = np.abs(d) > z95 * se
    pooled_in = (low > -tolerance) & (high < tolerance)
    all_in = consistent.all(axis=-1)
    outside = (low > tolerance) | (high < -tolerance)
    level = np.where(pooled_in | all_in, "good", np.where(outside, "bad", "warn"))
    return {"difference": diff, "low": low, "high": high, "pooled_in": pooled_in,
            "all_in": all_in, "n_consistent": consistent.sum(axis=-1),
            "n_inconsistent": inconsistent.sum(axis=-1), "level": level}


def _verdict(res, original, tolerance, left_out, outside, models_left_out, design,
             has_audited, tests=None) -> Verdict:
    tests = list(tests) if tests is not None else []
    orig = next((e for e in tests if e.label == original), None)
    reps = [e for e in tests if e.label != original]
    pooled = res.meta[(LINEAR_MODEL, "test", "random")]
    ci = pooled.confidence_interval()
    light = _light(orig.estimate, orig.se ** 2, np.array([e.estimate for e in reps]),
                   np.array([e.se for e in reps]) ** 2, tolerance,
                   tau2_method=design["tau2_method"],
                   interval=design.get("meta_interval", "wald"))
    level = str(light["level"])
    diff, lo, hi = (float(light[k]) for k in ("difference", "low", "high"))
    n_con, n_inc, k = int(light["n_consistent"]), int(light["n_inconsistent"]), len(reps)
    tol = f"±{number(tolerance)}"
    ci90 = f"90% CI {_interval_text(lo, hi)}"
    pooled_words = (f"the {number(k)} {_plural(k, 'replication', 'replications')}"
                    + (", pooled," if k > 1 else "")
                    + f" {_plural(k, 'differs', 'differ')} from the original ({original}) by "
                    f"{number(diff)} ({ci90})")
    counts = (f"{number(n_inc)} of {number(k)} {_plural(k, 'is', 'are')} inconsistent with "
              f"it (95% CI of the difference excludes 0) and {number(n_con)} "
              f"{_plural(n_con, 'is', 'are')} shown consistent within {tol}")
    if level == "good":
        why = (f"shown within {tol}" if light["pooled_in"]
               else f"beyond the pooled test, every replication is shown consistent within "
                    f"{tol}")
        sentence = (f"Test R² of the linear model replicates: {pooled_words}, {why}; "
                    f"{counts}.")
    elif level == "bad":
        sentence = (f"Test R² of the linear model does not replicate: {pooled_words}, beyond "
                    f"{tol}; {counts}.")
    else:
        sentence = (f"Test R² of the linear model, replication undecided: {pooled_words}, "
                    f"neither shown within {tol} nor beyond it; {counts}.")
    basis = ("pooled difference" if k > 1 else "difference") + f" {number(diff)}, {ci90}"
    if level == "good" and not light["pooled_in"]:
        basis += f"; every replication's 90% CI inside {tol}"
    how = "the tolerance given" if design.get("tolerance_given") else "the default"
    tolerance_words = f"judged against {tol} in test R² ({how}): {basis}"
    caveats = []
    if left_out:
        caveats.append(f"{number(len(left_out))} {_plural(len(left_out), 'study', 'studies')} "
                       f"left out ({_shown(s for s, _ in left_out)})")
    bad = outside.get(LINEAR_MODEL, ())
    no_test = [s for s, why in bad if "test R2" in why]
    no_cv = [s for s, why in bad if "test R2" not in why]
    if no_test:
        caveats.append(f"{number(len(no_test))} {_plural(len(no_test), 'study', 'studies')} "
                       f"without a test R2 left out ({_shown(no_test)})")
    if no_cv:
        caveats.append(f"{number(len(no_cv))} {_plural(len(no_cv), 'study', 'studies')} kept "
                       f"for the test R2 but left out of the CV R2: a fold's R2 is outside "
                       f"[0, 1) ({_shown(no_cv)})")
    if models_left_out:
        caveats.append(f"left out: {', '.join(models_left_out)} (no test R2 in the original "
                       "study)")
    if design["quick"]:
        caveats.append(f"quick mode: {design['n_folds']}-fold CV")
    return Verdict(sentence, "test R2", level, float(pooled.estimate), float(ci.low),
                   float(ci.high), tuple(caveats),
                   label="random-effects pooled test R2, linear model",
                   tolerance=tolerance_words)


def _notes(design, left_out, outside, models_left_out, audited) -> tuple:
    notes = [f"design per study: 2:1 train/test split, {design['n_folds']}-fold CV on the "
             f"training part (fewer folds where a fold would hold fewer than "
             f"{design['min_fold_rows']} rows, at least 2)"
 + "; every row of each study"]
    if audited:
        notes.append(f"audited models ({', '.join(audited)}): scikit-learn fits by "
                     f"replikit.experiment.run on every row, {AUDITED_N_FOLDS}-fold CV on the "
                     "same training parts as the linear model; "
                     "constant baselines have no R2 to replicate")
    for s, why in left_out:
        notes.append(f"study {s} left out: {why}")
    for model, bad in outside.items():
        if model not in models_left_out:
            notes.append(f"{model}: {len(bad)} {_plural(len(bad), 'study', 'studies')} without "
                         f"an R2 in [0, 1) left out ({_shown(s for s, _ in bad)})")
    for model, why in models_left_out.items():
        notes.append(f"{model} left out: {why}")
    return tuple(notes)


def _study_values(d, col: str):
    """Per study: the distinct values of ``col`` (study -> number of distinct values)."""
    return d.X[col].groupby(d.study.astype(str).to_numpy()).nunique(dropna=False)


def _moderators_iv(d, moderators) -> tuple[list, str]:
    """The moderator columns and where they come from ('given', 'found', 'none')."""
    if d.study is None or d.study.nunique() < 2:
        return [], "none"
    if moderators is None:
        found = [str(c) for c in d.X.columns
                 if d.X[c].nunique() > 1 and bool((_study_values(d, c) == 1).all())]
        return found, "found" if found else "none"
    if isinstance(moderators, str):
        moderators = [moderators]
    if not isinstance(moderators, (list, tuple)):
        raise ParameterTypeError("`moderators` must be a column name or a list of them; got "
                                 f"{type(moderators).__name__}.")
    cols = []
    for c in moderators:
        c = str(c)
        if c not in d.X.columns:
            raise ParameterError(f"`moderators`: {c!r} is not a column of the data; the columns "
                                 f"are {_shown([repr(str(x)) for x in d.X.columns], 12)}.")
        per = _study_values(d, c)
        varies = [str(s) for s, n in per.items() if n > 1]
        if varies:
            raise DataError(f"moderator {c!r} varies within study {_shown(varies, 3)}: a "
                            "moderator must be a study-level column (one value per study).")
        if c not in cols:
            cols.append(c)
    return cols, "given" if cols else "none"


def _why(d, pooled, mod_cols, mod_source) -> dict:
    """Meta-regression, influence and small-study effects of the pooled test R2."""
    import warnings

    from ..errors import ReplikitError, ReplikitWarning
    from .influence import influence
    from .metareg import meta_regression
    from .smallstudy import small_study_effects

    out = {"metareg": None, "moderators": (), "source": "none", "influence": None,
           "small_study": None, "notes": ()}
    notes = []
    k = pooled.k
    if mod_cols:
        used = mod_cols if mod_source == "given" else mod_cols[:max(0, k - 3)]
        if mod_source == "found" and len(used) < len(mod_cols):
            notes.append(f"study-level columns found: {', '.join(mod_cols)}; "
                         + (f"the meta-regression uses the first {len(used)} ({k} studies)"
                            if used else f"too few studies ({k}) for a meta-regression"))
        if used:
            import pandas as pd

            study = d.study.astype(str)
            first = d.X[used].groupby(study.to_numpy(), sort=False).first()
            frame = first.loc[list(pooled.labels)].reset_index(drop=True)
            try:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always", ReplikitWarning)
                    fit = meta_regression(list(pooled.y), list(pooled.v),
                                          moderators=pd.DataFrame(frame), labels=pooled.labels,
                                          tau2_method=pooled.tau2_method,
                                          interval=pooled.interval)
                notes += [" ".join(str(w.message).split()) for w in caught]
                out.update(metareg=fit, moderators=tuple(used), source=mod_source)
                notes.append(f"meta-regression of the test R2 (linear model) on "
                             f"{'the given' if mod_source == 'given' else 'the study-level'} "
                             f"column(s) {', '.join(used)}: {fit.qm_test}")
            except ReplikitError as exc:
                notes.append(f"no meta-regression on {', '.join(used)}: "
                             f"{' '.join(str(exc).split())}")
    if k >= 3:
        try:
            out["influence"] = influence(pooled)
            from .meta import meta_analysis
            from .transforms import to_scale

            # funnel tests on atanh(sqrt(R2)): on the raw scale SE(R2) falls as R2 rises (Olkin-
            # Finn: 2 sqrt(R2)(1 - R2)/sqrt(N)), an asymmetry that says nothing about small studies
            yz, sz = to_scale(np.asarray(pooled.y), np.sqrt(np.asarray(pooled.v)), "r2_z")
            on_z = meta_analysis(yz, se=sz, labels=list(pooled.labels),
                                 tau2_method=pooled.tau2_method, interval=pooled.interval)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out["small_study"] = small_study_effects(on_z)
            notes.append("funnel plot and small-study tests on the r2_z scale (atanh(sqrt(R2))), "
                         "where the SE of an R2 no longer depends on the R2 itself")
        except ReplikitError as exc:
            notes.append(f"influence / small-study diagnostics not computed: "
                         f"{' '.join(str(exc).split())}")
    out["notes"] = tuple(notes)
    return out
