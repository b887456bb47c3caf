"""Size of the model-comparison tests for deterministic and randomized learners, by simulation.

``replikit simulate validity --capabilities compare`` runs :func:`validity`; the test suite
runs its small size and fails when a calibrated row leaves its band.

Data (as :func:`replikit.compare.simulate_tests`): ``n = 300`` rows, ``y ~ Bernoulli(1/2)``,
two unit-variance Gaussian features with class means ``±mu`` (Bayes error 0.30 each under the
null; feature 1's is ``0.30 − 0.05`` for the power rows), correlated 0.5 within class.
Learner A is a nearest-centroid classifier on ``x1``, B the same on ``x2``.

Learners
    * **deterministic**: class means of the whole training set;
    * **randomized**: class means of a random subsample of the training set (half of it, or
      5%), drawn anew for every fit — a learner whose fit depends on its random state, like a
      random forest, bagging or SGD. With 5% the run-to-run variance dominates the per-split
      differences, the regime in which the corrected t's stop rejecting.

Tests (two-sided, alpha = 0.05), each on the scheme it is made for
    corrected resampled t (10 random 90/10 hold-outs), corrected repeated k-fold t (10x10 CV),
    Dietterich's 5x2cv t and Alpaydin's 5x2cv F, the paired permutation (sign-flip, 999 random
    patterns) test of the per-example losses on one 2/3–1/3 hold-out, the naive paired t on
    10x10 CV (invalid, for contrast).

Rows: ``size`` (rejection rate at Delta = 0; one-sided band) for every test and learner, and
``power`` at Delta = 0.05 for the corrected t's (no band).

**Card light** rows (the audit's comparison card, :func:`replikit.compare.audit`): on the same
10x10 CV differences, a pair is decided when the corrected repeated k-fold t shows a difference
or the TOST with the corrected variance shows equivalence within ±tolerance, and the light is
green when the pair is decided (the audit's own ``_light``). A green light is false when it rests
on a false claim: equivalence claimed with the true difference at the tolerance (Delta =
tolerance), or a difference claimed with none (Delta = 0); both are claimed at most 5%
(``size``, calibrated). Power: green at Delta = 0 (equivalence shown) and at Delta = 0.05
(difference shown), documented. Tolerances 0.01 (the audit's default on a 0-1 score) and 0.05.
One pair, one metric (the audit adjusts over pairs and metrics by Holm, which is stricter). The permutation test is claimed
calibrated for deterministic and mildly randomized learners only: it tests the two *fitted*
models on one test set, so when the random states change the fitted models a lot it rejects the
learners' null far too often (documented row). The
statistics are the vectorised kernels of :mod:`replikit.compare._kernels` (the same numbers as
the public tests); every fit of every dataset and split is one array expression.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from .._calibration import COLUMNS, rate_row
from .._random import root_seed_sequence, task_rng
from .._validation import check_choice, check_int
from . import _kernels as K

__all__ = ["validity", "SIZES", "LEARNERS"]

CAP = "compare"
STUDY = "two learners, one dataset (n = 300)"
ALPHA = 0.05
N_ROWS = 300
BASE_ERROR = 0.30
DIFFERENCE = 0.05
RHO = 0.5
SIZES = {"small": {"datasets": 400, "power": 200, "chunk": 100, "flips": 499, "light": 400},
         "full": {"datasets": 3000, "power": 1000, "chunk": 200, "flips": 999, "light": 2000}}
#: practical tolerances of the card-light rows (the audit's default on a 0-1 score first)
LIGHT_TOLERANCES = (0.01, 0.05)
LIGHT_LEARNERS = ("deterministic", "randomized (half)")
#: share of the training rows each fit uses (1 = deterministic)
LEARNERS = {"deterministic": 1.0, "randomized (half)": 0.5, "randomized (5%)": 0.05}
# partitions: 10x10 CV (100), 10 hold-outs 90/10, 5x2 CV (10), one 2/3-1/3 hold-out
_KFOLD, _HOLDOUT, _FIVE, _ONE = slice(0, 100), slice(100, 110), slice(110, 120), slice(120, 121)


def _masks(rng, R: int) -> tuple[np.ndarray, np.ndarray]:
    """Test masks (R, 121, n) and training masks of every partition of every dataset."""
    n = N_ROWS
    test = np.zeros((R, 121, n), dtype=bool)
    perms = np.argsort(rng.random((R, 121 - 100 + 10, n)), axis=-1)
    rows = np.arange(R)[:, None, None]
    # 10x10 CV: repeat r, fold f tests positions [30 f, 30 f + 30) of permutation r
    cv = perms[:, :10]
    for f in range(10):
        idx = cv[:, :, 30 * f:30 * (f + 1)]
        test[rows, np.arange(f, 100, 10)[None, :, None], idx] = True
    ho = perms[:, 10:20, :30]
    test[rows, np.arange(100, 110)[None, :, None], ho] = True
    five = perms[:, 20:25]
    test[rows, np.arange(110, 120, 2)[None, :, None], five[:, :, :150]] = True
    test[rows, np.arange(111, 120, 2)[None, :, None], five[:, :, 150:]] = True
    test[rows, np.array([[120]]), perms[:, 25:26, :100]] = True
    return test, ~test


def _row_errors(x, y, train, rng, share: float):
    """Per-row test errors (R, P, n) of a nearest-centroid learner on feature ``x`` (R, n),
    fitted on a random ``share`` of each training set (all of it when ``share = 1``)."""
    w = train.astype(float)
    if share < 1:
        w = w * (rng.random(train.shape) < share)
    y1 = y[:, None, :].astype(float)
    xx = x[:, None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        m1 = (w * y1 * xx).sum(-1) / (w * y1).sum(-1)
        m0 = (w * (1 - y1) * xx).sum(-1) / (w * (1 - y1)).sum(-1)
    t = 0.5 * (m1 + m0)
    pred = np.sign(m1 - m0)[..., None] * (xx - t[..., None]) > 0
    return pred != y[:, None, :]


def _fold_rates(err, test):
    return (err & test).sum(-1) / test.sum(-1)


def _two_sided(stat, df):
    return 2.0 * stats.t.sf(np.abs(stat), df)


def _pair_scores(rng, R: int, mu_a: float, mu_b: float):
    """R simulated data sets: balanced labels ``y`` (R, n) and the two learners' correlated
    scores ``x1``, ``x2`` (class means ±mu, noise correlation RHO)."""
    y = rng.random((R, N_ROWS)) < 0.5
    z = rng.standard_normal((R, N_ROWS, 2))
    e1 = z[..., 0]
    e2 = RHO * z[..., 0] + np.sqrt(1 - RHO ** 2) * z[..., 1]
    sgn = np.where(y, 1.0, -1.0)
    x1, x2 = sgn * mu_a + e1, sgn * mu_b + e2
    return y, x1, x2


def _chunk(rng, R: int, mu_a: float, mu_b: float, share: float, flips: int) -> dict:
    y, x1, x2 = _pair_scores(rng, R, mu_a, mu_b)
    test, train = _masks(rng, R)
    ea = _row_errors(x1, y, train, rng, share)
    eb = _row_errors(x2, y, train, rng, share)
    d = _fold_rates(ea, test) - _fold_rates(eb, test)  # (R, 121) error differences
    p = {}
    p["corrected resampled t (10 hold-outs 90/10)"] = _two_sided(
        *K.t_corrected(d[:, _HOLDOUT], 30 / 270)[::2])
    p["corrected repeated k-fold t (10x10 CV)"] = _two_sided(
        *K.t_corrected(d[:, _KFOLD], 1 / 9)[::2])
    d5 = d[:, _FIVE].reshape(R, 5, 2)
    p["5x2cv paired t"] = _two_sided(*K.t_5x2(d5)[::2])
    f, df1, df2 = K.f_5x2(d5)
    p["5x2cv combined F"] = stats.f.sf(f, df1, df2)
    p["naive paired t (10x10 CV)"] = _two_sided(*K.t_naive(d[:, _KFOLD])[::2])
    # paired permutation test of the per-example losses on one 2/3-1/3 hold-out
    one = test[:, 120]
    delta = (ea[:, 120].astype(float) - eb[:, 120]) * one  # zero outside the test rows
    obs = np.abs(delta.sum(-1))
    signs = 1.0 - 2.0 * (rng.random((flips, N_ROWS)) < 0.5)
    null = np.abs(delta @ signs.T)  # (R, flips)
    p["paired permutation test (one hold-out)"] = (1 + (null >= obs[:, None] - 1e-9).sum(-1)) / (
        flips + 1)
    return p


def _rates(root, key, R: int, chunk: int, mu_a: float, mu_b: float, share: float,
           flips: int) -> dict:
    hits: dict = {}
    for c, start in enumerate(range(0, R, chunk)):
        rng = task_rng(root, (*key, c))
        p = _chunk(rng, min(chunk, R - start), mu_a, mu_b, share, flips)
        for name, pv in p.items():
            hits[name] = hits.get(name, 0) + int((np.nan_to_num(pv, nan=1.0) < ALPHA).sum())
    return hits


def _light_chunk(rng, R: int, mu_a: float, mu_b: float, share: float) -> dict:
    """The card's decisions on R simulated 10x10 CV comparisons: ``differ`` (R,) and, per
    tolerance, ``equivalent`` (R,) — as the audit decides one pair."""
    y, x1, x2 = _pair_scores(rng, R, mu_a, mu_b)
    test, train = _masks(rng, R)
    test, train = test[:, _KFOLD], train[:, _KFOLD]
    d = _fold_rates(_row_errors(x1, y, train, rng, share), test) - _fold_rates(
        _row_errors(x2, y, train, rng, share), test)
    stat, se, df = K.t_corrected(d, 1 / 9)
    out = {"differ": _two_sided(stat, df) < ALPHA}
    mean = d.mean(axis=-1)
    for tol in LIGHT_TOLERANCES:  # TOST with the corrected variance (equivalence_ttest)
        with np.errstate(divide="ignore", invalid="ignore"):
            p = np.maximum(stats.t.sf((mean + tol) / se, df), stats.t.cdf((mean - tol) / se, df))
        out[tol] = np.nan_to_num(p, nan=1.0) < ALPHA
    return out


def _light_rows(root, cfg) -> list[dict]:
    """The card-light rows: false green at the tolerance and at Delta = 0, and power."""
    from .audit import _light

    study = "comparison card light (one pair, 10x10 CV, n = 300)"
    R, chunk = cfg["light"], cfg["chunk"]
    mu_b = float(-stats.norm.ppf(BASE_ERROR))
    rows = []
    deltas = sorted({0.0, *LIGHT_TOLERANCES, DIFFERENCE})
    for learner in LIGHT_LEARNERS:
        share = LEARNERS[learner]
        for delta in deltas:
            mu_a = float(-stats.norm.ppf(BASE_ERROR - delta))
            parts = [_light_chunk(task_rng(root, ("light", learner, delta, c)),
                                  min(chunk, R - s), mu_a, mu_b, share)
                     for c, s in enumerate(range(0, R, chunk))]
            differ = np.concatenate([p["differ"] for p in parts])
            setting = f"{learner} learners, Delta={delta:g}"
            if delta == 0:  # a difference claimed where there is none: a false green
                rows.append(rate_row(CAP, study, "green by a difference (corrected t)",
                                     setting, "size", hits=int(differ.sum()),
                                     n_replications=R, nominal=ALPHA))
            if delta == DIFFERENCE:
                rows.append(rate_row(CAP, study, "green by a difference (corrected t)",
                                     setting, "power", hits=int(differ.sum()),
                                     n_replications=R, nominal=ALPHA, claim="documented"))
            for tol in LIGHT_TOLERANCES:
                equiv = np.concatenate([p[tol] for p in parts])
                # green resting on equivalence: the light is green and no difference is shown
                by_equiv = (_light(differ[:, None], equiv[:, None]) == "good") & ~differ
                method = f"green by equivalence (TOST, tolerance {tol:g})"
                if delta == tol:  # equivalence claimed at the boundary: a false green
                    rows.append(rate_row(CAP, study, method, setting, "size",
                                         hits=int(by_equiv.sum()), n_replications=R,
                                         nominal=ALPHA))
                if delta == 0:
                    rows.append(rate_row(CAP, study, method, setting, "power",
                                         hits=int(by_equiv.sum()), n_replications=R,
                                         nominal=ALPHA, claim="documented"))
    return rows


_INVALID = ("naive paired t (10x10 CV)",)
#: (learner, test) cells outside their band that docs/compare.md describes
_DOCUMENTED = {("randomized (5%)", "paired permutation test (one hold-out)")}


def validity(*, size: str = "small", random_state=None, n_jobs: int = 1) -> pd.DataFrame:
    """Type I error of the comparison tests for deterministic and randomized learners.

    Parameters
    ----------
    size : {'small', 'full'}, default 'small'
        Datasets per cell (:data:`SIZES`): small for the test suite, full for
        docs/compare.md.
    random_state : None, int or numpy.random.Generator
        Each (learner, hypothesis, chunk) draws from its own stream derived from it.
    n_jobs : int, default 1
        Accepted for the common signature; the study runs in one process.

    Returns
    -------
    pandas.DataFrame
        Rows of :mod:`replikit._calibration` (``capability='compare'``).

    Examples
    --------
    >>> SIZES["small"]["datasets"], list(LEARNERS)
    (400, ['deterministic', 'randomized (half)', 'randomized (5%)'])
    """
    check_choice(size, "size", tuple(SIZES))
    check_int(n_jobs, "n_jobs", min_value=-1)
    cfg = SIZES[size]
    root = root_seed_sequence(random_state)
    mu_b = float(-stats.norm.ppf(BASE_ERROR))
    mu_a = float(-stats.norm.ppf(BASE_ERROR - DIFFERENCE))
    rows = []
    for learner, share in LEARNERS.items():
        R = cfg["datasets"]
        hits = _rates(root, (learner, "null"), R, cfg["chunk"], mu_b, mu_b, share,
                      cfg["flips"])
        for name, h in hits.items():
            claim = ("invalid" if name in _INVALID else
                     "documented" if (learner, name) in _DOCUMENTED else "calibrated")
            rows.append(rate_row(CAP, STUDY, name, f"{learner} learners, Delta=0", "size",
                                 hits=h, n_replications=R, nominal=ALPHA, claim=claim))
        if share in (1.0, 0.05):
            P = cfg["power"]
            hits = _rates(root, (learner, "alt"), P, cfg["chunk"], mu_a, mu_b, share,
                          cfg["flips"])
            for name, h in hits.items():
                if name.startswith("corrected"):
                    rows.append(rate_row(CAP, STUDY, name,
                                         f"{learner} learners, Delta={DIFFERENCE:g}", "power",
                                         hits=h, n_replications=P, nominal=ALPHA,
                                         claim="documented"))
    rows += _light_rows(root, cfg)
    return pd.DataFrame(rows, columns=list(COLUMNS))
