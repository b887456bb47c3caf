"""Distance replicability, dominance, benchmark comparison, local replicability (Parmigiani 2023)."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from replikit.errors import DataError
from replikit.multistudy import (
    benchmark_comparison,
    distance_matrix,
    dominance,
    energy_distance,
    from_arrays,
    local_replicability,
    study_utilities,
    total_variation,
)


def _from_counts(studies):
    y, p, s = [], [], []
    for name, cells in studies.items():
        for (phi, yy), c in cells.items():
            y += [yy] * c
            p += [phi] * c
            s += [name] * c
    return from_arrays(y, p, s)


def test_paper_section5_example_user_exact_but_not_distance_replicable():
    # Parmigiani (2023), sec. 5: f01 and f10 equal, f00 + f11 equal, f00 different.
    d = _from_counts({"S1": {(0, 0): 40, (1, 1): 40, (0, 1): 10, (1, 0): 10},
                      "S2": {(0, 0): 60, (1, 1): 20, (0, 1): 10, (1, 0): 10}})
    for u01, u10 in [(-1, -1), (-5, -1), (-0.3, -7)]:
        su = study_utilities(d, f"cost:{u01},{u10}")
        assert su.smallest_tolerance() == pytest.approx(0.0, abs=1e-15)  # exact, utility (3)
    dm = distance_matrix(d)
    assert dm.max == pytest.approx(0.5 * (0.2 + 0.2))  # |f00| and |f11| differ by .2 each
    assert not dm.is_replicable(0.0)
    # accuracy too is exactly replicable, as the equal correct-prediction totals imply
    assert study_utilities(d, "accuracy").smallest_tolerance() == pytest.approx(0.0, abs=1e-15)


def test_exact_distance_replicability_implies_user_replicability():
    # a study formed by b = 3 copies of another (sec. 5 argument)
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 30)
    p = rng.integers(0, 2, 30)
    d = from_arrays(np.concatenate([y, np.tile(y, 3)]), np.concatenate([p, np.tile(p, 3)]),
                    ["a"] * 30 + ["b"] * 90)
    assert distance_matrix(d).max == pytest.approx(0.0, abs=1e-15)
    for u in ["accuracy", "cost:-3,-1", "cost:-1,-9"]:
        assert study_utilities(d, u).smallest_tolerance() == pytest.approx(0.0, abs=1e-15)


def test_total_variation_closed_forms():
    assert total_variation([0.2, 0.3, 0.5], [0.2, 0.3, 0.5]) == 0
    assert total_variation([1, 0], [0, 1]) == 1
    # Bernoulli(p) vs Bernoulli(q): |p - q|
    assert total_variation([0.7, 0.3], [0.4, 0.6]) == pytest.approx(0.3)
    # Binomial(2, .5) vs uniform on {0, 1, 2}
    assert total_variation([0.25, 0.5, 0.25], [1 / 3] * 3) == pytest.approx(1 / 6)
    with pytest.raises(DataError, match="probability"):
        total_variation([0.5, 0.6], [0.5, 0.5])


def test_energy_distance_matches_scipy_in_one_dimension():
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=70), rng.normal(0.5, 2, size=45)
    assert energy_distance(a, b) == pytest.approx(stats.energy_distance(a, b), rel=1e-10)
    assert energy_distance(a, a) == pytest.approx(0.0, abs=1e-12)


def _random_data(seed=0, K=4, n=50, discrete=True):
    rng = np.random.default_rng(seed)
    s = np.repeat([f"s{k}" for k in range(K)], n)
    if discrete:
        y = rng.integers(0, 2, K * n)
        p = np.where(rng.random(K * n) < 0.7, y, 1 - y)
    else:
        y = rng.normal(size=K * n)
        p = y + rng.normal(size=K * n)
    return y, p, s


@pytest.mark.parametrize("discrete", [True, False])
def test_distance_matrix_symmetric_zero_diagonal_bounded(discrete):
    y, p, s = _random_data(discrete=discrete)
    m = distance_matrix(from_arrays(y, p, s)).matrix
    assert np.allclose(m, m.T) and np.all(np.diag(m) == 0)
    assert np.all((m >= 0) & (m <= 1))
    e = distance_matrix(from_arrays(y.astype(float), p.astype(float), s), distance="energy").matrix
    assert np.allclose(e, e.T) and np.all(np.diag(e) == 0) and np.all(e >= 0)


def test_invariance_to_relabeling_studies_and_permuting_rows():
    y, p, s = _random_data(seed=2)
    base = from_arrays(y, p, s)
    su, dm = study_utilities(base, "cost:-4,-1"), distance_matrix(base)
    rename = {"s0": "z", "s1": "y", "s2": "x", "s3": "w"}
    order = np.random.default_rng(5).permutation(len(y))
    other = from_arrays(y[order], p[order], np.array([rename[v] for v in s[order]]))
    su2, dm2 = study_utilities(other, "cost:-4,-1"), distance_matrix(other)
    assert su2.smallest_tolerance() == pytest.approx(su.smallest_tolerance())
    assert su2.smallest_tolerance("relative") == pytest.approx(su.smallest_tolerance("relative"))
    assert dm2.max == pytest.approx(dm.max)
    # the matrices are the same up to the relabeling
    m1 = su.matrix().rename(index=rename, columns=rename)
    m2 = su2.matrix().loc[m1.index, m1.columns]
    assert np.allclose(m1.to_numpy(), m2.to_numpy())


def test_dominance_definition_and_regions():
    s = ["a"] * 4 + ["b"] * 4
    y = [1] * 8
    phi = study_utilities(from_arrays(y, [1, 1, 1, 0, 1, 1, 0, 0], s))  # .75, .5
    better_rep = study_utilities(from_arrays(y, [1, 1, 1, 1, 1, 1, 1, 0], s))  # 1, .75
    better_less = study_utilities(from_arrays(y, [1, 1, 1, 1, 1, 0, 0, 0], s))  # 1, .25
    r = dominance(phi, better_rep)
    assert r.b_dominates_a and not r.a_dominates_b and r.region == "B"
    r2 = dominance(phi, better_less)
    assert not r2.b_dominates_a and r2.region == "D"
    worse_rep = study_utilities(from_arrays(y, [1, 1, 0, 0, 1, 1, 0, 0], s))  # .5, .5
    r3 = dominance(phi, worse_rep)
    assert r3.region == "A" and not r3.a_dominates_b and not r3.b_dominates_a
    better_both_less = study_utilities(from_arrays(y, [1, 1, 1, 1, 1, 1, 0, 0], s))  # 1, .5
    r4 = dominance(phi, better_both_less)
    assert r4.region == "C" and not r4.b_dominates_a
    with pytest.raises(DataError, match="same studies"):
        dominance(phi, study_utilities(from_arrays(y, y, ["a"] * 4 + ["c"] * 4)))


def test_benchmark_comparison_matches_scipy_ttest():
    rng = np.random.default_rng(4)
    y = rng.normal(size=40)
    p = y + rng.normal(size=40)
    d = from_arrays(y, p, ["only"] * 40)
    r = benchmark_comparison(d, -1.2, "squared", tolerance=0.5)
    u = -(y - p) ** 2
    t = stats.ttest_1samp(u, -1.2)
    row = r.table.iloc[0]
    assert row.statistic == pytest.approx(t.statistic)
    assert row.pvalue == pytest.approx(t.pvalue)
    ci = t.confidence_interval(0.95)
    assert row.ci_low == pytest.approx(ci.low + 1.2)
    # TOST p-value: the larger of the two one-sided p-values
    lo = stats.ttest_1samp(u, -1.2 - 0.5, alternative="greater").pvalue
    hi = stats.ttest_1samp(u, -1.2 + 0.5, alternative="less").pvalue
    assert row.pvalue_equivalence == pytest.approx(max(lo, hi))


def test_local_replicability_and_subgroup():
    y = np.array([1, 1, 0, 0, 1, 1, 0, 0])
    p = np.array([1, 1, 0, 1, 1, 0, 0, 0])
    s = np.array(["a"] * 4 + ["b"] * 4)
    g = np.array(["x", "x", "z", "z"] * 2)
    d = from_arrays(y, p, s)
    tab = local_replicability(d, g).set_index("group")
    # group x: a = 1, b = .5 ; group z: a = .5, b = 1
    assert tab.loc["x", "smallest_tolerance_absolute"] == pytest.approx(0.5)
    assert tab.loc["z", "smallest_tolerance_absolute"] == pytest.approx(0.5)
    # globally, both studies have accuracy .75: replicable overall, not locally
    assert study_utilities(d).smallest_tolerance() == 0
    sub = study_utilities(d, subgroup=g == "x")
    assert sub.utility.tolist() == [1.0, 0.5]
    with pytest.raises(DataError, match="no unit"):
        study_utilities(d, subgroup=np.zeros(8, bool))


def test_binned_tv_of_continuous_data_uses_pooled_quantiles():
    y, p, s = _random_data(discrete=False, K=2, n=500)
    dm = distance_matrix(from_arrays(y, p, s), bins=4)
    assert "4 quantile bins" in dm.cells
    f = dm.frequencies.to_numpy()
    assert f.shape == (2, 16) and np.allclose(f.sum(1), 1)
    pd.testing.assert_index_equal(dm.to_frame().index, pd.Index(["s0", "s1"]))


def test_subgroup_from_a_predictions_column_and_row_mask():
    f = pd.DataFrame({"study": ["a"] * 4 + ["b"] * 4, "model": "m", "repeat": 0, "fold": 0,
                      "row": [7, 6, 5, 4, 3, 2, 1, 0], "y_true": [1, 1, 0, 0, 1, 1, 0, 0],
                      "y_pred": [1, 1, 0, 1, 1, 0, 0, 0],
                      "sex": ["f", "f", "m", "m", "f", "f", "m", "m"]})
    by_col = study_utilities(f, subgroup=lambda d: d.extra["sex"].to_numpy() == "f")
    assert by_col.utility.tolist() == [1.0, 0.5]
    # a mask over the data rows, indexed by the `row` column
    mask = np.zeros(8, bool)
    mask[[7, 6, 3, 2]] = True
    assert study_utilities(f, subgroup=mask).utility.tolist() == [1.0, 0.5]
    tab = local_replicability(f, "sex").set_index("group")
    assert tab.loc["m", "utility_min"] == 0.5 and tab.loc["m", "utility_max"] == 1.0
