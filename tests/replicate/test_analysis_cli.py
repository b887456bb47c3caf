"""Tables of estimates, the two-stage procedure, plots, the command line and the audit section."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from replikit.data.userdata import dataset_from_frame
from replikit.errors import DataError, ParameterError
from replikit.replicate import (
    analyze_replications,
    consistency,
    estimates_from_table,
    forest_plot,
    from_folds,
    from_summary,
    inconsistency,
    meta_analysis,
    two_stage,
)
from replikit.report import run_audit

REF = Path(__file__).parents[1] / "reference" / "replicate"


@pytest.fixture
def studies_csv(tmp_path):
    df = pd.DataFrame({"study": ["2002", "2004", "2006", "2008"],
                       "r2": [0.41, 0.39, 0.30, 0.42], "n": [667, 650, 2000, 690], "k": 36})
    path = tmp_path / "studies.csv"
    df.to_csv(path, index=False)
    return path, df


def test_analysis_matches_the_single_functions(studies_csv):
    _, df = studies_csv
    groups = estimates_from_table(df)
    res = analyze_replications(groups, "2002", tolerance=0.05)
    orig = from_summary(r2=0.41, n=667, k=36)
    for row in res.table.itertuples():
        rep = from_summary(r2=row.estimate, n=int(df.loc[df.study == row.replication, "n"].iloc[0]),
                           k=36)
        assert row.inconsistency == inconsistency(orig, rep).verdict
        assert row.pvalue_tost == pytest.approx(consistency(orig, rep).pvalue)
    assert res.table.set_index("replication").loc["2006", "inconsistency"] == "inconsistent"
    fe = res.pooled.query("pooling == 'fixed'").iloc[0]
    direct = meta_analysis(df.r2, se=[e.se for e in groups[("model", "reported")]],
                           tau2_method="FE")
    assert fe.estimate == pytest.approx(direct.estimate)
    assert "REML" in set(res.pooled["tau2_method"]) and "Replication of '2002'" in str(res)
    with pytest.raises(ParameterError, match="original"):
        analyze_replications(groups, "1999")


def test_scores_table_and_two_stage():
    rng = np.random.default_rng(0)
    rows = [{"study": s, "model": "lr", "fold": f, "repeat": 0, "metric": "r2",
             "value": 0.45 + 0.02 * rng.normal(), "n_test": 130}
            for s in ("a", "b", "c") for f in range(10)]
    scores = pd.DataFrame(rows)
    groups = estimates_from_table(scores, pooling="fixed")
    est = groups[("lr", "cv")]
    sub = scores[scores.study == "b"]
    direct = from_folds(sub.value.to_numpy(), 130, pooling="fixed")
    assert est[1].estimate == pytest.approx(direct.estimate) and est[1].label == "b"
    ts = two_stage(scores)
    assert set(zip(ts.population.stage1, ts.population.stage2, strict=True)) == {
        ("fixed", "fixed"), ("fixed", "random"), ("random", "fixed"), ("random", "random")}
    ff = ts.population.query("stage1 == 'fixed' and stage2 == 'fixed'").iloc[0]
    st = ts.studies.query("stage1 == 'fixed'")
    again = meta_analysis(st.estimate, se=st.se, tau2_method="FE")
    assert ff.estimate == pytest.approx(again.estimate) and "Two-stage" in str(ts)
    with pytest.raises(DataError, match="metric"):
        estimates_from_table(scores, metric="auc")


def test_forest_plot_layout():
    bcg = pd.read_csv(REF / "dat_bcg.csv")
    res = meta_analysis(bcg.yi, bcg.vi, tau2_method="REML", labels=bcg.author)
    ax = forest_plot(res, xlabel="log RR")
    texts = [t.get_text() for t in ax.texts]
    assert "RE Model (REML)" in texts and "Aronson" in texts
    assert "-0.71 [-1.07, -0.36]" in texts  # metafor prints -0.71 [-1.07, -0.36]
    assert any("Q(12)" in ax.get_title(loc="left") for _ in [0])


def test_cli_replicate_and_meta(cli, studies_csv, tmp_path):
    path, _ = studies_csv
    code, out, err = cli("replicate", str(path), "--original", "2002", "--out",
                             str(tmp_path / "figs"))
    assert code == 0, err
    assert "inconsistent" in out and "REML" in out
    assert (tmp_path / "figs" / "forest_model_reported.svg").exists()
    code, out, _ = cli("--format", "json", "replicate", str(path), "--interval",
                           "mover")
    doc = json.loads(out)
    assert code == 0 and doc["original"] == "2002" and len(doc["replications"]) == 3
    code, out, err = cli("--format", "json", "meta", str(REF / "dat_bcg.csv"),
                             "--tau2-method", "DL", "--leave-one-out", "--out", str(tmp_path / "m"))
    doc = json.loads(out)
    assert code == 0 and doc["result"][0]["tau2"] == pytest.approx(0.308760, abs=1e-6)
    assert len(doc["leave_one_out"]) == 13 and (tmp_path / "m" / "forest.svg").exists()
    code, out, err = cli("meta", str(path))
    assert code == 2 and "no effect column" in err and len(err.strip().splitlines()) == 1
    code, out, err = cli("replicate", str(path), "--original", "1999")
    assert code == 2 and "original" in err


def test_audit_section(tmp_path):
    """The report section formats replikit.replicate.audit (tested in test_audit.py): the JSON
    keys other tests and users read, the verdict, and the skipped cases with their advice."""
    rng = np.random.default_rng(2)
    n = 900
    df = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.normal(size=n),
                       "year": np.repeat([1990, 1992, 1994], n // 3)})
    df["y"] = df.x1 + 0.5 * df.x2 + rng.normal(size=n)
    ds = dataset_from_frame(df, target="y", study="year")
    rep = run_audit(ds, tmp_path, sections=["replicate"], quick=True)
    doc = json.loads(rep.json_path.read_text())
    sec = [s for s in doc["sections"] if s["key"] == "replicate"][0]
    data = sec["data"]
    assert data["original"] == "1990"
    # the batched linear model and the audited default models (lr, rf; the constant baseline
    # has no R2 to replicate), each with 3 kinds of estimate x up to 2 replications
    assert data["models"][0] == "linear model"
    assert set(data["models"]) | set(data["models_left_out"]) == {"linear model", "lr", "rf"}
    rows = pd.DataFrame(data["replications"])
    assert set(rows["model"]) == set(data["models"])
    assert (rows.groupby(["model", "source"]).size() <= 2).all()
    assert set(rows["inconsistency"]) <= {"inconsistent", "not shown inconsistent"}
    assert sec["summary"] == data["verdict"]["sentence"]
    assert data["verdict"]["metric"] == "test R2"
    assert data["studies_left_out"] == [] and data["tolerance"] == 0.05
    html = rep.html_path.read_text()
    assert "RE Model (REML)" in html
    # one study only -> skipped with a reason and advice naming --study
    one = dataset_from_frame(df.assign(year=1990), target="y", study="year")
    rep1 = run_audit(one, tmp_path / "one", sections=["replicate"], quick=True)
    sec1 = json.loads(rep1.json_path.read_text())["sections"][0]
    assert "two studies" in sec1["skipped"] and "--study" in sec1["advice"]
    # a classification target -> skipped, pointing to `replikit replicate`
    clf = dataset_from_frame(df.assign(y=(df.y > 0).astype(int)), target="y", study="year")
    rep2 = run_audit(clf, tmp_path / "clf", sections=["replicate"], quick=True)
    sec2 = json.loads(rep2.json_path.read_text())["sections"][0]
    assert "continuous" in sec2["skipped"] and "replikit replicate" in sec2["advice"]


def test_cli_new_and_old_flags(cli, studies_csv):
    path, _ = studies_csv
    code, new, err = cli("--format", "json", "replicate", str(path), "--tolerance", "0.1",
                         "--tau2-method", "DL", "--meta-interval", "knha", "--interval", "wald")
    assert code == 0, err
    doc = json.loads(new)
    assert doc["tau2_method"] == "DL" and doc["meta_interval"] == "knha"
    assert doc["bounds"] == [-0.1, 0.1] and {r["tau2_method"] for r in doc["pooled"]} == {
        "FE", "DL"}
    code, old, err = cli("--format", "json", "replicate", str(path), "--margin", "0.1",
                         "--tau2", "DL", "--ci", "knha", "--interval", "sa")
    assert code == 0, err
    assert json.loads(old) == doc
    for flag, new_flag in (("--margin", "--tolerance"), ("--tau2", "--tau2-method"),
                           ("--ci", "--meta-interval")):
        assert f"`{flag}` is now `{new_flag}`" in err
    assert "`--interval sa` is now `--interval wald`" in err
    code, _, err = cli("replicate", str(path), "--tolerance", "0")
    assert code == 2 and "`--tolerance`" in err


def test_two_stage_and_analysis_old_names_warn():
    rows = [{"study": s, "value": v, "n_test": 100}
            for s, vals in (("a", (0.40, 0.42, 0.38)), ("b", (0.45, 0.43, 0.47)))
            for v in vals]
    folds = pd.DataFrame(rows)
    with pytest.warns(FutureWarning, match="interval"):
        old = two_stage(folds, ci="knha")
    assert old.population.equals(two_stage(folds, interval="knha").population)
    groups = estimates_from_table(pd.DataFrame({"study": ["a", "b"], "r2": [0.4, 0.35],
                                                "se": [0.02, 0.02]}))
    with pytest.warns(FutureWarning, match="meta_interval"):
        a = analyze_replications(groups, "a", ci="z")
    b = analyze_replications(groups, "a", meta_interval="wald")
    assert a.table.equals(b.table) and a.pooled.equals(b.pooled)
    from replikit.replicate import population

    ests = groups[("model", "reported")]
    with pytest.warns(FutureWarning, match="interval"):
        old = population(ests, ci="knha")
    new = population(ests, interval="knha")
    assert old["random"].confidence_interval() == new["random"].confidence_interval()
