"""One call for the whole replicability analysis of a fixed rule (Parmigiani 2023, secs. 3–6)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._compat import dropped, renamed, renamed_fields
from .._format import number
from .._random import root_seed_sequence, task_rng
from .._threads import single_blas
from .._validation import check_choice, check_float, check_int
from ..errors import DataError, ParameterError, ParameterTypeError
from ..methods import PermutationMethod
from ..results import ConfidenceInterval, Result
from ._data import as_study_data
from ._names import utility_words
from .inference import (
    PermutationResult,
    ResampleResult,
    _distance_use,
    permutation_test,
    resample_replicability,
)
from .measures import DistanceMatrix, distance_matrix
from .utilities import (
    StudyUtilities,
    _positive,
    check_utility_data,
    parse_utility,
    study_utilities,
)

__all__ = ["Assessment", "assess"]


@renamed_fields(epsilon="tolerance")
@dataclass(frozen=True, slots=True)
class Assessment(Result):
    """Everything :func:`assess` computes.

    As a test result: :attr:`statistic` is ``max|U_k − U_k'|`` (the observed smallest ε of
    Def. 3.1), :attr:`pvalue` its permutation p-value (exact replicability as the null, sec.
    6.2) and :meth:`confidence_interval` its bootstrap percentile interval (sec. 6.1).

    Attributes
    ----------
    utilities : StudyUtilities
        ``U_k`` per study, the difference matrix and the smallest ε (Defs. 3.1, 3.2).
    distance : DistanceMatrix
        ``D(F_k, F_k')`` (Def. 5.1).
    bootstrap : ResampleResult
        Resampling uncertainty (sec. 6.1).
    permutation_utility, permutation_distance : PermutationResult
        Permutation tests of ``max|U_k − U_k'|`` and ``max D`` (sec. 6.2).
    tolerance : float or None
        The tolerance ε of Defs. 3.1, 3.2 and 5.1, when one was given.
    notes : tuple of str
        What the reader should know: the utility chosen for them, the positive class of a cost
        utility, studies too small to say much, studies left out by ``min_units``.

    See Also
    --------
    assess : Computes it.
    epsilon_test : Tests ε-replicability of its utilities (an upper confidence bound).

    Examples
    --------
    >>> import numpy as np
    >>> from replikit.multistudy import PermutationMethod, assess, from_arrays
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 300); p = np.where(rng.random(300) < .8, y, 1 - y)
    >>> a = assess(from_arrays(y, p, np.repeat(["a", "b", "c"], 100)), n_resamples=50,
    ...            permutation=PermutationMethod(49), random_state=0)
    >>> a.alternative, 0 < a.pvalue <= 1, a.confidence_interval().low <= a.statistic
    ('greater', True, True)
    """

    utilities: StudyUtilities
    distance: DistanceMatrix
    bootstrap: ResampleResult
    permutation_utility: PermutationResult
    permutation_distance: PermutationResult
    tolerance: float | None = None
    notes: tuple = ()

    @property
    def title(self) -> str:
        return (f"Replicability of a fixed rule across {self.utilities.K} studies "
                f"({utility_words(self.utilities.utility_name)}; Parmigiani 2023)")

    @property
    def statistic(self) -> float:
        """``max|U_k − U_k'|``: the observed smallest ε of absolute ε-replicability (Def. 3.1)."""
        return self.utilities.smallest_tolerance("absolute")

    @property
    def pvalue(self) -> float:
        """Permutation p-value of :attr:`statistic` (sec. 6.2)."""
        return self.permutation_utility.pvalue

    @property
    def alternative(self) -> str:
        """``'greater'``: a large spread speaks against exact replicability."""
        return self.permutation_utility.alternative

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """Bootstrap percentile interval of :attr:`statistic` (sec. 6.1).

        Parameters
        ----------
        confidence_level : float, default 0.95
            Level of the interval.

        Returns
        -------
        ConfidenceInterval
            ``(low, high)``.
        """
        return self.bootstrap.confidence_interval(confidence_level, "absolute")

    def to_frame(self) -> pd.DataFrame:
        """One row per measure.

        Returns
        -------
        DataFrame
            ``measure, definition, estimate, pvalue, statistic`` and, with ``tolerance``,
            ``replicable`` and ``proportion_replicable`` (share of resamples within it).
        """
        u, dist, b = self.utilities, self.distance, self.bootstrap
        rows = [
            {"measure": "max |U_k - U_k'|", "definition": "Def. 3.1 (absolute)",
             "estimate": u.smallest_tolerance("absolute"),
             "pvalue": self.permutation_utility.pvalue, "statistic": "absolute"},
            {"measure": "max 2|U_k - U_k'|/|U_k + U_k'|", "definition": "Def. 3.2 (relative)",
             "estimate": u.smallest_tolerance("relative"), "pvalue": float("nan"),
             "statistic": "relative"},
            {"measure": f"max D(F_k, F_k') [{dist.distance}]",
             "definition": "Def. 5.1 (distance)", "estimate": dist.max,
             "pvalue": (self.permutation_distance.pvalue if dist.distance == "tv"
                        else float("nan")),
             "statistic": "tv"},
        ]
        out = pd.DataFrame(rows)
        if self.tolerance is not None:
            out["replicable"] = out["estimate"] <= self.tolerance
            out["proportion_replicable"] = [
                b.proportion_replicable(self.tolerance, s) if s in b.draws else float("nan")
                for s in out["statistic"]]
        return out

    def plot(self, ax=None):
        """``U_k`` per study with bootstrap percentile intervals (``U_k ± 1.96 SE`` when the
        bootstrap resampled whole studies).

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

        interval = (self.bootstrap.utility_interval(0.95)
                    if self.bootstrap.utility_draws is not None else None)
        return plot_study_utilities(self.utilities, interval, ax=ax)

    def __str__(self) -> str:
        head = (f"{self.title}\n  largest difference between studies "
                f"{number(self.statistic, 4)} (bootstrap 95% interval "
                f"{self.confidence_interval()}), permutation p = "
                f"{number(self.pvalue, 3)}")
        parts = [head, str(self.utilities), str(self.distance), str(self.bootstrap),
                 str(self.permutation_utility), str(self.permutation_distance)]
        if self.notes:
            parts.append("Notes:\n" + "\n".join(f"  - {n}" for n in self.notes))
        return "\n\n".join(parts)


SMALL_STUDY = 10  # units below which a study's U_k and F_k are flagged as too noisy


def _plural(n: int, word: str) -> str:
    if word.endswith("y"):
        return f"{n} {word if n == 1 else word[:-1] + 'ies'}"
    return f"{n} {word}{'' if n == 1 else 's'}"


def _assess_iv(data, utility, bootstrap, bag_size, min_units, tolerance, model, repeat,
               subgroup):
    notes: list[str] = []
    check_choice(bootstrap, "bootstrap", ("within", "cluster", "studystrap"))
    if bag_size is not None:
        if bootstrap != "studystrap":
            raise ParameterError(f"`bag_size` is the bag size of the study strap; it applies to "
                                 f"`bootstrap`='studystrap' only (got {bootstrap!r}).")
        check_int(bag_size, "bag_size", min_value=1)
    eps = None if tolerance is None else check_float(tolerance, "tolerance", min_value=0.0)
    min_units = check_int(min_units, "min_units", min_value=1)
    d = as_study_data(data, model=model, repeat=repeat, subgroup=subgroup)
    if min_units > 1:
        small = d.sizes < min_units
        if small.any():
            left = [f"{d.studies[k]!s} ({d.sizes[k]})" for k in np.flatnonzero(small)]
            if (~small).sum() < 2:
                raise DataError(f"`min_units`: only {int((~small).sum())} of {d.K} studies have "
                                f"at least {min_units} units; replicability across studies "
                                "needs 2.")
            d = d.subset(~small[d.codes])
            notes.append(f"left out {_plural(len(left), 'study')} with fewer than {min_units} "
                         f"units (`min_units`): {', '.join(left[:8])}"
                         + (" ..." if len(left) > 8 else ""))
    if d.K < 2:
        shown = ", ".join(repr(str(s)) for s in d.studies)
        raise DataError(f"`data`: the predictions hold {_plural(d.K, 'study')} ({shown}); "
                        "replicability across studies needs at least 2 (for one study, "
                        "compare it with a benchmark: benchmark_comparison, after Parmigiani "
                        "(2023), sec. 4.3).")
    if utility is None:
        if d.is_discrete:
            u = parse_utility("accuracy")
        else:
            u = parse_utility("squared")
            notes.append("utility: squared, U = -(y - prediction)^2 (-U_k is the study's mean "
                         "squared error), because the outcome is continuous and accuracy would "
                         "be 0 in every study; choose another with `utility`")
    else:
        u = parse_utility(utility, name="utility")
    check_utility_data(d, u, name="utility")
    if u.kind == "cost" and u.positive is None:
        positive, labels = _positive(d, None)
        notes.append(f"cost utility: the positive class (y = 1 in eq. 3, a miss costs u01 = "
                     f"{number(u.u01)}, a false alarm u10 = {number(u.u10)}) is {positive!r}, "
                     f"the larger of the labels {', '.join(map(repr, labels))}")
    small = np.flatnonzero(d.sizes < SMALL_STUDY)
    if small.size:
        shown = ", ".join(f"{d.studies[k]!s} ({d.sizes[k]})" for k in small[:8]) + \
            (" ..." if small.size > 8 else "")
        notes.append(f"{_plural(small.size, 'study')} ha{'s' if small.size == 1 else 've'} "
                     f"fewer than {SMALL_STUDY} units: {shown}; a tiny study's U_k has almost "
                     "no precision and its distribution F_k is nearly a point mass (total "
                     "variation near 1 from every other study); leave such studies out with "
                     "`min_units`")
    return d, u, eps, notes


@renamed(epsilon="tolerance")
@dropped("options")
def assess(data, utility=None, *, tolerance: float | None = None, n_resamples: int = 1000,
           permutation: PermutationMethod | None = None, bootstrap: str = "within",
           distance: str = "tv", bins: int = 10, bag_size: int | None = None,
           confidence_level: float = 0.95, random_state=None, model=None,
           repeat: int | None = 0, subgroup=None, min_units: int = 1) -> Assessment:
    """Utilities per study, ε-replicability, distances, resampling and permutation tests.

    Parameters
    ----------
    data : Predictions, DataFrame or MultiStudyData
        A fixed rule's predictions on the units of K >= 2 studies.
    utility : str, Utility, callable or None
        See :func:`~replikit.multistudy.parse_utility`. ``None`` (default): ``'accuracy'``
        when outcomes and predictions are labels, ``'squared'`` when they are continuous (said
        in ``notes``). Accuracy on continuous values is refused: it would be 0 everywhere.
    tolerance : float, optional
        The practical tolerance ε of Defs. 3.1, 3.2 and 5.1: the table says whether each
        observed measure is within it and the share of resamples that are.
    n_resamples : int, default 1000
        Bootstrap resamples (sec. 6.1).
    permutation : PermutationMethod, optional
        The permutation tests of study labels (sec. 6.2); default
        ``PermutationMethod(n_resamples=999)``.
    bootstrap : {'within', 'cluster', 'studystrap'}, default 'within'
        The resampling scheme (see :func:`resample_replicability`).
    distance : {'tv', 'energy'}, default 'tv'
        The distance matrix (the permutation test and resampling use total variation).
    bins : int, default 10
        Quantile bins of continuous predictions or outcomes for total variation.
    bag_size : int, optional
        The study strap's bag size; ``bootstrap='studystrap'`` only.
    confidence_level : float, default 0.95
        Level of the bootstrap percentile intervals.
    random_state : None, int or Generator
        The random state; the bootstrap and each permutation test draw from independent
        streams derived from it.
    model : str, optional
        The model of a Predictions table that is the rule φ.
    repeat : int or None, default 0
        Repeat of a Predictions table to use.
    subgroup : mask, column name or callable, optional
        Restrict to ``x ∈ X*`` (see :func:`study_utilities`).
    min_units : int, default 1
        Leave out studies with fewer units (a study of one unit has a point-mass ``F_k`` at
        total variation 1 from every other study and a ``U_k`` without variance); studies left
        out, and studies under 10 units that are kept, are listed in ``notes``.

    Returns
    -------
    Assessment
        The utilities, distances, bootstrap and permutation tests.

    See Also
    --------
    study_utilities : The utilities only.
    epsilon_test : An upper confidence bound of the spread and a test of a tolerance.
    audit : From data and models: trains the rules, then assesses the best.

    Notes
    -----
    ``U_k`` (eq. 1), Defs. 3.1, 3.2 and 5.1, resampling (sec. 6.1) and permutation of study
    labels (sec. 6.2) of Parmigiani (2023).

    References
    ----------
    .. [1] Parmigiani, G. (2023). Defining Replicability of Prediction Rules. Statistical
       Science, 38(4), 543–556. https://doi.org/10.1214/23-STS891
    .. [2] Davison, A. C. & Hinkley, D. V. (1997). Bootstrap Methods and Their Application.
       Cambridge University Press.

    Examples
    --------
    >>> from replikit.multistudy import from_arrays
    >>> rng = np.random.default_rng(0)
    >>> y = rng.normal(size=300)
    >>> a = assess(from_arrays(y, y + rng.normal(size=300), np.repeat(["a", "b", "c"], 100)),
    ...            n_resamples=50, permutation=PermutationMethod(49), random_state=0)
    >>> a.utilities.utility_name, a.notes[0][:16]
    ('squared', 'utility: squared')
    >>> round(a.statistic, 3), 0 < a.pvalue <= 1
    (0.35, True)
    """
    d, u, eps, notes = _assess_iv(data, utility, bootstrap, bag_size, min_units, tolerance,
                                  model, repeat, subgroup)
    check_int(n_resamples, "n_resamples", min_value=2)
    if permutation is None:
        permutation = PermutationMethod()
    elif not isinstance(permutation, PermutationMethod):
        raise ParameterTypeError(f"`permutation` must be a PermutationMethod (e.g. "
                                 f"PermutationMethod(n_resamples=999)); got {permutation!r}.")
    root = root_seed_sequence(random_state)
    with single_blas():
        su = study_utilities(d, u)
        dm = distance_matrix(d, distance=distance, bins=bins, use=_distance_use(u), utility=u,
                             random_state=task_rng(root, "energy"))
        boot = resample_replicability(d, u, bootstrap=bootstrap, n_resamples=n_resamples,
                                      tolerance=eps, bins=bins, bag_size=bag_size,
                                      confidence_level=confidence_level,
                                      random_state=task_rng(root, "bootstrap"))
        pu = permutation_test(d, u, statistic="absolute", n_resamples=permutation.n_resamples,
                              random_state=task_rng(root, "perm-utility"))
        pd_ = permutation_test(d, u, statistic="tv", n_resamples=permutation.n_resamples,
                               bins=bins,
                               random_state=task_rng(root, "perm-distance"))
    return Assessment(su, dm, boot, pu, pd_, eps, tuple(notes))
