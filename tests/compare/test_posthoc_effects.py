"""Per-pair statistic and effect sizes (mean difference, matched-pairs rank-biserial) of the
post-hoc tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from replikit.compare import bonferroni_dunn_test, effect_magnitude, nemenyi_test, wilcoxon_holm
from replikit.compare.multiple import EFFECT_COLUMNS, _pair_effects


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_effects_against_scipy(seed):
    rng = np.random.default_rng(seed)
    x = np.round(rng.normal(size=11), 1)       # rounding makes ties and zero differences
    y = np.round(rng.normal(size=11) * 0.5, 1)
    e = _pair_effects(x, y, 0.9)
    d = x - y
    n = d.size
    # the rank-biserial is (R+ - R-) / (n (n + 1) / 2) with scipy's zero-split R+
    r_plus = stats.wilcoxon(d, zero_method="zsplit", alternative="greater").statistic
    assert e["rank_biserial"] == pytest.approx((2 * r_plus - n * (n + 1) / 2)
                                               / (n * (n + 1) / 2), rel=1e-12)
    ci = stats.ttest_rel(x, y).confidence_interval(0.9)
    assert e["mean_difference_ci_low"] == pytest.approx(ci.low, rel=1e-10)
    assert e["mean_difference_ci_high"] == pytest.approx(ci.high, rel=1e-10)
    assert e["rank_biserial_ci_low"] <= e["rank_biserial"] <= e["rank_biserial_ci_high"]
    assert -1 <= e["rank_biserial_ci_low"] and e["rank_biserial_ci_high"] <= 1
    assert e["rank_biserial_magnitude"] == effect_magnitude(e["rank_biserial"], "cliffs_delta")
    # antisymmetry
    f = _pair_effects(y, x, 0.9)
    assert f["rank_biserial"] == pytest.approx(-e["rank_biserial"])
    assert f["rank_biserial_ci_low"] == pytest.approx(-e["rank_biserial_ci_high"])


def test_tables_carry_statistic_pvalue_and_effects():
    rng = np.random.default_rng(4)
    t = pd.DataFrame(rng.normal(size=(10, 3)) + [0, 0.5, 1.0], columns=list("abc"))
    for frame in (nemenyi_test(t).to_frame(), wilcoxon_holm(t),
                  bonferroni_dunn_test(t, control="a").comparisons):
        assert {"statistic", "pvalue_adjusted", "n", *EFFECT_COLUMNS} <= set(frame)
        assert frame["rank_biserial_magnitude"].isin(
            ["negligible", "small", "medium", "large"]).all()
    text = str(nemenyi_test(t))
    assert "rank-biserial" in text and "mean difference" in text


def _coverage(n, mu, reps, rng):
    theta = 2 * stats.norm.cdf(mu * np.sqrt(2)) - 1   # P(D1 + D2 > 0) - P(D1 + D2 < 0)
    hit_r = hit_m = 0
    for _ in range(reps):
        d = rng.normal(mu, 1.0, size=n)
        e = _pair_effects(d, np.zeros(n))
        hit_r += e["rank_biserial_ci_low"] <= theta <= e["rank_biserial_ci_high"]
        hit_m += e["mean_difference_ci_low"] <= mu <= e["mean_difference_ci_high"]
    return hit_r / reps, hit_m / reps


@pytest.mark.parametrize(("n", "mu"), [(10, 0.0), (20, 0.8)])
def test_interval_coverage(n, mu):
    # 400 replicates: 0.95 +- 3 binomial SEs (0.033); the full grid is in docs/compare.md
    rb, md = _coverage(n, mu, 400, np.random.default_rng(n))
    assert abs(rb - 0.95) < 0.04 and abs(md - 0.95) < 0.035
