"""One meta-analysis without paying for what it does not read.

``meta_analysis`` leaves the Q-profile interval of τ² (Viechtbauer 2007) to its first read, and
the engine fits one meta-analysis on scalars instead of through its stacked code. These tests
check that nothing a user sees changed: the interval is there wherever the result shows it
(attribute, ``str``, ``repr``, ``to_frame``, ``to_dict``, equality, pickling), it solves the
Q-profile equations, and the one-problem paths of the engine give the same bits as the stacked
paths they shortcut.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle

import numpy as np
import pytest
from scipy import stats

from replikit._format import interval as interval_text
from replikit.replicate import MetaResult, _rma, meta_analysis, q_statistic, tau2_qprofile_ci
from replikit.results import ConfidenceInterval

Y = np.array([0.1, 0.5, 0.9, 0.3, 0.45, 0.2])
V = np.array([0.01, 0.02, 0.01, 0.03, 0.015, 0.02])


@pytest.fixture
def qprofile_calls(monkeypatch):
    """Count the engine's Q-profile root findings."""
    calls = []
    real = _rma.qprofile

    def counted(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(_rma, "qprofile", counted)
    return calls


def test_the_interval_is_computed_on_first_read_only(qprofile_calls):
    res = meta_analysis(Y, V, tau2_method="REML")
    assert qprofile_calls == []
    first = res.tau2_ci
    assert len(qprofile_calls) == 1
    assert res.tau2_ci is first and len(qprofile_calls) == 1  # kept, not recomputed
    assert (first.low, first.high) == tuple(tau2_qprofile_ci(Y, V))


def test_the_interval_solves_the_q_profile_equations():
    """Viechtbauer (2007): Q(low) = chi2_{k-1}(0.975) and Q(high) = chi2_{k-1}(0.025)."""
    ci = meta_analysis(Y, V, tau2_method="DL").tau2_ci
    k = Y.size
    assert 0 < ci.low < ci.high
    assert float(q_statistic(Y, V, ci.low)) == pytest.approx(stats.chi2.ppf(0.975, k - 1),
                                                             rel=1e-10)
    assert float(q_statistic(Y, V, ci.high)) == pytest.approx(stats.chi2.ppf(0.025, k - 1),
                                                              rel=1e-10)


@pytest.mark.parametrize("view", ["str", "repr", "to_frame", "to_dict"])
def test_every_view_shows_the_interval_unread(view):
    ref = tau2_qprofile_ci(Y, V)
    res = meta_analysis(Y, V)
    if view == "str":
        assert f"Q-profile 95% CI {interval_text(ref.low, ref.high, 4)}" in str(res)
    elif view == "repr":
        assert f"tau2_ci=ConfidenceInterval(low={ref.low!r}, high={ref.high!r})" in repr(res)
    elif view == "to_frame":
        row = res.to_frame().iloc[0]
        assert (row["tau2_ci_low"], row["tau2_ci_high"]) == (ref.low, ref.high)
    else:
        data = res.to_dict()
        assert data["tau2_ci"] == [ref.low, ref.high]
        assert list(data) == [f.name for f in dataclasses.fields(MetaResult)]


def test_equality_hash_pickle_and_copies_see_the_interval():
    a, b = meta_analysis(Y, V), meta_analysis(Y, V)
    assert a == b and hash(a) == hash(b)
    c = meta_analysis(Y, V)
    restored = pickle.loads(pickle.dumps(c))  # pickled before anything read the interval
    assert restored == a and restored.tau2_ci == a.tau2_ci
    assert copy.deepcopy(meta_analysis(Y, V)).tau2_ci == a.tau2_ci
    assert dataclasses.replace(meta_analysis(Y, V), tau2=0.5).tau2_ci == a.tau2_ci
    assert meta_analysis(Y, V) != meta_analysis(Y * 2, V)


def test_a_given_interval_is_kept_and_the_result_stays_frozen(qprofile_calls):
    given = ConfidenceInterval(1.0, 2.0)
    res = dataclasses.replace(meta_analysis(Y, V), tau2_ci=given)
    assert res.tau2_ci == given and qprofile_calls == []
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.tau2_ci = None


def test_heterogeneity_and_fixed_effect_results_keep_their_intervals():
    fe = meta_analysis(Y, V, tau2_method="FE")
    assert fe.tau2_ci == tau2_qprofile_ci(Y, V)  # the interval does not depend on the model
    het = meta_analysis(Y, V).heterogeneity()
    assert het.tau2_ci == meta_analysis(Y, V).tau2_ci


# --- the one-problem paths of the engine against its stacked paths ---------------------------

def _problems():
    rng = np.random.default_rng(7)
    out = []
    for k in (2, 3, 5, 12, 40):
        for spread in (0.0, 0.05, 0.5):
            v = rng.uniform(0.001, 0.05, k) * 10 ** rng.uniform(-2, 2, k)
            out.append((rng.normal(0.3, spread, k) + rng.normal(0, np.sqrt(v)), v))
    out.append((np.full(6, 0.4), np.full(6, 0.01)))  # identical effects: tau2 = 0
    out.append((np.array([0.0, 0.01, 0.02, 3.0]), np.array([0.01, 0.01, 0.01, 0.001])))
    return out


@pytest.mark.parametrize("method", ["FE", "DL", "HE", "HS", "SJ", "ML", "REML"])
@pytest.mark.parametrize("interval", ["wald", "knha"])
def test_one_fit_equals_the_same_fit_in_a_stack(method, interval):
    """Bit for bit: the scalar Fisher scoring (with its step halving) and the unbroadcast fit
    do what the stacked code does for every problem of a stack."""
    for y, v in _problems():
        one = _rma.fit(y, v, None, method=method, interval=interval)
        stack = _rma.fit(np.stack([y, y[::-1]]), np.stack([v, v[::-1]]), None, method=method,
                         interval=interval)
        for name in ("beta", "vb", "tau2", "qe", "trp0", "rss", "w"):
            assert np.array_equal(getattr(one, name), getattr(stack, name)[0]), (method, name)


def test_one_q_root_equals_brent_on_the_q_statistic():
    """Paule-Mandel and the Q-profile bounds of one problem: the root of Q(tau2) = target
    (Brent's method to 1e-14), and 0 where Q(0) is already below the target."""
    from scipy import optimize

    for y, v in _problems():
        k = y.size
        for target in (k - 1.0, stats.chi2.ppf(0.975, k - 1), stats.chi2.ppf(0.025, k - 1)):
            root = float(_rma.qe_root(y, v, None, None, target))
            if float(q_statistic(y, v, 0.0)) <= target:
                assert root == 0.0
                continue
            ref = optimize.brentq(lambda t, y=y, v=v, target=target:
                                  float(q_statistic(y, v, t)) - target, 0.0, 1e6,
                                  xtol=1e-15, rtol=1e-14)
            assert root == pytest.approx(ref, rel=1e-12, abs=1e-15)
            stacked = _rma.qe_root(np.stack([y, y]), np.stack([v, v]), None, None, target)
            assert root == pytest.approx(float(stacked[0]), rel=1e-12, abs=1e-13)  # bisection


def test_i2_h2_of_one_model_equals_the_array_path():
    for q, df, trp0, tau2 in ((33.17, 3, 150.0, 0.11), (0.5, 4, 80.0, 0.0), (0.0, 2, 1.0, 0.0),
                              (12.0, 11, 1e-3, 2.5)):
        for fixed in (True, False):
            one = _rma.i2_h2(q, df, trp0, tau2, fixed=fixed)
            arr = _rma.i2_h2(np.array([q]), df, np.array([trp0]), np.array([tau2]), fixed=fixed)
            assert [float(a) for a in one] == [float(a[0]) for a in arr]
