"""The audit entry ``replikit.replicate.audit``: the replication analysis of Vijayakumar &
Cheung (2021) on a dataset.

Checked against independent references (scikit-learn's ``LinearRegression`` fitted by the runner
on the same scheme, the Olkin-Finn formula, the single-study functions) and by properties (natural
order of studies, what is left out and why, reproducibility whatever the backend).
"""

import re

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LinearRegression
from sklearn.tree import DecisionTreeRegressor

from replikit._random import root_seed_sequence
from replikit.data.userdata import dataset_from_frame
from replikit.errors import NotApplicableError, ParameterError
from replikit.experiment import run
from replikit.replicate import (
    LINEAR_MODEL,
    HoldOutCV,
    ReplicationAudit,
    audit,
    consistency,
    from_summary,
    inconsistency,
    meta_analysis,
)
from replikit.replicate import audit as audit_entry

AUDIT_MODULE = __import__("sys").modules["replikit.replicate.audit"]


def _frame(sizes, random_state=0, noise=1.0, labels=None):
    rng = np.random.default_rng(random_state)
    n = sum(sizes)
    labels = labels or [str(1990 + 2 * i) for i in range(len(sizes))]
    df = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.normal(size=n)})
    df["site_level"] = np.repeat(rng.normal(size=len(sizes)), sizes)  # constant within study
    df["y"] = df.x1 + 0.5 * df.x2 + noise * rng.normal(size=n)
    df["year"] = np.repeat(labels, sizes)
    return df


def _dataset(sizes, **kw):
    return dataset_from_frame(_frame(sizes, **kw), target="y", study="year")


def test_the_package_binds_the_function():
    import replikit.replicate as pkg
    import replikit.replicate.audit  # noqa: F401  (importing the module must not rebind it)

    assert callable(pkg.audit) and pkg.audit is audit_entry is AUDIT_MODULE.audit


def test_batched_least_squares_equals_the_runner_on_the_same_scheme():
    """The fast path fits exactly the splits experiment.run fits on HoldOutCV, study by study
    (fewer folds in small studies), and predicts what LinearRegression predicts there."""
    ds = _dataset([90, 150, 400], random_state=1)
    X, y = ds.X.to_numpy(float), ds.y.to_numpy(float)
    study = ds.study.astype(str).to_numpy()
    order = ["1990", "1992", "1994"]
    scheme = HoldOutCV(10, min_fold_rows=20)
    root = root_seed_sequence(11)
    labels = AUDIT_MODULE._fold_labels(scheme, study, order, root)
    fast = AUDIT_MODULE._linear_fits(X, y, study, order, labels)
    res = run({"ols": LinearRegression()}, X, y, scheme=scheme, metrics=["r2"], study=study,
              random_state=root)
    scores, preds = res.scores.frame, res.predictions.frame
    for s, k in zip(order, (3, 5, 10), strict=True):  # 60, 100, 267 training rows
        assert scheme.folds_for(int((study == s).sum())) == k
        sc = scores[scores.study == s].sort_values("fold")
        assert sc["fold"].tolist() == list(range(k + 1))
        np.testing.assert_allclose(fast[s].fold_r2, sc["value"].to_numpy()[:k], rtol=1e-9)
        assert fast[s].fold_n.tolist() == sc["n_test"].tolist()[:k]
        test = preds[(preds.study == s) & (preds.fold == k)].sort_values("row")
        np.testing.assert_allclose(fast[s].test_pred, test["y_pred"], rtol=1e-9, atol=1e-10)
        np.testing.assert_array_equal(fast[s].test_y, test["y_true"])


def test_linear_model_and_runner_lr_agree_through_the_entry():
    # in quick mode the linear model and the audited models share rows and design: the
    # runner's LinearRegression must give the fast path's numbers
    res = audit(_dataset([300, 300, 300]), models={"ols": LinearRegression()}, quick=True,
                random_state=3)
    est = res.estimates.set_index(["model", "source", "study"])["estimate"]
    lin, ols = est.loc[LINEAR_MODEL], est.loc["ols"]
    np.testing.assert_allclose(lin.sort_index().to_numpy(), ols.sort_index().to_numpy(),
                               rtol=1e-9)


def test_audited_models_share_the_linear_models_test_parts_and_a_shared_run():
    """Full mode: the audited models use 5 CV folds (the linear model 10) on the same 2:1
    train/test parts, so their test R2 equals the linear model's for least squares; a shared
    run of audit_design (more studies and models than needed) gives the same audit, and a run
    of another design is refused."""
    from replikit.replicate import audit_design

    ds = _dataset([300, 300, 300, 40])
    res = audit(ds, models={"ols": LinearRegression()}, random_state=3)
    est = res.estimates.set_index(["model", "source", "study"])["estimate"].sort_index()
    lin, ols = est.loc[(LINEAR_MODEL, "test")], est.loc[("ols", "test")]
    np.testing.assert_allclose(lin.sort_index().to_numpy(), ols.sort_index().to_numpy(),
                               rtol=1e-9)
    assert res.design["audited_n_folds"] == 5 and res.design["n_folds"] == 10
    d = audit_design()
    shared = run({"ols": LinearRegression(), "tree": DecisionTreeRegressor(max_depth=2)}, ds.X,
                 ds.y, scheme=d["scheme"], metrics=["r2", "mae"], study=ds.study,
                 random_state=3)
    again = audit(ds, models={"ols": LinearRegression()}, random_state=3, study_run=shared)
    pd.testing.assert_frame_equal(res.estimates, again.estimates)
    other = run({"ols": LinearRegression()}, ds.X, ds.y, scheme=HoldOutCV(3), metrics=["r2"],
                study=ds.study, random_state=3)
    with pytest.raises(ParameterError, match="study_run"):
        audit(ds, models={"ols": LinearRegression()}, random_state=3, study_run=other)


def test_numbers_follow_the_papers_formulas():
    res = audit(_dataset([400, 350, 500, 450], random_state=2), models={}, random_state=4)
    assert isinstance(res, ReplicationAudit) and res.models == (LINEAR_MODEL,)
    est = res.estimates[res.estimates.source == "test"].set_index("study")
    # the test-set R2's SE is the delta-method SE of its predictions (it replaces the paper's
    # Olkin-Finn form, which assumes calibrated predictions) on the test third
    from replikit.replicate.estimates import r2_delta_se

    ds = _dataset([400, 350, 500, 450], random_state=2)
    study = ds.study.astype(str).to_numpy()
    order = ["1990", "1992", "1994", "1996"]
    root = root_seed_sequence(4)
    labels = AUDIT_MODULE._fold_labels(HoldOutCV(10, min_fold_rows=20), study, order, root)
    fast = AUDIT_MODULE._linear_fits(ds.X.to_numpy(float), ds.y.to_numpy(float), study, order,
                                     labels)
    n_test = {"1990": 133, "1992": 117, "1994": 167, "1996": 150}
    for s, row in est.iterrows():
        assert fast[s].test_y.size == n_test[s]
        assert row["se"] == pytest.approx(r2_delta_se(fast[s].test_y, fast[s].test_pred))
    # the aims agree with the single-study functions
    orig = from_summary(r2=est.loc["1990", "estimate"], se=est.loc["1990", "se"])
    tab = res.table[res.table.source == "test"].set_index("replication")
    for s in ("1992", "1994", "1996"):
        rep = from_summary(r2=est.loc[s, "estimate"], se=est.loc[s, "se"])
        inc, con = inconsistency(orig, rep), consistency(orig, rep, tolerance=0.05)
        assert tab.loc[s, "difference"] == pytest.approx(inc.estimate)
        assert tab.loc[s, "ci_low"] == pytest.approx(inc.ci_low)
        assert tab.loc[s, "pvalue_tost"] == pytest.approx(con.pvalue)
        assert tab.loc[s, "inconsistency"] == inc.verdict
    fe = res.meta(pooling="fixed")
    direct = meta_analysis(est["estimate"], se=est["se"], tau2_method="FE")
    assert fe.estimate == pytest.approx(direct.estimate)
    re_ = res.meta()
    assert res.verdict.estimate == pytest.approx(re_.estimate)
    assert (res.verdict.ci_low, res.verdict.ci_high) == pytest.approx(
        tuple(re_.confidence_interval()))
    # the full design: 10 folds (267 training rows would allow 13 of 20 rows)
    cv = res.meta(source="cv")
    assert cv.tau2_method == "REML" and res.design["n_folds"] == 10 and not res.design["quick"]


def test_original_is_the_first_study_in_natural_order():
    labels = ["10", "9", "100"]
    res = audit(_dataset([200, 200, 200], labels=labels), models={}, quick=True,
                random_state=0)
    assert res.original == "9" and res.studies == ("9", "10", "100")
    res = audit(_dataset([200, 200, 200], labels=["b", "a", "c"]), models={}, quick=True,
                random_state=0)
    assert res.original == "b"  # not numbers: order of appearance
    chosen = audit(_dataset([200, 200, 200], labels=["b", "a", "c"]), models={},
                   original="c", quick=True, random_state=0)
    assert chosen.original == "c" and set(chosen.table["replication"]) == {"a", "b"}
    with pytest.raises(ParameterError, match="`original`.*'z'"):
        audit(_dataset([200, 200, 200]), models={}, original="z")


def test_small_studies_left_out_with_reasons():
    ds = _dataset([300, 20, 300, 280], random_state=3)
    res = audit(ds, models={}, quick=True, random_state=1)
    assert res.studies_left_out == (("1992", "20 rows (fewer than 30)"),)
    assert "1992" not in res.studies and res.original == "1990"
    assert any("1992" in c for c in res.verdict.caveats)
    assert any("study 1992 left out" in n for n in res.notes)
    with pytest.raises(NotApplicableError, match="cannot be analyzed: 20 rows") as exc:
        audit(ds, models={}, original="1992", quick=True, random_state=1)
    assert exc.value.advice


@pytest.mark.parametrize("case, match, advice", [
    ("one study", "two studies", "--study"),
    ("classification", "continuous", "replikit replicate"),
    ("all small", "fewer than two studies", "pool"),
])
def test_not_applicable_says_why_and_what_to_do(case, match, advice):
    df = _frame([150, 150, 150], random_state=4)
    if case == "one study":
        df["year"] = "1990"
    elif case == "classification":
        df["y"] = (df.y > 0).astype(int)
    else:  # pure noise is no longer a case: every study keeps its test R2 (test_audit_light)
        df = df.groupby("year").head(20)
    ds = dataset_from_frame(df, target="y", study="year")
    with pytest.raises(NotApplicableError, match=match) as exc:
        audit(ds, models={}, quick=True, random_state=0)
    assert advice in exc.value.advice


def test_a_model_without_a_positive_r2_is_left_out_not_the_analysis():
    # a fully grown tree on noisy data predicts worse than the mean: its R2 is negative, so the
    # Olkin-Finn SE does not apply; the model is left out with the reason, the rest stays
    ds = _dataset([300, 300, 300], random_state=6, noise=2.0)
    res = audit(ds, models={"tree": DecisionTreeRegressor()}, quick=True, random_state=2)
    assert "tree" in res.models_left_out or "tree" in res.studies_outside
    if "tree" in res.models_left_out:
        assert "tree" not in res.models and "tree" not in set(res.table["model"])
        assert any("tree" in c for c in res.verdict.caveats)


def test_dummy_baselines_are_dropped_and_the_linear_name_reserved():
    from sklearn.dummy import DummyRegressor

    res = audit(_dataset([200, 200, 200]), models={"dummy": DummyRegressor()}, quick=True,
                random_state=0)
    assert res.models == (LINEAR_MODEL,)
    with pytest.raises(ParameterError, match="linear model"):
        audit(_dataset([200, 200, 200]), models={LINEAR_MODEL: LinearRegression()})


def test_same_random_state_same_numbers_whatever_the_backend():
    ds = _dataset([250, 250, 250], random_state=7)
    models = {"tree": DecisionTreeRegressor(max_depth=3)}  # its random state set by the runner per task
    a = audit(ds, models=models, quick=True, random_state=8)
    b = audit(ds, models=models, quick=True, random_state=8, n_jobs=2)
    pd.testing.assert_frame_equal(a.to_frame(), b.to_frame())
    pd.testing.assert_frame_equal(a.pooled, b.pooled)
    c = audit(ds, models=models, quick=True, random_state=np.random.default_rng(8))
    assert c.original == a.original
    d = audit(ds, models=models, quick=True)  # random_state=None: fresh entropy, still runs
    assert set(d.table["model"]) <= {LINEAR_MODEL, "tree"}


def test_result_tables_figures_and_text():
    res = audit(_dataset([300, 300, 300], random_state=8), models={"ols": LinearRegression()},
                quick=True, random_state=5)
    frame = res.to_frame()
    assert {"estimate", "difference", "se", "ci_low", "ci_high", "statistic", "pvalue",
            "pvalue_tost", "inconsistency", "consistency"} <= set(frame.columns)
    assert "value" not in frame.columns and "p_tost" not in frame.columns
    assert set(res.summary["model"]) == set(res.models)
    assert res.verdict.metric == "test R2" and res.verdict.level in {"good", "warn", "bad"}
    assert any("quick mode" in c for c in res.verdict.caveats)
    ax = res.plot()
    assert "RE Model (REML)" in [t.get_text() for t in ax.texts]
    ax = res.plot(kind="differences", model="ols", source="cv_fixed")
    assert len(ax.get_yticklabels()) == 2
    assert res.plot(source="cv").get_xlabel().startswith("CV R²")
    with pytest.raises(ParameterError, match="kind"):
        res.plot(kind="bars")
    with pytest.raises(ParameterError, match="source"):
        res.meta(source="train")
    assert "Test R² of the linear model" in str(res)


def test_why_studies_differ_moderators_influence_funnel():
    """Study-level columns found and used in a meta-regression of the test R2;
    influence and small-study diagnostics of its random-effects pooling; Knapp-Hartung with few
    studies."""
    from replikit.replicate import MetaRegression, meta_regression

    ds = _dataset([200, 220, 240, 260, 280], random_state=5)
    res = audit(ds, models={}, quick=True, random_state=1)
    assert res.moderator_source == "found" and res.moderators == ("site_level",)
    assert isinstance(res.metareg, MetaRegression)
    assert res.design["meta_interval"] == "knha"  # 5 studies < KNHA_BELOW
    pooled = res.meta()
    assert pooled.interval == "knha" and pooled.pi_dist == "t(k-1)"
    # the meta-regression is the one of the pooled estimates on the per-study column
    site = ds.X.groupby(ds.study.astype(str).to_numpy())["site_level"].first()
    direct = meta_regression(list(pooled.y), list(pooled.v),
                             moderators={"site_level": site.loc[list(pooled.labels)].to_numpy()},
                             tau2_method=pooled.tau2_method, interval="knha")
    np.testing.assert_allclose(res.metareg.beta, direct.beta)
    assert any("meta-regression" in n for n in res.notes)
    assert len(res.influence.table) == 5 and res.small_study.k == 5
    # the funnel tests run on atanh(sqrt(R2)), where the SE does not depend on the R2 itself
    np.testing.assert_allclose(res.small_study.trimfill.original.y,
                               np.arctanh(np.sqrt(pooled.y)))
    for kind in ("funnel", "bubble", "baujat"):
        assert res.plot(kind=kind) is not None
    assert np.size(res.plot(kind="influence")) == 8
    # turned off, given explicitly, and refused
    off = audit(ds, models={}, quick=True, random_state=1, moderators=())
    assert off.metareg is None and off.moderator_source == "none"
    with pytest.raises(ParameterError, match="bubble"):
        off.plot(kind="bubble")
    given = audit(ds, models={}, quick=True, random_state=1, moderators="site_level")
    assert given.moderator_source == "given"
    np.testing.assert_allclose(given.metareg.beta, res.metareg.beta)
    with pytest.raises(ParameterError, match="nope"):
        audit(ds, models={}, quick=True, random_state=1, moderators=["nope"])
    from replikit.errors import DataError

    with pytest.raises(DataError, match="x1"):
        audit(ds, models={}, quick=True, random_state=1, moderators=["x1"])


def test_many_studies_use_z_intervals():
    res = audit(_dataset([120] * 22, random_state=6, noise=0.5), models={}, quick=True, random_state=2,
                moderators=())
    assert len(res.studies) >= 20
    assert res.design["meta_interval"] == "wald" and res.meta().interval == "wald"


def test_report_section_shows_why_studies_differ():
    from replikit.report.context import AuditContext
    from replikit.report.sections.replicate import build

    ctx = AuditContext(dataset=_dataset([200, 220, 240, 260, 280], random_state=5), models={},
                       random_state=1, quick=True)
    out = build(ctx)
    captions = [getattr(b, "caption", "") for b in out.blocks]
    texts = " ".join(getattr(b, "text", "") for b in out.blocks)
    assert re.search("Knapp.Hartung", texts) and "site_level" in texts
    assert any("Meta-regression" in c for c in captions)
    assert any("funnel plot" in c for c in captions)
    assert any("influence diagnostics" in c for c in captions)
    assert any("Heterogeneity" in c for c in captions)
    assert out.data["interval"] == "knha" and out.data["moderators"] == ["site_level"]
    assert re.search("Knapp.Hartung", next(b for b in out.blocks
                                           if type(b).__name__ == "KeyValues"
                                           ).items["interval method"])


def test_result_contract_and_old_names():
    from _checks import check_result

    ds = _dataset([300, 300, 300], random_state=8)
    res = audit(ds, models={}, quick=True, random_state=5)
    check_result(res)
    assert res.verdict.label == "random-effects pooled test R2, linear model"
    assert "±0.05" in res.verdict.sentence
    with pytest.warns(FutureWarning, match="tolerance"):
        old = audit(ds, models={}, quick=True, random_state=5, margin=0.05)
    pd.testing.assert_frame_equal(old.table, res.table)
    for key, new in (("margin", "tolerance"), ("n_splits", "n_folds"), ("ci", "meta_interval"),
                     ("audited_n_splits", "audited_n_folds")):
        with pytest.warns(FutureWarning, match=new):
            assert res.design[key] == res.design[new]
