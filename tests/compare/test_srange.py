"""The vectorised studentized range (k normals, infinite df) against closed forms and scipy."""

from __future__ import annotations

from math import comb

import numpy as np
import pytest
from scipy import special, stats

from replikit.compare._kernels import range_cdf, range_isf, range_sf

KS = [2, 3, 4, 7, 10, 25, 50, 120, 200, 1000]


def test_k2_is_erfc_closed_form_into_the_far_tail():
    # the range of two standard normals is |X1 - X2| ~ |N(0, 2)|: P(R > q) = erfc(q / 2)
    q = np.concatenate([np.linspace(0.0, 12.0, 121), [15.0, 20.0, 30.0, 40.0, 50.0]])
    exact = special.erfc(q / 2.0)
    got = range_sf(q, 2)
    assert exact[-1] < 1e-270
    np.testing.assert_allclose(got, exact, rtol=1e-12, atol=0.0)


@pytest.mark.parametrize("k", KS)
def test_matches_scipy_studentized_range(k):
    # tolerance: 1e-8 relative + 1e-14 absolute — scipy computes 1 - cdf, so its own relative
    # accuracy is lost below about 1e-7 (absolute error up to ~1e-14)
    q = np.concatenate([np.linspace(0.02, 8.0, 25), [9.0, 10.0, 12.0]])
    ref = stats.studentized_range.sf(q, k, np.inf)
    got = range_sf(q, k)
    np.testing.assert_allclose(got, ref, rtol=1e-8, atol=1e-14)
    # the cdf is 1 - sf here: absolute accuracy only
    np.testing.assert_allclose(range_cdf(q, k), stats.studentized_range.cdf(q, k, np.inf),
                               rtol=0.0, atol=1e-11)


@pytest.mark.parametrize("k", [3, 10, 50, 200])
def test_far_tail_approaches_bonferroni_asymptote(k):
    # for large q the range exceeds q through one pair: P(R > q) ~ C(k, 2) erfc(q / 2)
    for q in (40.0, 50.0):
        assert range_sf(q, k) / (comb(k, 2) * special.erfc(q / 2.0)) == pytest.approx(1.0, abs=1e-10)
    tail = range_sf(np.linspace(10.0, 50.0, 41), k)
    assert np.all(np.diff(tail) < 0) and np.all(tail > 0)


@pytest.mark.parametrize("k", [2, 4, 10, 50, 200, 1000])
@pytest.mark.parametrize("alpha", [0.1, 0.05, 0.01, 0.001])
def test_quantile_matches_scipy_and_inverts_sf(k, alpha):
    q = range_isf(alpha, k)
    assert q == pytest.approx(stats.studentized_range.ppf(1.0 - alpha, k, np.inf), abs=1e-11)
    assert range_sf(q, k) == pytest.approx(alpha, rel=1e-12)


def test_demsar_table_5a():
    # Demšar (2006), Table 5a: q_0.05 = 1.960, 2.343, 2.569, ..., 3.164 (k = 2..10), / sqrt 2
    table = [1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164]
    got = [range_isf(0.05, k) / np.sqrt(2.0) for k in range(2, 11)]
    np.testing.assert_allclose(got, table, atol=1e-3)  # the table has 3 decimals (some cut)


def test_edges_shapes_and_blocks():
    q = np.array([[-1.0, 0.0, np.nan], [np.inf, 1.0, 2.0]])
    got = range_sf(q, 5)
    assert got.shape == (2, 3)
    assert got[0, 0] == 1.0 and got[0, 1] == 1.0 and np.isnan(got[0, 2]) and got[1, 0] == 0.0
    many = np.linspace(0.0, 9.0, 500)
    np.testing.assert_allclose(range_sf(many, 30, max_block=1000), range_sf(many, 30), rtol=1e-14)
    assert range_sf(80.0, 3) == 0.0 and not np.signbit(range_sf(80.0, 3))
    with pytest.raises(ValueError):
        range_isf(1.0, 3)
