"""Calibration simulation of the comparison tests (Gardner & Brooks 2017; Bouckaert & Frank 2004):
learners against scikit-learn, population errors against closed forms, levels, power,
replicability, reproducibility, validation, figure and CLI."""

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from replikit.compare.calibration import (
    _SCHEME_ORDER,
    _SCHEMES,
    _SPEC,
    CALIBRATED_TESTS,
    CalibrationResult,
    _block_errors,
    _centroid_fits,
    _draw_dataset,
    _expected_error,
    _learner_rates,
    _mcnemar_pvalue,
    _population,
    _scheme_design,
    _test_pvalues,
    plot_calibration,
    replicability,
    simulate_tests,
)
from replikit.errors import DataError, ParameterError, ParameterTypeError

REF = Path(__file__).parents[1] / "reference" / "compare"

SMALL = dict(n_population=100_000, n_training_sets=200)


# --------------------------------------------------------------------------- replicability

def test_replicability_closed_form_on_hand_examples():
    # R = sum_c n_c (n_c - 1) / (m (m - 1))  (Bouckaert 2004)
    counts = [[10, 0, 0],   # all runs agree
              [0, 0, 10],
              [5, 5, 0],    # (20 + 20) / 90
              [4, 3, 3],    # (12 + 6 + 6) / 90, the minimum for m = 10
              [2, 1, 0],    # 2 / 6
              [1, 1, 0]]    # the two runs disagree
    expected = [1.0, 1.0, 40 / 90, 24 / 90, 2 / 6, 0.0]
    np.testing.assert_allclose(replicability(counts), expected, rtol=0, atol=1e-15)
    # shape (..., classes) is kept
    assert replicability(np.array(counts).reshape(2, 3, 3)).shape == (2, 3)


def test_replicability_bounds_over_all_compositions():
    m = 10
    comps = np.array([(a, b, m - a - b) for a in range(m + 1) for b in range(m + 1 - a)])
    r = replicability(comps)
    assert r.max() == 1.0
    assert r.min() == pytest.approx(24 / 90)  # integer minimum, (4, 3, 3)
    assert np.all(r >= (m - 3) / (3 * (m - 1)) - 1e-12)  # continuous bound, -> 1/3
    # R = 1 exactly when one class holds every run
    assert set(np.flatnonzero(r == 1.0)) == set(np.flatnonzero((comps == m).any(axis=1)))
    # large m: the minimum approaches 1/3 from below
    big = replicability([[334, 333, 333]])
    assert big[0] == pytest.approx(1 / 3, abs=0.001) and big[0] < 1 / 3


def test_replicability_rejects_bad_counts():
    with pytest.raises(DataError, match="at least 2 runs"):
        replicability([[1, 0, 0]])
    with pytest.raises(DataError, match="non-negative integer"):
        replicability([[3, -1, 0]])
    with pytest.raises(DataError, match="non-negative integer"):
        replicability([[1.5, 1, 0]])


# --------------------------------------------------------------------------- learners

@pytest.mark.parametrize("n", [97, 120])
def test_vectorised_learners_match_sklearn_nearest_centroid(n):
    from sklearn.neighbors import NearestCentroid

    rng = np.random.default_rng(3)
    n_replications = 2
    y, e, perm = _draw_dataset(rng, n, n_replications, 0.4)
    mus = (0.45, 0.7)
    X = np.where(y[:, None], mus, -np.asarray(mus)) + e
    assert perm.shape == (n_replications * sum(s.r for s in _SCHEMES.values()), n)
    assert np.all(np.sort(perm, axis=1) == np.arange(n))  # permutations
    offset = 0
    for sname in _SCHEME_ORDER:
        scheme = _SCHEMES[sname]
        p = perm[offset:offset + n_replications * scheme.r]
        offset += n_replications * scheme.r
        p = p[:2]  # two partitions per scheme keep the scikit-learn loop short
        yp, ep = y[p], e[p]
        bounds = scheme.bounds(n)
        fits = _centroid_fits(yp.astype(float), ep, bounds)
        for j in (0, 1):
            err = _block_errors(yp, ep, fits, bounds, scheme.n_eval, mus[j], j)
            for row in range(p.shape[0]):
                for f in range(scheme.n_eval):
                    te = p[row, bounds[f]:bounds[f + 1]]
                    tr = np.setdiff1d(np.arange(n), te)
                    clf = NearestCentroid().fit(X[tr, j:j + 1], y[tr])
                    want = clf.predict(X[te, j:j + 1]) != y[te]
                    got = err[row, bounds[f]:bounds[f + 1]]
                    np.testing.assert_array_equal(got, want)


def test_scheme_geometry():
    n = 300
    assert _SCHEMES["cv10x10"].n_train(n) == 270
    assert _SCHEMES["holdout10"].n_train(n) == 270
    assert _SCHEMES["cv5x2"].n_train(n) == 150
    assert _SCHEMES["holdout1"].n_train(n) == 200
    np.testing.assert_array_equal(np.diff(_SCHEMES["cv10x10"].bounds(97)),
                                  [9, 10, 10, 9, 10, 10, 9, 10, 10, 10])


def test_mcnemar_matches_mlxtend_reference():
    ref = json.loads((REF / "calibration_mcnemar.json").read_text())
    b, c = ref["table"][0][1], ref["table"][1][0]
    assert _mcnemar_pvalue(b, c) == pytest.approx(ref["corrected"]["p"], rel=1e-5)
    assert _mcnemar_pvalue(c, b) == pytest.approx(ref["corrected"]["p"], rel=1e-5)
    # no discordant pair, b = c (the correction stops at 0, as in R), and (|5 - 1| - 1)^2 / 6
    np.testing.assert_array_equal(_mcnemar_pvalue(np.array([0, 3, 5]), np.array([0, 3, 1])),
                                  [1.0, 1.0, stats.chi2.sf(1.5, 1)])


def test_vectorised_pvalues_match_the_public_tests():
    """On one dataset, every vectorised statistic gives the p-value of replikit's public test
    (replikit.compare.resampled / predictions) on the same fold error rates."""
    import warnings

    from replikit.compare import predictions as P
    from replikit.compare import resampled as R
    from replikit.compare._pairing import Paired

    n, n_replications = 113, 2
    y, e, perm = _draw_dataset(np.random.default_rng(21), n, n_replications, 0.5)
    mu_a, mu_b = 0.7, 0.55
    public = {
        "corrected_resampled_t": lambda p: R.corrected_resampled_ttest(p),
        "naive_paired_t_holdout": lambda p: R.naive_paired_ttest(p),
        "corrected_repeated_kfold_t": lambda p: R.corrected_repeated_kfold_ttest(p),
        "naive_paired_t_kfold": lambda p: R.naive_paired_ttest(p),
        "sorted_runs_t_learner": lambda p: R.sorted_runs_ttest(p, sort="learner"),
        "sorted_runs_t_difference": lambda p: R.sorted_runs_ttest(p, sort="difference"),
        "paired_t_5x2cv": lambda p: R.paired_ttest_5x2cv(p),
        "combined_f_5x2cv": lambda p: R.combined_ftest_5x2cv(p),
        "bayesian_correlated_t": lambda p: R.bayesian_correlated_ttest(p, tolerance=0.01),
        "proportions_z": lambda p: R.proportions_ztest(p),
    }
    offset, checked = 0, set()
    for sname in _SCHEME_ORDER:
        scheme = _SCHEMES[sname]
        p = perm[None, offset:offset + n_replications * scheme.r]
        offset += n_replications * scheme.r
        design = _scheme_design(y[None], e[None], p, scheme, n)
        ra, ea = _learner_rates(design, scheme, n_replications, mu_a, 0)
        rb, eb = _learner_rates(design, scheme, n_replications, mu_b, 1)
        size = np.diff(scheme.bounds(n))[: scheme.n_eval]
        for name in CALIBRATED_TESTS:
            if _SPEC[name].scheme != sname:
                continue
            pv, direction = _test_pvalues(name, ra, rb, ea, eb, n)
            assert pv.shape == direction.shape == (1, n_replications)
            for rep in range(n_replications):
                if name.startswith("mcnemar_"):
                    ok_a, ok_b = ~ea[0, rep, 0], ~eb[0, rep, 0]
                    table = [[np.sum(ok_a & ok_b), np.sum(ok_a & ~ok_b)],
                             [np.sum(~ok_a & ok_b), np.sum(~ok_a & ~ok_b)]]
                    correction = {"mcnemar_edwards": "edwards", "mcnemar_uncorrected": "none",
                                  "mcnemar_exact": "exact"}[name]
                    res = P.mcnemar_test_from_table(table, correction=correction)
                    if name == "mcnemar_uncorrected":  # = Cochran's Q on the two learners
                        truth = np.zeros(ok_a.size, int)
                        q = P.cochrans_q_test(truth, (~ok_a).astype(int), (~ok_b).astype(int))
                        assert pv[0, rep] == pytest.approx(q.pvalue, rel=1e-9, abs=1e-12)
                else:
                    shape = ra[0, rep].shape
                    pair = Paired(ra[0, rep], rb[0, rep],
                                  n_train=np.broadcast_to(n - size, shape),
                                  n_test=np.broadcast_to(size, shape), metric="error_rate")
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        res = public[name](pair)
                if name == "bayesian_correlated_t":
                    assert pv[0, rep] == pytest.approx(1 - max(res.p_left, res.p_right),
                                                       rel=1e-9, abs=1e-12)
                    assert np.sign(direction[0, rep]) == np.sign(res.p_right - res.p_left)
                    checked.add(name)
                    continue
                assert pv[0, rep] == pytest.approx(res.pvalue, rel=1e-9, abs=1e-12), name
                if name != "combined_f_5x2cv":  # the F has no sign
                    if name == "mcnemar_exact":  # the binomial p carries no sign; the
                        # estimate is accuracy a - b, the direction A's extra errors
                        assert np.sign(direction[0, rep]) == -np.sign(res.estimate), name
                    else:
                        assert np.sign(direction[0, rep]) == np.sign(res.statistic) * (
                            -1 if name.startswith("mcnemar_") else 1), name
                checked.add(name)
    assert checked == set(CALIBRATED_TESTS)


# --------------------------------------------------------------------------- population

def test_population_errors_two_ways_and_closed_form():
    root = np.random.SeedSequence(11)
    base = 0.3
    mu_b = -stats.norm.ppf(base)
    mus_a = [mu_b, -stats.norm.ppf(base - 0.08)]
    pop = _population(root, mus_a, mu_b, 0.5, [40, 150], 200_000, 400)
    assert len(pop) == 4
    for r in pop.itertuples():
        # the big-sample estimate agrees with the closed-form expected error of the same fits
        se_row = np.sqrt(0.3 * 0.7 / 200_000)
        assert abs(r.error_b - r.exact_error_b) < 5 * se_row
        assert abs(r.error_a - r.exact_error_a) < 5 * se_row
        # fitted rules are worse than the Bayes rule, and only a little with 150 rows
        assert r.exact_error_a > r.bayes_error_a and r.exact_error_b > r.bayes_error_b
        if r.setting == 0:
            assert abs(r.difference) < 4 * r.difference_se  # the null holds
            assert abs(r.exact_difference) < 0.01
        else:
            assert abs(r.difference - r.exact_difference) < 4 * r.difference_se
            assert r.difference == pytest.approx(0.08, abs=0.01)
    small = pop[pop.n_train == 40].iloc[0]
    large = pop[pop.n_train == 150].iloc[0]
    assert small.exact_error_b > large.exact_error_b  # learning curve


def test_expected_error_closed_form():
    # threshold 0 with the right orientation: the Bayes error Phi(-mu)
    mu = 0.8
    err = _expected_error(np.array([0.0]), np.array([0.0]), np.array([True]),
                          np.array([True]), mu)
    assert err[0] == pytest.approx(stats.norm.cdf(-mu))
    # wrong orientation (gap pushes the sign negative): 1 - Phi(-mu)
    err = _expected_error(np.array([0.0]), np.array([-3 * mu]), np.array([True]),
                          np.array([True]), mu)
    assert err[0] == pytest.approx(1 - stats.norm.cdf(-mu))
    # Monte-Carlo check of a shifted threshold
    rng = np.random.default_rng(0)
    y = rng.random(400_000) < 0.5
    x = np.where(y, mu, -mu) + rng.standard_normal(y.size)
    mc = np.mean((x > 0.3) != y)
    err = _expected_error(np.array([0.3]), np.array([0.0]), np.array([True]),
                          np.array([True]), mu)
    assert err[0] == pytest.approx(mc, abs=4 * np.sqrt(mc * (1 - mc) / y.size))


# --------------------------------------------------------------------------- calibration

@pytest.fixture(scope="module")
def calib():
    return simulate_tests(n_datasets=400, n_rows=200, differences=(0.05, 0.1, 0.2),
                          n_repeats=4, random_state=5, **SMALL)


def test_table_layout(calib):
    t = calib.table
    assert isinstance(calib, CalibrationResult)
    assert calib.tests == CALIBRATED_TESTS
    assert calib.differences == (0.0, 0.05, 0.1, 0.2)
    assert len(t) == len(CALIBRATED_TESTS) * 4
    for col in ("test", "valid", "true_difference", "rejection_rate", "mc_se",
                "replicability", "replicability_se"):
        assert col in t.columns
    assert not t["valid"][t["test"].isin(["naive_paired_t_holdout", "naive_paired_t_kfold",
                                          "proportions_z"])].any()
    np.testing.assert_allclose(t["reject_a_better"] + t["reject_b_better"],
                               t["rejection_rate"], atol=1e-12)
    assert len(calib.type_one_error()) == len(CALIBRATED_TESTS)
    assert "Type I error" in str(calib)


def test_corrected_tests_hold_their_level(calib):
    t1 = calib.type_one_error().set_index("test")
    for name in ("corrected_resampled_t", "corrected_repeated_kfold_t", "paired_t_5x2cv",
                 "combined_f_5x2cv", "mcnemar_edwards", "mcnemar_uncorrected", "mcnemar_exact"):
        row = t1.loc[name]
        # at or below the level within Monte-Carlo error (the 5x2 tests and McNemar are
        # known to be conservative)
        assert row.rejection_rate < 0.05 + 3 * row.mc_se, name
        # ... but they do reject: a test that never rejects would pass the line above
        assert row.rejection_rate > 0.01, name


def test_naive_tests_reject_too_often(calib):
    t1 = calib.type_one_error().set_index("test")
    for name in ("naive_paired_t_holdout", "naive_paired_t_kfold"):
        row = t1.loc[name]
        assert row.rejection_rate > 0.05 + 4 * row.mc_se, name
    # more resamples, more (false) significance: 100 CV folds beat 10 hold-outs
    assert t1.loc["naive_paired_t_kfold", "rejection_rate"] > t1.loc["naive_paired_t_holdout",
                                                              "rejection_rate"]
    # under the null both directions are equally likely
    for name in CALIBRATED_TESTS:
        row = t1.loc[name]
        assert abs(row.reject_a_better - row.reject_b_better) < 5 * row.mc_se + 0.01, name


def test_power_increases_with_the_difference(calib):
    t = calib.table
    for name in CALIBRATED_TESTS:
        g = t[t["test"] == name].sort_values("nominal_difference")
        rate = g["rejection_rate"].to_numpy()
        se = g["mc_se"].to_numpy()
        assert np.all(np.diff(rate) > -2 * (se[1:] + se[:-1])), name
        assert rate[-1] > rate[0] + 3 * se[-1], name
        # the better learner (A) is the one found better
        assert g["reject_a_better"].iloc[-1] > 10 * g["reject_b_better"].iloc[-1], name
    # true differences measured on the independent sample track the nominal ones
    g = t[t["test"] == "corrected_repeated_kfold_t"]
    np.testing.assert_allclose(g["true_difference"], g["nominal_difference"], atol=0.004)
    # the corrected 10x10 CV test is more powerful than Dietterich's 5x2cv t (Gardner & Brooks
    # 2017, sec. 4)
    at = t[t["nominal_difference"] == 0.1].set_index("test")["rejection_rate"]
    assert at["corrected_repeated_kfold_t"] > at["paired_t_5x2cv"]


def test_replicability_in_range_and_one_when_all_agree(calib):
    t = calib.table
    m = calib.n_repeats
    assert np.all(t["replicability"] >= (m - 3) / (3 * (m - 1)))
    assert np.all(t["replicability"] <= 1.0)
    # where every run on every dataset found A better, R is exactly 1
    full = t[t["reject_a_better"] == 1.0]
    assert not full.empty
    assert np.all(full["replicability"] == 1.0) and np.all(full["replicability_se"] == 0.0)
    # a test that never rejects is perfectly replicable too
    assert np.all(t.loc[t["rejection_rate"] == 0.0, "replicability"] == 1.0)


def test_single_run_has_binomial_se_and_no_replicability():
    res = simulate_tests(n_datasets=60, n_rows=60, differences=(), tests="naive_paired_t_kfold",
                         n_repeats=1, random_state=0, **SMALL)
    row = res.table.iloc[0]
    p = row.rejection_rate
    assert row.mc_se == pytest.approx(np.sqrt(p * (1 - p) / 60))
    assert np.isnan(row.replicability)
    assert res.differences == (0.0,)


def test_reproducible_whatever_the_chunks_and_workers():
    kw = dict(n_datasets=23, n_rows=60, differences=(0.1,), n_repeats=3,
              random_state=7, **SMALL)
    a = simulate_tests(chunk_size=23, **kw).table
    b = simulate_tests(chunk_size=5, **kw).table
    c = simulate_tests(chunk_size=4, n_jobs=2, **kw).table
    assert a.equals(b) and a.equals(c)
    d = simulate_tests(**{**kw, "random_state": 8}).table
    assert not a["rejection_rate"].equals(d["rejection_rate"])
    # a test's results do not depend on which other tests are simulated
    sub = simulate_tests(tests=["mcnemar_edwards", "paired_t_5x2cv"], chunk_size=6, **kw).table
    full = a[a["test"].isin(["mcnemar_edwards", "paired_t_5x2cv"])].reset_index(drop=True)
    assert sub.drop(columns=[]).equals(full)


def test_progress_reports_every_dataset():
    seen = []
    simulate_tests(n_datasets=11, n_rows=40, differences=(), tests=["mcnemar_edwards"],
                   n_repeats=2, chunk_size=4, progress=seen.append, random_state=0,
                   **SMALL)
    assert seen == [4, 4, 3]


@pytest.mark.parametrize("kwargs, error, match", [
    ({"n_datasets": 1}, ParameterError, "n_datasets"),
    ({"n_datasets": 2.5}, ParameterTypeError, "n_datasets"),
    ({"n_rows": 10}, ParameterError, "n_rows"),
    ({"n_rows": 20_000}, ParameterError, "n_rows"),
    ({"tolerance": -0.01}, ParameterError, "tolerance"),
    ({"n_repeats": 0}, ParameterError, "n_repeats"),
    ({"differences": (-0.1,)}, ParameterError, "differences"),
    ({"differences": (0.3,)}, ParameterError, "base_error"),
    ({"differences": "0.1"}, ParameterTypeError, "differences"),
    ({"differences": [[0.1]]}, ParameterTypeError, "differences"),
    ({"differences": (np.nan,)}, ParameterError, "differences"),
    ({"tests": ["mcnemar_edwards", "bogus"]}, ParameterError, "bogus"),
    ({"tests": []}, ParameterError, "tests"),
    ({"tests": 3}, ParameterTypeError, "tests"),
    ({"base_error": 0.5}, ParameterError, "base_error"),
    ({"base_error": 0.0}, ParameterError, "base_error"),
    ({"correlation": 1.0}, ParameterError, "correlation"),
    ({"alpha": 1.5}, ParameterError, "alpha"),
    ({"n_population": 99_999}, ParameterError, "n_population"),
    ({"n_training_sets": 10}, ParameterError, "n_training_sets"),
    ({"n_jobs": 0}, ParameterError, "n_jobs"),
    ({"chunk_size": 0}, ParameterError, "chunk_size"),
    ({"random_state": -1}, ParameterTypeError, "random_state"),
])
def test_validation(kwargs, error, match):
    with pytest.raises(error, match=match):
        simulate_tests(**{"n_datasets": 5, "n_rows": 40, **kwargs})


# --------------------------------------------------------------------------- figure and CLI

def test_plot_calibration(calib):
    ax = plot_calibration(calib)
    lines = [ln for ln in ax.get_lines() if ln.get_label() and not
             ln.get_label().startswith("_")]
    assert len(lines) == len(CALIBRATED_TESTS)
    styles = {ln.get_label(): ln.get_linestyle() for ln in lines}
    assert styles["naive paired t-test, 10x10 CV (invalid)"] == "--"
    assert styles["corrected repeated k-fold t-test"] == "-"
    assert any(np.allclose(ln.get_ydata(), 0.05) for ln in ax.get_lines())  # the level
    ax = calib.plot(measure="replicability")
    assert ax.get_ylabel().startswith("replicability")
    ax = plot_calibration(calib, tests=["mcnemar_edwards"])
    assert len([ln for ln in ax.get_lines() if not ln.get_label().startswith("_")]) == 1
    with pytest.raises(ParameterError, match="measure"):
        plot_calibration(calib, measure="power")
    with pytest.raises(ParameterError, match="not simulated"):
        plot_calibration(calib, tests=["nope"])
    with pytest.raises(ParameterTypeError, match="CalibrationResult"):
        plot_calibration(calib.table)


def test_cli_simulate_tests(cli, tmp_path):
    code, out, err = cli("simulate", "tests", "--n-datasets", "12", "--n-rows", "60",
                         "--n-repeats", "2", "--differences", "0.1",
                         "--tests", "corrected_repeated_kfold_t,naive_paired_t_kfold",
                         "--out", str(tmp_path))
    assert code == 0, err
    assert "Type I error" in out and "corrected_repeated_kfold_t" in out
    for name in ("calibration.csv", "population.csv", "rejection_rate.svg",
                 "replicability.svg"):
        assert (tmp_path / name).stat().st_size > 0
    code, out, err = cli("simulate", "tests", "--n-datasets", "12", "--n-rows", "60",
                         "--n-repeats", "2", "--differences", "0.1",
                         "--tests", "mcnemar_edwards", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert {r["nominal_difference"] for r in data["table"]} == {0.0, 0.1}
    assert data["settings"]["n_datasets"] == 12


@pytest.mark.parametrize("args, match", [
    (["--differences", "abc"], "--differences"),
    (["--differences", "0.4"], "differences"),
    (["--n-rows", "5"], "--n-rows"),
    (["--tests", "bogus"], "bogus"),
])
def test_cli_errors(cli, args, match):
    code, out, err = cli("simulate", "tests", "--n-datasets", "3", *args)
    assert code == 2
    last = err.strip().splitlines()[-1]
    assert last.startswith("replikit: error:") and match in last
    assert "Traceback" not in err


def test_cli_help_lists_every_test():
    import typing

    from replikit.cli.calibration import simulate_tests_cmd

    hints = typing.get_type_hints(simulate_tests_cmd, include_extras=True)
    text = hints["tests"].__metadata__[0].help
    for name in CALIBRATED_TESTS:
        assert name in text
    # no local --format: the global option works after the command too
    assert "format" not in hints
