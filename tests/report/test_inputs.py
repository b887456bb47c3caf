"""The audit's five entry levels: read and checked before any work, and the Audit result.

Properties: each shipped sample reads as its entry; every bad input is refused with a
ReplikitError naming the parameter or column; a section that cannot read the entry is skipped
naming what to supply; ``Audit.to_dict()`` is exactly the JSON twin ``save`` writes.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import replikit
from replikit.data.examples import score_export
from replikit.errors import DataError, OutputExistsError, ParameterError
from replikit.report import Audit, audit_input
from replikit.report.sections import discover_sections

BENCHMARK = (pd.DataFrame({"dataset": [f"d{i}" for i in range(6)],
                           "a": [0.81, 0.77, 0.90, 0.66, 0.72, 0.85],
                           "b": [0.79, 0.78, 0.88, 0.61, 0.70, 0.80]}))
ESTIMATES = pd.DataFrame({"study": ["orig", "rep1", "rep2"], "r2": [0.31, 0.25, 0.28],
                          "n": [400, 650, 520],
                          "role": ["original", "replication", "replication"]})


def test_shipped_score_exports_read_with_their_scheme():
    mlr3 = audit_input(scores=score_export("mlr3"))
    weka = audit_input(scores=score_export("weka"))
    assert (mlr3.kind, mlr3.scheme, mlr3.task) == ("scores", "kfold", "classification")
    assert weka.scheme == "recorded"  # Weka records the training and test set sizes
    assert mlr3.metric == weka.metric == "roc_auc"  # the threshold-free score comes first
    assert any("mlr3" in n for n in mlr3.notes)


def test_scores_of_unknown_scheme_are_not_guessed():
    f = pd.read_csv(score_export("weka"))
    plain = pd.DataFrame({"study": f["Key_Dataset"], "model": f["Key_Scheme"],
                          "repeat": f["Key_Run"] - 1, "fold": f["Key_Fold"] - 1,
                          "metric": "accuracy", "value": f["Percent_correct"] / 100})
    entry = audit_input(scores=plain)
    assert entry.scheme is None and entry.test_ratio is None
    assert any("does not say how the folds were made" in n for n in entry.notes)
    assert audit_input(scores=plain, scheme="kfold").scheme == "kfold"
    held = audit_input(scores=plain, test_fraction=0.25)
    assert held.scheme == "holdout" and held.test_ratio == pytest.approx(1 / 3)


@pytest.mark.parametrize(("kwargs", "names"), [
    ({}, "exactly one"),
    ({"scores": "x.csv", "benchmark": "y.csv"}, "`scores`, `benchmark`"),
    ({"benchmark": BENCHMARK, "n_folds": 5}, "`n_folds` does not apply to `benchmark`"),
    ({"benchmark": BENCHMARK, "scheme": "folds"}, "`scheme` must be one of"),
    ({"benchmark": BENCHMARK, "test_fraction": 1.5}, "`test_fraction` must be"),
    ({"benchmark": BENCHMARK, "scheme": "holdout"}, "needs `test_fraction`"),
    ({"scores": pd.DataFrame({"a": [1]}), "scheme": "kfold", "test_fraction": 0.2},
     "`test_fraction` goes with"),
    ({"estimates": ESTIMATES, "original": "rep1"}, "`original`: the table marks"),
    ({"estimates": ESTIMATES.drop(columns="role"), "original": "nope"}, "no study 'nope'"),
    ({"data": BENCHMARK}, "`target`: required"),
    ({"data": 3, "target": "y"}, "`data` must be a pandas DataFrame or a path"),
])
def test_bad_options_name_the_parameter(kwargs, names):
    with pytest.raises(ParameterError, match=None) as err:
        audit_input(**kwargs)
    assert names in str(err.value)


@pytest.mark.parametrize(("estimates", "names"), [
    (ESTIMATES.drop(columns="study"), "no `study` column"),
    (ESTIMATES.assign(auc=0.7), "found r2, auc"),
    (ESTIMATES.drop(columns="n"), "sample size `n`"),
    (ESTIMATES.assign(role=["original", "original", "replication"]), "marks 2"),
    (ESTIMATES.assign(role=["original", "copy", "replication"]), "holds 'copy'"),
    # several rows of a study are several effects (a multilevel model), of one role
    (ESTIMATES.assign(study=["a", "a", "b"]), "marks study 'a' both 'original' and"),
    (ESTIMATES.assign(n=[400, None, 520]), "study 'rep1' (row 2) has a `r2` but no"),
])
def test_bad_estimates_name_the_column(estimates, names):
    with pytest.raises(DataError) as err:
        audit_input(estimates=estimates)
    assert names in str(err.value)


def test_estimates_original_from_role_or_option():
    assert audit_input(estimates=ESTIMATES).original == "orig"
    plain = ESTIMATES.drop(columns="role")
    assert audit_input(estimates=plain).original is None
    assert audit_input(estimates=plain, original="rep2").original == "rep2"


def test_predictions_fill_missing_keys_and_infer_the_task():
    rng = np.random.default_rng(1)
    f = pd.DataFrame({"site": np.repeat(["a", "b"], 30), "y_true": rng.normal(size=60)})
    f["y_pred"] = f["y_true"] + rng.normal(scale=0.5, size=60)
    entry = audit_input(predictions=f, study="site")
    assert entry.task == "regression" and entry.n_studies == 2
    assert set(entry.predictions.frame["model"]) == {"model"}
    labels = f.assign(y_true=np.where(f["y_true"] > 0, "yes", "no"),
                      y_pred=np.where(f["y_pred"] > 0, "yes", "no"))
    assert audit_input(predictions=labels, study="site").task == "classification"
    with pytest.raises(DataError, match="`study`: no column 'year'"):
        audit_input(predictions=f, study="year")
    with pytest.raises(DataError, match="no column 'y_true'"):
        audit_input(predictions=f.drop(columns="y_true"), study="site")


def test_a_scores_table_given_as_data_is_pointed_to_its_entry():
    f = pd.DataFrame({"study": "s", "model": ["lr", "rf"], "repeat": 0, "fold": 0,
                      "metric": "accuracy", "value": [0.8, 0.9]})
    with pytest.raises(DataError, match="give it as `scores` instead"):
        audit_input(data=f, target="value")


def test_sections_skipped_for_an_entry_name_what_to_supply():
    result = replikit.audit(benchmark=BENCHMARK, sections=["overview", "resampling",
                                                           "replicate"])
    by_key = {s.key: s for s in result.sections}
    assert not by_key["overview"].skipped
    for key in ("resampling", "replicate"):
        section = next(s for s in discover_sections() if s.key == key)
        assert "benchmark" not in section.reads
        assert "Not answerable from a benchmark table" in by_key[key].skipped
        assert "(--" in by_key[key].advice  # the option that supplies it
    assert result.meta["entry"] == "benchmark" and result.meta["n_rows"] is None


def test_audit_to_dict_is_the_json_twin_and_save_keeps_what_exists(tmp_path):
    result = replikit.audit(scores=score_export("weka"), sections=["overview"])
    assert isinstance(result, Audit)
    report = result.save(tmp_path / "out")
    assert json.loads(report.json_path.read_text()) == result.to_dict()
    assert result.to_dict()["meta"]["entry"] == "scores"
    before = report.html_path.read_bytes()
    with pytest.raises(OutputExistsError):
        result.save(tmp_path / "out")
    assert report.html_path.read_bytes() == before  # nothing a user stored is altered
    html = result._repr_html_()
    assert "replikit-audit" in html and "Replicability audit: weka_nwtco_scores.csv" in html
    assert str(result).splitlines()[0] == "Replicability audit: weka_nwtco_scores.csv"


def test_models_only_go_with_data():
    with pytest.raises(ParameterError, match="`models` are fitted on `data`"):
        replikit.audit(benchmark=BENCHMARK, models="lr,rf")


def test_a_mapped_measure_column_names_the_metric():
    rng = np.random.default_rng(2)
    f = pd.DataFrame({"dataset": np.repeat(["a", "b"], 10), "net": ["x", "y"] * 10,
                      "split": np.tile(np.repeat(range(5), 2), 2),
                      "accuracy": rng.uniform(0.7, 0.9, 20)})
    entry = audit_input(scores=f, columns={"study": "dataset", "model": "net", "fold": "split",
                                           "value": "accuracy"})
    assert entry.metric == "accuracy" and entry.scores.metrics == ["accuracy"]


def test_an_auc_with_class_sizes_is_an_estimate():
    table = pd.DataFrame({"study": ["a", "b"], "auc": [0.78, 0.74], "n_pos": [40, 80],
                          "n_neg": [160, 300], "role": ["original", "replication"]})
    assert audit_input(estimates=table).metric == "auc"
    with pytest.raises(DataError, match="`n_pos`"):
        audit_input(estimates=table.drop(columns="n_neg"))


def test_a_long_benchmark_names_its_score():
    long = BENCHMARK.melt(id_vars="dataset", var_name="model", value_name="rmse")
    entry = audit_input(benchmark=long, higher_is_better=False)
    assert entry.metric == "rmse" and not entry.higher_is_better
    assert audit_input(benchmark=BENCHMARK, metric="roc_auc").metric == "roc_auc"  # wide


def _holdout_predictions(n=240, repeats=12, share=0.3, seed=5):
    """Two regression models' predictions on repeated random hold-out splits: each repeat
    tests a share of the rows only, so the folds do not say the training set size."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    y = 2 * x + rng.normal(size=n)
    parts = []
    for r in range(repeats):
        test = rng.permutation(n)[: int(share * n)]
        for model, noise in (("good", 0.3), ("poor", 1.2)):
            parts.append(pd.DataFrame({"study": "s", "model": model, "repeat": r, "fold": 0,
                                       "row": test, "y_true": y[test],
                                       "y_pred": y[test] + rng.normal(scale=noise,
                                                                      size=test.size)}))
    return pd.concat(parts, ignore_index=True)


def test_predictions_of_holdout_splits_take_their_test_share():
    preds = _holdout_predictions()
    unknown = replikit.audit(predictions=preds, sections=["resampling", "compare"])
    stated = replikit.audit(predictions=preds, test_fraction=0.3,
                            sections=["resampling", "compare"])
    cmp_unknown = unknown.section("compare").data
    cmp_stated = stated.section("compare").data
    assert cmp_unknown["skipped"]  # the ratio tests are skipped, not guessed
    assert cmp_stated["ratio"] == pytest.approx(0.3 / 0.7)
    assert not cmp_stated["skipped"]
    folds = pd.DataFrame(stated.section("resampling").data["estimates"])
    folds = folds[folds["basis"] == "folds"]
    assert (folds["interval"] == "corrected_t").all()
    assert folds["ratio"].to_numpy() == pytest.approx(0.3 / 0.7)
