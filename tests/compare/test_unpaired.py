"""Unpaired comparisons: the Welch-type corrected resampled t and Welch's t.

References: scipy.stats.ttest_ind(equal_var=False) for the uncorrected case (ratio 0), the
hand formula of the corrected variance with Welch–Satterthwaite df, and a small size
simulation (benchmarks/testset_calibration.py for the recorded one).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from replikit.compare import unpaired_corrected_ttest, welch_satterthwaite, welch_ttest
from replikit.errors import DataError, ParameterError


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_ratio_zero_and_welch_equal_scipy(alternative):
    rng = np.random.default_rng(0)
    for _ in range(5):
        xa, xb = rng.normal(0.8, 0.02, 12), rng.normal(0.79, 0.04, 17)
        ref = stats.ttest_ind(xa, xb, equal_var=False, alternative=alternative)
        for r in (welch_ttest(xa, xb, alternative=alternative),
                  unpaired_corrected_ttest(xa, xb, ratio=0, alternative=alternative)):
            assert r.statistic == pytest.approx(ref.statistic, rel=1e-12)
            assert r.pvalue == pytest.approx(ref.pvalue, rel=1e-10)
            assert r.df == pytest.approx(ref.df, rel=1e-12)
        ci = welch_ttest(xa, xb).confidence_interval(0.9)
        ref_ci = stats.ttest_ind(xa, xb, equal_var=False).confidence_interval(0.9)
        assert (ci.low, ci.high) == pytest.approx((ref_ci.low, ref_ci.high), rel=1e-10)


def test_corrected_variance_and_df_by_hand():
    xa = np.array([0.80, 0.83, 0.79, 0.82, 0.81])
    xb = np.array([0.77, 0.80, 0.78, 0.74, 0.79, 0.76, 0.78])
    r = unpaired_corrected_ttest(xa, xb, n_train=(80, 120), n_test=(20, 60))
    va = xa.var(ddof=1) * (1 / 5 + 20 / 80)
    vb = xb.var(ddof=1) * (1 / 7 + 60 / 120)
    df = (va + vb) ** 2 / (va**2 / 4 + vb**2 / 6)
    t = (xa.mean() - xb.mean()) / math.sqrt(va + vb)
    assert r.se == pytest.approx(math.sqrt(va + vb))
    assert r.df == pytest.approx(df) and r.statistic == pytest.approx(t)
    assert r.pvalue == pytest.approx(2 * stats.t.sf(abs(t), df))
    same = unpaired_corrected_ttest(xa, xb, ratio=(0.25, 0.5))
    assert same.pvalue == pytest.approx(r.pvalue)
    assert welch_satterthwaite(va, vb, 4, 6) == pytest.approx(df)
    # symmetric: swapping the sides negates the statistic
    s = unpaired_corrected_ttest(xb, xa, n_train=(120, 80), n_test=(60, 20))
    assert s.statistic == pytest.approx(-r.statistic) and s.pvalue == pytest.approx(r.pvalue)


def test_validation_names_the_parameter():
    x = [0.8, 0.81, 0.79]
    with pytest.raises(ParameterError, match="`n_train` and `n_test`"):
        unpaired_corrected_ttest(x, x)
    with pytest.raises(ParameterError, match="either `ratio`"):
        unpaired_corrected_ttest(x, x, ratio=0.1, n_train=90, n_test=10)
    with pytest.raises(ParameterError, match="`n_train` must be > 0"):
        unpaired_corrected_ttest(x, x, n_train=(0, 90), n_test=10)
    with pytest.raises(ParameterError, match="`ratio` must be a number or a pair"):
        unpaired_corrected_ttest(x, x, ratio=(0.1, 0.2, 0.3))
    with pytest.raises(DataError, match="`scores_b` must have at least 2"):
        welch_ttest(x, [0.8])


def test_result_contract():
    from _checks import check_result

    r = unpaired_corrected_ttest([0.8, 0.82, 0.79], [0.77, 0.78, 0.8, 0.76], n_train=90,
                                 n_test=10, a="rf", b="lr", metric="accuracy")
    check_result(r, plot=False)
    assert r.test == "unpaired_corrected_t" and "rf - lr" in str(r)


def _mse_scores(rng, n=120, splits=10, p=3):
    x = np.column_stack([np.ones(n), rng.standard_normal((n, p))])
    y = x[:, 1:] @ np.ones(p) + 1.5 * rng.standard_normal(n)
    out = []
    for _ in range(splits):
        idx = rng.permutation(n)
        tr, te = idx[:80], idx[80:]
        beta = np.linalg.lstsq(x[tr], y[tr], rcond=None)[0]
        out.append(np.mean((y[te] - x[te] @ beta) ** 2))
    return np.array(out)


def test_size_corrected_near_alpha_welch_far_above():
    """One learner, two independent samples of one population, 10 random 80:40 subsamples
    each (no true difference), 200 data sets: corrected within 0.05 + 3 SE; the uncorrected
    Welch test far above (about .5 in the recorded study)."""
    rng = np.random.default_rng(3)
    corrected = welch = 0
    reps = 200
    for _ in range(reps):
        sa, sb = _mse_scores(rng), _mse_scores(rng)
        corrected += unpaired_corrected_ttest(sa, sb, n_train=80, n_test=40).pvalue <= 0.05
        welch += welch_ttest(sa, sb).pvalue <= 0.05
    assert corrected / reps <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / reps)
    assert welch / reps > 0.25
