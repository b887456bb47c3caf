"""Rows of a validity study: a Monte-Carlo rate or bias, its SE, and whether it is calibrated.

Every capability that ships a calibration study (``replikit.<capability>.validity``) reports
each cell as one row of the same tidy table, built here, so ``replikit simulate validity`` can
stack the capabilities' tables and the test suite can check them all the same way:

``capability, study, method, setting, quantity, estimate, mc_se, nominal, lower, upper,
n_replications, claim, within``

- ``quantity``: ``'coverage'`` (of a nominal ``confidence_level`` interval), ``'size'`` (type I
  error of a level-``alpha`` test), ``'power'``, ``'bias'`` or ``'relative_bias'``;
- ``lower``/``upper``: the tolerance band around ``nominal`` — the nominal value ± 3 Monte-Carlo
  SEs at the nominal rate, widened by ``slack`` (the method's documented asymptotic error at
  that sample size), one-sided for tests (a conservative test is within its band);
- ``claim``: ``'calibrated'`` when replikit claims the method is calibrated in that setting (the
  suite fails when such a row leaves its band), ``'documented'`` when the docs say where and
  how it is not (the row shows the failure), ``'invalid'`` for methods kept only for contrast;
- ``within``: whether ``estimate`` lies in ``[lower, upper]``.
"""

from __future__ import annotations

import math

__all__ = ["COLUMNS", "QUANTITIES", "CLAIMS", "rate_row", "bias_row"]

COLUMNS = ("capability", "study", "method", "setting", "quantity", "estimate", "mc_se",
           "nominal", "lower", "upper", "n_replications", "claim", "within")
QUANTITIES = ("coverage", "size", "power", "bias", "relative_bias")
CLAIMS = ("calibrated", "documented", "invalid")


def _check(quantity: str, claim: str, n: int) -> None:
    if quantity not in QUANTITIES:
        raise ValueError(f"`quantity` must be one of {QUANTITIES}; got {quantity!r}.")
    if claim not in CLAIMS:
        raise ValueError(f"`claim` must be one of {CLAIMS}; got {claim!r}.")
    if n < 1:
        raise ValueError(f"`n_replications` must be >= 1; got {n}.")


def rate_row(capability: str, study: str, method: str, setting: str, quantity: str, *,
             hits: int, n_replications: int, nominal: float, claim: str = "calibrated",
             slack: float = 0.0) -> dict:
    """One row for a Monte-Carlo rate: ``hits`` of ``n_replications`` (coverage, size, power).

    The band is ``nominal ± (3 · sqrt(nominal (1 − nominal) / n) + slack)`` for coverage;
    for ``'size'`` it is one-sided, ``[0, nominal + 3 SE + slack]`` (a conservative test holds
    its level); ``'power'`` has no band (``lower = 0``, ``upper = 1``).

    Examples
    --------
    >>> r = rate_row("replicate", "R2 CI", "lee", "n=133", "coverage", hits=948,
    ...              n_replications=1000, nominal=0.95)
    >>> round(r["estimate"], 3), r["within"]
    (0.948, True)
    """
    _check(quantity, claim, n_replications)
    if quantity not in ("coverage", "size", "power"):
        raise ValueError(f"rate_row is for coverage, size or power; got {quantity!r}.")
    p = hits / n_replications
    mc_se = math.sqrt(max(p * (1 - p), 1e-12) / n_replications)
    half = 3 * math.sqrt(nominal * (1 - nominal) / n_replications) + slack
    if quantity == "coverage":
        lower, upper = max(0.0, nominal - half), min(1.0, nominal + half)
    elif quantity == "size":
        lower, upper = 0.0, min(1.0, nominal + half)
    else:
        lower, upper = 0.0, 1.0
    return {"capability": capability, "study": study, "method": method, "setting": setting,
            "quantity": quantity, "estimate": p, "mc_se": mc_se, "nominal": nominal,
            "lower": lower, "upper": upper, "n_replications": int(n_replications),
            "claim": claim, "within": bool(lower <= p <= upper)}


def bias_row(capability: str, study: str, method: str, setting: str, *, estimates,
             truth: float, relative: bool = True, tolerance: float, claim: str = "calibrated"
             ) -> dict:
    """One row for the (relative) bias of an estimator: mean of ``estimates`` minus ``truth``
    (divided by ``truth`` when ``relative``), its Monte-Carlo SE, and the band ``±tolerance``
    widened by 3 SEs.

    Examples
    --------
    >>> r = bias_row("generalize", "n*", "mallows", "N=20", estimates=[36, 38, 37, 37],
    ...              truth=37, tolerance=0.2)
    >>> r["estimate"], r["within"]
    (0.0, True)
    """
    import numpy as np

    values = np.asarray(estimates, dtype=float)
    values = values[np.isfinite(values)]
    n = values.size
    quantity = "relative_bias" if relative else "bias"
    _check(quantity, claim, max(n, 1))
    scale = truth if relative else 1.0
    est = float((values.mean() - truth) / scale) if n else math.nan
    mc_se = float(values.std(ddof=1) / math.sqrt(n) / abs(scale)) if n > 1 else math.nan
    half = tolerance + (3 * mc_se if math.isfinite(mc_se) else 0.0)
    return {"capability": capability, "study": study, "method": method, "setting": setting,
            "quantity": quantity, "estimate": est, "mc_se": mc_se, "nominal": 0.0,
            "lower": -half, "upper": half, "n_replications": int(n), "claim": claim,
            "within": bool(n and -half <= est <= half)}
