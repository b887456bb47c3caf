"""The two-stage meta-analysis of Vijayakumar & Cheung (2021): CV folds → study estimate →
population estimate.

Stage 1 pools each study's fold estimates (fixed or random effects); stage 2 pools the study
estimates (fixed or random effects). All four combinations are returned, as in the paper's
Figure 7. Test-set estimates have one value per study, so only stage 2 applies (Figure 8,
:func:`population`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from .._compat import renamed
from .._format import interval as _interval_text
from .._format import number
from .._validation import check_choice
from ..errors import DataError
from ..results import Result, to_jsonable
from .estimates import Estimate, from_folds
from .meta import MetaResult, meta_analysis

__all__ = ["TwoStage", "two_stage", "population"]


@dataclass(frozen=True, slots=True)
class TwoStage(Result):
    """The results of the two-stage procedure: folds → studies → population.

    Attributes
    ----------
    studies : pandas.DataFrame
        One row per (stage1, study): ``stage1, study, estimate, se, ci_low, ci_high``.
    population : pandas.DataFrame
        One row per (stage1, stage2): pooled ``estimate, se, ci_low, ci_high, tau2, i2_q``, the
        τ² estimator (``tau2_method``), the interval (``interval``) and ``k``.
    meta : dict
        ``(stage1, stage2)`` → the :class:`~replikit.replicate.MetaResult` of stage 2.
    tau2_method : str
        τ² estimator of every random-effects step.
    interval : {'wald', 'knha'}
        The interval of stage 2.

    See Also
    --------
    two_stage : Builds it.
    population : Stage 2 alone, for test-set estimates.

    Examples
    --------
    >>> folds = pd.DataFrame({"study": ["a"] * 3 + ["b"] * 3 + ["c"] * 3,
    ...                       "value": [0.40, 0.42, 0.38, 0.45, 0.43, 0.47, 0.39, 0.41, 0.40],
    ...                       "n_test": 100})
    >>> res = two_stage(folds, tau2_method="DL")
    >>> res.population[["stage1", "stage2", "k"]]
       stage1  stage2  k
    0   fixed   fixed  3
    1   fixed  random  3
    2  random   fixed  3
    3  random  random  3
    """

    studies: pd.DataFrame
    population: pd.DataFrame
    meta: dict = field(repr=False)
    tau2_method: str = "REML"
    interval: str = "wald"

    @property
    def title(self) -> str:
        return "Two-stage meta-analysis"

    def to_frame(self) -> pd.DataFrame:
        """The population table (a copy of :attr:`population`).

        Returns
        -------
        pandas.DataFrame
            One row per (stage1, stage2).
        """
        return self.population.copy()

    def to_dict(self) -> dict:
        """The two tables and the estimators in JSON types.

        Returns
        -------
        dict
            ``tau2_method, interval, studies, population``.
        """
        return to_jsonable({"tau2_method": self.tau2_method, "interval": self.interval,
                            "studies": self.studies, "population": self.population})

    def __str__(self) -> str:
        kind = "Knapp-Hartung t" if self.interval == "knha" else "z"
        lines = [f"Two-stage meta-analysis (random effects: tau2 by {self.tau2_method}, "
                 f"{kind} intervals)"]
        for r in self.population.itertuples(index=False):
            lines.append(f"  folds {r.stage1:>6} -> studies {r.stage2:>6}: "
                         f"{number(r.estimate, 4)} (SE {number(r.se, 4)}), 95% CI "
                         f"{_interval_text(r.ci_low, r.ci_high, 4)}, tau2 = {number(r.tau2)}")
        return "\n".join(lines)


@renamed(ci="interval", values={"interval": {"z": "wald"}})
def population(estimates, *, tau2_method: str = "REML",
               interval: str = "wald") -> dict[str, MetaResult]:
    """Fixed- and random-effects population estimates from study estimates (stage 2).

    Parameters
    ----------
    estimates : sequence of Estimate
        One estimate per study.
    tau2_method : str, default 'REML'
        τ² estimator of the random-effects model.
    interval : {'wald', 'knha'}, default 'wald'
        The pooled interval: Wald (z) or Knapp & Hartung (2003), t(k − 1).

    Returns
    -------
    dict
        ``'fixed'`` and ``'random'`` → :class:`~replikit.replicate.MetaResult`.

    See Also
    --------
    two_stage : Both stages from a table of folds.
    combine : One pooling of the original and its replications.

    Notes
    -----
    Vijayakumar & Cheung (2021), "Test population estimate" (Figure 8).

    References
    ----------
    .. [1] Vijayakumar, R. & Cheung, M. W. (2021). Assessing Replicability of Machine Learning
       Results: An Introduction to Methods on Predictive Accuracy in Social Sciences. Social
       Science Computer Review, 39(5), 768–801. https://doi.org/10.1177/0894439319888445
    .. [2] Viechtbauer, W. (2010). Conducting Meta-Analyses in R with the metafor Package.
       Journal of Statistical Software, 36(3), 1–48. https://doi.org/10.18637/jss.v036.i03

    Examples
    --------
    >>> from replikit.replicate import from_summary
    >>> ests = [from_summary(estimate=v, se=0.02, label=s)
    ...         for s, v in (("a", 0.41), ("b", 0.38), ("c", 0.44))]
    >>> pooled = population(ests)
    >>> round(pooled["fixed"].estimate, 4), pooled["random"].tau2_method
    (0.41, 'REML')
    """
    ests = list(estimates)
    y = [e.estimate for e in ests]
    se = [e.se for e in ests]
    labels = [e.label or f"Study {i + 1}" for i, e in enumerate(ests)]
    return {"fixed": meta_analysis(y, se=se, labels=labels, tau2_method="FE",
                                   interval=interval),
            "random": meta_analysis(y, se=se, labels=labels, tau2_method=tau2_method,
                                    interval=interval)}


@renamed(ci="interval", values={"interval": {"z": "wald"}})
def two_stage(folds: pd.DataFrame, *, study: str = "study", value: str = "value",
              n: str = "n_test", k: int | None = None, tau2_method: str = "REML",
              interval: str = "wald", se_method: str = "olkin_finn") -> TwoStage:
    """Fold R² → study estimates → population estimate, all four FE/RE combinations.

    Parameters
    ----------
    folds : pandas.DataFrame
        One row per fold: a study label, the fold's R² and its test size (a Scores table
        filtered to one model and metric ``'r2'`` has this shape).
    study : str, default 'study'
        Column of study labels.
    value : str, default 'value'
        Column of fold R²s.
    n : str, default 'n_test'
        Column of fold test sizes.
    k : int, optional
        Predictors (for ``se_method='cohen'``).
    tau2_method : str, default 'REML'
        τ² estimator of every random-effects step.
    interval : {'wald', 'knha'}, default 'wald'
        The interval of stage 2.
    se_method : {'olkin_finn', 'cohen'}, default 'olkin_finn'
        SE of each fold's R² (Olkin & Finn 1995, eq. 1 of the paper, by default).

    Returns
    -------
    TwoStage
        The study estimates of both stage-1 poolings and the four population estimates.

    See Also
    --------
    population : Stage 2 alone.
    from_folds : Stage 1 for one study.

    Notes
    -----
    Vijayakumar & Cheung (2021), "CV population estimate" and Figure 7: the researcher "must
    choose between fixed- and random-effects meta-analytic intervals on two successive steps".

    References
    ----------
    .. [1] Vijayakumar, R. & Cheung, M. W. (2021). Assessing Replicability of Machine Learning
       Results: An Introduction to Methods on Predictive Accuracy in Social Sciences. Social
       Science Computer Review, 39(5), 768–801. https://doi.org/10.1177/0894439319888445
    .. [2] Olkin, I. & Finn, J. D. (1995). Correlations Redux. Psychological Bulletin, 118(1),
       155–164. https://doi.org/10.1037/0033-2909.118.1.155
    .. [3] Viechtbauer, W. (2010). Conducting Meta-Analyses in R with the metafor Package.
       Journal of Statistical Software, 36(3), 1–48. https://doi.org/10.18637/jss.v036.i03

    Examples
    --------
    >>> folds = pd.DataFrame({"study": ["a"] * 3 + ["b"] * 3,
    ...                       "value": [0.40, 0.42, 0.38, 0.45, 0.43, 0.47], "n_test": 100})
    >>> res = two_stage(folds)
    >>> ff = res.population.query("stage1 == 'fixed' and stage2 == 'fixed'")
    >>> round(float(ff["estimate"].iloc[0]), 4)
    0.426
    """
    for col in (study, value, n):
        if col not in folds.columns:
            raise DataError(f"`folds` needs a {col!r} column; got {list(folds.columns)}.")
    interval = check_choice(interval, "interval", ("wald", "knha"))
    groups = list(pd.unique(folds[study]))
    if len(groups) < 2:
        raise DataError(f"two-stage meta-analysis needs at least 2 studies in {study!r}; got "
                        f"{len(groups)}.")
    rows, pop, meta = [], [], {}
    for s1, pooling in (("fixed", "fixed"), ("random", "random")):
        ests: list[Estimate] = []
        for g in groups:
            sub = folds[folds[study] == g]
            e = from_folds(sub[value].to_numpy(float), sub[n].to_numpy(float), pooling=pooling,
                           tau2_method=tau2_method, k=k, se_method=se_method, label=str(g))
            ests.append(e)
            c = e.confidence_interval()
            rows.append({"stage1": s1, "study": str(g), "estimate": e.estimate, "se": e.se,
                         "ci_low": c.low, "ci_high": c.high})
        pops = population(ests, tau2_method=tau2_method, interval=interval)
        for s2, res in pops.items():
            meta[(s1, s2)] = res
            c = res.confidence_interval()
            pop.append({"stage1": s1, "stage2": s2, "estimate": res.estimate, "se": res.se,
                        "ci_low": c.low, "ci_high": c.high, "tau2": res.tau2, "i2_q": res.i2_q,
                        "tau2_method": res.tau2_method, "interval": res.interval, "k": res.k})
    return TwoStage(pd.DataFrame(rows), pd.DataFrame(pop), meta, tau2_method, interval)
