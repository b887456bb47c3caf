"""The shipped sample file of each audit entry: it reads as its entry, and its numbers are what
its provenance (``src/replikit/data/_files/README.md``) says they are.

References are independent of the code that wrote the files: the built-in examples' outcomes,
scikit-learn's own metrics and fits, and the published encoders benchmark table.
"""

from __future__ import annotations

import pathlib

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LinearRegression
from sklearn.metrics import accuracy_score, r2_score, roc_auc_score

from replikit.data.examples import ENTRY_SAMPLES, anes, entry_sample
from replikit.data.examples import nwtco_binary as nwtco
from replikit.errors import ParameterError
from replikit.report import audit_input

ROOT = pathlib.Path(__file__).resolve().parents[2]
ENCODERS = ROOT / "tests" / "reference" / "generalize" / "encoders_results.csv.gz"
KIND = {"mlr3": "scores", "weka": "scores", "demsar": "benchmark"}


@pytest.fixture(scope="module")
def preds():
    return pd.read_csv(entry_sample("predictions"))


@pytest.mark.parametrize("sample", sorted(ENTRY_SAMPLES))
def test_every_sample_reads_as_its_entry(sample):
    kind = KIND.get(sample, sample)
    entry = audit_input(**{kind: entry_sample(sample)})
    assert entry.kind == kind
    assert entry.n_studies >= 2


def test_every_sample_is_documented_in_the_files_readme():
    readme = (ROOT / "src" / "replikit" / "data" / "_files" / "README.md").read_text()
    for name in ENTRY_SAMPLES.values():
        assert f"`{name}`" in readme, name
    assert max(entry_sample(s).stat().st_size for s in ENTRY_SAMPLES) < 400_000


def test_unknown_entry_names_the_parameter():
    with pytest.raises(ParameterError, match="`entry`"):
        entry_sample("data")


def test_predictions_are_the_nwtco_outcomes_out_of_fold(preds):
    ex = nwtco()
    rows = preds["row"].to_numpy()
    np.testing.assert_array_equal(preds["y_true"].to_numpy(), ex.y.to_numpy()[rows])
    np.testing.assert_array_equal(preds["study"].to_numpy(), ex.study.to_numpy()[rows])
    assert set(preds["model"]) == {"lr", "rf", "dummy"}
    # k-fold within each study: every patient of a trial is predicted once per model and repeat
    for (study, _, _), part in preds.groupby(["study", "model", "repeat"]):
        want = np.flatnonzero(ex.study.to_numpy() == study)
        np.testing.assert_array_equal(np.sort(part["row"].to_numpy()), want)
    # stratified 5-fold: each fold's share of relapses within one patient of the trial's
    for (study, _, _, _), part in preds.groupby(["study", "model", "repeat", "fold"]):
        trial = ex.y[ex.study == study]
        assert abs(part["y_true"].sum() - trial.sum() / 5) <= 1
    np.testing.assert_allclose(preds["proba_0"] + preds["proba_1"], 1.0, atol=1e-12)
    # the majority-class baseline predicts the trial's prevalence from its training rows
    dummy = preds[preds["model"] == "dummy"]
    assert (dummy["y_pred"] == 0).all()
    assert dummy["proba_1"].between(0.10, 0.20).all()


def test_scores_are_the_predictions_scored_by_scikit_learn(preds):
    scores = pd.read_csv(entry_sample("scores"))
    keys = ["study", "model", "repeat", "fold"]
    for key, part in preds.groupby(keys):
        got = scores.set_index([*keys, "metric"])["value"]
        auc = roc_auc_score(part["y_true"], part["proba_1"])
        acc = accuracy_score(part["y_true"], part["y_pred"])
        assert got[(*key, "roc_auc")] == pytest.approx(auc, abs=1e-12)
        assert got[(*key, "accuracy")] == pytest.approx(acc, abs=1e-12)
        n = scores.set_index([*keys, "metric"]).loc[(*key, "accuracy")]
        assert n["n_test"] == len(part) and n["n_train"] + n["n_test"] == (
            (nwtco().study == key[0]).sum())


def test_estimates_are_the_test_r2_of_ols_in_each_anes_year():
    """Refit scikit-learn's OLS on each year's training rows (the complement of the test rows
    recorded by the same hold-out) and score the test rows."""
    from replikit.experiment import HoldOut, run

    est = pd.read_csv(entry_sample("estimates"))
    ex = anes()
    assert list(est["study"].astype(str)) == sorted(ex.study.unique())
    assert list(est["role"]) == ["original"] + ["replication"] * 9
    res = run({"ols": LinearRegression()}, ex.X, ex.y, scheme=HoldOut(0.3), metrics="r2",
              study=ex.study, random_state=2027)
    test_rows = res.predictions.frame.groupby("study")["row"].apply(np.asarray)
    for _, row in est.iterrows():
        study = str(row["study"])
        test = test_rows[study]
        train = np.setdiff1d(np.flatnonzero(ex.study.to_numpy() == study), test)
        fit = LinearRegression().fit(ex.X.iloc[train], ex.y.iloc[train])
        r2 = r2_score(ex.y.iloc[test], fit.predict(ex.X.iloc[test]))
        assert row["r2"] == pytest.approx(r2, abs=5e-5)
        assert row["n"] == len(test) == int(np.ceil(0.3 * (len(train) + len(test))))


def test_benchmark_is_the_published_encoders_table():
    bench = pd.read_csv(entry_sample("benchmark")).set_index("dataset")
    ref = pd.read_csv(ENCODERS)
    ref = ref[(ref["model"] == "LR") & (ref["tuning"] == "model") & (ref["scoring"] == "AUC")]
    assert bench.shape == (50, 14)
    assert not bench.isna().any().any()
    for dataset, scores in bench.iterrows():
        openml = int(dataset.removeprefix("openml-"))
        for encoder, value in scores.items():
            want = ref[(ref["dataset"] == openml) & (ref["encoder"] == encoder)]["cv_score"]
            assert value == pytest.approx(float(want.iloc[0]), rel=1e-15)
    # the 14 encoders are exactly those scored on all 50 datasets in this setting
    complete = ref.groupby("encoder")["dataset"].nunique()
    assert set(bench.columns) == set(complete[complete == 50].index)
