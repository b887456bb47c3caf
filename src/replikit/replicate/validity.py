"""Calibration of replicate's intervals and tests, by simulation.

``replikit simulate validity --capabilities replicate`` runs :func:`validity`; the test suite
runs its small size and fails when a calibrated row leaves its band. Studies (docs/replicate.md,
"R2 by sample type", and docs/validity.md show the full table):

* **R2 CI, in-sample** — an OLS fit with ``k`` normal predictors on ``n`` rows, ``rho2 = .4``;
  the in-sample R2 is drawn exactly (``SSR ~ chi2'(k, u chi2(n-1))``, ``SSE ~ chi2(n-k-1)``,
  ``u = rho2/(1-rho2)``: the noncentrality of random normal predictors). Coverage of rho2 by
  Lee's interval (calibrated; the default for ``sample='in_sample'``) and the Olkin-Finn and
  Cohen Wald intervals (documented: far below nominal when k/n is large).
* **R2 CI, test set** — the model is fitted by OLS on ``n`` training rows (its coefficients
  drawn exactly: ``beta_hat - beta = sigma L^-T z`` with ``L L^T ~ Wishart(n-1, I)``), then
  scored on ``n`` new rows; the target is the fitted model's out-of-sample R2
  ``1 - (sigma2 + |beta_hat - beta|^2 + alpha_hat^2) / Var(y)``. Coverage by the Wald interval
  with the delta-method SE (calibrated; the default from predictions, within .01: it runs
  .936-.944), the bootstrap basic interval (full size; documented at n <= 133), and
  Olkin-Finn, Cohen and Lee (documented).
* **Inconsistency test, test R2** — one fitted model, two independent test sets of ``n`` rows
  (so the null, equal out-of-sample R2, holds exactly): the size of
  :func:`~replikit.replicate.inconsistency` at its defaults (simple asymptotic with
  delta-method SEs from :func:`~replikit.replicate.from_predictions`; the bootstrap when the
  estimates carry replicates), called on each replication, and of the literal test of
  Vijayakumar & Cheung (2021) — the Wald interval with Olkin-Finn or Cohen SEs — and of MOVER
  on Lee's limits (documented).
* **TOST size at the tolerance** — calibrated predictions on two test sets whose out-of-sample
  R2 differ by exactly the tolerance (.40 vs .45): the rate at which
  :func:`~replikit.replicate.consistency` (defaults, tolerance .05) declares consistency.
* **Meta-analysis** — ``k`` = 5, 10, 30 studies with sampling variances spread evenly over
  [.005, .05] and ``tau2`` = .01, .05: coverage of mu by the FE, DL and REML intervals with z
  and Knapp-Hartung (``interval='knha'``) and of a new study's true effect by the prediction
  interval with the distribution :func:`~replikit.replicate.meta_analysis` picks by default
  for that ``interval``. tau2 comes from the public :func:`~replikit.replicate.tau2_estimate`
  (vectorized over replications) and the limits follow :class:`~replikit.replicate.MetaResult`
  (the tests check a replication against ``meta_analysis`` itself). KH CIs are claimed
  calibrated; FE (tau2 > 0), z intervals at k <= 10 and PIs are documented.

* **Card light** — the audit's replication card (:func:`~replikit.replicate.audit`): K = 5
  and 10 studies of ``n`` = 50 and 200 rows, each scored on its test third (17 and 67 rows, the
  audit's 2:1 split) by calibrated predictions whose out-of-sample R2 is set exactly (the
  original .40); test R2 with the delta-method SE as the audit computes it, and the card's rule
  (the audit's own ``_light``: random-effects pooling of the replications, Knapp-Hartung below
  :data:`~replikit.replicate.audit.KNHA_BELOW` studies). Rates of green when the truth lies just
  outside the tolerance (.05) — every replication .05 lower, or 4 of 9 (2 of 4 with K = 5)
  replications .20 lower — claimed at most 5% (calibrated); of red when every replication lies
  exactly at the tolerance (calibrated from 67 test rows; with 17 the delta-method SE of the
  original runs small and red reaches .06 at K = 10: documented); of green when the truth holds
  (all equal: power,
  documented); and of green by the rule the card used before (one replication shown consistent
  suffices; invalid, for contrast).

Every replication is a row of an array; cells run in parallel with ``n_jobs`` and each cell
draws from its own stream (``task_rng(root, cell key)``), so the table does not depend on
``n_jobs``.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
from scipy import stats

from .._calibration import COLUMNS, rate_row
from .._random import root_seed_sequence, task_rng
from .._threads import worker_limits
from .._validation import check_choice, check_int
from ..errors import ValidityWarning

__all__ = ["validity", "SIZES"]

CAP = "replicate"
RHO2 = 0.4
LEVEL = 0.95
ALPHA = 0.05
TOLERANCE = 0.05
DELTA_SLACK = 0.01  # the delta-method Wald interval runs .936-.944 (asymptotic error)
KH_SLACK = 0.025  # Knapp-Hartung: .925-.95 over k = 5-30, tau2 = .01-.05 (finite-k error)
SIZES = {
    "small": {"r2": 2000, "test": 2000, "boot": 0, "boot_B": 0, "inc": 2000, "inc_boot": 0,
              "tost": 2000, "meta": 2000, "light": 500, "light_k": (5, 10),
              "light_n": (50, 200, 5000),
              "r2_cells": ((133, 36), (100, 10)), "inc_cells": ((100, 10), (133, 36)),
              "tost_cells": (2000,), "meta_k": (5, 30), "meta_tau2": (0.01, 0.05)},
    "full": {"r2": 4000, "test": 4000, "boot": 1000, "boot_B": 500, "inc": 4000,
             "inc_boot": 1000, "tost": 4000, "meta": 4000, "light": 4000,
             "light_k": (5, 10), "light_n": (50, 200, 2000, 10000),
             "r2_cells": ((50, 5), (100, 10), (133, 36), (667, 36)),
             "inc_cells": ((100, 10), (133, 36), (667, 36)),
             "tost_cells": (2000, 5000), "meta_k": (5, 10, 30), "meta_tau2": (0.01, 0.05)},
}


def _setting(**kw) -> str:
    return ", ".join(f"{k}={v}" for k, v in kw.items())


# --- R2 draws -----------------------------------------------------------------------------


def _insample_r2(rng, n: int, k: int, rho2: float, R: int) -> np.ndarray:
    """Exact in-sample R2 of OLS with k random normal predictors (see the module notes)."""
    u = rho2 / (1 - rho2)
    lam = u * rng.chisquare(n - 1, R)
    ssr = rng.noncentral_chisquare(k, lam)
    sse = rng.chisquare(n - k - 1, R)
    return ssr / (ssr + sse)


def _fitted_models(rng, n_train: int, k: int, rho2: float, R: int):
    """Coefficient errors of OLS (with intercept) on ``n_train`` rows, drawn exactly.

    ``x ~ N(0, I_k)``, ``y = x'beta + e``, ``|beta|^2 = rho2``, ``Var(e) = 1 - rho2``. Given the
    centered design, ``beta_hat - beta ~ N(0, sigma2 (X_c'X_c)^-1)`` with
    ``X_c'X_c ~ Wishart(n-1, I)`` (Bartlett: ``L L'``, ``L`` lower triangular with
    ``sqrt(chi2(n-1-i))`` on the diagonal), and ``alpha_hat = e_bar - x_bar'(beta_hat - beta)``.
    Returns ``(beta, db, alpha)`` with ``db`` of shape (R, k).
    """
    sigma = math.sqrt(1 - rho2)
    beta = np.full(k, math.sqrt(rho2 / k))
    L = np.tril(rng.standard_normal((R, k, k)), -1)
    diag = np.sqrt(rng.chisquare(n_train - 1 - np.arange(k), size=(R, k)))
    L[:, np.arange(k), np.arange(k)] = diag
    z = rng.standard_normal((R, k, 1))
    db = sigma * np.linalg.solve(np.swapaxes(L, 1, 2), z)[..., 0]  # L^-T z
    xbar = rng.standard_normal((R, k)) / math.sqrt(n_train)
    alpha = sigma * rng.standard_normal(R) / math.sqrt(n_train) - (xbar * db).sum(axis=1)
    return beta, db, alpha


def _test_sets(rng, beta, db, alpha, rho2: float, n: int):
    """``n`` test rows per fitted model: outcomes and predictions, shape (R, n) each, from the
    bivariate normal of ``(x'beta, x'beta_hat)``; and the out-of-sample R2 of each model."""
    R = db.shape[0]
    bh = beta + db
    nb = math.sqrt(rho2)
    c = bh @ beta / nb
    s = np.sqrt(np.maximum((bh ** 2).sum(axis=1) - c ** 2, 0.0))
    z1 = rng.standard_normal((R, n))
    z2 = rng.standard_normal((R, n))
    y = nb * z1 + math.sqrt(1 - rho2) * rng.standard_normal((R, n))
    yhat = alpha[:, None] + c[:, None] * z1 + s[:, None] * z2
    truth = 1 - ((1 - rho2) + (db ** 2).sum(axis=1) + alpha ** 2)
    return y, yhat, truth


def _r2(y, yhat):
    return 1 - ((y - yhat) ** 2).sum(-1) / ((y - y.mean(-1, keepdims=True)) ** 2).sum(-1)


def lee_limits(r2, n: int, k: int, confidence_level: float = LEVEL):
    """Lee's interval for many in-sample R2 at once (vectorized bisection on ``u``).

    The same limits as :func:`~replikit.replicate.r2_confidence_interval` with
    ``method='lee'`` (which uses Brent's method one R2 at a time), to about 1e-9.
    """
    from .estimates import _lee_cdf_u

    r2 = np.clip(np.asarray(r2, float), 0.0, 1 - 1e-12)
    a = 1 - confidence_level
    out = []
    for target in (1 - a / 2, a / 2):
        at0 = _lee_cdf_u(r2, np.zeros_like(r2), n, k) <= target
        lo = np.zeros_like(r2)
        hi = np.full_like(r2, 1e-3)
        for _ in range(60):
            up = (_lee_cdf_u(r2, hi, n, k) > target) & ~at0
            if not up.any():
                break
            lo = np.where(up, hi, lo)
            hi = np.where(up, 2 * hi, hi)
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            above = _lee_cdf_u(r2, mid, n, k) > target
            lo = np.where(above, mid, lo)
            hi = np.where(above, hi, mid)
        u = np.where(at0, 0.0, 0.5 * (lo + hi))
        out.append(u / (1 + u))
    return out[0], out[1]


def _covers(lo, hi, truth) -> int:
    return int(np.sum((lo <= truth) & (truth <= hi)))


def _wald_se(r2, n, k, method):
    from .estimates import r2_se

    return r2_se(np.clip(r2, 0.0, 1 - 1e-12), n, k, method=method)


# --- studies ------------------------------------------------------------------------------


def _insample_cell(rng, n, k, R):
    r2 = _insample_r2(rng, n, k, RHO2, R)
    z = stats.norm.ppf((1 + LEVEL) / 2)
    setting = _setting(n=n, k=k, rho2=RHO2)
    study = "R2 CI: in-sample R2"
    rows = []
    lo, hi = lee_limits(r2, n, k)
    rows.append(rate_row(CAP, study, "lee (default)", setting, "coverage", hits=_covers(lo, hi, RHO2),
                         n_replications=R, nominal=LEVEL))
    for method in ("olkin_finn", "cohen"):
        se = _wald_se(r2, n, k, method)
        rows.append(rate_row(CAP, study, f"wald ({method})", setting, "coverage",
                             hits=_covers(r2 - z * se, r2 + z * se, RHO2), n_replications=R,
                             nominal=LEVEL, claim="documented"))
    return rows


def _testset_cell(rng, n, k, R, n_boot, B):
    from .estimates import r2_delta_se

    beta, db, alpha = _fitted_models(rng, n, k, RHO2, R)
    y, yhat, truth = _test_sets(rng, beta, db, alpha, RHO2, n)
    r2 = _r2(y, yhat)
    z = stats.norm.ppf((1 + LEVEL) / 2)
    setting = _setting(n=n, k=k, n_train=n, rho2=RHO2)
    study = "R2 CI: test-set R2"
    rows = []
    se = r2_delta_se(y, yhat)
    t = stats.t.ppf((1 + LEVEL) / 2, n - 1)  # as Estimate.confidence_interval for 'delta'
    rows.append(rate_row(CAP, study, "wald t(n-1) (delta, default)", setting, "coverage",
                         hits=_covers(r2 - t * se, r2 + t * se, truth), n_replications=R,
                         nominal=LEVEL, slack=DELTA_SLACK))
    rows.append(rate_row(CAP, study, "wald z (delta)", setting, "coverage",
                         hits=_covers(r2 - z * se, r2 + z * se, truth), n_replications=R,
                         nominal=LEVEL, claim="documented"))
    for method in ("olkin_finn", "cohen"):
        se = _wald_se(r2, n, k, method)
        rows.append(rate_row(CAP, study, f"wald ({method})", setting, "coverage",
                             hits=_covers(r2 - z * se, r2 + z * se, truth), n_replications=R,
                             nominal=LEVEL, claim="documented"))
    lo, hi = lee_limits(r2, n, k)
    rows.append(rate_row(CAP, study, "lee", setting, "coverage", hits=_covers(lo, hi, truth),
                         n_replications=R, nominal=LEVEL, claim="documented"))
    if n_boot:
        reps = _boot_r2(rng, y[:n_boot], yhat[:n_boot], B)
        qlo, qhi = np.quantile(reps, [(1 - LEVEL) / 2, (1 + LEVEL) / 2], axis=1)
        est = r2[:n_boot]
        rows.append(rate_row(CAP, study, "bootstrap (basic)", setting, "coverage",
                             hits=_covers(2 * est - qhi, 2 * est - qlo, truth[:n_boot]),
                             n_replications=n_boot, nominal=LEVEL, slack=DELTA_SLACK,
                             claim="calibrated" if n >= 500 else "documented"))
    return rows


def _boot_r2(rng, y, yhat, B):
    """Row-bootstrap R2 replicates (model kept), (R, B), as from_predictions draws them."""
    R, n = y.shape
    out = np.empty((R, B))
    d2 = (y - yhat) ** 2
    for i in range(R):
        idx = rng.integers(0, n, size=(B, n))
        yb = y[i][idx]
        out[i] = 1 - d2[i][idx].sum(1) / ((yb - yb.mean(1, keepdims=True)) ** 2).sum(1)
    return out


def _inconsistency_cell(rng, n, k, R, n_boot, B):
    from .aims import inconsistency
    from .estimates import from_predictions

    beta, db, alpha = _fitted_models(rng, n, k, RHO2, R)
    y, yhat, _ = _test_sets(rng, beta, db, alpha, RHO2, 2 * n)
    ya, pa, yb, pb = y[:, :n], yhat[:, :n], y[:, n:], yhat[:, n:]
    ra, rb = _r2(ya, pa), _r2(yb, pb)
    setting = _setting(n=n, k=k, n_train=n, rho2=RHO2)
    study = "inconsistency test: test-set R2"
    rows = []
    # the defaults, called on every replication: from_predictions -> inconsistency
    hits = sum(inconsistency(from_predictions(ya[i], pa[i], k=k),
                             from_predictions(yb[i], pb[i], k=k)).inconsistent for i in range(R))
    rows.append(rate_row(CAP, study, "wald (delta SE, default)", setting, "size", hits=hits,
                         n_replications=R, nominal=ALPHA))
    z = stats.norm.ppf((1 + LEVEL) / 2)
    d = rb - ra
    for method in ("olkin_finn", "cohen"):
        se = np.hypot(_wald_se(ra, n, k, method), _wald_se(rb, n, k, method))
        rows.append(rate_row(CAP, study, f"wald ({method} SE, paper)", setting, "size",
                             hits=int(np.sum(np.abs(d) > z * se)), n_replications=R,
                             nominal=ALPHA, claim="documented"))
    la, ha = lee_limits(ra, n, k)
    lb, hb = lee_limits(rb, n, k)
    low = d - np.hypot(rb - lb, ha - ra)
    high = d + np.hypot(hb - rb, ra - la)
    rows.append(rate_row(CAP, study, "mover (lee limits)", setting, "size",
                         hits=int(np.sum((low > 0) | (high < 0))), n_replications=R,
                         nominal=ALPHA, claim="documented"))
    if n_boot:
        hits = 0
        for i in range(n_boot):
            ea = from_predictions(ya[i], pa[i], se_method="bootstrap", n_resamples=B,
                                  random_state=rng)
            eb = from_predictions(yb[i], pb[i], se_method="bootstrap", n_resamples=B,
                                  random_state=rng)
            hits += inconsistency(ea, eb).inconsistent  # default: the bootstrap difference
        rows.append(rate_row(CAP, study, "bootstrap (basic, default with replicates)",
                             setting, "size", hits=hits, n_replications=n_boot,
                             nominal=ALPHA))
    return rows


def _tost_cell(rng, n, R):
    from .aims import consistency
    from .estimates import from_predictions

    rho_o, rho_r = RHO2, RHO2 + TOLERANCE
    rows = []
    setting = _setting(n=n, r2_original=rho_o, r2_replication=rho_r, tolerance=TOLERANCE)
    study = "TOST size at the tolerance: test-set R2"
    draws = []
    for rho in (rho_o, rho_r):  # calibrated predictions: the out-of-sample R2 is rho2
        s = math.sqrt(rho) * rng.standard_normal((R, n))
        draws.append((s + math.sqrt(1 - rho) * rng.standard_normal((R, n)), s))
    (yo, po), (yr, pr) = draws
    hits = sum(consistency(from_predictions(yo[i], po[i]), from_predictions(yr[i], pr[i]),
                           tolerance=TOLERANCE).consistent for i in range(R))
    rows.append(rate_row(CAP, study, "tost (delta SE, default)", setting, "size", hits=hits,
                         n_replications=R, nominal=ALPHA))
    z = stats.norm.ppf(1 - ALPHA)
    ro, rr = _r2(yo, po), _r2(yr, pr)
    se = np.hypot(_wald_se(ro, n, None, "olkin_finn"), _wald_se(rr, n, None, "olkin_finn"))
    d = rr - ro
    hits = int(np.sum((d - z * se > -TOLERANCE) & (d + z * se < TOLERANCE)))
    rows.append(rate_row(CAP, study, "tost (olkin_finn SE, paper)", setting, "size", hits=hits,
                         n_replications=R, nominal=ALPHA, claim="documented"))
    return rows


def _meta_cell(rng, k, tau2, R):
    mu = 0.3
    v = np.linspace(0.005, 0.05, k)
    theta = mu + math.sqrt(tau2) * rng.standard_normal((R, k))
    y = theta + np.sqrt(v) * rng.standard_normal((R, k))
    new = mu + math.sqrt(tau2) * rng.standard_normal(R)
    setting = _setting(k=k, tau2=tau2)
    rows = []
    for method in ("FE", "DL", "REML"):
        for interval in (("wald",) if method == "FE" else ("wald", "knha")):
            est, lo, hi, plo, phi, pi_dist = meta_limits(y, v, method, interval)
            kh = interval == "knha"
            rows.append(rate_row(CAP, "meta-analysis CI of mu", f"{method}, interval={interval}",
                                 setting, "coverage", hits=_covers(lo, hi, mu), n_replications=R,
                                 nominal=LEVEL, claim="calibrated" if kh else "documented",
                                 slack=KH_SLACK if kh else 0.0))
            rows.append(rate_row(CAP, "meta-analysis PI of a new study's effect",
                                 f"{method}, interval={interval}, pi={pi_dist}", setting,
                                 "coverage", hits=_covers(plo, phi, new), n_replications=R,
                                 nominal=LEVEL, claim="documented"))
    return rows


def meta_limits(y, v, tau2_method: str, interval: str, confidence_level: float = LEVEL):
    """Estimate, CI and PI of :func:`~replikit.replicate.meta_analysis` for many data sets.

    ``y`` has shape (R, k), ``v`` shape (k,); tau2 by the public
    :func:`~replikit.replicate.tau2_estimate` (vectorized), the interval formulas of
    :class:`~replikit.replicate.MetaResult` (Wald or Knapp-Hartung, no floor) and the
    prediction-interval distribution that ``meta_analysis`` picks by default for
    ``interval``. Returns ``(estimate, ci_low, ci_high, pi_low, pi_high, pi_dist)``.
    """
    method = tau2_method
    from .meta import meta_analysis, tau2_estimate

    R, k = y.shape
    # REML's Fisher scoring needs more than its default 1000 steps on a few draws
    t2 = np.zeros(R) if method == "FE" else tau2_estimate(
        y, np.broadcast_to(v, y.shape), method, max_iter=100_000)
    w = 1.0 / (v + t2[:, None])
    sw = w.sum(axis=1)
    est = (w * y).sum(axis=1) / sw
    p = (1 + confidence_level) / 2
    if interval == "wald":
        se, q = 1 / np.sqrt(sw), stats.norm.ppf(p)
    else:
        se = np.sqrt((w * (y - est[:, None]) ** 2).sum(axis=1) / ((k - 1) * sw))
        q = stats.t.ppf(p, k - 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pi_dist = meta_analysis(np.arange(k, dtype=float), v, tau2_method=method,
                                interval=interval).pi_dist
    df = {"z": None, "t(k-1)": k - 1, "t(k-2)": max(1, k - 2), "t": k - 1}[pi_dist]
    qp = stats.norm.ppf(p) if df is None else stats.t.ppf(p, df)
    half = qp * np.sqrt(se ** 2 + t2)
    return est, est - q * se, est + q * se, est - half, est + half, pi_dist


# --- the table ----------------------------------------------------------------------------


#: Card-light cells: studies (original included) and rows per study (the last two sizes show
#: where the light can turn green at all: a test third of 17 or 67 rows gives an R2 SE of
#: .08-.15, too wide for ±.05 either way).
LIGHT_DROP = 0.20  # the "some replications much lower" scenario


def _light_r2(rng, rho2, m: int, R: int):
    """Test R2 and delta-method SE of calibrated predictions on ``m`` test rows per study:
    ``rho2`` (K,) the studies' out-of-sample R2; arrays (R, K)."""
    from .estimates import r2_delta_se

    rho2 = np.asarray(rho2, float)
    chunk = max(1, int(4e6 // (rho2.size * m)))  # a few million draws at a time
    r2, se = np.empty((R, rho2.size)), np.empty((R, rho2.size))
    for a in range(0, R, chunk):
        b = min(R, a + chunk)
        s = np.sqrt(rho2)[None, :, None] * rng.standard_normal((b - a, rho2.size, m))
        y = s + np.sqrt(1 - rho2)[None, :, None] * rng.standard_normal((b - a, rho2.size, m))
        r2[a:b], se[a:b] = _r2(y, s), r2_delta_se(y, s)
    return r2, se


def _light_cell(rng, K, n, R):
    from .audit import KNHA_BELOW, _light

    m = n - round(2 * n / 3)  # the audit's test third
    interval = "knha" if K < KNHA_BELOW else "wald"
    n_low = round(4 / 9 * (K - 1))
    truths = {"every replication at the tolerance": [RHO2] + [RHO2 - TOLERANCE] * (K - 1),
              f"{n_low} of {K - 1} replications {LIGHT_DROP:g} lower":
                  [RHO2] + [RHO2 - LIGHT_DROP] * n_low + [RHO2] * (K - 1 - n_low),
              "the truth holds (all equal)": [RHO2] * K}
    study = "replication card light (test R2, calibrated predictions)"
    rows = []
    for what, rho in truths.items():
        r2, se = _light_r2(rng, rho, m, R)
        out = _light(r2[:, 0], se[:, 0] ** 2, r2[:, 1:], se[:, 1:] ** 2, TOLERANCE,
                     tau2_method="REML", interval=interval)
        green = out["level"] == "good"
        old = (out["n_consistent"] > 0) & ~(out["n_inconsistent"] > (K - 1) / 2)
        setting = _setting(K=K, n=n, test_rows=m, truth=what, tolerance=TOLERANCE)
        holds = what.startswith("the truth holds")
        rows.append(rate_row(CAP, study, "green (pooled or all replications)", setting,
                             "power" if holds else "size", hits=int(green.sum()),
                             n_replications=R, nominal=ALPHA,
                             claim="documented" if holds else "calibrated"))
        if what.startswith("every"):
            # with 17 test rows the delta-method SE of the original's R2 runs small and its
            # error is shared by every difference: red reaches .06 at K = 10 (documented)
            rows.append(rate_row(CAP, study, "red (pooled CI beyond the tolerance)", setting,
                                 "size", hits=int((out["level"] == "bad").sum()),
                                 n_replications=R, nominal=ALPHA,
                                 claim="documented" if m < 30 else "calibrated"))
        rows.append(rate_row(CAP, study, "green, previous rule (one replication consistent)",
                             setting, "power" if holds else "size", hits=int(old.sum()),
                             n_replications=R, nominal=ALPHA,
                             claim="documented" if holds else "invalid"))
    return rows


def _cells(size: str):
    sz = SIZES[size]
    cells = []
    for n, k in sz["r2_cells"]:
        cells.append((("insample", n, k), _insample_cell, (n, k, sz["r2"])))
    for n, k in sz["r2_cells"]:
        boot = sz["boot"] if n in (133, 667) else 0
        cells.append((("testset", n, k), _testset_cell, (n, k, sz["test"], boot, sz["boot_B"])))
    for n, k in sz["inc_cells"]:
        cells.append((("inconsistency", n, k), _inconsistency_cell,
                      (n, k, sz["inc"], sz["inc_boot"], sz["boot_B"])))
    for n in sz["tost_cells"]:
        cells.append((("tost", n), _tost_cell, (n, sz["tost"])))
    for k in sz["meta_k"]:
        for tau2 in sz["meta_tau2"]:
            cells.append((("meta", k, tau2), _meta_cell, (k, tau2, sz["meta"])))
    for K in sz["light_k"]:
        for n in sz["light_n"]:
            cells.append((("light", K, n), _light_cell, (K, n, sz["light"])))
    return cells


def _run_cell(root, key, fn, args):
    with worker_limits(), warnings.catch_warnings():
        warnings.simplefilter("ignore", ValidityWarning)  # the documented rows warn, by design
        return fn(task_rng(root, ("replicate-validity",) + key), *args)


def validity(*, size: str = "small", random_state=None, n_jobs: int = 1) -> pd.DataFrame:
    """Coverage and size of replicate's R2 intervals, difference tests and meta-analysis.

    Parameters
    ----------
    size : {'small', 'full'}
        ``'small'``: the reduced study the test suite runs (2,000 replications per cell, 500
        for the card light; about 25 s of CPU); ``'full'``: the sizes of docs/validity.md
        (4,000 replications per cell, 1,000 with the bootstrap; a few minutes of CPU, most of
        it the card light's 10,000-row studies).
    random_state : None, int or Generator
        Root of every draw; each cell draws from its own stream, so rows do not depend on
        ``n_jobs``.
    n_jobs : int
        Cells run in parallel (joblib), one BLAS thread each.

    Returns
    -------
    DataFrame
        Rows of :func:`replikit._calibration.rate_row` (``capability='replicate'``); see the
        module notes for the studies and claims.

    Examples
    --------
    >>> from replikit.replicate.validity import SIZES
    >>> sorted(SIZES)
    ['full', 'small']
    """
    size = check_choice(size, "size", tuple(SIZES))
    n_jobs = check_int(n_jobs, "n_jobs", min_value=-1)
    root = root_seed_sequence(random_state)
    cells = _cells(size)
    if n_jobs == 1:
        parts = [_run_cell(root, key, fn, args) for key, fn, args in cells]
    else:
        from joblib import Parallel, delayed

        parts = Parallel(n_jobs=n_jobs)(delayed(_run_cell)(root, key, fn, args)
                                        for key, fn, args in cells)
    rows = [row for part in parts for row in part]
    return pd.DataFrame(rows, columns=list(COLUMNS))
