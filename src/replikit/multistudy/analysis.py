"""One call for the whole replicability analysis of a fixed rule (seed 001, secs. 3–6)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._random import root_seed_sequence, task_rng
from .._threads import single_blas
from .._validation import check_choice, check_confidence_level, check_float, check_int
from ..errors import DataError, ParameterError, ParameterTypeError
from ..results import ConfidenceInterval
from ._data import as_study_data
from .inference import (
    PermutationMethod,
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


@dataclass(frozen=True, slots=True)
class Assessment:
    """Everything :func:`assess` computes.

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
    epsilon : float or None
    notes : tuple of str
        What the reader should know: the utility chosen for them, the positive class of a cost
        utility, studies too small to say much, studies left out by ``min_units``.

    As a test result: :attr:`statistic` is ``max|U_k − U_k'|`` (the smallest ε of Def. 3.1),
    :attr:`pvalue` its permutation p-value (exact replicability as the null, sec. 6.2) and
    :meth:`confidence_interval` its bootstrap percentile interval (sec. 6.1).
    """

    utilities: StudyUtilities
    distance: DistanceMatrix
    bootstrap: ResampleResult
    permutation_utility: PermutationResult
    permutation_distance: PermutationResult
    epsilon: float | None = None
    notes: tuple = ()

    @property
    def statistic(self) -> float:
        """``max|U_k − U_k'|``: the smallest ε of absolute ε-replicability (Def. 3.1)."""
        return self.utilities.smallest_epsilon("absolute")

    @property
    def pvalue(self) -> float:
        """Permutation p-value of :attr:`statistic` (sec. 6.2)."""
        return self.permutation_utility.pvalue

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """Bootstrap percentile interval of :attr:`statistic` (sec. 6.1), at any level."""
        level = check_confidence_level(confidence_level)
        a = (1 - level) / 2
        lo, hi = np.quantile(self.bootstrap.draws["absolute"], [a, 1 - a])
        return ConfidenceInterval(float(lo), float(hi))

    def to_frame(self) -> pd.DataFrame:
        """One row per measure: ``measure, definition, estimate, pvalue, statistic`` and, with
        ε, ``replicable`` and ``proportion_replicable`` (share of resamples meeting ε)."""
        u, dist, b = self.utilities, self.distance, self.bootstrap
        rows = [
            {"measure": "max |U_k - U_k'|", "definition": "Def. 3.1 (absolute)",
             "estimate": u.smallest_epsilon("absolute"),
             "pvalue": self.permutation_utility.pvalue, "statistic": "absolute"},
            {"measure": "max 2|U_k - U_k'|/|U_k + U_k'|", "definition": "Def. 3.2 (relative)",
             "estimate": u.smallest_epsilon("relative"), "pvalue": float("nan"),
             "statistic": "relative"},
            {"measure": f"max D(F_k, F_k') [{dist.distance}]",
             "definition": "Def. 5.1 (distance)", "estimate": dist.max,
             "pvalue": (self.permutation_distance.pvalue if dist.distance == "tv"
                        else float("nan")),
             "statistic": "tv"},
        ]
        out = pd.DataFrame(rows)
        if self.epsilon is not None:
            out["replicable"] = out["estimate"] <= self.epsilon
            out["proportion_replicable"] = [
                b.proportion_replicable(self.epsilon, s) if s in b.draws else float("nan")
                for s in out["statistic"]]
        return out

    def __str__(self) -> str:
        parts = [str(self.utilities), str(self.distance), str(self.bootstrap),
                 str(self.permutation_utility), str(self.permutation_distance)]
        return "\n\n".join(parts)


_OPTIONS = ("utility", "model", "study", "bootstrap", "bag_size", "min_units", "epsilon")
SMALL_STUDY = 10  # units below which a study's U_k and F_k are flagged as too noisy


def _plural(n: int, word: str) -> str:
    if word.endswith("y"):
        return f"{n} {word if n == 1 else word[:-1] + 'ies'}"
    return f"{n} {word}{'' if n == 1 else 's'}"


def _assess_iv(data, utility, bootstrap, bag_size, min_units, epsilon, model, repeat,
               subgroup, options):
    opt = {k: k for k in _OPTIONS}
    opt.update(options or {})
    notes: list[str] = []
    check_choice(bootstrap, opt["bootstrap"], ("within", "cluster", "studystrap"))
    if bag_size is not None:
        if bootstrap != "studystrap":
            raise ParameterError(f"`{opt['bag_size']}` is the bag size of the study strap; it "
                                 f"applies to {opt['bootstrap']} studystrap only (got "
                                 f"{bootstrap!r}).")
        check_int(bag_size, opt["bag_size"], min_value=1)
    eps = None if epsilon is None else check_float(epsilon, opt["epsilon"], min_value=0.0)
    min_units = check_int(min_units, opt["min_units"], min_value=1)
    d = as_study_data(data, model=model, repeat=repeat, subgroup=subgroup,
                      model_option=opt["model"])
    if min_units > 1:
        small = d.sizes < min_units
        if small.any():
            left = [f"{d.studies[k]!s} ({d.sizes[k]})" for k in np.flatnonzero(small)]
            if (~small).sum() < 2:
                raise DataError(f"`{opt['min_units']}`: only {int((~small).sum())} of {d.K} "
                                f"studies have at least {min_units} units; replicability "
                                "across studies needs 2.")
            d = d.subset(~small[d.codes])
            notes.append(f"left out {_plural(len(left), 'study')} with fewer than {min_units} "
                         f"units ({opt['min_units']}): {', '.join(left[:8])}"
                         + (" ..." if len(left) > 8 else ""))
    if d.K < 2:
        shown = ", ".join(repr(str(s)) for s in d.studies)
        raise DataError(f"`{opt['study']}`: the predictions hold {_plural(d.K, 'study')} "
                        f"({shown}); replicability across studies needs at least 2 (for one "
                        "study, compare it with a benchmark: benchmark_comparison, seed 001 "
                        "sec. 4.3).")
    if utility is None:
        if d.is_discrete:
            u = parse_utility("accuracy")
        else:
            u = parse_utility("squared")
            notes.append(f"utility: squared, U = -(y - prediction)^2 (-U_k is the study's mean "
                         "squared error), because the outcome is continuous and accuracy would "
                         f"be 0 in every study; choose another with {opt['utility']}")
    else:
        u = parse_utility(utility, name=opt["utility"])
    check_utility_data(d, u, name=opt["utility"])
    if u.kind == "cost" and u.positive is None:
        positive, labels = _positive(d, None)
        notes.append(f"cost utility: the positive class (y = 1 in eq. 3, a miss costs u01 = "
                     f"{u.u01:g}, a false alarm u10 = {u.u10:g}) is {positive!r}, the larger "
                     f"of the labels {', '.join(map(repr, labels))}")
    small = np.flatnonzero(d.sizes < SMALL_STUDY)
    if small.size:
        shown = ", ".join(f"{d.studies[k]!s} ({d.sizes[k]})" for k in small[:8]) + \
            (" ..." if small.size > 8 else "")
        notes.append(f"{_plural(small.size, 'study')} ha{'s' if small.size == 1 else 've'} "
                     f"fewer than {SMALL_STUDY} units: {shown}; a tiny study's U_k has almost "
                     "no precision and its distribution F_k is nearly a point mass (total "
                     "variation near 1 from every other study); leave such studies out with "
                     f"{opt['min_units']}")
    return d, u, eps, notes


def assess(data, utility=None, *, epsilon: float | None = None, n_resamples: int = 1000,
           permutation: PermutationMethod | None = None, bootstrap: str = "within",
           distance: str = "tv",
           bins: int = 10, bag_size: int | None = None, confidence_level: float = 0.95,
           random_state=None, model=None, repeat: int | None = 0, subgroup=None,
           min_units: int = 1, options: dict | None = None) -> Assessment:
    """Utilities per study, ε-replicability, distances, resampling and permutation tests.

    Parameters
    ----------
    data : Predictions, DataFrame or MultiStudyData
        A fixed rule's predictions on the units of K >= 2 studies.
    utility : str, Utility, callable or None
        See :func:`~replikit.multistudy.parse_utility`. ``None`` (default): ``'accuracy'``
        when outcomes and predictions are labels, ``'squared'`` when they are continuous (said
        in ``notes``). Accuracy on continuous values is refused: it would be 0 everywhere.
    epsilon : float, optional
        Tolerance of Defs. 3.1/3.2/5.1.
    n_resamples : int
        Bootstrap resamples (sec. 6.1).
    permutation : PermutationMethod, optional
        The permutation tests of study labels (sec. 6.2); default
        ``PermutationMethod(n_resamples=999)``.
    bootstrap : {'within', 'cluster', 'studystrap'}
    distance : {'tv', 'energy'}
        The distance matrix (the permutation test and resampling use total variation).
    bins, bag_size, confidence_level : see :func:`resample_replicability`
        ``bag_size`` applies to ``bootstrap='studystrap'`` only.
    random_state : None, int or Generator
        Root seed; the bootstrap and each permutation test get independent streams.
    model, repeat, subgroup : see :func:`study_utilities`
    min_units : int
        Leave out studies with fewer units (a study of one unit has a point-mass ``F_k`` at
        total variation 1 from every other study and a ``U_k`` without variance); studies left
        out, and studies under 10 units that are kept, are listed in ``notes``.
    options : dict, optional
        How parameters are named in messages, e.g. ``{'utility': '--utility', 'study':
        '--study'}`` on the command line.

    Returns
    -------
    Assessment

    Notes
    -----
    Seed 001: ``U_k`` (eq. 1), Defs. 3.1, 3.2 and 5.1, resampling (sec. 6.1) and permutation of
    study labels (sec. 6.2).

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
    d, u, eps, notes = _assess_iv(data, utility, bootstrap, bag_size, min_units, epsilon,
                                  model, repeat, subgroup, options)
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
                                      epsilon=eps, bins=bins, bag_size=bag_size,
                                      confidence_level=confidence_level,
                                      random_state=task_rng(root, "bootstrap"))
        pu = permutation_test(d, u, statistic="absolute", n_resamples=permutation.n_resamples,
                              random_state=task_rng(root, "perm-utility"))
        pd_ = permutation_test(d, u, statistic="tv", n_resamples=permutation.n_resamples,
                               bins=bins,
                               random_state=task_rng(root, "perm-distance"))
    return Assessment(su, dm, boot, pu, pd_, eps, tuple(notes))
