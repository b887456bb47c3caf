"""Generalizability of experimental studies (Matteucci et al. 2024): rankings, kernels, MMD
and n*.

The result of a benchmark is a distribution of rankings of its alternatives over experimental
conditions; the study is n-generalizable when two independent studies of n experiments give
similar distributions (MMD <= epsilon) with high probability. :func:`analyze` estimates n*, the
number of experiments needed (by default from the asymptotic law of the MMD, Gretton et al.
2012; Algorithm 1 of the paper on request); :func:`audit` asks it of the per-study scores of a
set of models (the ``replikit audit`` section).

Names are imported lazily from their modules so that ``import replikit.generalize`` stays cheap,
except :func:`audit`, the audit entry: it is bound here (its module imports nothing heavy), so
that ``replikit.generalize.audit`` is the function whichever way the module ``audit`` was
first imported (importing a submodule binds the package attribute of the same name to the
module, which a lazy ``__getattr__`` cannot undo).
"""

from __future__ import annotations

from .._lazy import lazy_exports
from .audit import audit as audit  # re-export, bound eagerly (see above)

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
    # audit.py (audit itself is bound above)
    "GeneralizabilityAudit": "audit", "check_applicable": "audit", "MIN_STUDIES": "audit",
}

__getattr__, _dir, _names = lazy_exports(__name__, _EXPORTS)
__all__ = sorted([*_names, "audit"])


def __dir__() -> list[str]:
    return list(__all__)
