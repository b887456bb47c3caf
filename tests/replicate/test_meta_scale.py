"""Meta-analysis at scale: 100,000 studies in bounded memory, the k^2
diagnostics in blocks or refused clearly, and the memory guard under ``REPLIKIT_MEMORY_LIMIT``."""

import subprocess
import sys
import tracemalloc

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import replikit.replicate._rma  # noqa: F401 - the engine module, for monkeypatching
from replikit.errors import ParameterError, ResourceLimitError
from replikit.replicate import (
    baujat,
    cumulative,
    influence,
    leave_one_out,
    meta_analysis,
    meta_regression,
)
from replikit.replicate._rma import p2_sum as _p2_sum
from replikit.replicate._rma import se_tau2 as _se_tau2
from replikit.replicate.smallstudy import rank_test

INF = sys.modules["replikit.replicate._rma"]


def _data(k, random_state=0):
    rng = np.random.default_rng(random_state)
    v = rng.uniform(0.01, 0.05, k)
    y = 0.3 + rng.normal(0, 0.1, k) + rng.normal(0, np.sqrt(v))
    return y, v


def _projection(w, X):
    """The k x k ``P = W - W X (X'WX)^-1 X' W`` written out (the closed form's reference)."""
    WX = X * w[:, None]
    return np.diag(w) - WX @ np.linalg.inv(X.T @ WX) @ WX.T


@pytest.mark.parametrize("p", [1, 3])
def test_p2_sum_equals_the_explicit_projection(p):
    rng = np.random.default_rng(p)
    k = 25
    X = np.column_stack([np.ones(k)] + [rng.normal(size=k) for _ in range(p - 1)])
    w, a, b = rng.uniform(0.5, 20, k), rng.uniform(0.1, 2, k), rng.uniform(0.1, 2, k)
    P = _projection(w, X)
    assert _p2_sum(w, X) == pytest.approx(np.sum(P * P), rel=1e-12)
    assert _p2_sum(w, X, a, b) == pytest.approx(np.sum(P ** 2 * np.outer(a, b)), rel=1e-12)
    # the batched form (REML scoring over a stack of problems)
    W = rng.uniform(0.5, 20, (4, k))
    got = _p2_sum(W, np.broadcast_to(X, (4, k, p)))
    want = [np.sum(_projection(wi, X) ** 2) for wi in W]
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("method", ["DL", "HS", "HE", "SJ", "REML", "ML", "PM"])
def test_se_tau2_equals_the_k_by_k_formulas(method):
    """metafor's SE of tau2 (the quadratic-form variances) from the explicit P, as before."""
    y, v = _data(30, 2)
    X = np.column_stack([np.ones(30), np.linspace(-1, 1, 30)])
    k, p = X.shape
    t = 0.012
    V = np.diag(v)
    if method in ("DL", "HS"):
        w = 1 / v
        P = _projection(w, X)
        num = 2 * (k - p) + 4 * t * np.trace(P) + 2 * t ** 2 * np.sum(P * P)
        want = np.sqrt(num) / (w.sum() if method == "HS" else np.trace(P))
    elif method == "HE":
        PV = _projection(np.ones(k), X) @ V
        want = np.sqrt(2 * np.sum(PV * PV.T) + 4 * t * np.trace(PV) + 2 * t ** 2 * (k - p)) \
            / (k - p)
    elif method == "SJ":
        tau0 = np.mean((y - y.mean()) ** 2)
        P = _projection(1 / (v + tau0), X)
        PV = P @ V
        want = tau0 / (k - p) * np.sqrt(2 * np.sum(PV * PV.T) + 4 * t * np.sum(PV * P)
                                        + 2 * t ** 2 * np.sum(P * P))
    elif method == "REML":
        want = np.sqrt(2 / np.sum(_projection(1 / (v + t), X) ** 2))
    elif method == "ML":
        want = np.sqrt(2 / np.sum((1 / (v + t)) ** 2))
    else:
        want = np.sqrt(2 * k ** 2 / (k - p)) / np.sum(1 / (v + t))
    assert _se_tau2(y, v, X, method, t) == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("method", ["REML", "SJ"])
def test_100000_studies_in_bounded_memory(method):
    """meta_analysis, the Q-profile CI, heterogeneity() and the prediction interval of 100,000
    studies stay O(k): the k x k projection alone would be 80 GB."""
    y, v = _data(100_000)
    tracemalloc.start()
    try:
        res = meta_analysis(y, v, tau2_method=method)
        het = res.heterogeneity(0.90)
        pi = res.prediction_interval(pi_dist="t(k-2)")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 200 * 2 ** 20, f"peak {peak / 2 ** 20:.0f} MiB"
    assert res.k == 100_000 and np.isfinite(het.se_tau2) and het.se_tau2 > 0
    assert het.tau2_ci.low <= res.tau2 <= het.tau2_ci.high or method == "SJ"  # SJ is biased up
    assert pi.low < res.estimate < pi.high
    # Q-profile: Q(tau2_low) is the chi2 quantile (Viechtbauer 2007)
    from replikit.replicate import q_statistic

    q = q_statistic(y, v, res.tau2_ci.low)
    assert q == pytest.approx(stats.chi2.ppf(0.975, res.k - 1), rel=1e-8)


def test_batched_tau2_over_many_meta_analyses():
    from replikit.replicate import tau2_estimate

    rng = np.random.default_rng(4)
    v = rng.uniform(0.01, 0.05, (2000, 50))
    y = 0.3 + rng.normal(0, 0.1, (2000, 1)) + rng.normal(0, np.sqrt(v))
    tracemalloc.start()
    try:
        t = tau2_estimate(y, v, "REML")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 100 * 2 ** 20
    assert t.shape == (2000,) and np.all(t >= 0)
    assert t[7] == pytest.approx(meta_analysis(y[7], v[7]).tau2, rel=1e-9)


@pytest.mark.parametrize("method", ["REML", "PM", "DL"])
def test_blocked_refits_equal_one_stack(method, monkeypatch):
    """influence, baujat and cumulative fitted one problem at a time equal the single stack."""
    y, v = _data(30, 5)
    x = np.linspace(-1, 1, 30)
    res = meta_analysis(y, v, tau2_method=method)
    reg = meta_regression(y, v, moderators=x, tau2_method=method)

    def frames():
        return [influence(res).to_frame(), influence(reg).to_frame(), baujat(res),
                cumulative(res)]

    whole = frames()
    monkeypatch.setattr(INF, "_BLOCK_BYTES", 1)
    assert INF._block_rows(30, 2) == 1
    blocked = frames()
    for a, b in zip(whole, blocked, strict=True):
        num = a.select_dtypes("number").columns
        np.testing.assert_allclose(b[num].to_numpy(float), a[num].to_numpy(float),
                                   rtol=1e-10, atol=1e-12)


def test_influence_memory_is_bounded_by_the_block(monkeypatch):
    """k = 1,200 refits of 1,200 studies in blocks of 8 MiB: the stack at once needs ~400 MiB."""
    monkeypatch.setattr(INF, "_BLOCK_BYTES", 8 * 2 ** 20)
    y, v = _data(1_200, 6)
    res = meta_analysis(y, v, tau2_method="DL")
    tracemalloc.start()
    try:
        inf = influence(res)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 2 ** 20, f"peak {peak / 2 ** 20:.0f} MiB"
    assert len(inf.table) == 1_200


@pytest.mark.parametrize("fn", [influence, baujat, cumulative, leave_one_out])
def test_refits_refused_above_max_refit_k(fn, monkeypatch):
    monkeypatch.setattr(INF, "MAX_REFIT_K", 40)
    y, v = _data(41)
    with pytest.raises(ParameterError, match="MAX_REFIT_K") as err:
        fn(meta_analysis(y, v))
    assert "41" in str(err.value) and "40" in str(err.value)


def test_100000_studies_influence_refused_clearly():
    y, v = _data(100_000)
    with pytest.raises(ParameterError, match="20,000"):
        influence(meta_analysis(y, v, tau2_method="DL"))


def test_memory_guard_under_replikit_memory_limit(monkeypatch):
    monkeypatch.setenv("REPLIKIT_MEMORY_LIMIT", "1M")
    y, v = _data(500)
    res = meta_analysis(y, v)
    with pytest.raises(ResourceLimitError, match="number of studies"):
        influence(res)
    monkeypatch.setenv("REPLIKIT_MEMORY_LIMIT", "8G")
    assert len(influence(res).table) == 500


def test_rank_test_exact_only_below_50_studies_as_r():
    """R's cor.test(method='kendall') is exact below 50 pairs (no ties); scipy's exact
    distribution would take minutes at k = 2,000."""
    y, v = _data(49)
    assert rank_test(meta_analysis(y, v, tau2_method="FE")).exact
    y, v = _data(2_000)
    res = meta_analysis(y, v, tau2_method="FE")
    r = rank_test(res)
    assert not r.exact
    w = 1 / v
    ys = (y - (w * y).sum() / w.sum()) / np.sqrt(v - 1 / w.sum())
    ref = stats.kendalltau(ys, v, method="asymptotic")
    assert r.statistic == pytest.approx(ref.statistic) and r.pvalue == pytest.approx(ref.pvalue)


def test_cli_influence_refused_naming_the_flag(cli, tmp_path, monkeypatch):
    monkeypatch.setattr(INF, "MAX_REFIT_K", 40)
    y, v = _data(41)
    path = tmp_path / "studies.csv"
    pd.DataFrame({"yi": y, "vi": v}).to_csv(path, index=False)
    for flag in ("--influence", "--leave-one-out"):
        code, _, err = cli("meta", path, flag)
        assert code == 2 and "Traceback" not in err
        line = [ln for ln in err.splitlines() if ln.startswith("replikit: error:")]
        assert len(line) == 1 and flag in line[0] and "40" in line[0], err


def test_cli_forest_plot_skipped_above_its_limit(cli, tmp_path, monkeypatch):
    import replikit.cli.meta as cli_replicate

    monkeypatch.setattr(cli_replicate, "FOREST_MAX_STUDIES", 5)
    y, v = _data(8)
    path = tmp_path / "studies.csv"
    pd.DataFrame({"yi": y, "vi": v}).to_csv(path, index=False)
    code, _, err = cli("meta", path, "--out", tmp_path / "out")
    assert code == 0, err
    assert "forest.svg not drawn" in err
    assert (tmp_path / "out" / "meta.csv").exists()
    assert not (tmp_path / "out" / "forest.svg").exists()


@pytest.mark.slow
def test_cli_meta_of_100000_studies_peak_rss(tmp_path):
    """`replikit meta` on a 100,000-row table, as a whole process: peak RSS under a generous
    1 GiB (measured: about 230 MiB)."""
    y, v = _data(100_000)
    path = tmp_path / "studies.csv"
    pd.DataFrame({"study": [f"s{i}" for i in range(y.size)], "yi": y, "vi": v}).to_csv(
        path, index=False)
    code = ("import resource, sys\n"
            "from replikit._entry import main\n"
            f"sys.argv = ['replikit', 'meta', {str(path)!r}, '--label', 'study']\n"
            "try:\n    rc = main()\nexcept SystemExit as e:\n    rc = e.code\n"
            "print('RSS', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, rc)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=600)
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RSS ")]
    assert line, proc.stderr[-2000:]
    _, kib, rc = line[-1].split()
    assert rc in ("0", "None"), proc.stderr[-2000:]
    assert int(kib) < 1024 ** 2, f"peak RSS {int(kib) / 1024:.0f} MiB"
