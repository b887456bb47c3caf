"""The audit entry of the generalizability analysis (Matteucci et al. 2024): do the audited
models' rankings generalize across studies?

:func:`audit` treats each study as one experimental condition of a benchmark of the audited
models: from the per-study score of every model it ranks the models within each study and
estimates n* — the number of studies after which two independent sets of studies give similar
ranking distributions with high probability — for three goals: the whole ranking (Mallows),
the best model (Jaccard, k = 1) and each model's position (Borda). The verdict compares the
95% interval of n* of every goal with the studies at hand (:func:`card_light`).

The package binds :func:`audit` eagerly (``replikit.generalize.audit`` is the function, not this
module), so this module imports nothing heavy at import time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .._compat import renamed, renamed_fields
from .._labels import names_list
from ..results import Result

if TYPE_CHECKING:
    import pandas as pd

    from ..results import ConfidenceInterval, Verdict
    from .spec import GeneralizabilityResult

__all__ = ["GeneralizabilityAudit", "audit", "check_applicable", "card_light", "MIN_STUDIES"]

#: n* needs two disjoint sets of at least 2 studies (Matteucci et al. 2024, Algorithm 1).
MIN_STUDIES = 4
_NEED = "n* needs two disjoint sets of at least 2 studies (Matteucci et al. (2024), Algorithm 1)"


def card_light(ci_low, ci_high, n_studies):
    """The light of the generalizability card from the 95% intervals of n* of every goal.

    ``'good'`` only when every goal's *upper* bound is within the studies at hand
    (``ci_high <= N`` for all goals: the data show N studies suffice for each); ``'bad'`` when
    some goal's *lower* bound is beyond them (``ci_low > N``: the data show N studies do not
    suffice for it); ``'warn'`` otherwise — an interval straddles N, or is missing (fewer than 5
    studies, no jackknife). Green is an intersection over goals (each must be shown), so its
    error at the boundary is that of one bound; red is a union, each goal at its own level.

    Parameters
    ----------
    ci_low, ci_high : array_like of shape (..., G)
        Lower and upper bounds of n* per goal (last axis); NaN when there is no interval.
    n_studies : int or array_like of shape (...)
        N, the studies at hand.

    Returns
    -------
    level : str or numpy.ndarray of str
        ``'good'``, ``'warn'`` or ``'bad'`` (an array over the leading axes).
    key : int or numpy.ndarray of int
        The goal the light rests on: for ``'bad'`` the goal with the largest lower bound, else
        the goal with the largest upper bound (a missing interval counts as unbounded).

    See Also
    --------
    audit : Judges its goals with it.

    Examples
    --------
    >>> card_light([2.0, 3.0], [6.0, 9.0], 10)
    ('good', 1)
    >>> card_light([2.0, 12.0], [6.0, 40.0], 10)
    ('bad', 1)
    >>> card_light([2.0, 5.0], [6.0, 14.0], 10)
    ('warn', 1)
    """
    import numpy as np

    lo = np.asarray(ci_low, dtype=float)
    hi = np.asarray(ci_high, dtype=float)
    N = np.asarray(n_studies, dtype=float)[..., None]
    hi_ = np.where(np.isfinite(hi), hi, np.inf)
    lo_ = np.where(np.isfinite(lo), lo, -np.inf)
    good = (hi_ <= N).all(-1)
    bad = (lo_ > N).any(-1)
    level = np.where(good, "good", np.where(bad, "bad", "warn"))
    key = np.where(bad, lo_.argmax(-1), hi_.argmax(-1))
    if level.ndim == 0:
        return str(level), int(key)
    return level, key


def check_applicable(n_studies: int, n_models: int) -> None:
    """Refuse early when ``n_studies`` studies and ``n_models`` models cannot give n*.

    n* needs at least 4 studies and 2 models. Callers that still have to compute the
    per-study scores use it to refuse before any model is fitted.

    Parameters
    ----------
    n_studies : int
        Studies with a score for every model.
    n_models : int
        Models scored.

    Raises
    ------
    replikit.errors.NotApplicableError
        With the reason and, in ``advice``, what to do.

    See Also
    --------
    audit : The analysis this guards.

    Examples
    --------
    >>> check_applicable(10, 3)
    >>> check_applicable(3, 3)
    Traceback (most recent call last):
    ...
    replikit.errors.NotApplicableError: 3 studies; n* needs two disjoint sets of at least 2 studies (Matteucci et al. (2024), Algorithm 1), so at least 4.
    """
    from ..errors import NotApplicableError

    if n_models < 2:
        raise NotApplicableError(
            f"{'no model' if n_models < 1 else 'one model only'}: nothing to rank.",
            "score two or more models (replikit audit --models).")
    if n_studies < MIN_STUDIES:
        raise NotApplicableError(
            f"{n_studies} stud{'y' if n_studies == 1 else 'ies'}; {_NEED}, so at least "
            f"{MIN_STUDIES}.", "audit data with four or more studies.")


@renamed_fields(delta="tolerance")
@dataclass(frozen=True, slots=True)
class GeneralizabilityAudit(Result):
    """Result of :func:`audit`: n* per goal, the rankings behind it and the verdict.

    Parameters
    ----------
    nstar : pandas.DataFrame
        One row per goal: ``goal`` (in words), ``kernel``, ``N`` (studies), ``nstar``,
        ``sufficient`` (N >= n*), ``nstar_observed`` (smallest n <= N/2 whose empirical n-Gen
        reaches alpha*, NaN if none), ``nstar_bound`` (Prop. A.4), ``eps``, ``ci_low``/
        ``ci_high`` (jackknife 95% interval of n*), ``nstar_loglog``, ``beta0``, ``beta1``
        (Algorithm 1's log-log extrapolation, for contrast), ``confidence_level`` (alpha*)
        and ``tolerance`` (delta*). n* is the moment-matched asymptotic estimate
        (:func:`~replikit.generalize.nstar.gamma_nstar`).
    ranks : pandas.DataFrame
        Rank of each model (columns) in each study (index ``study``): 1 = best, ties share a
        rank.
    scores : pandas.DataFrame
        The per-study scores the ranks come from (same shape).
    per_model : pandas.DataFrame
        ``model``, ``mean_score``, ``mean_rank`` (1 = best), ``n_best`` (studies where the
        model ranks first, ties included).
    N : int
        Studies analyzed (every model scored).
    models : tuple
    metric : str
        What the scores are (as given to :func:`audit`).
    higher_is_better : bool
        Direction of the score.
    confidence_level, tolerance : float
        alpha* and delta* of Matteucci et al. (2024).
    n_resamples : int
        Pairs of disjoint subsamples per subsample size.
    quick : bool
        Whether the quick mode's fewer resamples were used.
    studies_left_out, models_left_out : tuple of (label, reason)
        What could not be ranked, and why.
    verdict : replikit.results.Verdict
        The conclusion: the hardest goal's n* against the studies at hand.
    notes : tuple of str
        What was done: studies and models left out, n* resting on few subsample sizes.
    result : GeneralizabilityResult
        The full analysis (quantile tables, MMD distributions per goal).
    key_kernel : str
        The kernel of the goal the verdict rests on (see :func:`card_light`): its n* and
        interval are the verdict's key number.

    See Also
    --------
    audit : The function that computes it.
    GeneralizabilityResult : The analysis of a general benchmark table.

    References
    ----------
    .. [1] Matteucci, F., Arzamasov, V., Cribeiro-Ramallo, J., Heyden, M., Ntoutsi, E. &
       Böhm, K. (2024). Can You Trust Your Experiments? Generalizability of Experimental
       Studies. arXiv:2406.17374.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"study": np.repeat([f"s{i}" for i in range(8)], 3),
    ...                    "model": ["a", "b", "c"] * 8,
    ...                    "score": np.tile([0.8, 0.7, 0.6], 8) + rng.normal(0, 0.05, 24)})
    >>> res = audit(df, metric="AUC", random_state=0)
    >>> res.key_goal["goal"] == res.verdict.label.split(": ")[-1]
    True
    >>> ci = res.confidence_interval()
    >>> bool(ci.low <= res.verdict.estimate <= ci.high)
    True
    """

    nstar: pd.DataFrame
    ranks: pd.DataFrame
    scores: pd.DataFrame
    per_model: pd.DataFrame
    N: int
    models: tuple
    metric: str
    higher_is_better: bool
    confidence_level: float
    tolerance: float
    n_resamples: int
    quick: bool
    studies_left_out: tuple
    models_left_out: tuple
    verdict: Verdict
    notes: tuple = ()
    result: GeneralizabilityResult | None = field(default=None, repr=False)
    key_kernel: str = ""

    @property
    def title(self) -> str:
        """A heading: the question the audit answers."""
        return "Do the model rankings generalize across studies?"

    @property
    def hardest(self) -> pd.Series:
        """The n* row of the goal that needs the most studies."""
        return self.nstar.loc[self.nstar["nstar"].idxmax()]

    @property
    def key_goal(self) -> pd.Series:
        """The n* row of the goal the verdict's light rests on (:func:`card_light`): for a red
        light the goal with the largest lower bound, else the one with the largest upper bound."""
        if not self.key_kernel:
            return self.hardest
        return self.nstar.loc[self.nstar["kernel"] == self.key_kernel].iloc[0]

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """Interval for the key goal's n* (the verdict's key number, :attr:`key_goal`):
        jackknife, log scale.

        Parameters
        ----------
        confidence_level : float, default 0.95
            Level of the interval.

        Returns
        -------
        replikit.results.ConfidenceInterval
            ``(low, high)``; see :meth:`NStarResult.confidence_interval
            <replikit.generalize.NStarResult.confidence_interval>`.

        Raises
        ------
        ParameterError
            Fewer than 5 studies (no jackknife), or no analysis kept in :attr:`result`.
        """
        from ..errors import ParameterError

        key = ("all", str(self.key_goal["kernel"]))
        if self.result is None or key not in self.result.details:
            raise ParameterError("This audit keeps no analysis (`result` is None) to compute "
                                 "an interval from.")
        return self.result.details[key].confidence_interval(confidence_level)

    def to_frame(self) -> pd.DataFrame:
        """The n* table.

        Returns
        -------
        pandas.DataFrame
            One row per goal; see :attr:`nstar`.
        """
        return self.nstar.copy()

    def to_dict(self) -> dict:
        """Every number of the audit in plain JSON types.

        Returns
        -------
        dict
            The fields, with ``ranks`` as the long table of :meth:`ranks_frame` and
            ``result`` left out (its table is ``nstar``).
        """
        from ..results import to_jsonable

        return to_jsonable({
            "nstar": self.nstar, "ranks": self.ranks_frame(), "per_model": self.per_model,
            "N": self.N, "models": self.models, "metric": self.metric,
            "higher_is_better": self.higher_is_better,
            "confidence_level": self.confidence_level, "tolerance": self.tolerance,
            "n_resamples": self.n_resamples, "quick": self.quick,
            "studies_left_out": self.studies_left_out, "models_left_out": self.models_left_out,
            "verdict": self.verdict, "notes": self.notes, "key_kernel": self.key_kernel})

    def ranks_frame(self) -> pd.DataFrame:
        """The rankings as a long table.

        Returns
        -------
        pandas.DataFrame
            ``study``, ``model``, ``score``, ``rank`` (1 = best).
        """
        import pandas as pd

        return pd.DataFrame({
            "study": self.ranks.index.repeat(self.ranks.shape[1]),
            "model": list(self.ranks.columns) * len(self.ranks),
            "score": self.scores.to_numpy().ravel(),
            "rank": self.ranks.to_numpy().ravel(),
        })

    def plot(self, ax=None, *, goal: str = "mallows"):
        """The MMD quantiles of one goal against n, with n* and its interval.

        The figure 2 of Matteucci et al. (2024), with the asymptotic quantile curve of the
        default estimate.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw (default: a new figure).
        goal : str, default 'mallows'
            A kernel label of :attr:`nstar` (``'mallows'``, ``'jaccard(k=1)'``,
            ``'borda(NAME)'``).

        Returns
        -------
        matplotlib.axes.Axes
            See :func:`replikit.generalize.plots.plot_quantile_fit`.
        """
        from ..errors import ParameterError
        from .plots import plot_quantile_fit

        key = ("all", goal)
        if self.result is None or key not in self.result.details:
            raise ParameterError(f"`goal` must be one of {list(self.nstar['kernel'])}; got "
                                 f"{goal!r}.")
        return plot_quantile_fit(self.result.details[key], ax=ax)

    def __str__(self) -> str:
        body = self.nstar[["goal", "nstar", "ci_low", "ci_high", "N", "sufficient"]].to_string(
            index=False, float_format=lambda v: f"{v:.1f}")
        return f"{self.title}\n{self.verdict}\n{body}"


def _study_frame(study_scores, metric):
    """``(long frame study/model/score, metric)`` from a per-study score frame or a Scores
    table (its rows of ``metric`` averaged over repeats and folds within each study)."""
    import pandas as pd

    from ..data.tables import Scores
    from ..errors import DataError, ParameterError

    if isinstance(study_scores, Scores):
        study_scores = study_scores.frame
    if not isinstance(study_scores, pd.DataFrame):
        raise DataError("`study_scores` must be a DataFrame with columns study, model, score "
                        f"or a Scores table; got {type(study_scores).__name__}.")
    f = study_scores
    if "score" not in f.columns and {"metric", "value"} <= set(f.columns):
        metrics = list(pd.unique(f["metric"]))
        if metric is None:
            if len(metrics) != 1:
                raise ParameterError(f"`metric`: the scores hold {len(metrics)} metrics "
                                     f"({', '.join(map(str, metrics[:8]))}); name the one to "
                                     "rank by.")
            metric = metrics[0]
        elif metric not in metrics:
            raise ParameterError(f"`metric`: no {metric!r} rows in the scores (metrics: "
                                 f"{', '.join(map(str, metrics[:8]))}).")
        f = f.loc[f["metric"] == metric].rename(columns={"value": "score"})
    missing = [c for c in ("study", "model", "score") if c not in f.columns]
    if missing:
        raise DataError(f"`study_scores` needs columns study, model and score (or a Scores "
                        f"table); missing {', '.join(missing)}; columns: "
                        f"{names_list(f.columns, 20)}.")
    score = pd.to_numeric(f["score"], errors="coerce")
    if score.isna().all():
        raise DataError("`study_scores`: column 'score' holds no numbers.")
    f = pd.DataFrame({"study": f["study"].to_numpy(), "model": f["model"].to_numpy(),
                      "score": score.to_numpy(dtype=float)})
    f = f.groupby(["study", "model"], sort=False, dropna=False)["score"].mean().reset_index()
    return f, metric


def _higher_is_better(metric) -> bool:
    from ..experiment.metrics import higher_is_better

    name = str(metric).strip().lower().replace(" ", "_")
    return higher_is_better(name)


def _caveats(n_left, m_left, quick, n_resamples, N, key_kernel: str = "",
             key_kind: str = "", n_models: int = 0) -> list[str]:
    out = []
    if n_left:  # first: the card shows the main caveat, and half the studies may be gone
        out.append(f"{n_left:,} stud{'y' if n_left == 1 else 'ies'} left out (a model without a "
                   "score)")
    if (key_kernel.startswith("jaccard") and key_kind == "jackknife" and N >= 10
            and n_models <= 5):  # measured with 3 and 5 models; 10 alternatives cover .95+
        out.append("the light rests on the best model's n*, whose jackknife interval covered "
                   "82-90% (not 95%) in simulations with 3 models, 88% with 5, when the best "
                   "model is contested and N = 20-40 (docs/generalize.md, few models)")
    if m_left:
        out.append(f"{m_left:,} model{'s' if m_left > 1 else ''} left out (no score in any study)")
    if N < 10:
        out.append(f"n* from {N} studies: its bias was measured only from 10 studies on "
                   "(docs/generalize.md); read its interval")
    if quick:
        out.append(f"quick mode: {n_resamples:,} subsample pairs per size")
    return out


@renamed(delta="tolerance")
def audit(study_scores, *, metric: str | None = None, higher_is_better: bool | None = None,
          confidence_level: float = 0.95, tolerance: float = 0.05,
          n_resamples: int | None = None, quick: bool = False, random_state=None,
          left_out=()) -> GeneralizabilityAudit:
    """Do the models' rankings generalize across studies? n* for three goals.

    Each study is one experimental condition; the models are ranked within each study by
    their score (ties share a rank) and n* is estimated (Matteucci et al. 2024, with the
    asymptotic quantile of :func:`~replikit.generalize.nstar.gamma_nstar`) for the whole ranking
    (Mallows kernel), the identity of the best model (Jaccard kernel, k = 1) and each model's
    position (Borda kernel, one goal per model). The verdict judges every goal's 95% interval
    of n* against the N studies at hand (:func:`card_light`): ``good`` only when every upper
    bound is within N, ``bad`` when some goal's lower bound is beyond N, ``warn`` otherwise;
    its key number is the n* of the goal the light rests on, with its interval. The rule's
    false-green rate at the boundary (true n* = N) and its power are measured in
    :mod:`replikit.generalize.validity` (docs/generalize.md).

    Parameters
    ----------
    study_scores : pandas.DataFrame or Scores
        One score per (study, model): columns ``study``, ``model``, ``score`` (rows repeated
        per study and model are averaged), or a :class:`~replikit.data.tables.Scores` table
        (its ``metric`` rows, averaged over repeats and folds within each study).
    metric : str, optional
        The metric of a Scores table to rank by (needed when it holds several); with a score
        frame, a label for the verdict. Also sets the direction when ``higher_is_better`` is
        None (losses such as ``'mae'`` or ``'log_loss'`` rank lower first).
    higher_is_better : bool, optional
        Direction of the score; default from ``metric`` (higher is better unless it names a
        loss).
    confidence_level : float, default 0.95
        alpha*: the probability with which two sets of n* studies must give rankings within
        epsilon* (Matteucci et al. 2024, Def. 4.1).
    tolerance : float, default 0.05
        delta*, the similarity threshold (eq. 2): a practical tolerance on how dissimilar the
        rankings of two sets of studies may be (``replikit audit --tolerance generalize=``).
    n_resamples : int, optional
        Pairs of disjoint subsamples per subsample size; default 1000 (300 with ``quick``).
    quick : bool, default False
        Fewer resamples (the test suite's and ``replikit audit --quick``'s).
    random_state : None, int or numpy.random.Generator
        Each goal draws from its own stream derived from it.
    left_out : sequence of (study, reason), optional
        Studies the caller could not score (e.g. too small); carried into :attr:`notes`,
        ``studies_left_out`` and the verdict's caveats.

    Returns
    -------
    GeneralizabilityAudit
        n* per goal, the rankings and the verdict.

    Raises
    ------
    replikit.errors.NotApplicableError
        Fewer than 4 studies with a score for every model, or fewer than 2 models; the message
        says why and ``advice`` what to do.

    See Also
    --------
    check_applicable : The same refusal before any score is computed.
    analyze : The analysis of a general benchmark table.

    Notes
    -----
    Matteucci et al. (2024): rankings with ties (Def. 4.2), kernels of sec. 4.2, MMD
    (Def. 4.3) over disjoint subsample pairs for every n <= N/2 (Algorithm 1, eqs. 2-4), and
    n* where the moment-matched asymptotic alpha*-quantile of the MMD (Gretton et al. (2012))
    reaches epsilon* (:func:`~replikit.generalize.nstar.gamma_nstar`; nearly unbiased from 10
    studies on, where Algorithm 1's log-log extrapolation, kept as ``nstar_loglog``,
    overshoots), with a jackknife 95% interval; computed by
    :func:`~replikit.generalize.analyze`. A study without the score of some model is left out
    (a ranking needs every model); a model without any score is left out first.

    References
    ----------
    .. [1] Matteucci, F., Arzamasov, V., Cribeiro-Ramallo, J., Heyden, M., Ntoutsi, E. &
       Böhm, K. (2024). Can You Trust Your Experiments? Generalizability of Experimental
       Studies. arXiv:2406.17374.
    .. [2] Gretton, A., Borgwardt, K. M., Rasch, M. J., Schölkopf, B. & Smola, A. (2012). A
       Kernel Two-Sample Test. Journal of Machine Learning Research, 13, 723–773.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"study": np.repeat([f"s{i}" for i in range(8)], 3),
    ...                    "model": ["a", "b", "c"] * 8,
    ...                    "score": np.tile([0.8, 0.7, 0.6], 8) + rng.normal(0, 0.05, 24)})
    >>> res = audit(df, metric="AUC", random_state=0)
    >>> res.N, list(res.nstar["kernel"][:2])
    (8, ['mallows', 'jaccard(k=1)'])
    >>> res.verdict.level in {"good", "warn", "bad"}
    True
    """
    import math

    import numpy as np
    import pandas as pd

    from .._format import number
    from .._validation import check_int
    from ..errors import NotApplicableError, ParameterTypeError
    from ..results import Verdict
    from .kernels import Kernel
    from .nstar import FLAT_JACKKNIFE, NO_JACKKNIFE, check_levels, check_tolerance
    from .plots import goal_words
    from .spec import StudySpec, analyze, prepare

    if np.ndim(confidence_level) != 0:
        raise ParameterTypeError("`confidence_level` must be one number strictly between 0 and 1 "
                                 f"(use analyze for a grid); got {confidence_level!r}.")
    if np.ndim(tolerance) != 0:
        raise ParameterTypeError("`tolerance` must be one number strictly between 0 and 1 (use "
                                 f"analyze for a grid); got {tolerance!r}.")
    conf = float(check_levels(confidence_level)[0])
    tolerance = float(check_tolerance(tolerance)[0])
    n_resamples = (300 if quick else 1000) if n_resamples is None else check_int(
        n_resamples, "n_resamples", min_value=1)
    frame, metric = _study_frame(study_scores, metric)
    label = "score" if metric is None else str(metric)
    hib = _higher_is_better(label) if higher_is_better is None else bool(higher_is_better)

    wide = frame.pivot(index="study", columns="model", values="score")
    never = [m for m in wide.columns if wide[m].isna().all()]
    what = "score" if metric is None else f"{label} score"
    models_left_out = tuple((m, f"no {what} in any study") for m in never)
    wide = wide.drop(columns=never)
    if wide.shape[1] < 2:
        why = "; ".join(f"{m}: {r}" for m, r in models_left_out)
        raise NotApplicableError(
            ("one model only" if wide.shape[1] == 1 else "no model") + " with scores"
            + (f" ({why})" if why else "") + ": nothing to rank.",
            "score two or more models (replikit audit --models).")
    pre = tuple((s, str(r)) for s, r in left_out)
    gaps = wide.isna()
    studies_left_out = pre + tuple(
        (s, "no score for " + ", ".join(map(str, wide.columns[gaps.loc[s]])))
        for s in wide.index[gaps.any(axis=1)])
    complete = wide.index[~gaps.any(axis=1)]
    if len(complete) < MIN_STUDIES:
        shown = "; ".join(f"{s} ({r})" for s, r in studies_left_out[:5])
        more = " ..." if len(studies_left_out) > 5 else ""
        raise NotApplicableError(
            f"only {len(complete)} stud{'y has' if len(complete) == 1 else 'ies have'} a "
            f"score for every model; {_NEED}. Left out: {shown}{more}.",
            "every model needs a score in at least 4 studies; in replikit audit a study needs "
            "at least 9 rows (3 of each class) for its 3-fold CV.")
    long = frame[frame["study"].isin(complete) & ~frame["model"].isin(never)]

    prepared = prepare(long, StudySpec(alternative="model", score="score", factors="study",
                                       higher_is_better=hib))
    sample = prepared.samples[0]
    names = list(sample.alternatives)
    kernels = [Kernel("mallows"), Kernel("jaccard", k=1)] + [
        Kernel("borda", alternative=m) for m in names]
    res = analyze(prepared, kernels=kernels, confidence_level=conf, tolerance=tolerance,
                  n_resamples=n_resamples, random_state=random_state)
    N = len(sample.conditions)
    t = res.table
    goal = [goal_words(k, "model") for k in t["kernel"]]
    nstar = pd.DataFrame({"goal": goal, "kernel": t["kernel"], "N": N, "nstar": t["nstar"],
                          "sufficient": t["sufficient"], "nstar_observed": t["nstar_observed"],
                          "nstar_bound": t["nstar_bound"], "eps": t["eps"],
                          "ci_low": t["ci_low"], "ci_high": t["ci_high"],
                          "nstar_loglog": t["nstar_loglog"],
                          "beta0": t["beta0"], "beta1": t["beta1"],
                          "confidence_level": t["confidence_level"],
                          "tolerance": t["tolerance"]})
    ranks = sample.to_frame(wide=True).rename_axis("study").rename_axis(None, axis=1)
    scores = pd.DataFrame(sample.scores, index=ranks.index, columns=names)
    per_model = pd.DataFrame({"model": names, "mean_score": scores.mean().to_numpy(),
                              "mean_rank": ranks.mean().to_numpy(),
                              "n_best": (ranks == 1).sum().to_numpy()})

    m = t[t["kernel"] == "mallows"].iloc[0]
    j = t[t["kernel"] == "jaccard(k=1)"].iloc[0]
    lows, highs = t["ci_low"].to_numpy(float), t["ci_high"].to_numpy(float)
    light, key_i = card_light(lows, highs, N)
    key_est = float(t["nstar"].iloc[key_i])
    lo, hi = float(lows[key_i]), float(highs[key_i])
    has_ci = bool(np.isfinite(lows).all() and np.isfinite(highs).all())
    what = f"({number(conf)}, {number(tolerance)})-generalizable"
    needs = (f" With {N:,} studies, the whole ranking needs n* ≈ {number(m['nstar'])} studies "
             f"and the identity of the best model n* ≈ {number(j['nstar'])} to be {what}.")
    kind = str(t["ci_kind"].iloc[key_i])
    if light == "good":
        sentence = (f"The data show the {N:,} studies at hand suffice for every goal: the "
                    f"largest 95% upper bound of n*, {number(hi)} (the {goal[key_i]}), is "
                    f"within {N:,}.")
    elif light == "bad":
        sentence = (f"The data show the {N:,} studies at hand do not suffice for the "
                    f"{goal[key_i]}: its n* is at least {number(lo)} (95% lower bound).")
    elif not has_ci:
        sentence = (f"With fewer than 5 studies n* has no interval, so the data cannot tell "
                    f"whether {N:,} studies suffice.")
    else:
        sentence = (f"The data cannot tell whether the {N:,} studies at hand suffice: the "
                    f"{goal[key_i]} needs n* ≈ {number(key_est)}, 95% interval "
                    f"{number(lo)} to {number(hi)}, which straddles {N:,}.")
    if kind == "agreement":
        p_u = -math.expm1(math.log(0.05) / N)  # exact 95% bound after 0 of N
        sentence += (f" Every study agrees on the {goal[key_i]}, so n* is 1 in these "
                     f"studies; the upper bound is the largest n* that {N:,} agreeing studies "
                     f"cannot rule out: new studies disagreeing, as far as possible, up to "
                     f"{number(100 * p_u)}% of the time (the exact 95% bound after 0 of "
                     f"{N:,}).")
    elif kind in ("flat", "at bound"):
        other = int(t["n_other"].iloc[key_i])
        sentence += (f" For the {goal[key_i]}, "
                     + (FLAT_JACKKNIFE if kind == "flat" else NO_JACKKNIFE).replace(
                         "experiment", "study")
                     + f"; its interval's upper end is the largest n* that {N - other:,} of "
                     f"{N:,} studies agreeing with the most common result cannot rule out (a "
                     "conservative bound).")
    sentence += needs
    interval_words = (f"95% interval of n* [{number(lo)}, {number(hi)}]" if np.isfinite(lo)
                      and np.isfinite(hi) else "no interval of n* (" + (
                          "fewer than 5 studies" if N < 5 else "none") + ")")
    tol_words = (f"judged against the {N:,} studies at hand: {interval_words} for the "
                 f"{goal[key_i]}, δ* = {number(tolerance)}")
    notes = list(res.notes)
    if studies_left_out:
        notes.append(f"{len(studies_left_out)} stud{'y' if len(studies_left_out) == 1 else 'ies'}"
                     " left out: " + "; ".join(f"{s} ({r})" for s, r in studies_left_out))
    if models_left_out:
        notes.append("models left out: " + "; ".join(f"{s} ({r})" for s, r in models_left_out))
    verdict = Verdict(sentence=sentence, metric=f"studies needed (n*), ranking by {label}",
                      label=f"studies needed (n*), the goal the light rests on: {goal[key_i]}",
                      level=light, estimate=key_est, tolerance=tol_words,
                      ci_low=lo if np.isfinite(lo) else None,
                      ci_high=hi if np.isfinite(hi) else None,
                      caveats=tuple(_caveats(len(studies_left_out), len(models_left_out),
                                             quick, n_resamples, N, str(t["kernel"].iloc[key_i]),
                                             kind, len(names))))
    return GeneralizabilityAudit(
        nstar=nstar, ranks=ranks, scores=scores, per_model=per_model, N=N, models=tuple(names),
        metric=label, higher_is_better=hib, confidence_level=conf, tolerance=tolerance,
        n_resamples=n_resamples, quick=bool(quick), studies_left_out=studies_left_out,
        models_left_out=models_left_out, verdict=verdict, notes=tuple(notes), result=res,
        key_kernel=str(t["kernel"].iloc[key_i]))
