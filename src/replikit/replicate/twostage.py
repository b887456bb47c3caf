"""Two-stage meta-analysis of seed 000: CV folds -> study estimate -> population estimate.

Stage 1 pools each study's fold estimates (fixed or random effects); stage 2 pools the study
estimates (fixed or random effects). All four combinations are returned, as in the seed's
Figure 7. Test-set estimates have one value per study, so only stage 2 applies (Figure 8).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from .._validation import check_choice
from ..errors import DataError
from .estimates import Estimate, from_folds
from .meta import MetaResult, meta_analysis

__all__ = ["TwoStage", "two_stage", "population"]


@dataclass(frozen=True, slots=True)
class TwoStage:
    """Results of the two-stage procedure.

    Attributes
    ----------
    studies : DataFrame
        One row per (stage1, study): ``stage1, study, estimate, se, ci_low, ci_high, tau2``.
    population : DataFrame
        One row per (stage1, stage2): pooled ``estimate, se, ci_low, ci_high, tau2, i2_q`` and
        the estimator names.
    meta : dict
        ``(stage1, stage2) -> MetaResult`` of stage 2.
    tau2_method : str
    """

    studies: pd.DataFrame
    population: pd.DataFrame
    meta: dict = field(repr=False)
    tau2_method: str = "REML"

    def to_frame(self) -> pd.DataFrame:
        """The population table."""
        return self.population.copy()

    def __str__(self) -> str:
        lines = [f"Two-stage meta-analysis (random effects: tau2 by {self.tau2_method}, z CIs)"]
        for r in self.population.itertuples(index=False):
            lines.append(f"  folds {r.stage1:>6} -> studies {r.stage2:>6}: {r.estimate:.4f} "
                         f"(SE {r.se:.4f}), 95% CI [{r.ci_low:.4f}, {r.ci_high:.4f}], "
                         f"tau2 = {r.tau2:.3g}")
        return "\n".join(lines)


def population(estimates, *, tau2_method: str = "REML", ci: str = "z") -> dict[str, MetaResult]:
    """Fixed- and random-effects population estimates from study estimates (stage 2).

    Parameters
    ----------
    estimates : sequence of Estimate
    tau2_method : str
    ci : {'z', 'knha'}

    Returns
    -------
    dict with keys ``'fixed'`` and ``'random'``.

    Notes
    -----
    Seed 000, "Test population estimate" (Figure 8). Example: ``population([e1, e2, e3])``.
    """
    ests = list(estimates)
    y = [e.estimate for e in ests]
    se = [e.se for e in ests]
    labels = [e.label or f"Study {i + 1}" for i, e in enumerate(ests)]
    return {"fixed": meta_analysis(y, se=se, labels=labels, method="FE", ci=ci),
            "random": meta_analysis(y, se=se, labels=labels, method=tau2_method, ci=ci)}


def two_stage(folds: pd.DataFrame, *, study: str = "study", value: str = "value",
              n: str = "n_test", k: int | None = None, tau2_method: str = "REML",
              ci: str = "z", se_method: str = "olkin_finn") -> TwoStage:
    """Fold R2 -> study estimates -> population estimate, all four FE/RE combinations.

    Parameters
    ----------
    folds : DataFrame
        One row per fold: a study label, the fold's R2 and its test size (a Scores table
        filtered to one model and metric 'r2' has this shape).
    study, value, n : str
        Column names.
    k : int, optional
        Predictors (for ``se_method='cohen'``).
    tau2_method : str
        tau2 estimator of every random-effects step.
    ci : {'z', 'knha'}
        Interval of stage 2.
    se_method : {'olkin_finn', 'cohen'}
        Fold SE (seed eq. 1 by default).

    Returns
    -------
    TwoStage

    Notes
    -----
    Seed 000, "CV population estimate" and Figure 7: the researcher "must choose between fixed-
    and random-effects meta-analytic intervals on two successive steps". Example:
    ``two_stage(scores.query("model == 'lr' and metric == 'r2'"))``.
    """
    for col in (study, value, n):
        if col not in folds.columns:
            raise DataError(f"`folds` needs a {col!r} column; got {list(folds.columns)}.")
    ci = check_choice(ci, "ci", ("z", "knha"))
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
        pops = population(ests, tau2_method=tau2_method, ci=ci)
        for s2, res in pops.items():
            meta[(s1, s2)] = res
            c = res.confidence_interval()
            pop.append({"stage1": s1, "stage2": s2, "estimate": res.estimate, "se": res.se,
                        "ci_low": c.low, "ci_high": c.high, "tau2": res.tau2, "i2_q": res.i2_q,
                        "method": res.method, "ci_method": res.ci_method, "k": res.k})
    return TwoStage(pd.DataFrame(rows), pd.DataFrame(pop), meta, tau2_method)

