"""Generalizability of experimental studies (seed 004): rankings, kernels, MMD and n*.

The result of a benchmark is a distribution of rankings of its alternatives over experimental
conditions; the study is n-generalizable when two independent studies of n experiments give
similar distributions (MMD <= epsilon) with high probability. :func:`analyze` estimates n*, the
number of experiments needed, by Algorithm 1 of the paper.
"""

from .kernels import (
                      Kernel,
                      borda_gram,
                      discordant_pairs,
                      jaccard_gram,
                      mallows_gram,
                      parse_goal,
                      rbf_gram,
)
from .mmd import MMDDistribution, mmd, mmd_distribution, mmd_from_gram, subsample_pairs
from .nstar import NStarResult, estimate_nstar, fit_nstar, iterate_nstar, nstar_bound
from .rankings import rank_scores
from .spec import GeneralizabilityResult, PreparedStudy, RankingSample, StudySpec, analyze, prepare

__all__ = [
    "Kernel", "borda_gram", "jaccard_gram", "mallows_gram", "rbf_gram", "discordant_pairs",
    "parse_goal", "MMDDistribution", "mmd", "mmd_distribution", "mmd_from_gram",
    "subsample_pairs", "NStarResult", "estimate_nstar", "fit_nstar", "iterate_nstar",
    "nstar_bound", "rank_scores", "GeneralizabilityResult", "PreparedStudy", "RankingSample",
    "StudySpec", "analyze", "prepare",
]
