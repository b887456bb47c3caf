"""replikit.compare.audit: the comparison recipe of the audit report as a capability entry.

Checked against independent references (the pre-entry report's row draw, statsmodels' Holm,
scipy's t quantiles and Friedman test, per-model means computed from the fold scores) and
properties (each pair once in the verdict, simultaneous coverage, reproducibility across
backends, the primary-metric direction).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.datasets import load_breast_cancer
from statsmodels.stats.multitest import multipletests

from replikit._random import task_rng
from replikit.compare import ComparisonAudit, audit, compare_scores, primary_test
from replikit.compare.audit import _plan, _verdict
from replikit.data.userdata import dataset_from_frame
from replikit.errors import DataError, NotApplicableError, ParameterTypeError
from replikit.experiment import subsample


def _subsample_rows(y, rows, *, stratify, root, key):
    """The entry's row draw: experiment.subsample on the task stream ``key`` of ``root``."""
    return subsample(y, rows, stratify=stratify, random_state=task_rng(root, key))


def _regression(n_per=150, studies=(1990, 1992, 1994, 1996), seed=2):
    rng = np.random.default_rng(seed)
    n = n_per * len(studies)
    df = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.normal(size=n),
                       "year": np.repeat(studies, n_per)})
    df["y"] = df.x1 + 0.5 * df.x2 + rng.normal(size=n)
    return dataset_from_frame(df, target="y", study="year")


def _classification(n=300, seed=0):
    b = load_breast_cancer(as_frame=True).frame.sample(n, random_state=seed)
    return dataset_from_frame(b.reset_index(drop=True), target="target")


@pytest.fixture(scope="module")
def quick_reg():
    return audit(_regression(), models="lr,rf,dummy", quick=True, random_state=0)


@pytest.fixture(scope="module")
def full_reg():
    return audit(_regression(), models="lr,ridge,dummy", random_state=1)


# ---- the plan and the rows ------------------------------------------------------------------

def test_plan_uses_every_row_and_fewer_repeats_on_large_data():
    # 10x10 up to 3,000 rows; above, clip(round(30,000 / n), 2, 10) repeats — never fewer rows
    assert _plan(3000, None, False).scheme == "10x10"
    assert _plan(5000, None, False).scheme == "10x6" and _plan(5000, None, False).rows == 5000
    assert _plan(13440, None, False).scheme == "10x2"
    assert _plan(10**6, None, False).scheme == "10x2"
    assert _plan(5000, None, True).scheme == "5x2" and _plan(5000, None, True).rows == 5000
    assert _plan(150, None, False).rows == 150
    # a rare class: folds drop to the rarest class's count
    p = _plan(600, 12, False)
    assert p.rows == 600 and (p.n_folds, p.n_repeats) == (10, 10) and p.stratify
    p = _plan(600, 7, False)
    assert p.rows == 600 and p.scheme == "7x10"
    assert _plan(600, 7, True).scheme == "5x2"
    with pytest.raises(NotApplicableError, match="rarest class has 1 rows") as exc:
        _plan(600, 1, False)
    assert "merge classes" in exc.value.advice


def test_two_repeats_of_five_folds_are_not_read_as_dietterichs_5x2():
    """The budget's 5 folds x 2 repeats (on 15,000 rows or more) once became the text '5x2',
    which parse_scheme reads as five repeats of 2-fold CV: the run made 2-fold CV and the
    card reported it. The design's scheme must have the plan's folds and repeats."""
    from replikit.experiment.schemes import FiveByTwo, RepeatedKFold, parse_scheme

    costly = _plan(20_000, None, False, lambda k: 10.0)
    assert (costly.n_folds, costly.n_repeats) == (5, 2)
    scheme = parse_scheme(costly.scheme)
    assert type(scheme) is RepeatedKFold and (scheme.n_folds, scheme.n_repeats) == (5, 2)
    assert isinstance(parse_scheme(_plan(5000, None, True).scheme), FiveByTwo)


def test_a_shared_run_gives_the_same_audit_and_a_wrong_one_is_refused():
    """design() + experiment.run, passed as run=, is what audit() does on its own."""
    from replikit.compare import audit_design as design
    from replikit.errors import ParameterError
    from replikit.experiment import run

    ds = _regression(studies=(1, 2, 3))
    models = {"lr": "lr", "dummy": "dummy"}
    from replikit.experiment.models import make_models

    est = make_models("lr,dummy", "regression")
    d = design(ds, quick=True)
    assert d["metrics"] == ["r2", "mae"] and (d["n_repeats"], d["n_folds"]) == (5, 2)
    shared = run(est, ds.X, ds.y, scheme=d["scheme"], metrics=d["metrics"], random_state=4,
                 return_predictions=True)
    a = audit(ds, models=est, quick=True, random_state=4)
    b = audit(ds, models=est, quick=True, random_state=4, run=shared)
    pd.testing.assert_frame_equal(a.comparisons, b.comparisons)
    assert a.verdict == b.verdict and set(models) == set(a.models)
    other = run(est, ds.X, ds.y, scheme="3x1", metrics=d["metrics"], random_state=4)
    with pytest.raises(ParameterError, match="3 splits"):
        audit(ds, models=est, quick=True, random_state=4, run=other)


# ---- the comparisons ------------------------------------------------------------------------

def test_quick_mode_headline_is_the_f_test_and_each_pair_once(quick_reg):
    res = quick_reg
    assert isinstance(res, ComparisonAudit)
    assert res.scheme == "5x2" and res.metrics == ("r2", "mae") and res.primary_metric == "r2"
    assert res.headline_test == "combined_f_5x2cv"
    assert primary_test(5, 2) == "combined_ftest_5x2cv"
    pairs = {("lr", "rf"), ("lr", "dummy"), ("rf", "dummy")}
    assert set(res.pairs) == pairs
    head = res.headline
    assert len(head) == 3 and set(zip(head.a, head.b, strict=True)) == pairs
    sentence = res.verdict.sentence
    for a, b in pairs:  # every pair named exactly once
        assert sentence.count(f"{a} vs {b}") == 1, (a, b, sentence)
    assert "5x2cv combined F test" in sentence and res.verdict.metric == "R²"
    assert any("quick mode" in c for c in res.verdict.caveats)
    assert res.rows_used == res.n_rows == 600  # every row: no subsample caveat
    assert not any("rows" in c for c in res.verdict.caveats)


def test_holm_family_is_pairs_times_metrics(quick_reg):
    f = quick_reg.comparisons
    for test in ("paired_t_5x2cv", "combined_f_5x2cv"):
        t = f[f["test"] == test]
        assert len(t) == 6
        np.testing.assert_allclose(t["pvalue_adjusted"],
                                   multipletests(t["pvalue"], method="holm")[1], rtol=1e-12)


def test_simultaneous_intervals_are_bonferroni(full_reg):
    """Each corrected-t interval is estimate ± t_{df}(1 - 0.05/(2m)) · se with m = 6."""
    f = full_reg.comparisons
    assert full_reg.simultaneous and full_reg.scheme == "10x10"
    t = f[f["test"] == "corrected_repeated_kfold_t"]
    m = len(t)
    assert m == 6
    q = stats.t.ppf(1 - 0.05 / (2 * m), t["df"])
    np.testing.assert_allclose(t["ci_low"], t["estimate"] - q * t["se"], rtol=1e-10)
    np.testing.assert_allclose(t["ci_high"], t["estimate"] + q * t["se"], rtol=1e-10)
    np.testing.assert_allclose(t["ci_level"], 1 - 0.05 / m)
    # an interval that misses 0 implies a Holm rejection (the interval inverts the test)
    misses = (t["ci_low"] > 0) | (t["ci_high"] < 0)
    assert t.loc[misses, "reject"].astype(bool).all()
    # Bayesian rows keep their 95% credible interval
    bayes = f[f["test"] == "bayesian_correlated_t"]
    np.testing.assert_allclose(bayes["ci_level"], 0.95)
    assert "simultaneous 95% CI" in full_reg.verdict.sentence


@pytest.mark.slow
def test_simultaneous_coverage_holds_jointly():
    """On scores where every true difference is 0, all simultaneous intervals of a test cover
    0 together in >= 95% of datasets; the marginal ones do not (3 of 6 pairs can miss).

    One compare_scores call per dataset (the simultaneous intervals, the ones under test); the
    marginal intervals are the same rows' estimate ± t_df(0.975) · se, checked against
    compare_scores(simultaneous=False) on the first datasets (a second call on every dataset
    doubled the test's time and checked nothing more)."""
    rng = np.random.default_rng(5)
    r, k, models = 4, 5, ("a", "b", "c", "d")
    miss_sim = miss_marg = 0
    n_sets, n_checked = 200, 10
    cells = pd.MultiIndex.from_product([models, range(r), range(k)],
                                       names=["model", "repeat", "fold"]).to_frame(index=False)
    cells = cells.assign(study="s", metric="acc", n_train=10**9, n_test=1)  # correction ~ 0
    for i in range(n_sets):
        v = 0.8 + 0.01 * rng.normal(size=(len(models), r, k))  # independent splits: no overlap
        frame = cells.assign(value=v.ravel())
        f = compare_scores(frame, tests=["corrected_repeated_kfold_ttest"],
                           simultaneous=True).frame
        q = stats.t.ppf(0.975, f["df"])
        marg_low, marg_high = f["estimate"] - q * f["se"], f["estimate"] + q * f["se"]
        if i < n_checked:
            g = compare_scores(frame, tests=["corrected_repeated_kfold_ttest"],
                               simultaneous=False).frame
            np.testing.assert_allclose(g["ci_low"], marg_low, rtol=1e-10)
            np.testing.assert_allclose(g["ci_high"], marg_high, rtol=1e-10)
        miss_sim += bool(((f["ci_low"] > 0) | (f["ci_high"] < 0)).any())
        miss_marg += bool(((marg_low > 0) | (marg_high < 0)).any())
    se = np.sqrt(0.05 * 0.95 / n_sets)
    assert miss_sim / n_sets <= 0.05 + 2.5 * se
    assert miss_marg / n_sets > 0.10  # about 1 - 0.95^6 with correlated pairs


def test_key_number_is_best_minus_next_from_the_scores(full_reg):
    res = full_reg
    means = (res.scores.frame.query("metric == 'r2'").groupby("model")["value"].mean()
             .sort_values(ascending=False))
    assert (res.best, res.runner_up) == tuple(means.index[:2])
    assert res.verdict.estimate == pytest.approx(means.iloc[0] - means.iloc[1], rel=1e-9)
    assert res.verdict.ci_low <= res.verdict.estimate <= res.verdict.ci_high
    pd.testing.assert_series_equal(res.mean_scores["r2"].sort_values(ascending=False),
                                   means, check_names=False)


def test_naive_contrast_counts(full_reg):
    res = full_reg
    naive = res.naive.frame
    assert set(naive["test"]) == {"naive_paired_t"} and not naive["valid"].any()
    assert set(naive["metric"]) == {"r2"}
    assert res.naive_rejections == int(naive["reject"].astype(bool).sum())
    assert res.valid_rejections == int(res.headline["reject"].astype(bool).sum())


def test_error_metric_as_primary_picks_the_lowest():
    ds = _regression(studies=(1, 2, 3))
    res = audit(ds, models="lr,dummy", metric="mae", quick=True, random_state=0)
    assert res.metrics == ("mae", "r2") and res.verdict.metric == "MAE"
    assert res.best == "lr" and res.verdict.estimate < 0  # lr's MAE is lower
    assert "lr better (lr vs dummy" in res.verdict.sentence
    # the ROPE of MAE is 1% of the outcome's SD on the compared rows
    assert res.tolerance == {"mae": pytest.approx(0.01 * ds.y.std()), "r2": 0.01}


def test_default_metric_follows_the_audit_rule():
    res = audit(_classification(200), models="lr,dummy", quick=True, random_state=0)
    assert res.primary_metric == "roc_auc" and res.metrics == ("roc_auc", "accuracy")
    assert res.stratified and res.verdict.sentence.startswith("On ROC AUC")


# ---- across studies -------------------------------------------------------------------------

def test_study_scores_in_every_form_give_the_same_friedman():
    rng = np.random.default_rng(0)
    wide = pd.DataFrame(rng.normal(size=(6, 3)) + [0.5, 0.3, 0.0],
                        index=[f"s{i}" for i in range(6)], columns=["lr", "ridge", "dummy"])
    wide -= wide.to_numpy().max() - 0.9  # an R² is at most 1 (the ranks are unchanged)
    long = wide.rename_axis("study").reset_index().melt("study", var_name="model",
                                                        value_name="score")
    scores = long.rename(columns={"score": "value"}).assign(repeat=0, fold=0, metric="r2")
    ds = _regression(n_per=60)
    results = [audit(ds, models="lr,ridge,dummy", quick=True, random_state=0, study_scores=s)
               for s in (wide, long, scores)]
    ref = stats.friedmanchisquare(*(wide[m] for m in ["lr", "ridge", "dummy"]))
    for res in results:
        assert res.nemenyi.friedman.statistic == pytest.approx(ref.statistic, rel=1e-12)
        assert res.nemenyi.friedman.pvalue == pytest.approx(ref.pvalue, rel=1e-10)
        ranks = stats.rankdata(-wide.to_numpy(), axis=1).mean(axis=0)
        got = res.ranks_frame().set_index("model")["mean_rank"]
        np.testing.assert_allclose(got[["lr", "ridge", "dummy"]], ranks)
    n, k = wide.shape  # Iman-Davenport F from scipy's chi2 (Demšar 2006, sec. 3.2.2)
    f_f = (n - 1) * ref.statistic / (n * (k - 1) - ref.statistic)
    f_p = stats.f.sf(f_f, k - 1, (k - 1) * (n - 1))
    assert results[0].nemenyi.friedman.f_pvalue == pytest.approx(f_p, rel=1e-10)
    assert results[0].friedman_rejects == (f_p <= 0.05)
    ax = results[0].plot_cd()
    assert ax.figure is not None


def test_incomplete_studies_are_named_and_too_few_give_no_friedman():
    wide = pd.DataFrame({"lr": [0.5, 0.4, np.nan, 0.6], "ridge": [0.3, 0.2, 0.4, 0.5]},
                        index=["a", "b", "c", "d"])
    ds = _regression(n_per=60)
    res = audit(ds, models="lr,ridge", quick=True, random_state=0, study_scores=wide)
    # study c scores one model only: no ranking (a study missing one of three or more
    # models stays in, ranked by the Skillings-Mack test: tests/compare/test_audit_holes.py)
    assert res.studies_left_out == (("c", "fewer than two models have a score"),)
    assert res.nemenyi is not None and len(res.study_table) == 3
    res2 = audit(ds, models="lr,ridge", quick=True, random_state=0,
                 study_scores=wide.iloc[:2])
    assert res2.nemenyi is None and any("fewer than 3" in n for n in res2.notes)
    with pytest.raises(NotApplicableError):
        res2.plot_cd()
    with pytest.raises(ParameterTypeError, match="study_scores"):
        audit(ds, models="lr,ridge", quick=True, study_scores=[1, 2, 3])
    with pytest.raises(DataError, match="study_scores"):
        audit(ds, models="lr,ridge", quick=True, study_scores=wide[["lr"]])


# ---- not applicable, reproducibility --------------------------------------------------------

def test_not_applicable_cases():
    ds = _regression(n_per=40)
    with pytest.raises(NotApplicableError, match="one model only"):
        audit(ds, models="lr")
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.normal(size=120), "y": [0] * 119 + [1]})
    one = dataset_from_frame(df, target="y")
    with pytest.raises(NotApplicableError, match="rarest class"):
        audit(one, models="lr,dummy", metric="accuracy")
    with pytest.raises(ParameterTypeError, match="dataset"):
        audit(df, models="lr,dummy")


def test_same_seed_same_numbers_serial_or_two_workers():
    ds = _regression(n_per=60)
    a = audit(ds, models="lr,tree,dummy", quick=True, random_state=4)
    b = audit(ds, models="lr,tree,dummy", quick=True, random_state=4, n_jobs=2)
    cols = ["estimate", "ci_low", "ci_high", "statistic", "pvalue", "pvalue_adjusted"]
    pd.testing.assert_frame_equal(a.comparisons[cols], b.comparisons[cols])
    assert a.verdict == b.verdict
    # None: fresh entropy, recorded so the run can be repeated
    c = audit(ds, models="lr,tree,dummy", quick=True)
    d = audit(ds, models="lr,tree,dummy", quick=True,
              random_state=np.random.SeedSequence(c.random_state_entropy))
    pd.testing.assert_frame_equal(c.comparisons[cols], d.comparisons[cols])


# ---- the verdict logic on a hand-made table -------------------------------------------------

def _frame(rows):
    cols = ["a", "b", "metric", "test", "method", "estimate", "ci_low", "ci_high",
            "pvalue_adjusted", "reject", "conclusion", "valid", "headline"]
    return pd.DataFrame(rows, columns=cols)


def test_verdict_names_a_pair_once_and_flags_a_disagreeing_test():
    """The bug this entry fixes: in quick mode a pair appeared once per valid test."""
    F, T = "combined_f_5x2cv", "paired_t_5x2cv"
    frame = _frame([
        ["rf", "dummy", "r2", F, "5x2cv combined F test", 0.2, np.nan, np.nan, 0.029, True,
         "rf better", True, True],
        ["rf", "dummy", "r2", T, "5x2cv paired t-test", 0.2, -0.1, 0.5, 0.042, True,
         "rf better", True, False],
        ["lr", "rf", "r2", F, "5x2cv combined F test", 0.01, np.nan, np.nan, 0.03, True,
         "lr better", True, True],
        ["lr", "rf", "r2", T, "5x2cv paired t-test", 0.01, -0.1, 0.1, 0.3, False,
         "no difference shown", True, False],
    ])
    plan = _plan(300, None, True)
    v = _verdict(frame, "r2", "R²", F, "rf", "lr", plan, 300, 300, True, [])
    assert v.sentence.count("rf vs dummy") == 1 and v.sentence.count("lr vs rf") == 1
    assert "Holm p = 0.029" in v.sentence and "0.042" not in v.sentence
    assert any("5x2cv paired t-test decides otherwise on lr vs rf" in c for c in v.caveats)
    # the F has no interval: the key number's comes from the design's other t-type test
    assert v.estimate == pytest.approx(-0.01) and (v.ci_low, v.ci_high) == (-0.1, 0.1)
    assert "CI [-0.1, 0.1], 5x2cv paired t-test" in v.tolerance
    assert v.level == "good"
    none = frame.assign(reject=False)
    v2 = _verdict(none, "r2", "R²", F, "rf", "lr", plan, 300, 300, True, [])
    assert v2.sentence.startswith("Undecided on R²: rf vs dummy and lr vs rf — neither a "
                                  "difference (5x2cv combined F test")
    assert v2.level == "warn"
    # a difference not shown is never read as equivalence
    assert "equivalent" not in v2.sentence and "0 of 2 pairs decided" in v2.tolerance


def _tost(rows):
    """TOST rows (a, b, Holm p) for :func:`_frame`."""
    return [[a, b, "r2", "equivalence_tost", "TOST equivalence test", 0.0, -0.005, 0.005, p,
             p <= 0.05, "equivalent within the tolerance" if p <= 0.05 else
             "equivalence not shown", True, False] for a, b, p in rows]


def test_light_is_green_only_when_every_pair_is_decided():
    """A pair is decided by a difference (headline test) or equivalence (TOST); the light is
    green when all are, amber otherwise; the tolerance is stated with the interval."""
    K = "corrected_repeated_kfold_t"
    head = [["lr", "dummy", "r2", K, "corrected t", 0.3, 0.2, 0.4, 0.001, True, "lr better",
             True, True],
            ["lr", "ridge", "r2", K, "corrected t", 0.001, -0.004, 0.006, 0.6, False,
             "no difference shown", True, True]]
    plan = _plan(3000, None, False)
    args = ("r2", "R²", K, "lr", "ridge", plan, 3000, 3000, False, [])
    # TOST shows lr ~ ridge within 0.01: every pair decided
    v = _verdict(_frame(head + _tost([("lr", "dummy", 1.0), ("lr", "ridge", 0.001)])), *args,
                 tolerance=0.01)
    assert v.level == "good"
    assert "Shown equivalent within ±0.01 (TOST equivalence test" in v.sentence
    assert "lr vs ridge" in v.sentence.split("Shown equivalent")[1]
    assert v.tolerance.startswith("judged against ±0.01 in R² (the default")
    assert "2 of 2 pairs decided" in v.tolerance and "[-0.004, 0.006]" in v.tolerance
    # the TOST does not reject: the pair stays undecided and the light amber
    v = _verdict(_frame(head + _tost([("lr", "dummy", 1.0), ("lr", "ridge", 0.2)])), *args,
                 tolerance=0.01, tolerance_why="the tolerance given")
    assert v.level == "warn" and "Undecided on R²: lr vs ridge" in v.sentence
    assert "equivalent" not in v.sentence and "(the tolerance given)" in v.tolerance
    # without TOST rows nothing is ever called equivalent
    v = _verdict(_frame(head), *args)
    assert v.level == "warn" and "equivalent" not in v.sentence


def test_light_rule_vectorised():
    from replikit.compare.audit import _light

    differ = np.array([[True, False], [True, False], [False, False]])
    equiv = np.array([[False, True], [False, False], [False, False]])
    assert _light(differ, equiv).tolist() == ["good", "warn", "warn"]


# ---- across studies: the Bayesian posteriors in the verdict -----------------------------------

def _study_folds(n_studies, seed=0, gap=0.05):
    """Fold scores (3 folds) of lr and ridge in ``n_studies`` studies; lr better by ``gap``."""
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(n_studies):
        base = 0.5 + 0.1 * rng.standard_normal()
        for f in range(3):
            e = 0.02 * rng.standard_normal()
            rows += [(f"s{s}", "lr", 0, f, "r2", base + gap + e + 0.01 * rng.standard_normal(),
                      40, 20),
                     (f"s{s}", "ridge", 0, f, "r2", base + e, 40, 20)]
    return pd.DataFrame(rows, columns=["study", "model", "repeat", "fold", "metric", "value",
                                       "n_train", "n_test"])


def test_across_studies_posteriors_reach_the_verdict():
    from replikit._random import root_seed_sequence
    from replikit.compare import bayesian_signed_rank_test, hierarchical_test

    ds = _regression(n_per=60)
    folds = _study_folds(6)
    res = audit(ds, models="lr,ridge", quick=True, random_state=0, study_scores=folds)
    assert [r.test for r in res.across_studies] == ["hierarchical", "bayesian_signed_rank"]
    best, nxt = res.best, res.runner_up
    root = root_seed_sequence(0)
    tol = res.tolerance["r2"]
    ref_sr = bayesian_signed_rank_test(res.study_table, best, nxt, tolerance=tol,
                                       n_resamples=20_000,
                                       random_state=task_rng(root, ("compare-across",)))
    assert res.across_studies[1].probabilities == ref_sr.probabilities
    sub = folds[folds["model"].isin([best, nxt])]
    ref_h = hierarchical_test(sub, best, nxt, tolerance=tol, n_draws=2000, n_chains=2,
                              n_warmup=500,
                              random_state=task_rng(root, ("compare-hierarchical",)))
    assert res.across_studies[0].probabilities == ref_h.probabilities
    assert "Across 6 studies (hierarchical model" in res.verdict.sentence
    frame = res.across_frame()
    assert list(frame["test"]) == ["hierarchical", "bayesian_signed_rank"]
    # the report section formats them: a paragraph and a table of the two posteriors
    from replikit.report.blocks import Paragraph, Table
    from replikit.report.sections.compare import _bayes_blocks

    blocks = _bayes_blocks(res)
    assert [type(b) for b in blocks] == [Paragraph, Table]
    assert len(blocks[1].frame) == 2 and f"P({best} better)" in blocks[1].frame.columns
    # study means only: the signed-rank test alone
    means = folds.groupby(["study", "model"])["value"].mean().unstack("model")
    res2 = audit(ds, models="lr,ridge", quick=True, random_state=0, study_scores=means)
    assert [r.test for r in res2.across_studies] == ["bayesian_signed_rank"]
    assert "Bayesian signed-rank test" in res2.verdict.sentence
    # fewer than five studies: no posterior, the verdict says nothing across studies
    res3 = audit(ds, models="lr,ridge", quick=True, random_state=0,
                 study_scores=_study_folds(4))
    assert res3.across_studies == () and res3.across_frame() is None
    assert "Across" not in res3.verdict.sentence


def test_many_pairs_are_grouped_by_winner():
    """With more than three pairs the verdict names each winner once ("lr beats knn and
    dummy") and counts the pairs without a shown difference, instead of listing every pair."""
    import pandas as pd

    from replikit.compare.audit import _grouped

    main = pd.DataFrame({"a": ["lr", "lr", "rf", "knn"], "b": ["knn", "dummy", "dummy", "rf"],
                         "conclusion": ["lr better", "lr better", "rf better", "rf better"]})
    assert _grouped(main, [True, True, True, False]) == ["lr beats knn and dummy",
                                                         "rf beats dummy"]
    assert _grouped(main, [False, False, False, True]) == ["rf beats knn"]

def test_across_studies_sentence_names_the_model_ranked_best_within_studies():
    # gapminder: the pooled best pair was gb and rf ("rf better across studies"), while within
    # four of five continents lr ranked first: the card says so instead of leaving "rf better"
    # to read as "rf is best"
    import pandas as pd

    from replikit.compare.audit import _top_within

    table = pd.DataFrame({"lr": [0.9, 0.8, 0.85, 0.7], "rf": [0.6, 0.7, 0.5, 0.75],
                          "gb": [0.5, 0.6, 0.4, 0.72]}, index=list("ABCD"))
    words = _top_within(table, True, ("gb", "rf"))
    assert words == " Within the studies lr ranks best (mean rank 1.5 of 3), ahead of both."
    assert _top_within(table, True, ("lr", "rf")) == ""  # the pair holds the top model
    # lower is better (an error): the ranks turn round
    assert "gb ranks best" in _top_within(table, False, ("lr", "rf"))
    assert _top_within(table[["lr", "rf"]], True, ("gb", "rf")) == ""  # two models only
