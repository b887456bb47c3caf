"""The Bayesian Plackett–Luce model of rankings over datasets (``plackett_luce``).

References: (a) the printed output of scmamp's vignette "Bayesian analysis of the algorithm
rankings" (Calvo, scmamp 0.3, ``vignettes/Bayesian_analysis_of_algorithm_rankings.html``; Stan
fit of Calvo et al. 2018) on the 300 instances of size 100 of ``data.blum.2015`` (Blum, Calvo &
Blesa 2015), stored in ``tests/reference/compare/blum2015_size100.csv``; (b) the posterior mean
and P(best) by numerical integration over the 2-simplex; (c) the maximum likelihood estimate by
Hunter's (2004) MM algorithm, written here independently; (d) simulation-based calibration of
the credible intervals; (e) relabelling and direction properties.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from _checks import check_result
from replikit.compare import PlackettLuceResult, compare_benchmark, plackett_luce
from replikit.errors import DataError, ParameterError, ParameterTypeError

REF = Path(__file__).parents[1] / "reference" / "compare"


def _pl_table(w, n, rng):
    """``n`` rankings drawn from Plackett-Luce(w) as scores: log w + Gumbel noise, sorted
    descending, is a Plackett-Luce draw (the Gumbel-max trick)."""
    return np.log(w) + rng.gumbel(size=(n, len(w)))


# --------------------------------------------------------------------------------------------
# (a) the published values of scmamp's vignette


#: ``results.100 <- bPlackettLuceModel(x.matrix = data.100[, -c(1, 2)], min = FALSE,
#: nsim = 2000, nchains = 10, parallel = TRUE)``; ``results.100$expected.win.prob`` and
#: ``results.100$expected.mode.rank`` as printed in the vignette.
VIGNETTE_WIN_PROB = {"FruitFly": 0.014234508, "Shukla": 0.004716895, "Ikeda": 0.004377576,
                     "Turau": 0.004770771, "Rand1": 0.004435168, "Rand2": 0.005284545,
                     "FrogCOL": 0.924527185, "FrogMIS": 0.037653351}
VIGNETTE_MODE_RANK = {"FruitFly": 3.0000, "Shukla": 5.9071, "Ikeda": 7.1179, "Turau": 5.7144,
                      "Rand1": 6.9245, "Rand2": 4.3361, "FrogCOL": 1.0000, "FrogMIS": 2.0000}
#: 99% of these instances have tied scores, which scmamp breaks at random once: the printed
#: values are one tie order's. The SD between tie orders (12 runs of one chain of 4000 draws,
#: random_state 100..111, MC error included), used as the tolerance's unit.
TIE_ORDER_SD_WEIGHT = {"FruitFly": 0.0017, "Shukla": 0.00052, "Ikeda": 0.00044,
                       "Turau": 0.00057, "Rand1": 0.00048, "Rand2": 0.00055, "FrogCOL": 0.0083,
                       "FrogMIS": 0.0042}
TIE_ORDER_SD_RANK = {"Shukla": 0.32, "Ikeda": 0.42, "Turau": 0.39, "Rand1": 0.24,
                     "Rand2": 0.29}


def test_scmamp_vignette_blum2015_size100():
    table = pd.read_csv(REF / "blum2015_size100.csv")
    res = plackett_luce(table, n_resamples=8000, n_chains=8, random_state=0)
    assert res.n_datasets == 300 and res.n_tied == 297
    for model, ref in VIGNETTE_WIN_PROB.items():
        assert abs(res.weights[model] - ref) <= 3.5 * TIE_ORDER_SD_WEIGHT[model], model
    # the three clear places are exact; the five near-equal weights within 3.5 tie-order SDs
    for model in ("FrogCOL", "FrogMIS", "FruitFly"):
        assert res.weight_rank[model] == VIGNETTE_MODE_RANK[model]
    for model, sd in TIE_ORDER_SD_RANK.items():
        assert abs(res.weight_rank[model] - VIGNETTE_MODE_RANK[model]) <= 3.5 * sd, model
    assert res.best == "FrogCOL" and res.prob_best["FrogCOL"] == 1.0


# --------------------------------------------------------------------------------------------
# (b) numerical integration over the 2-simplex


def _pl_loglik(w, table):
    """Log-likelihood of Plackett-Luce weights ``w`` (..., 3) for the rankings of ``table``
    (higher first, NaN missing), by the definition."""
    out = np.zeros(w.shape[:-1])
    for row in table:
        items = [k for k in np.argsort(-np.nan_to_num(row, nan=-np.inf)) if np.isfinite(row[k])]
        for j in range(len(items) - 1):
            out += np.log(w[..., items[j]]) - np.log(w[..., items[j:]].sum(axis=-1))
    return out


TINY = np.array([[3, 2, 1], [3, 1, 2], [1, 3, 2], [2, 3, 1], [3, 2, np.nan], [3, 1, 2],
                 [np.nan, 1, 2]], dtype=float)


@pytest.mark.parametrize("a", [1.0, 2.5])
def test_posterior_mean_and_prob_best_match_numerical_integration(a):
    N = 1500
    x, y = np.meshgrid((np.arange(N) + 0.5) / N, (np.arange(N) + 0.5) / N)
    inside = x + y < 1
    w = np.stack([x[inside], y[inside], 1 - x[inside] - y[inside]], axis=-1)
    logp = _pl_loglik(w, TINY) + (a - 1) * np.log(w).sum(axis=-1)
    p = np.exp(logp - logp.max())
    p /= p.sum()
    mean = p @ w
    best = np.array([p[np.argmax(w, axis=1) == k].sum() for k in range(3)])
    res = plackett_luce(TINY, prior=a, n_resamples=40_000, random_state=1)
    assert res.missing == ((4, "model 2"), (6, "model 0"))
    np.testing.assert_allclose(res.weights.to_numpy(), mean,
                               atol=4 * res.mc_se.max() + 1e-3)
    ess = res.ess.min()
    np.testing.assert_allclose(res.prob_best.to_numpy(), best,
                               atol=4 * np.sqrt(0.25 / ess) + 1e-3)


# --------------------------------------------------------------------------------------------
# (c) the posterior mode under a flat prior is Hunter's (2004) MLE


def _hunter_mm(table, tol=1e-12):
    """Hunter (2004, sec. 5, eq. 30) MM iterations for the Plackett-Luce MLE, by loops."""
    K = table.shape[1]
    rankings = [[k for k in np.argsort(-np.nan_to_num(r, nan=-np.inf)) if np.isfinite(r[k])]
                for r in table]
    wins = np.zeros(K)
    for items in rankings:
        for k in items[:-1]:
            wins[k] += 1
    g = np.full(K, 1.0 / K)
    for _ in range(100_000):
        denom = np.zeros(K)
        for items in rankings:
            for j in range(len(items) - 1):
                s = sum(g[k] for k in items[j:])
                for k in items[j:]:
                    denom[k] += 1.0 / s
        new = wins / denom
        new /= new.sum()
        if np.max(np.abs(new - g)) < tol:
            return new
        g = new
    return g


def test_flat_prior_mode_is_hunters_mle_and_the_posterior_concentrates_on_it():
    rng = np.random.default_rng(5)
    truth = np.array([0.4, 0.3, 0.2, 0.1])
    table = _pl_table(truth, 60, rng)
    table[rng.random(table.shape) < 0.15] = np.nan  # partial rankings
    res = plackett_luce(table, n_resamples=400, random_state=0)
    np.testing.assert_allclose(res.mode.to_numpy(), _hunter_mm(table), atol=1e-7)
    big = _pl_table(truth, 2000, rng)
    res = plackett_luce(big, n_resamples=8000, random_state=0)
    mle = _hunter_mm(big)
    np.testing.assert_allclose(res.mode.to_numpy(), mle, atol=1e-7)
    gap = np.abs(res.weights.to_numpy() - mle)
    assert np.all(gap <= 0.2 * res.weights_sd.to_numpy() + 4 * res.mc_se.to_numpy())


def test_informative_prior_moves_the_mode_toward_equal_weights():
    table = _pl_table(np.array([0.6, 0.3, 0.1]), 15, np.random.default_rng(2))
    flat = plackett_luce(table, n_resamples=100, random_state=0).mode
    strong = plackett_luce(table, prior=50.0, n_resamples=100, random_state=0).mode
    assert np.all(np.abs(strong - 1 / 3) < np.abs(flat - 1 / 3))
    assert plackett_luce(table, prior=0.5, n_resamples=100, random_state=0).mode.isna().all()


# --------------------------------------------------------------------------------------------
# (d) simulation-based calibration


@pytest.mark.slow
def test_credible_intervals_cover_weights_drawn_from_the_prior():
    """Cook, Gelman & Rubin (2006): weights from the Dirichlet(1) prior, 8 rankings of 3
    models from Plackett-Luce, the 95% and 50% intervals of each weight; 150 replicates (450
    intervals): coverage within the binomial 99.9% range. A larger run is recorded in
    docs/compare.md (benchmarks/compare_plackett_luce.py --sbc)."""
    rng = np.random.default_rng(11)
    reps, K = 150, 3
    hit95 = hit50 = 0
    for r in range(reps):
        w = rng.dirichlet(np.ones(K))
        res = plackett_luce(_pl_table(w, 8, rng), n_resamples=1000, n_chains=2, n_warmup=200,
                            random_state=r)
        hit95 += int(((res.ci_low <= w) & (w <= res.ci_high)).sum())
        ci = res.credible_intervals(0.5)
        hit50 += int(((ci["ci_low"] <= w) & (w <= ci["ci_high"])).sum())
    n = reps * K
    for hits, level in ((hit95, 0.95), (hit50, 0.5)):
        sd = np.sqrt(n * level * (1 - level))
        assert abs(hits - n * level) <= 3.3 * sd, (level, hits / n)


# --------------------------------------------------------------------------------------------
# (e) properties


def test_relabelling_models_permutes_the_output():
    rng = np.random.default_rng(3)
    t = pd.DataFrame(_pl_table(np.array([0.5, 0.25, 0.15, 0.1]), 40, rng),
                     columns=["a", "b", "c", "d"])
    res = plackett_luce(t, n_resamples=8000, random_state=0)
    perm = plackett_luce(t[["c", "a", "d", "b"]], n_resamples=8000, random_state=1)
    assert perm.models == ("c", "a", "d", "b")
    tol = 5 * np.hypot(res.mc_se, perm.mc_se[res.weights.index])
    assert (np.abs(perm.weights[res.weights.index] - res.weights) <= tol).all()
    assert (np.abs(perm.expected_rank[list(res.models)] - res.expected_rank) < 0.05).all()
    np.testing.assert_allclose(perm.prob_better.loc[list(res.models), list(res.models)],
                               res.prob_better, atol=0.03)


def test_direction_reverses_the_ranking_and_matches_negated_scores():
    rng = np.random.default_rng(4)
    t = _pl_table(np.array([0.6, 0.3, 0.1]), 30, rng)
    hi = plackett_luce(t, n_resamples=2000, random_state=0)
    lo = plackett_luce(t, higher_is_better=False, n_resamples=2000, random_state=0)
    neg = plackett_luce(-t, n_resamples=2000, random_state=0)
    np.testing.assert_array_equal(lo.samples, neg.samples)
    assert list(hi.expected_rank.sort_values().index) == \
        list(lo.expected_rank.sort_values().index)[::-1]


def test_same_seed_same_draws_and_reading_the_result():
    t = _pl_table(np.array([0.5, 0.3, 0.2]), 12, np.random.default_rng(6))
    r1 = plackett_luce(t, n_resamples=500, random_state=7)
    r2 = plackett_luce(t, n_resamples=500, random_state=np.random.default_rng(7))
    np.testing.assert_array_equal(r1.samples, r2.samples)
    assert not np.array_equal(r1.samples, plackett_luce(t, n_resamples=500,
                                                        random_state=8).samples)
    assert r1.samples.shape == (500, 3) and np.allclose(r1.samples.sum(axis=1), 1)
    assert r1.prob_best.sum() == pytest.approx(1)
    # P(w_i > w_j) + P(w_j > w_i) = 1; P(i above j) + P(j above i) = 1
    pb, pa = r1.prob_better.to_numpy(), r1.prob_ranked_above.to_numpy()
    off = ~np.eye(3, dtype=bool)
    np.testing.assert_allclose((pb + pb.T)[off], 1)
    np.testing.assert_allclose((pa + pa.T)[off], 1)
    # expected ranks of all models sum to 1 + 2 + 3 in every draw
    assert r1.expected_rank.sum() == pytest.approx(6)
    assert (r1.rank_ci_low <= r1.expected_rank).all() and (
        r1.expected_rank <= r1.rank_ci_high).all()
    assert isinstance(r1, PlackettLuceResult)
    check_result(r1)
    d = r1.to_dict()
    json.dumps(d, allow_nan=False)
    assert d["models"][0]["model"] == r1.best and set(d["prob_better"]) == set(r1.models)
    assert "P(best)" in str(r1)


def test_missing_cells_and_dropped_datasets_are_reported():
    t = pd.DataFrame({"dataset": ["d1", "d2", "d3", "d4"], "x": [1.0, 2.0, np.nan, 0.5],
                      "y": [0.5, 1.0, np.nan, 0.7], "z": [0.1, np.nan, 3.0, 0.2]})
    res = plackett_luce(t, n_resamples=200, random_state=0)
    assert res.models == ("x", "y", "z")
    assert res.missing == (("d2", "z"), ("d3", "x"), ("d3", "y"))
    assert res.dropped == ("d3",) and res.n_datasets == 3
    assert "missing cell" in str(res) and "fewer than two" in str(res)


@pytest.mark.parametrize(("kwargs", "error", "needle"), [
    (dict(table=np.ones((3, 1))), DataError, "at least two models"),
    (dict(table=np.array([[1.0, np.inf], [1, 2]])), DataError, "infinite"),
    (dict(table=np.array([[1.0, np.nan], [np.nan, 2]])), DataError, "at least two models"),
    (dict(table=np.ones((3, 3)), prior=0.0), ParameterError, "`prior`"),
    (dict(table=np.ones((3, 3)), prior=[1, 2]), ParameterError, "`prior`"),
    (dict(table=np.ones((3, 3)), n_resamples=1), ParameterError, "`n_resamples`"),
    (dict(table=np.ones((3, 3)), higher_is_better="yes"), ParameterTypeError,
     "`higher_is_better`"),
    (dict(table="scores"), ParameterTypeError, "`table`"),
])
def test_bad_input_names_the_parameter(kwargs, error, needle):
    with pytest.raises(error, match=needle):
        plackett_luce(**kwargs)


# --------------------------------------------------------------------------------------------
# command line


def _bench_csv(tmp_path, k=4):
    rng = np.random.default_rng(0)
    t = pd.DataFrame(_pl_table(np.linspace(1, 2, k), 12, rng) / 10 + 0.8,
                     columns=[f"m{j}" for j in range(k)])
    t.insert(0, "dataset", [f"d{i}" for i in range(len(t))])
    path = tmp_path / "bench.csv"
    t.to_csv(path, index=False)
    return path, t


def test_cli_benchmark_reports_plackett_luce_in_text_and_json(tmp_path, cli):
    path, t = _bench_csv(tmp_path)
    code, out, err = cli("compare", path)
    assert code == 0, err
    assert "Plackett-Luce" in out and "P(best)" in out and "expected rank" in out
    code, out, err = cli("--format", "json", "compare", path)
    assert code == 0, err
    got = json.loads(out)["plackett_luce"]
    # the posterior compare_benchmark computes (seeded after its Bayesian tests)
    ref = compare_benchmark(t.set_index("dataset"), random_state=0).plackett_luce
    assert [r["model"] for r in got["models"]] == list(ref.to_frame()["model"])
    assert [r["prob_best"] for r in got["models"]] == list(ref.to_frame()["prob_best"])


def test_cli_benchmark_of_two_models_has_no_plackett_luce(tmp_path, cli):
    path, _ = _bench_csv(tmp_path, k=2)
    code, out, err = cli("--format", "json", "compare", path)
    assert code == 0, err
    assert "plackett_luce" not in json.loads(out)
