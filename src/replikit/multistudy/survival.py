"""Cross-study validation of survival models by the C-index (Bernau et al. 2014).

Bernau et al. (2014) introduced cross-study validation on survival data: every learner is
trained on each study in turn and its Harrell's C-index measured on every other study; the
diagonal of the matrix is cross-validation within the study. Their summaries are the mean of
the off-diagonal cells (cross-study validation, CSV) and of the diagonal (ordinary CV); the
learners ranked by one and by the other need not agree, and CV over-states what a user in a new
study will see. :func:`audit_survival` computes that matrix for every model, each cell's
C-index with its infinitesimal-jackknife standard error (the cell's learner is fixed, its test
study is a sample), an equal-weight ensemble of the per-study learners (each test study scored
by the learners trained on the others: its risk is the mean of theirs; Patil & Parmigiani 2018
weigh them, the equal weights need no outcome), and a verdict on the drop from within-study
to cross-study discrimination at a stated tolerance.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from .._validation import check_confidence_level, check_float
from ..errors import DataError, ParameterTypeError
from ..results import Result, Verdict

__all__ = ["SurvivalCrossStudy", "audit_survival", "DEFAULT_C_TOLERANCE"]

#: The drop of the C-index from within-study to cross-study validation tolerated by default:
#: 0.05 — a twentieth of the pairs ordered differently, about the difference between a model
#: and the same model without one strong predictor in the examples shipped with replikit.
DEFAULT_C_TOLERANCE = 0.05


@dataclass(frozen=True)
class SurvivalCrossStudy(Result):
    """Cross-study validation of survival models by Harrell's C-index.

    Attributes
    ----------
    matrices : dict of str -> DataFrame
        Model -> its K×K matrix (rows: training study; columns: test study; diagonal:
        within-study cross-validation, out-of-fold risks pooled).
    cells : DataFrame
        One row per model and cell: ``model, train, test, kind ('within' or 'across'),
        estimate, se, ci_low, ci_high, n, events``.
    summary : DataFrame
        Per model: ``model, within, across, across_low, across_high, drop, drop_se,
        drop_low, drop_high, ensemble, rank_within, rank_across`` (``ensemble``: the
        ensemble's mean C), best first by ``across``.
    ensemble : DataFrame
        Per model and test study: the C-index of the equal-weight ensemble of the learners
        trained on the other studies, with its SE and interval.
    best : str
        The model with the highest mean cross-study C-index.
    tolerance : float
        The tolerated drop of the C-index.
    confidence_level : float
        Of every interval.
    verdict : Verdict
        Whether the best model's discrimination holds across studies within the tolerance.
    notes : tuple of str
        What was left out and why.
    n_folds : int
        Folds of the within-study cross-validation.

    See Also
    --------
    audit_survival : Computes it.

    Examples
    --------
    >>> from replikit.experiment.models import make_model
    >>> from replikit.data.examples import uis
    >>> ex = uis()
    >>> a = audit_survival(ex.X, ex.outcome, ex.study, models={"cox": make_model("cox",
    ...                    "survival")}, random_state=0)
    >>> a.matrices["cox"].shape
    (2, 2)
    """

    matrices: dict
    cells: pd.DataFrame
    summary: pd.DataFrame
    ensemble: pd.DataFrame
    best: str
    tolerance: float
    confidence_level: float
    verdict: Verdict
    notes: tuple = ()
    n_folds: int = 5

    @property
    def title(self) -> str:
        """The question in a line."""
        return "Cross-study validation by the C-index (Bernau et al. 2014)"

    def to_frame(self) -> pd.DataFrame:
        """Every cell of every model (see ``cells``).

        Returns
        -------
        DataFrame
            ``model, train, test, kind, estimate, se, ci_low, ci_high, n, events``.
        """
        return self.cells.copy()

    def to_dict(self) -> dict[str, Any]:
        """The numbers in JSON types.

        Returns
        -------
        dict
            ``summary``, ``cells``, ``ensemble`` (lists of records), ``best``, ``tolerance``,
            ``verdict``, ``notes``.
        """
        from ..results import to_jsonable

        return {"summary": to_jsonable(self.summary.to_dict("records")),
                "cells": to_jsonable(self.cells.to_dict("records")),
                "ensemble": to_jsonable(self.ensemble.to_dict("records")),
                "best": self.best, "tolerance": self.tolerance,
                "confidence_level": self.confidence_level,
                "verdict": self.verdict.to_dict(), "notes": list(self.notes)}

    def plot(self, ax=None, *, model: str | None = None):
        """The cross-study C-index matrix of ``model`` (default: the best) as a heat map.

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw.
        model : str, optional
            Which model's matrix.

        Returns
        -------
        matplotlib.axes.Axes
        """
        from .plots import plot_matrix

        name = self.best if model is None else model
        M = self.matrices[name]
        values = M.to_numpy(float)
        seen = values[np.isfinite(values)]
        low, top = (float(seen.min()), float(seen.max())) if seen.size else (0.5, 1.0)
        return plot_matrix(M, ax=ax, symmetric=False, title=f"{name}: C-index",
                           xlabel="test study", ylabel="training study", vmin=min(0.5, low),
                           vmax=max(0.8, min(1.0, top)))

    def __str__(self) -> str:
        lines = [self.title, self.summary.to_string(index=False,
                                                    float_format=lambda v: f"{v:.3f}"),
                 str(self.verdict)]
        return "\n".join(lines)


def _cell(y, rows, risk, level):
    from ..experiment.survival import concordance_index

    sub = y[rows]
    if not sub["event"].any():
        return np.nan, np.nan, np.nan, np.nan, int(sub.size), 0
    c = concordance_index(sub, risk, confidence_level=level)
    lo, hi = c.confidence_interval(confidence_level=level)
    return c.estimate, c.se, lo, hi, int(sub.size), int(sub["event"].sum())


def _iv(X, y, study, models, tolerance, confidence_level):
    from ..experiment.survival import is_survival_target, survival_target

    if not is_survival_target(y):
        raise DataError("`y` must be a survival target (a structured array of event and time, "
                        "or a (time, event) tuple).")
    if not isinstance(models, dict) or not models:
        raise ParameterTypeError("`models` must be a non-empty dict of name -> survival "
                                 f"model; got {type(models).__name__}.")
    tol = DEFAULT_C_TOLERANCE if tolerance is None else check_float(
        tolerance, "tolerance", min_value=0.0, max_value=0.5)
    return survival_target(y), np.asarray(study).astype(str), tol, \
        check_confidence_level(confidence_level)


def audit_survival(X, y, study, *, models: dict, tolerance: float | None = None,
                   n_folds: int = 5, confidence_level: float = 0.95, random_state=None,
                   n_jobs: int = 1, engine=None, progress=None) -> SurvivalCrossStudy:
    """Cross-study validation of survival models by Harrell's C-index, with intervals.

    For every model: the cross-study validation matrix (Bernau et al. 2014): trained on all of
    study k, C-index on study k'; the diagonal is ``n_folds``-fold cross-validation within the
    study (stratified by the event). Each cell comes with the infinitesimal-jackknife SE of its
    C-index (Therneau & Atkinson's; the learner of the cell is held fixed) and a logit
    interval. The summaries are Bernau et al.'s: the mean within-study C (CV) and the mean
    cross-study C (CSV), their difference (the *drop*) and the ranks of the models by each.

    The drop's interval treats the cells as independent, ``se² = mean of the within cells'
    variances / K + mean of the across cells' variances / (K(K−1))`` in the form
    ``Σ var / K² + Σ var / (K(K−1))²``; cells sharing a test study are positively correlated,
    which makes the interval of their difference conservative (wider than it need be).

    The verdict reads the drop of the best model (highest mean cross-study C) against
    ``tolerance``: it holds when the upper confidence bound of the drop is within it, does
    not when the lower bound exceeds it, and cannot tell otherwise.

    Parameters
    ----------
    X : DataFrame or array of shape (n, p)
        Features.
    y : structured array or (time, event) tuple
        The survival outcome.
    study : array-like of shape (n,)
        Study of each row (at least 2 studies).
    models : dict of str -> estimator
        Survival models (scikit-survival estimators, :class:`replikit.experiment.LifelinesModel`
        ...): ``predict`` gives a risk score.
    tolerance : float, optional
        The tolerated drop in C (default :data:`DEFAULT_C_TOLERANCE`, 0.05).
    n_folds : int, default 5
        Folds of the within-study cross-validation.
    confidence_level : float, default 0.95
        Of every interval.
    random_state : None, int or Generator
        The random state of the fits.
    n_jobs : int, default 1
        Parallel fits; the result does not depend on it.
    engine : Engine, optional
        Where the fits run.
    progress : callable, optional
        Called with 1 after each fit.

    Returns
    -------
    SurvivalCrossStudy
        Matrices, cells, summaries, the ensemble and the verdict.

    See Also
    --------
    cross_study_matrix : One model's matrix, any metric.
    replikit.experiment.concordance_index : The C-index and its SE.

    References
    ----------
    .. [1] Bernau, C., Riester, M., Boulesteix, A., Parmigiani, G., Huttenhower, C., Waldron,
       L. & Trippa, L. (2014). Cross-study validation for the assessment of prediction
       algorithms. Bioinformatics, 30(12), i105–i112.
    .. [2] Patil, P. & Parmigiani, G. (2018). Training replicable predictors in multiple
       studies. PNAS, 115(11), 2578–2583.

    Examples
    --------
    >>> from replikit.experiment.models import make_model
    >>> from replikit.data.examples import nwtco
    >>> ex = nwtco()
    >>> a = audit_survival(ex.X, ex.outcome, ex.study, random_state=0,
    ...                    models={"cox": make_model("cox", "survival")})
    >>> a.summary[["model", "within", "across"]].round(2).to_dict("records")
    [{'model': 'cox', 'within': 0.71, 'across': 0.7}]
    """
    from .training import cross_study_matrix

    y, sa, tol, level = _iv(X, y, study, models, tolerance, confidence_level)
    matrices, cell_rows, ens_rows, notes = {}, [], [], []
    for name, est in models.items():
        r = cross_study_matrix(est, X, y, sa, metric="c_index", n_folds=n_folds,
                               random_state=random_state, n_jobs=n_jobs, engine=engine,
                               progress=progress, return_predictions=True)
        matrices[name] = r.matrix
        notes.extend(n for n in r.notes if n not in notes)
        labels = list(r.matrix.index)
        for (k, j), (rows, risk) in r.cells.items():
            est_c, se, lo, hi, n, ev = _cell(y, rows, risk, level)
            cell_rows.append({"model": name, "train": k, "test": j,
                              "kind": "within" if k == j else "across", "estimate": est_c,
                              "se": se, "ci_low": lo, "ci_high": hi, "n": n, "events": ev})
        for j in labels:  # the ensemble of the learners trained on the other studies
            parts = [r.cells[(k, j)] for k in labels if k != j and (k, j) in r.cells]
            if not parts:
                continue
            rows = parts[0][0]
            risk = np.mean([p[1] for p in parts], axis=0)
            est_c, se, lo, hi, n, ev = _cell(y, rows, risk, level)
            ens_rows.append({"model": name, "test": j, "learners": len(parts),
                             "estimate": est_c, "se": se, "ci_low": lo, "ci_high": hi})
    cells = pd.DataFrame(cell_rows)
    ensemble = pd.DataFrame(ens_rows)
    summary = _summary(cells, ensemble, level)
    if summary.empty or summary["across"].isna().all():
        raise DataError("no cross-study C-index could be computed: every test study lacks "
                        "events or every training study lacks events.")
    best = str(summary.iloc[0]["model"])
    verdict = _verdict(summary.iloc[0], tol, level, len(matrices[best]))
    return SurvivalCrossStudy(matrices, cells, summary, ensemble, best, tol, level, verdict,
                              tuple(notes), n_folds)


def _summary(cells: pd.DataFrame, ensemble: pd.DataFrame, level: float) -> pd.DataFrame:
    z = stats.norm.ppf(0.5 + level / 2)
    out = []
    for name, g in cells.groupby("model", sort=False):
        w = g[(g["kind"] == "within") & g["estimate"].notna()]
        a = g[(g["kind"] == "across") & g["estimate"].notna()]
        within, across = w["estimate"].mean(), a["estimate"].mean()
        var = (w["se"] ** 2).sum() / max(len(w), 1) ** 2 + (a["se"] ** 2).sum() / max(
            len(a), 1) ** 2
        drop = within - across
        se = float(np.sqrt(var))
        e = ensemble[ensemble["model"] == name]
        across_se = float(np.sqrt((a["se"] ** 2).sum())) / max(len(a), 1)
        out.append({"model": name, "within": within, "across": across,
                    "across_low": across - z * across_se, "across_high": across + z * across_se,
                    "drop": drop,
                    "drop_se": se, "drop_low": drop - z * se, "drop_high": drop + z * se,
                    "ensemble": e["estimate"].mean() if len(e) else np.nan})
    frame = pd.DataFrame(out)
    frame["rank_within"] = frame["within"].rank(ascending=False, method="min")
    frame["rank_across"] = frame["across"].rank(ascending=False, method="min")
    return frame.sort_values("across", ascending=False, kind="stable").reset_index(drop=True)


def _verdict(row, tol: float, level: float, k: int) -> Verdict:
    name, low, high = row["model"], row["drop_low"], row["drop_high"]
    pct = f"{level:.0%}"
    words = (f"{name} discriminates with a mean C-index of {row['across']:.3f} across "
             f"studies against {row['within']:.3f} within them (a drop of {row['drop']:.3f})")
    if row["within"] < 0.5 < row["across"]:
        level_, sentence = "warn", (
            f"{words}; cross-validation within the studies scores below chance (C < 0.5), as "
            "it can in small studies (each fold's model fitted on few patients), so the drop "
            "measured against it shows nothing: read the cross-study C-index itself "
            f"({pct} interval {row['across_low']:.3f} to {row['across_high']:.3f}).")
    elif row["across_low"] <= 0.5:
        level_, sentence = "warn", (f"{words}, but across studies its C-index is not clearly "
                                    f"above 0.5 (chance; {pct} interval {row['across_low']:.3f}"
                                    f" to {row['across_high']:.3f}): there is little "
                                    "discrimination to replicate.")
    elif high <= tol:
        level_, sentence = "good", (f"{words}: the drop is within the tolerated {tol:g} (upper "
                                    f"{pct} bound {high:.3f}), so its discrimination holds up in "
                                    "the other studies.")
    elif low > tol:
        level_, sentence = "bad", (f"{words}: the drop exceeds the tolerated {tol:g} (lower "
                                   f"{pct} bound {low:.3f}), so within-study validation "
                                   "over-states what a new study will see.")
    else:
        level_, sentence = "warn", (f"{words}; the data cannot tell whether the drop is within "
                                    f"the tolerated {tol:g} ({pct} interval {low:.3f} to "
                                    f"{high:.3f}).")
    caveats = ["the cells' intervals hold each learner fixed and treat the cells as "
               "independent (conservative for the drop)"]
    if k == 2:
        caveats.append("two studies: each cross-study cell rests on one training study")
    return Verdict(sentence, "C-index", level_, float(row["drop"]), float(low), float(high),
                   tuple(caveats), label=f"drop of the C-index, within minus across studies "
                   f"({name})", tolerance=f"judged against a drop of {tol:g} in C: "
                   f"{pct} interval {low:.3f} to {high:.3f}")
