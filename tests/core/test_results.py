import math

import numpy as np
import pytest
from scipy import stats

from replikit.errors import ParameterError
from replikit.results import ConfidenceInterval, TestResult, get_pvalue


def _ttest_result(x, alternative="two-sided"):
    res = stats.ttest_1samp(x, 0.0, alternative=alternative)
    se = np.std(x, ddof=1) / np.sqrt(len(x))
    return res, TestResult(statistic=res.statistic, pvalue=res.pvalue, df=len(x) - 1,
                           estimate=float(np.mean(x)), se=se, alternative=alternative,
                           method="one-sample t")


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
def test_interval_matches_scipy_ttest(alternative, level):
    x = np.random.default_rng(1).normal(0.3, 1, 25)
    ref, ours = _ttest_result(x, alternative)
    lo, hi = ref.confidence_interval(level)
    ci = ours.confidence_interval(level)
    assert ci.low == pytest.approx(lo, rel=1e-12, abs=1e-12) or (math.isinf(lo) and math.isinf(ci.low))
    assert ci.high == pytest.approx(hi, rel=1e-12, abs=1e-12) or (math.isinf(hi) and math.isinf(ci.high))


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_get_pvalue_matches_scipy(alternative):
    x = np.random.default_rng(2).normal(0.2, 1, 30)
    ref = stats.ttest_1samp(x, 0.0, alternative=alternative)
    p = get_pvalue(ref.statistic, stats.t(len(x) - 1), alternative)
    assert p == pytest.approx(ref.pvalue, rel=1e-12)


def test_normal_interval_when_df_missing():
    r = TestResult(statistic=2.0, pvalue=0.05, df=None, estimate=1.0, se=0.5)
    lo, hi = r.confidence_interval(0.95)
    assert lo == pytest.approx(1 - 1.959963984540054 * 0.5)
    assert hi == pytest.approx(1 + 1.959963984540054 * 0.5)


def test_to_frame_columns_and_str():
    x = np.arange(10.0)
    _, r = _ttest_result(x)
    f = r.to_frame()
    assert list(f.columns[:9]) == ["method", "estimate", "se", "ci_low", "ci_high",
                                   "confidence_level", "statistic", "df", "pvalue"]
    assert len(f) == 1
    assert "one-sample t" in str(r) and "p =" in str(r)


def test_interval_validation_and_frozen():
    r = TestResult(statistic=1.0, pvalue=0.3, df=5, estimate=0.1, se=0.1)
    for bad in (0, 1, 1.5, -0.1):
        with pytest.raises(ParameterError, match="confidence_level"):
            r.confidence_interval(bad)
    with pytest.raises(AttributeError):
        r.pvalue = 0.2  # frozen


def test_confidence_interval_type():
    ci = ConfidenceInterval(0.1, 0.5)
    low, high = ci
    assert (low, high) == (0.1, 0.5)
    assert 0.3 in ci and 0.6 not in ci
    assert ci.width == pytest.approx(0.4)
