"""Generalizability of experimental studies (seed 004): rankings, kernels, MMD and n*.

The result of a benchmark is a distribution of rankings of its alternatives over experimental
conditions; the study is n-generalizable when two independent studies of n experiments give
similar distributions (MMD <= epsilon) with high probability. :func:`analyze` estimates n*, the
number of experiments needed, by Algorithm 1 of the paper.

Names are imported lazily from their modules so that ``import replikit.generalize`` stays cheap.
"""

from __future__ import annotations

from .._lazy import lazy_exports

_EXPORTS = {
    # kernels.py
    "Kernel": "kernels", "borda_gram": "kernels", "jaccard_gram": "kernels",
    "mallows_gram": "kernels", "rbf_gram": "kernels", "discordant_pairs": "kernels",
    "parse_goal": "kernels",
    # _mmd.py
    "MMDDistribution": "_mmd", "mmd": "_mmd", "mmd_distribution": "_mmd", "mmd_from_gram": "_mmd",
    "subsample_pairs": "_mmd",
    # nstar.py
    "NStarResult": "nstar", "estimate_nstar": "nstar", "fit_nstar": "nstar",
    "iterate_nstar": "nstar", "nstar_bound": "nstar",
    # rankings.py
    "rank_scores": "rankings",
    # spec.py
    "GeneralizabilityResult": "spec", "PreparedStudy": "spec", "RankingSample": "spec",
    "StudySpec": "spec", "analyze": "spec", "prepare": "spec",
}

__getattr__, __dir__, __all__ = lazy_exports(__name__, _EXPORTS)
