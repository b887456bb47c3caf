"""One call for the whole replicability analysis of a fixed rule (seed 001, secs. 3–6)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._random import root_seed_sequence, task_rng
from .._validation import check_float, check_int
from ..errors import DataError
from ._data import as_study_data
from .inference import (
    PermutationResult,
    ResampleResult,
    _distance_use,
    permutation_test,
    resample_replicability,
)
from .measures import DistanceMatrix, distance_matrix
from .utilities import StudyUtilities, parse_utility, study_utilities

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
    """

    utilities: StudyUtilities
    distance: DistanceMatrix
    bootstrap: ResampleResult
    permutation_utility: PermutationResult
    permutation_distance: PermutationResult
    epsilon: float | None = None

    def to_frame(self) -> pd.DataFrame:
        """One row per measure: ``measure, definition, value, pvalue`` and, with ε,
        ``replicable`` and ``proportion_replicable`` (share of resamples meeting ε)."""
        u, dist, b = self.utilities, self.distance, self.bootstrap
        rows = [
            {"measure": "max |U_k - U_k'|", "definition": "Def. 3.1 (absolute)",
             "value": u.smallest_epsilon("absolute"), "pvalue": self.permutation_utility.pvalue,
             "statistic": "absolute"},
            {"measure": "max 2|U_k - U_k'|/|U_k + U_k'|", "definition": "Def. 3.2 (relative)",
             "value": u.smallest_epsilon("relative"), "pvalue": float("nan"),
             "statistic": "relative"},
            {"measure": f"max D(F_k, F_k') [{dist.method}]", "definition": "Def. 5.1 (distance)",
             "value": dist.max,
             "pvalue": self.permutation_distance.pvalue if dist.method == "tv" else float("nan"),
             "statistic": "tv"},
        ]
        out = pd.DataFrame(rows)
        if self.epsilon is not None:
            out["replicable"] = out["value"] <= self.epsilon
            out["proportion_replicable"] = [
                b.proportion_replicable(self.epsilon, s) if s in b.draws else float("nan")
                for s in out["statistic"]]
        return out

    def __str__(self) -> str:
        parts = [str(self.utilities), str(self.distance), str(self.bootstrap),
                 str(self.permutation_utility), str(self.permutation_distance)]
        return "\n\n".join(parts)


def assess(data, utility="accuracy", *, epsilon: float | None = None, n_resamples: int = 1000,
           n_permutations: int = 999, bootstrap: str = "within", distance: str = "tv",
           bins: int = 10, bag_size: int | None = None, confidence_level: float = 0.95,
           random_state=None, model=None, repeat: int | None = 0, subgroup=None,
           min_units: int = 1) -> Assessment:
    """Utilities per study, ε-replicability, distances, resampling and permutation tests.

    Parameters
    ----------
    data : Predictions, DataFrame or MultiStudyData
        A fixed rule's predictions on the units of K >= 2 studies.
    utility : str, Utility or callable
        See :func:`~replikit.multistudy.parse_utility`.
    epsilon : float, optional
        Tolerance of Defs. 3.1/3.2/5.1.
    n_resamples, n_permutations : int
    bootstrap : {'within', 'cluster', 'studystrap'}
    distance : {'tv', 'energy'}
        The distance matrix (the permutation test and resampling use total variation).
    bins, bag_size, confidence_level : see :func:`resample_replicability`
    random_state : None, int or Generator
        Root seed; the bootstrap and each permutation test get independent streams.
    model, repeat, subgroup : see :func:`study_utilities`
    min_units : int
        Leave out studies with fewer units (a study of one unit has a point-mass ``F_k`` at
        total variation 1 from every other study and a ``U_k`` without variance).

    Returns
    -------
    Assessment

    Notes
    -----
    Seed 001: ``U_k`` (eq. 1), Defs. 3.1, 3.2 and 5.1, resampling (sec. 6.1) and permutation of
    study labels (sec. 6.2).
    """
    d = as_study_data(data, model=model, repeat=repeat, subgroup=subgroup)
    min_units = check_int(min_units, "min_units", min_value=1)
    if min_units > 1:
        keep = np.flatnonzero(d.sizes >= min_units)
        if keep.size < d.K:
            d = d.subset(np.isin(d.codes, keep)) if keep.size else d
    if d.K < 2:
        raise DataError(f"`data` holds {d.K} study; replicability across studies needs at least "
                        "2 (use benchmark_comparison for one study, seed 001 sec. 4.3).")
    eps = None if epsilon is None else check_float(epsilon, "epsilon", min_value=0.0)
    check_int(n_resamples, "n_resamples", min_value=2)
    root = root_seed_sequence(random_state)
    u = parse_utility(utility)
    su = study_utilities(d, u)
    dm = distance_matrix(d, method=distance, bins=bins, use=_distance_use(u), utility=u,
                         random_state=task_rng(root, "energy"))
    boot = resample_replicability(d, utility, method=bootstrap, n_resamples=n_resamples,
                                  epsilon=eps, bins=bins, bag_size=bag_size,
                                  confidence_level=confidence_level,
                                  random_state=task_rng(root, "bootstrap"))
    pu = permutation_test(d, utility, statistic="absolute", n_permutations=n_permutations,
                          random_state=task_rng(root, "perm-utility"))
    pd_ = permutation_test(d, utility, statistic="tv", n_permutations=n_permutations, bins=bins,
                           random_state=task_rng(root, "perm-distance"))
    return Assessment(su, dm, boot, pu, pd_, eps)
