"""Calibration of the ε-replicability test and of the spread estimators, by simulation.

``replikit simulate validity --capabilities multistudy`` runs :func:`validity`; the test suite
runs its small size and fails when a calibrated row leaves its band. The settings follow the
request for the test (K = 2, 5, 10 studies of n = 50 or 200 units; accuracy near 0.8):

* **size at the boundary** of the intersection–union test (:mod:`.equivalence`), at n = 50,
  200 and 1000 units per study (with n = 50 the SE of a difference, about 0.08, leaves a margin
  of 0.1 out of reach, so the test is very conservative there): one pair of studies exactly ε
  apart (study accuracies ``0.8 ∓ ε/2``, the others at 0.8), so that the
  null ``max|Δ| >= ε`` holds with equality — a level-α test must reject at most α of the time
  (the pair at the boundary is tested at α, the others can only lower the rejection rate).
  Absolute (ε = 0.1), relative (the same accuracies, ε their relative difference) and total
  variation (two-cell outcome × prediction tables one ε apart). Claimed calibrated; since
  rejection at the boundary is the upper bound missing the true maximum, ``1 − size`` is the
  coverage of the smallest ε shown at level α.
* **power** under exact replicability (every study at 0.8) for ε = 0.1 and 0.2, n = 50, 200
  and 1000 (no band).
* **bias** of each spread estimator (plug-in maximum, empirical Bayes, bootstrap-corrected,
  random-effects range) for the studies' true maximal difference, at true spread 0 and 0.1;
  claim ``documented`` (biases are reported, not claimed zero); and of the maximal total
  variation, plug-in and multinomial-bootstrap corrected, at true TV 0 and 0.1.

Every replication is a row of a matrix: the studies' accuracies are binomial draws, and the
test and the estimators are the vectorised kernels of :mod:`.kernels`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._calibration import COLUMNS, bias_row, rate_row
from .._format import number
from .._random import check_random_state
from .._validation import check_choice, check_int
from . import kernels as ek

__all__ = ["validity", "SIZES"]

CAP = "multistudy"
ALPHA = 0.05
CENTER = 0.8
SIZES = {"small": {"size": 2000, "bias": 400}, "full": {"size": 20000, "bias": 2000}}
STUDIES = (2, 5, 10)
UNITS = (50, 200)


def _accuracies(rng, p, n: int, R: int):
    """``U`` (R, K) binomial accuracies of studies with true accuracies ``p``, their variance
    ``sd²/n`` with ``sd`` on n − 1 df, and the Welch df per pair."""
    p = np.asarray(p, float)
    U = rng.binomial(n, p, size=(R, p.size)) / n
    v = U * (1 - U) / (n - 1)
    K = p.size
    i, j = ek.pair_index(K)
    nn = np.full(K, float(n))
    df = ek.welch_df(v[:, i], v[:, j], nn[i], nn[j])
    return U, v, df


def _boundary(K: int, eps: float) -> np.ndarray:
    p = np.full(K, CENTER)
    p[0], p[-1] = CENTER - eps / 2, CENTER + eps / 2
    return p


def _size_rows(rng, R: int) -> list:
    rows = []
    eps = 0.1
    for K in STUDIES:
        for n in (*UNITS, 1000):
            setting = f"K={K}, n={n}, ε={number(eps)}"
            U, v, df = _accuracies(rng, _boundary(K, eps), n, R)
            d, se, df_, _ = ek.absolute_bounds(U, v, df, 1 - ALPHA)
            p = ek.absolute_pvalues(d, se, df_, eps).max(-1)
            rows.append(rate_row(CAP, "epsilon test", "absolute IUT", setting, "size",
                                 hits=int((p <= ALPHA).sum()), n_replications=R,
                                 nominal=ALPHA))
            a, b = CENTER - eps / 2, CENTER + eps / 2
            eps_rel = 2 * (b - a) / (a + b)
            p = ek.relative_pvalues(U, v, df, eps_rel).max(-1)
            rows.append(rate_row(CAP, "epsilon test", "relative IUT",
                                 f"K={K}, n={n}, ε={number(eps_rel, 4)}", "size",
                                 hits=int((p <= ALPHA).sum()), n_replications=R,
                                 nominal=ALPHA))
    # total variation: (prediction, outcome) cells of a binary rule; the first and last study
    # differ by ε in total variation (mass ε moved from cell 0 to cell 3)
    base = np.array([0.4, 0.1, 0.1, 0.4])
    eps = 0.1
    for K in (2, 5):
        for n in UNITS:
            P = np.tile(base, (K, 1))
            P[0] += [eps / 2, 0, 0, -eps / 2]
            P[-1] += [-eps / 2, 0, 0, eps / 2]
            F = np.stack([rng.multinomial(n, P[k], size=R) for k in range(K)], axis=1) / n
            p = ek.tv_pvalues(F, np.full(K, n), eps).max(-1)
            rows.append(rate_row(CAP, "epsilon test", "tv IUT", f"K={K}, n={n}, ε={number(eps)}",
                                 "size", hits=int((p <= ALPHA).sum()), n_replications=R,
                                 nominal=ALPHA))
    return rows


def _power_rows(rng, R: int) -> list:
    rows = []
    for K in STUDIES:
        for n in (*UNITS, 1000):
            U, v, df = _accuracies(rng, np.full(K, CENTER), n, R)
            d, se, df_, _ = ek.absolute_bounds(U, v, df, 1 - ALPHA)
            for eps in (0.1, 0.2):
                p = ek.absolute_pvalues(d, se, df_, eps).max(-1)
                rows.append(rate_row(CAP, "epsilon test", "absolute IUT",
                                     f"K={K}, n={n}, ε={number(eps)}, true 0", "power",
                                     hits=int((p <= ALPHA).sum()), n_replications=R,
                                     nominal=ALPHA, claim="documented"))
    return rows


def _bias_rows(rng, R: int) -> list:
    rows = []
    for spread in (0.0, 0.1):
        for K in STUDIES:
            for n in UNITS:
                p = np.linspace(CENTER - spread / 2, CENTER + spread / 2, K)
                U, v, _ = _accuracies(rng, p, n, R)
                est = {"plugin": ek.spread_plugin(U), "eb": ek.spread_eb(U, v),
                       "bootstrap": ek.spread_bootstrap(U, v),
                       "re_range": ek.spread_re_range(U, v)}
                for name, values in est.items():
                    rows.append(bias_row(CAP, "spread estimate", name,
                                         f"K={K}, n={n}, true spread={number(spread)}",
                                         estimates=values, truth=spread, relative=False,
                                         tolerance=0.0, claim="documented"))
    # total variation: the plug-in maximum and its multinomial-bootstrap bias correction
    base = np.array([0.4, 0.1, 0.1, 0.4])
    for spread in (0.0, 0.1):
        for K in (2, 5):
            for n in UNITS:
                P = np.tile(base, (K, 1))
                P[0] += [spread / 2, 0, 0, -spread / 2]
                P[-1] += [-spread / 2, 0, 0, spread / 2]
                F = np.stack([rng.multinomial(n, P[k], size=R) for k in range(K)], axis=1) / n
                i, j = ek.pair_index(K)
                est = {"tv plugin": (0.5 * np.abs(F[:, i, :] - F[:, j, :]).sum(-1)).max(-1),
                       "tv bootstrap": ek.spread_tv_bootstrap(F, np.full(K, n))}
                for name, values in est.items():
                    rows.append(bias_row(CAP, "spread estimate", name,
                                         f"K={K}, n={n}, true TV={number(spread)}",
                                         estimates=values, truth=spread, relative=False,
                                         tolerance=0.0, claim="documented"))
    return rows


def validity(*, size: str = "small", random_state=None, n_jobs: int = 1) -> pd.DataFrame:
    """Size at the boundary ε, power and spread-estimator bias of the ε-replicability test.

    Parameters
    ----------
    size : {'small', 'full'}
        ``'small'``: 2000 replications per size/power cell and 400 per bias cell (the test
        suite's, a few seconds); ``'full'``: 20000 and 2000 (docs/multistudy.md).
    random_state : None, int or Generator
    n_jobs : int
        Accepted for the common interface; the study is one vectorised process.

    Returns
    -------
    DataFrame
        The rows of :mod:`replikit._calibration` (``capability='multistudy'``).

    Examples
    --------
    >>> t = validity(size="small", random_state=0)  # doctest: +SKIP
    >>> t.query("quantity == 'size'")["within"].all()  # doctest: +SKIP
    True
    """
    check_choice(size, "size", tuple(SIZES))
    check_int(n_jobs, "n_jobs", min_value=1)
    rng = check_random_state(random_state)
    R = SIZES[size]
    rows = _size_rows(rng, R["size"]) + _power_rows(rng, R["size"]) + _bias_rows(rng, R["bias"])
    return pd.DataFrame(rows, columns=list(COLUMNS))
