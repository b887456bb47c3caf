"""Comparisons across studies: the Bayesian posteriors over datasets and a control comparison.

:func:`compare_across_studies` is what ``replikit compare`` adds when the scores hold several
studies (datasets): for each metric and pair of models, the posterior probabilities that ``a``
is practically worse, equivalent or better on a new study — the hierarchical model of the fold
scores (Corani et al. 2017) when the scores have several splits per study, and the Bayesian
signed-rank test on the per-study means (Benavoli et al. 2014, 2017) — and, with a control model,
the Bonferroni–Dunn test with effect sizes (Demšar 2006).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import pandas as pd

from .._compat import renamed
from .._format import number
from ..errors import DataError, ParameterError
from ..results import Result
from ._words import fill_doc

__all__ = ["AcrossStudies", "compare_across_studies", "MIN_STUDIES"]

#: Fewest complete studies for a comparison across studies (Demšar 2006 and Benavoli et al.
#: 2017 compare over many datasets; with fewer the posteriors mostly restate the prior).
MIN_STUDIES = 5

FRAME_COLUMNS = ["metric", "a", "b", "test", "method", "n_studies", "tolerance", "estimate",
                 "ci_low", "ci_high", "p_left", "p_rope", "p_right", "mc_se", "decision"]


@fill_doc()
@dataclass(frozen=True, slots=True, eq=False)
class AcrossStudies(Result):
    """Posteriors over studies for each pair and metric, and the control comparisons.

    Attributes
    ----------
    frame : pandas.DataFrame
        One row per metric, pair and test (``hierarchical``, ``bayesian_signed_rank``):
        :data:`FRAME_COLUMNS`; ``p_left`` is the probability that ``a`` is practically worse
        (``a − b < −tolerance`` for a higher-is-better metric), ``mc_se`` the largest
        Monte-Carlo SE of the three.
    control : dict of str -> ControlResult
        Per metric, the Bonferroni–Dunn test against the control (empty without a control).
    results : list of BayesianComparison
        The posteriors behind :attr:`frame`, in its order.
    n_studies : int
        The most studies any pair was compared on.
    notes : tuple of str
        What was left out, and why.

    See Also
    --------
    compare_across_studies : Builds it.
    replikit.compare.BayesianComparison : One posterior.

    References
    ----------
    {refs:corani2017,benavoli2014,benavoli2017,demsar2006}

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> rows = [(f"s{s}", m, 0, 0, "accuracy", 0.8 + 0.02 * s + (0.03 if m == "rf" else 0)
    ...          + 0.01 * rng.standard_normal()) for s in range(6) for m in ("lr", "rf")]
    >>> means = pd.DataFrame(rows, columns=["study", "model", "repeat", "fold", "metric",
    ...                                     "value"])
    >>> res = compare_across_studies(means, random_state=0)  # one score per study
    >>> res.n_studies, list(res.frame["test"])
    (6, ['bayesian_signed_rank'])
    """

    frame: pd.DataFrame
    control: dict = field(default_factory=dict)
    results: list = field(default_factory=list, repr=False)
    n_studies: int = 0
    notes: tuple = ()

    @property
    def title(self) -> str:
        """What the result is about."""
        return f"Model comparisons across {number(self.n_studies)} studies"

    def to_frame(self) -> pd.DataFrame:
        """A copy of :attr:`frame`.

        Returns
        -------
        pandas.DataFrame
            One row per metric, pair and test.
        """
        return self.frame.copy()

    def to_dict(self) -> dict:
        """The rows, the control comparisons and the notes in JSON types.

        Returns
        -------
        dict
            ``n_studies``, ``comparisons`` (records), ``control`` (records) and ``notes``.
        """
        from ..results import to_jsonable

        return to_jsonable({"n_studies": self.n_studies, "comparisons": self.frame,
                            "control": self.control_frame(), "notes": list(self.notes)})

    def control_frame(self) -> pd.DataFrame:
        """The control comparisons of every metric, one row per (metric, model).

        Returns
        -------
        pandas.DataFrame
            The rows of each :class:`~replikit.compare.ControlResult`, with a ``metric``
            column; empty without a control.
        """
        parts = [r.to_frame().assign(metric=m) for m, r in self.control.items()]
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()

    def __str__(self) -> str:
        lines = [f"Across {number(self.n_studies)} studies (each study one unit; practical "
                 f"tolerance ±{number(self.frame['tolerance'].iloc[0])} in metric units):"
                 if len(self.frame) else f"Across {number(self.n_studies)} studies:"]
        for r in self.frame.itertuples():
            ci = (f", 95% credible interval {number(r.ci_low)} to {number(r.ci_high)}"
                  if np.isfinite(r.ci_low) else "")
            lines.append(
                f"  {r.metric}, {r.a} - {r.b}, {r.method}: mean difference "
                f"{number(r.estimate)}{ci}; P({r.a} worse) = {r.p_left:.3f}, P(equivalent) = "
                f"{r.p_rope:.3f}, P({r.a} better) = {r.p_right:.3f} -> {r.decision}")
        for metric, res in self.control.items():
            lines.append(f"  {metric}: " + str(res).replace("\n", "\n  "))
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


def _pairs(models, a, b):
    if a is not None and a not in models:
        raise DataError(f"`a` {a!r} is not a model of the scores; models are {models}.")
    if b is not None and b not in models:
        raise DataError(f"`b` {b!r} is not a model of the scores; models are {models}.")
    if a is not None and b is not None:
        return [(a, b)]
    if a is not None or b is not None:
        one = a if a is not None else b
        return [(one, m) for m in models if m != one]
    return list(combinations(models, 2))


@renamed(rope="tolerance", n_samples="n_draws")
@fill_doc()
def compare_across_studies(scores, a=None, b=None, *, metrics=None, tolerance=0.01,
                           control=None, alpha: float = 0.05, n_draws: int = 5000,
                           n_chains: int = 4, random_state=None) -> AcrossStudies:
    """Compare models across studies with the Bayesian tests over datasets.

    For every metric and pair: the hierarchical model of the fold scores (Corani et al. 2017)
    when the scores have several splits per study, and the Bayesian signed-rank test on the
    per-study means (Benavoli et al. 2014, 2017); with a control model, the Bonferroni–Dunn
    test with effect sizes (Demšar 2006). Only studies in which every compared model has a
    score are used; at least :data:`MIN_STUDIES` are needed.

    Parameters
    ----------
    scores : Scores, pandas.DataFrame or RunResult
        Fold scores with a ``study`` column, in the Scores layout.
    a, b : str, optional
        As :func:`~replikit.compare.compare_scores`: both None for every pair.
    metrics : str or list of str, optional
        Default: every metric.
    tolerance : float or dict of str -> float, default 0.01
        Half-width of the region of practical equivalence in metric units (one per metric
        with a dict; ``rope`` before replikit 0.2).
    control : str, optional
        Control model of the Bonferroni–Dunn test (run only when given).
    alpha : float, default 0.05
        Family-wise level of the Bonferroni–Dunn test.
    n_draws : int, default 5000
        Posterior draws per chain of the hierarchical model; the signed-rank test draws
        ``n_draws * n_chains`` independent Dirichlet weights (``n_samples`` before replikit
        0.2).
    n_chains : int, default 4
        Chains of the hierarchical model.
    random_state : None, int or numpy.random.Generator
        Root of every posterior: each (metric, pair, test) draws from its own stream
        ``task_rng(root, ("across-studies", metric, a, b, test))`` (see
        :mod:`replikit._random`), so a pair's numbers do not depend on which other pairs are
        compared; the same value gives the same numbers.

    Returns
    -------
    AcrossStudies
        One row per metric, pair and test, and the control comparisons.

    See Also
    --------
    replikit.compare.hierarchical_test : The hierarchical model of one pair.
    replikit.compare.bayesian_signed_rank_test : The signed-rank test of one pair.
    replikit.compare.bonferroni_dunn_test : The comparison with a control.

    References
    ----------
    {refs:corani2017,benavoli2014,benavoli2017,demsar2006}

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> rows = [(f"s{s}", m, 0, f, "accuracy", 0.8 + 0.02 * s + (0.03 if m == "rf" else 0)
    ...          + 0.01 * rng.standard_normal(), 90, 10)
    ...         for s in range(6) for m in ("lr", "rf") for f in range(5)]
    >>> scores = pd.DataFrame(rows, columns=["study", "model", "repeat", "fold", "metric",
    ...                                      "value", "n_train", "n_test"])
    >>> res = compare_across_studies(scores, n_draws=500, n_chains=2)
    >>> res.frame[["test", "decision"]].values.tolist()
    [['hierarchical', 'rf better'], ['bayesian_signed_rank', 'rf better']]
    """
    from .._random import root_seed_sequence, task_rng
    from ..experiment.metrics import higher_is_better as _hib
    from ._pairing import _frame_of
    from .bayesian import bayesian_signed_rank_test, hierarchical_test
    from .control import bonferroni_dunn_test
    from .multiple import scores_to_table

    if hasattr(scores, "scores") and not isinstance(scores, pd.DataFrame):
        scores = scores.scores
    frame = _frame_of(scores)
    if isinstance(metrics, str):
        metrics = [metrics]
    all_metrics = list(pd.unique(frame["metric"]))
    metrics = all_metrics if metrics is None else list(metrics)
    for m in metrics:
        if m not in all_metrics:
            raise DataError(f"`metrics`: {m!r} is not in the scores; found {all_metrics}.")
    models = [str(m) for m in pd.unique(frame["model"])]
    frame = frame.assign(model=frame["model"].astype(str))
    if control is not None and str(control) not in models:
        raise ParameterError(f"`control` {control!r} is not a model of the scores; models are "
                             f"{models}.")
    pairs = _pairs(models, a, b)
    root = root_seed_sequence(random_state)
    rows, results, ctrl, notes = [], [], {}, []
    n_used = 0
    for metric in metrics:
        r = tolerance.get(metric, 0.01) if isinstance(tolerance, dict) else tolerance
        hib = _hib(metric)
        sub = frame[frame["metric"] == metric]
        table = scores_to_table(sub, metric=metric, by="study")
        for x, y in pairs:
            both = table[[x, y]].dropna()
            n_used = max(n_used, len(both))
            if len(both) < MIN_STUDIES:
                notes.append(f"{metric}, {x} - {y}: {len(both)} studies with both models, "
                             f"fewer than {MIN_STUDIES}: no comparison across studies.")
                continue
            per_study = sub[sub["study"].isin(both.index) & sub["model"].isin([x, y])]
            n_splits = per_study.groupby(["study", "model"]).size().min()
            tests = []
            diffs = per_study.pivot_table(index=["study", "repeat", "fold"] if "repeat" in
                                          per_study else ["study", "fold"], columns="model",
                                          values="value")
            constant = n_splits >= 2 and {x, y} <= set(diffs.columns) and bool(
                (diffs[x] - diffs[y]).groupby(level="study").std(ddof=0).fillna(0).eq(0).all())
            if constant:  # the model needs some spread of the fold differences in a study
                notes.append(f"{metric}, {x} - {y}: every fold difference is the same within "
                             "each study (the two models' scores differ by a constant): no "
                             "hierarchical model; the signed-rank test compares the studies.")
            elif n_splits >= 2:
                tests.append(hierarchical_test(
                    per_study, x, y, metric=metric, tolerance=r, n_draws=n_draws,
                    n_chains=n_chains,
                    random_state=task_rng(root, ("across-studies", metric, x, y,
                                                 "hierarchical"))))
            tests.append(bayesian_signed_rank_test(
                both, x, y, metric=metric, tolerance=r, n_resamples=n_draws * n_chains,
                random_state=task_rng(root, ("across-studies", metric, x, y,
                                             "bayesian_signed_rank"))))
            for res in tests:
                pl, pr = res.p_left, res.p_right
                if not hib:  # a lower-is-better metric: a - b < -rope means a is better
                    decision = _decision(pr, res.p_rope, pl, x, y)
                else:
                    decision = _decision(pl, res.p_rope, pr, x, y)
                rows.append({"metric": metric, "a": x, "b": y, "test": res.test,
                             "method": res.method, "n_studies": res.n_datasets,
                             "tolerance": r,
                             "estimate": res.estimate, "ci_low": res.ci_low,
                             "ci_high": res.ci_high, "p_left": pl, "p_rope": res.p_rope,
                             "p_right": pr, "mc_se": max(res.mc_se), "decision": decision})
                results.append(res)
        if control is not None:
            complete = table.dropna()
            if len(complete) >= MIN_STUDIES and complete.shape[1] >= 2:
                ctrl[metric] = bonferroni_dunn_test(complete, control=str(control),
                                                    alpha=alpha, higher_is_better=hib)
            else:
                notes.append(f"{metric}: {len(complete)} studies with every model, fewer than "
                             f"{MIN_STUDIES}: no comparison with the control.")
    if not all(_hib(m) for m in metrics):
        notes.append("for a lower-is-better metric, p_left (a − b < −tolerance) means a is "
                     "better.")
    return AcrossStudies(frame=pd.DataFrame(rows, columns=FRAME_COLUMNS), control=ctrl,
                         results=results, n_studies=n_used, notes=tuple(dict.fromkeys(notes)))


def _decision(p_worse, p_rope, p_better, a, b, threshold: float = 0.95) -> str:
    if p_better >= threshold:
        return f"{a} better"
    if p_worse >= threshold:
        return f"{b} better"
    if p_rope >= threshold:
        return "equivalent"
    return "undecided"
