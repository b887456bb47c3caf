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

* **card light** — the audit card's rule (:func:`~replikit.multistudy.kernels.card_light` on
  the 95% lower and upper confidence bounds of the largest difference, against the tolerance):
  green when the upper bound is within ε, red when the lower bound exceeds it. K = 5 and 10
  studies of n = 50 and 200 held-out units, and n = 2000 and 10000 where the bounds are tight
  enough for green to be reachable; two utilities: minus the squared error (normal errors, the
  loss ``e²`` heavily skewed) and accuracy (0.8). The tolerance is the card's default, 10% of
  the pooled loss (estimated, as the audit does), and for squared error also an absolute ε.
  *False green* (``'size'``, claimed calibrated): one pair of studies exactly ε apart (losses
  ``m(1 ∓ 0.05)``, the others at ``m``), the worst case of "the truth just outside its
  tolerance" (green there must be at most 5%); *false red* (``'size'``, claimed calibrated):
  the same truth, where red is wrong; *green when the truth is well inside* (every study
  equal: power, documented) and *red when well beyond* (one pair 3ε apart: power, documented).

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

__all__ = ["validity", "SIZES", "card_lights"]

CAP = "multistudy"
ALPHA = 0.05
CENTER = 0.8
SIZES = {"small": {"size": 2000, "bias": 400, "card": 1000, "card_large": 200},
         "full": {"size": 20000, "bias": 2000, "card": 10000, "card_large": 2000}}
#: The card's default tolerance (a share of the pooled loss); the audit's DEFAULT_TOLERANCE.
CARD_SHARE = 0.10
CARD_UNITS = (50, 200, 2000, 10000)
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


def _squared_studies(rng, mse, n: int, R: int, block: int = 4_000_000):
    """``U`` (R, K) = minus the mean squared error of ``n`` normal errors per study with true
    MSE ``mse`` (K,), and the delta-method variances of ``U`` (sd² / n, ``sd`` of the unit
    losses on n − 1 df), drawn in blocks of at most ``block`` units."""
    mse = np.asarray(mse, float)
    K = mse.size
    U, v = np.empty((R, K)), np.empty((R, K))
    step = max(1, block // (K * n))
    for a in range(0, R, step):
        b = min(R, a + step)
        loss = (rng.standard_normal((b - a, K, n)) * np.sqrt(mse)[:, None]) ** 2
        U[a:b] = -loss.mean(-1)
        v[a:b] = loss.var(-1, ddof=1) / n
    return U, v


def card_lights(U, v, n, utility: str, tolerance=None, share: float | None = CARD_SHARE):
    """The card's light in every replication, from the statistics the audit computes: the
    largest pairwise Bonferroni lower bound and the largest pairwise upper bound (Welch df) of
    ``U`` (R, K) with variances ``v``, judged against ``tolerance`` (absolute) or ``share`` of
    the pooled loss estimated in each replication (the audit's default)."""
    K = U.shape[-1]
    nn = np.full(K, float(n))
    i, j = ek.pair_index(K)
    df = ek.welch_df(v[:, i], v[:, j], nn[i], nn[j])
    lower = ek.absolute_lower_bounds(U, v, df, 1 - ALPHA).max(-1)
    upper = ek.absolute_bounds(U, v, df, 1 - ALPHA)[3].max(-1)
    tol = (share * np.abs(ek.pooled_loss(U, nn, utility)) if tolerance is None
           else np.full(U.shape[0], float(tolerance)))
    return ek.card_light(lower, upper, tol)


def _card_rows(rng, R: int, R_large: int) -> list:
    rows = []
    study = "card light"
    m = 1.0  # true MSE of the middle studies (the scale does not matter: the rule is invariant)
    for utility in ("squared", "accuracy"):
        for K in (5, 10):
            for n in CARD_UNITS:
                reps = R if n <= 200 else R_large
                if utility == "squared":
                    eps = CARD_SHARE * m
                    truths = {"boundary": np.r_[m - eps / 2, np.full(K - 2, m), m + eps / 2],
                              "equal": np.full(K, m),
                              "beyond": np.r_[m - 1.5 * eps, np.full(K - 2, m), m + 1.5 * eps]}
                    draw = {k: _squared_studies(rng, t, n, reps) for k, t in truths.items()}
                    what = "squared error"
                else:
                    err = 1 - CENTER
                    eps = CARD_SHARE * err
                    truths = {"boundary": np.r_[CENTER - eps / 2, np.full(K - 2, CENTER),
                                                CENTER + eps / 2],
                              "equal": np.full(K, CENTER),
                              "beyond": np.r_[CENTER - 1.5 * eps, np.full(K - 2, CENTER),
                                              CENTER + 1.5 * eps]}
                    draw = {k: _accuracies(rng, t, n, reps)[:2] for k, t in truths.items()}
                    what = "accuracy 0.8"
                tols = [("10% of pooled loss", None)]
                if utility == "squared":
                    tols.append(("absolute ε", eps))
                for tname, tol in tols:
                    light = {k: card_lights(U, v, n, utility, tolerance=tol)
                             for k, (U, v) in draw.items()}
                    base = f"K={K}, n={n}, {what}, ε = {tname}"
                    rows.append(rate_row(CAP, study, "green (upper bound <= ε)",
                                         f"{base}; true spread = ε", "size",
                                         hits=int((light["boundary"] == "good").sum()),
                                         n_replications=reps, nominal=ALPHA))
                    rows.append(rate_row(CAP, study, "red (lower bound > ε)",
                                         f"{base}; true spread = ε", "size",
                                         hits=int((light["boundary"] == "bad").sum()),
                                         n_replications=reps, nominal=ALPHA))
                    rows.append(rate_row(CAP, study, "green (upper bound <= ε)",
                                         f"{base}; true spread = 0", "power",
                                         hits=int((light["equal"] == "good").sum()),
                                         n_replications=reps, nominal=ALPHA,
                                         claim="documented"))
                    rows.append(rate_row(CAP, study, "red (lower bound > ε)",
                                         f"{base}; true spread = 3ε", "power",
                                         hits=int((light["beyond"] == "bad").sum()),
                                         n_replications=reps, nominal=ALPHA,
                                         claim="documented"))
    return rows


def validity(*, size: str = "small", random_state=None, n_jobs: int = 1) -> pd.DataFrame:
    """Size at the boundary ε, power and spread-estimator bias of the ε-replicability test, and
    the audit card's false-green rate and power.

    Parameters
    ----------
    size : {'small', 'full'}
        ``'small'``: 2000 replications per size/power cell, 400 per bias cell and 1000 per
        card-light cell (200 at n >= 2000 units) — the test suite's, a few seconds;
        ``'full'``: 20000, 2000 and 10000 (2000) (docs/multistudy.md).
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
    rows = (_size_rows(rng, R["size"]) + _power_rows(rng, R["size"]) + _bias_rows(rng, R["bias"])
            + _card_rows(rng, R["card"], R["card_large"]))
    return pd.DataFrame(rows, columns=list(COLUMNS))
