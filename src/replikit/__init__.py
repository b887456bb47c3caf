"""replikit — will this result hold up elsewhere?

Replicability of machine-learning results: honest error estimates by resampling
(:mod:`replikit.resampling`), valid model comparisons (:mod:`replikit.compare`), replication
of reported performance (:mod:`replikit.replicate`), replicability of prediction rules across
studies (:mod:`replikit.multistudy`) and generalizability of benchmark rankings
(:mod:`replikit.generalize`).
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("replikit")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.1.0"

from ._lazy import lazy_exports  # noqa: E402

# numpy, scipy and pandas load with the first name that needs them, not with `import replikit`
__getattr__, __dir__, _names = lazy_exports(__name__, {
    "ReplikitError": "errors", "DataError": "errors", "ParameterError": "errors",
    "ConfidenceInterval": "results", "TestResult": "results", "Verdict": "results",
    "Result": "results", "PermutationMethod": "methods", "BootstrapMethod": "methods",
    "audit": "report.api", "Audit": "report.audit",
})
__all__ = ["__version__", *_names]
