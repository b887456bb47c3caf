"""replikit.multistudy.audit: the recipe of the audit report's cross-study section (Parmigiani 2023),
checked against hand computations with scikit-learn and numpy."""

import importlib

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.dummy import DummyRegressor
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.metrics import r2_score
from sklearn.svm import LinearSVC

from replikit._format import number, pvalue
from replikit.data.userdata import dataset_from_frame
from replikit.errors import NotApplicableError, ParameterError, ParameterTypeError
from replikit.multistudy import MultiStudyAudit, audit, study_utilities

# the module (the package attribute `audit` is the function)
audit_module = importlib.import_module("replikit.multistudy.audit")


def _regression(n=60, K=3, seed=0, shift=0.0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x1": rng.normal(size=n * K), "x2": rng.normal(size=n * K),
                       "site": np.repeat([f"s{k}" for k in range(K)], n)})
    df["y"] = df.x1 - 0.5 * df.x2 + rng.normal(size=n * K) + shift * (df.site == "s0")
    return df


def _classification(n=60, K=3, seed=1):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x1": rng.normal(size=n * K), "x2": rng.normal(size=n * K),
                       "site": np.repeat([f"s{k}" for k in range(K)], n)})
    df["y"] = np.where(df.x1 + rng.normal(size=n * K) > 0, "yes", "no")
    return df


def _ds(df, study="site"):
    return dataset_from_frame(df, target="y", study=study)


REG = {"lr": LinearRegression(), "dummy": DummyRegressor()}


@pytest.fixture(scope="module")
def reg_audit():
    return audit(_ds(_regression()), models=REG, quick=True, random_state=3)


def test_rules_are_fits_on_half_of_every_study(reg_audit):
    a = reg_audit
    ds = _ds(_regression())
    X, y, s = ds.X.to_numpy(), ds.y.to_numpy(), ds.study.to_numpy()
    f = a.predictions.frame
    for name, est in REG.items():
        g = f[f["model"] == name]
        test = np.sort(g["row"].to_numpy())
        # half of every study held out (rounded up), the rest trains the rule
        assert pd.Series(s[test]).value_counts().tolist() == [30, 30, 30]
        train = np.setdiff1d(np.arange(len(y)), test)
        ref = clone(est).fit(X[train], y[train]).predict(X[g["row"].to_numpy()])
        np.testing.assert_allclose(g["y_pred"].to_numpy(), ref, rtol=1e-10)
        assert (g["study"].to_numpy() == s[g["row"].to_numpy()]).all()
        # the same split for every model
        assert np.array_equal(test, np.sort(f[f["model"] == "lr"]["row"].to_numpy()))
        # squared-error utility: U_k = -MSE_k of the held-out half
        su = a.rule_utilities[name]
        for k, study in enumerate(su.studies):
            m = g["study"] == study
            assert su.utility[k] == pytest.approx(-np.mean((g["y_true"][m] - g["y_pred"][m]) ** 2))
        assert a.mean_utility[name] == pytest.approx(-np.mean((g["y_true"] - g["y_pred"]) ** 2))
    assert a.n_train == len(y) - 90


def test_best_rule_assessed_and_numbers_agree(reg_audit):
    a = reg_audit
    assert isinstance(a, MultiStudyAudit)
    assert a.rule == max(a.mean_utility, key=a.mean_utility.get) == "lr"
    assert a.utility == "squared" and a.utility_label == "minus the squared error"
    U = a.utilities.utility
    assert a.statistic == pytest.approx(U.max() - U.min())
    draws = a.assessment.bootstrap.draws["absolute"]
    ci = a.assessment.confidence_interval(0.9)
    assert [ci.low, ci.high] == pytest.approx(np.quantile(draws, [0.05, 0.95]), rel=1e-12)
    # the headline interval: [Bonferroni lower bound, the intersection-union test's upper
    # bound] of max|Δ|
    from replikit.multistudy.equivalence import epsilon_test
    eq = epsilon_test(a.utilities, alpha=0.05)
    assert a.smallest_tolerance == pytest.approx(eq.smallest_tolerance, rel=1e-12)
    assert a.lower_bound == pytest.approx(eq.lower_bound, rel=1e-12)
    assert tuple(a.confidence_interval(0.95)) == pytest.approx((eq.lower_bound,
                                                                eq.smallest_tolerance))
    assert a.confidence_interval(0.9).high < a.smallest_tolerance
    assert a.spread == pytest.approx(eq.spreads["eb"]) and a.spread <= a.statistic
    assert a.n_resamples == len(draws) == 200 and a.permutation.n_resamples == 199
    assert a.pvalue == a.assessment.permutation_utility.pvalue
    # the Predictions of the rule feed the other functions of replikit.multistudy directly
    again = study_utilities(a.predictions, "squared", model="lr")
    np.testing.assert_allclose(again.utility, U)
    frame = a.to_frame()
    assert list(frame.columns) == ["study", "n", "utility", "se", "ci_low", "ci_high"]
    assert (frame["ci_low"] <= frame["utility"]).all()
    assert (frame["utility"] <= frame["ci_high"]).all()
    assert a.plot().get_ylabel() == "study"


def test_verdict_states_utility_spread_pvalue_and_caveats(reg_audit):
    a = reg_audit
    v = a.verdict
    assert v.estimate == a.spread
    assert (v.ci_low, v.ci_high) == tuple(a.confidence_interval())
    # earned against the tolerance (10% of the pooled loss by default), not the permutation test
    from replikit.multistudy.kernels import card_light
    assert v.level == card_light(a.lower_bound, a.smallest_tolerance, a.tolerance)
    assert "minus the squared error" in v.sentence and pvalue(a.pvalue) in v.sentence
    assert number(a.statistic) in v.sentence and "utility" in v.metric
    assert number(a.spread) in v.sentence
    assert number(a.smallest_tolerance if v.level != "bad" else a.lower_bound) in v.sentence
    assert number(a.tolerance) in v.tolerance and "10% of the pooled" in v.tolerance
    assert v.label == "largest difference between studies, mean squared error"
    # lr beats dummy in at least u of K studies: per-study paired t-tests, partial conjunction
    conj = a.conjunction.table.set_index("finding").loc["lr beats dummy"]
    assert f"dummy in at least {int(conj['replicated_in'])} of the 3 studies" in v.sentence
    pred = a.predictions.frame
    lr, du = (pred[pred["model"] == m].set_index("row") for m in ("lr", "dummy"))
    diff = (-(lr["y_true"] - lr["y_pred"]) ** 2) - (-(du["y_true"] - du["y_pred"]) ** 2
                                                    ).reindex(lr.index)
    from scipy import stats

    from replikit.multistudy import partial_conjunction
    p = [stats.ttest_1samp(diff[lr["study"] == s], 0, alternative="greater").pvalue
         for s in a.utilities.studies]
    assert conj["pvalue_u3"] == pytest.approx(partial_conjunction(p, 3), rel=1e-9)
    assert any("half" in c for c in v.caveats) and any("quick" in c for c in v.caveats)


def test_dominance_of_the_other_rules(reg_audit):
    tab = reg_audit.rules
    assert tab["rule"].tolist() == ["lr", "dummy"]
    dummy = tab.set_index("rule").loc["dummy"]
    lr_u = reg_audit.rule_utilities["lr"].utility
    dummy_u = reg_audit.rule_utilities["dummy"].utility
    # Def. 3.3: lr dominates when it is at least as good in every study and more replicable
    better = bool(np.all(lr_u >= dummy_u))
    assert not (dummy["dominates"] and better)
    assert dummy["dominated"] == (better and reg_audit.utilities.smallest_tolerance()
                                  <= dummy["smallest_tolerance"])


def test_training_technique_on_the_primary_metric(reg_audit):
    a = reg_audit
    ds = _ds(_regression())
    X, y, s = ds.X.to_numpy(), ds.y.to_numpy(), ds.study.to_numpy()
    assert a.metric == "r2" and a.n_folds == 3
    fit = LinearRegression().fit(X[s == "s0"], y[s == "s0"])
    assert a.cross_study.matrix.loc["s0", "s2"] == pytest.approx(
        r2_score(y[s == "s2"], fit.predict(X[s == "s2"])))
    assert a.loso_model == "lr"
    lo = a.loso.scores.set_index("study")["value"]
    fit = LinearRegression().fit(X[s != "s1"], y[s != "s1"])
    assert lo["s1"] == pytest.approx(r2_score(y[s == "s1"], fit.predict(X[s == "s1"])))


def test_loso_budget_falls_back_to_the_linear_model(monkeypatch):
    from sklearn.tree import DecisionTreeRegressor

    # a baseline or linear rule is never replaced (its fits are cheap)...
    monkeypatch.setattr(audit_module, "LOSO_BUDGET", -1)
    a = audit(_ds(_regression(shift=0)), models={"dummy": DummyRegressor()}, quick=True,
              random_state=0)
    assert a.rule == "dummy" and a.loso_model == "dummy"
    # ...a costly one is, over the budget of row-fits (a count: the same on every machine)
    a = audit(_ds(_regression(shift=0)), models={"tree": DecisionTreeRegressor(max_depth=2)},
              quick=True, random_state=0)
    assert a.rule == "tree" and a.loso_model == "lr" and a.loso_row_fits > 0
    assert any("leave-one-study-out uses lr" in n for n in a.notes)
    assert any("budget of row-fits" in c for c in a.verdict.caveats)


def test_reproducible_and_random_state_matters():
    ds = _ds(_regression(seed=4))
    a = audit(ds, models=REG, quick=True, random_state=7)
    b = audit(ds, models=REG, quick=True, random_state=7)
    c = audit(ds, models=REG, quick=True, random_state=8)
    pd.testing.assert_frame_equal(a.predictions.frame, b.predictions.frame)
    assert a.statistic == b.statistic and a.pvalue == b.pvalue
    pd.testing.assert_frame_equal(a.cross_study.matrix, b.cross_study.matrix)
    assert not a.predictions.frame["row"].equals(c.predictions.frame["row"])


@pytest.mark.slow
def test_bit_identical_serial_and_two_workers():
    from sklearn.ensemble import RandomForestRegressor

    ds = _ds(_regression(seed=5))
    models = {"lr": LinearRegression(), "rf": RandomForestRegressor(n_estimators=10)}
    a = audit(ds, models=models, quick=True, random_state=1)
    b = audit(ds, models=models, quick=True, random_state=1, n_jobs=2)
    pd.testing.assert_frame_equal(a.predictions.frame, b.predictions.frame)
    pd.testing.assert_frame_equal(a.cross_study.matrix, b.cross_study.matrix)
    pd.testing.assert_frame_equal(a.loso.scores, b.loso.scores)
    assert a.verdict == b.verdict


def test_classification_brier_utility_and_accuracy_without_probabilities():
    ds = _ds(_classification())
    a = audit(ds, models={"logit": LogisticRegression()}, quick=True, random_state=0)
    assert a.utility == "brier" and a.metric == "balanced_accuracy"
    g = a.predictions.frame
    p1 = g["proba_1"].to_numpy()
    yt = g["y_true"].to_numpy()
    u = -0.5 * ((p1 - (yt == 1)) ** 2 + ((1 - p1) - (yt == 0)) ** 2)
    assert a.mean_utility["logit"] == pytest.approx(u.mean())
    b = audit(ds, models={"svm": LinearSVC()}, metric="accuracy", quick=True, random_state=0)
    assert b.utility == "accuracy" and b.metric == "accuracy"
    assert {"sensitivity", "specificity", "prevalence"} <= set(b.to_frame().columns)


def test_small_studies_left_out_with_reasons():
    df = _regression()
    tiny = pd.DataFrame({"x1": [0.1] * 12, "x2": [0.2] * 12, "site": "tiny",
                         "y": np.linspace(0, 1, 12)})
    a = audit(_ds(pd.concat([df, tiny], ignore_index=True)), models=REG, quick=True,
              random_state=0)
    assert a.studies_left_out == (("tiny", "12 rows (fewer than 20)"),)
    assert "tiny" not in a.utilities.studies and "tiny" not in a.cross_study.studies
    assert any("tiny (12 rows" in n for n in a.notes)
    # a class too rare in a study
    c = _classification()
    c.loc[(c.site == "s2") & (c.y == "yes"), "y"] = "no"
    c.loc[c.index[c.site == "s2"][:3], "y"] = "yes"
    b = audit(_ds(c), models={"logit": LogisticRegression()}, quick=True, random_state=0)
    assert b.studies_left_out == (("s2", "class yes too rare"),)


def test_studies_with_few_held_out_units_leave_the_assessment(monkeypatch):
    monkeypatch.setattr(audit_module, "MIN_STUDY_ROWS", 4)
    df = pd.concat([_regression(), _regression(n=8, K=1, seed=9).assign(site="small")],
                   ignore_index=True)
    a = audit(_ds(df), models=REG, quick=True, random_state=0)
    assert a.studies_dropped == ("small",)
    assert "small" not in a.utilities.studies and "small" in a.cross_study.studies
    assert all("small" not in su.studies for su in a.rule_utilities.values())


def test_not_applicable_and_input_errors():
    df = _regression()
    with pytest.raises(NotApplicableError, match="one study") as exc:
        audit(_ds(df, study=None), models=REG)
    assert "--study" in exc.value.advice
    small = _regression(n=15)
    with pytest.raises(NotApplicableError, match="fewer than two studies have 20 rows"):
        audit(_ds(small), models=REG)
    with pytest.raises(ParameterTypeError, match="dataset"):
        audit(df, models=REG)
    with pytest.raises(ParameterTypeError, match="models"):
        audit(_ds(df), models={})
    with pytest.raises(ParameterError, match="metric"):
        audit(_ds(df), models=REG, metric="accuracy")
