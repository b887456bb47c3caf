"""The compare validity study: its splits, its learners and its rows."""

import numpy as np
import pytest
from scipy import stats

from replikit._calibration import COLUMNS
from replikit.compare import Paired, corrected_repeated_kfold_ttest, paired_ttest_5x2cv
from replikit.compare import validity as cv
from replikit.errors import ParameterError


def test_masks_are_the_schemes():
    rng = np.random.default_rng(0)
    test, train = cv._masks(rng, 3)
    n = cv.N_ROWS
    assert test.shape == (3, 121, n) and np.all(train == ~test)
    sizes = test.sum(-1)
    assert np.all(sizes[:, cv._KFOLD] == 30) and np.all(sizes[:, cv._HOLDOUT] == 30)
    assert np.all(sizes[:, cv._FIVE] == 150) and np.all(sizes[:, cv._ONE] == 100)
    # each 10-fold repeat (partitions 10 r .. 10 r + 9) partitions the rows; so does each
    # 5x2 repeat
    kfold = test[:, cv._KFOLD].reshape(3, 10, 10, n)   # (R, repeat, fold, n)
    assert np.all(kfold.sum(2) == 1)
    five = test[:, cv._FIVE].reshape(3, 5, 2, n)
    assert np.all(five.sum(2) == 1)


def test_deterministic_learner_is_the_nearest_centroid():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 40))
    y = rng.random((2, 40)) < 0.5
    train = np.zeros((2, 1, 40), bool)
    train[:, :, :30] = True
    err = cv._row_errors(x, y, train, rng, 1.0)
    for i in range(2):
        m1, m0 = x[i, :30][y[i, :30]].mean(), x[i, :30][~y[i, :30]].mean()
        pred = np.sign(m1 - m0) * (x[i] - (m1 + m0) / 2) > 0
        np.testing.assert_array_equal(err[i, 0], pred != y[i])
    # a randomized fit depends on its draw; a deterministic one does not
    a = cv._row_errors(x, y, train, np.random.default_rng(2), 0.3)
    b = cv._row_errors(x, y, train, np.random.default_rng(3), 0.3)
    assert not np.array_equal(a, b)


def test_chunk_pvalues_equal_the_public_tests():
    """The vectorised p-values are those of replikit's public tests on the same fold scores."""
    rng = np.random.default_rng(4)
    mu = float(-stats.norm.ppf(0.3))
    # rebuild one dataset's fold differences with the chunk's own draws
    state = rng.bit_generator.state
    p = cv._chunk(rng, 2, mu, mu, 1.0, 19)
    rng.bit_generator.state = state
    y = rng.random((2, cv.N_ROWS)) < 0.5
    z = rng.standard_normal((2, cv.N_ROWS, 2))
    sgn = np.where(y, 1.0, -1.0)
    x1 = sgn * mu + z[..., 0]
    x2 = sgn * mu + cv.RHO * z[..., 0] + np.sqrt(1 - cv.RHO ** 2) * z[..., 1]
    test, train = cv._masks(rng, 2)
    ea = cv._row_errors(x1, y, train, rng, 1.0)
    eb = cv._row_errors(x2, y, train, rng, 1.0)
    ra, rb = cv._fold_rates(ea, test), cv._fold_rates(eb, test)
    for i in range(2):
        kf = corrected_repeated_kfold_ttest(Paired(ra[i, :100].reshape(10, 10),
                                                   rb[i, :100].reshape(10, 10)), ratio=1 / 9)
        assert p["corrected repeated k-fold t (10x10 CV)"][i] == pytest.approx(kf.pvalue)
        five = paired_ttest_5x2cv(Paired(ra[i, 110:120].reshape(5, 2),
                                         rb[i, 110:120].reshape(5, 2)))
        assert p["5x2cv paired t"][i] == pytest.approx(five.pvalue)


def test_validity_rows(monkeypatch):
    monkeypatch.setitem(cv.SIZES, "small", {"datasets": 6, "power": 4, "chunk": 3,
                                            "flips": 19, "light": 6})
    t = cv.validity(size="small", random_state=0)
    assert list(t.columns) == list(COLUMNS) and set(t["capability"]) == {"compare"}
    # the card light: false green at the tolerance and at no difference, and power
    light = t[t["study"].str.startswith("comparison card light")]
    assert set(light.loc[light["quantity"] == "size", "claim"]) == {"calibrated"}
    assert len(light[light["quantity"] == "size"]) == 2 * (1 + len(cv.LIGHT_TOLERANCES))
    assert not t[["method", "setting", "quantity"]].duplicated().any()
    naive = t[t["method"].str.startswith("naive")]
    assert set(naive["claim"]) == {"invalid"}
    assert set(t.loc[t["quantity"] == "power", "claim"]) == {"documented"}
    assert t.equals(cv.validity(size="small", random_state=0))
    with pytest.raises(ParameterError):
        cv.validity(size="medium")
