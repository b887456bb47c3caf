"""Corpus of bad and odd inputs for ``replikit multistudy`` and ``replikit crossstudy``.

Every case ends in a clear one-line error naming the flag or column, or in an honest result
whose warnings (one ``warning:`` line each on stderr) say what was done.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from .conftest import assert_clear_error, assert_ok

FAST = ("--permutation-resamples", "19", "--n-resamples", "20")


def _warnings(err: str) -> list[str]:
    """The warning and note lines of stderr."""
    return [ln for ln in err.splitlines() if ln.startswith(("warning:", "note:"))]


def _preds(n=300, K=3, seed=1):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    p1 = np.clip(0.6 * y + rng.uniform(0, 0.5, n) - 0.05, 0, 1)
    return pd.DataFrame({"site": np.repeat([f"s{k}" for k in range(K)], n // K)[:n],
                         "y_true": y, "y_pred": (p1 > 0.5).astype(int), "proba_1": p1,
                         "proba_0": 1 - p1})


def _continuous(n=300, seed=2):
    rng = np.random.default_rng(seed)
    y = rng.normal(size=n)
    return pd.DataFrame({"site": np.repeat(["a", "b", "c"], n // 3), "y_true": y,
                         "y_pred": y + 0.3 * rng.normal(size=n)})


def _data(n=180, seed=3, classification=False):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.normal(size=n),
                       "school": np.repeat(["s1", "s2", "s3"], n // 3)})
    noise = rng.normal(size=n)
    df["y"] = ((df.x1 + noise > 0).astype(int) if classification else df.x1 + 0.5 * noise)
    return df


def ms(cli, path, *args):
    return cli("multistudy", path, "--study", "site", *FAST, *args)


def cs(cli, path, *args, study="school", models="lr"):
    return cli("crossstudy", "--data", path, "--target", "y", "--study", study,
               "--models", models, "--n-folds", "3", *args)


# == multistudy ===========================================================================

def test_multistudy_baseline(cli, write_csv):
    out = assert_ok(cli("--format", "json", "multistudy", write_csv(_preds()), "--study",
                        "site", *FAST))
    assert len(json.loads(out)["studies"]) == 3


@pytest.mark.parametrize("label", [5, "5", 5.0])
def test_all_studies_labeled_the_same(cli, write_csv, label):
    df = _preds().assign(site=label)
    assert_clear_error(ms(cli, write_csv(df)), "--study", "site")


def test_five_studies_labeled_5_are_not_merged(cli, write_csv):
    # before: '5', '05', '5.0', '5.00', '005' were read as the number 5 and merged into one
    # study ("`data` holds 1 study")
    df = _preds()
    df["site"] = ["5", "05", "5.0", "5.00", "005"] * 60
    code, out, err = cli("--format", "json", "multistudy", write_csv(df), "--study", "site",
                         *FAST)
    assert_ok((code, out, err))
    assert {r["study"] for r in json.loads(out)["studies"]} == {"5", "05", "5.0", "5.00", "005"}
    assert any("05" in w and "5.0" in w for w in _warnings(err)), err


def test_labels_differing_in_spaces_are_flagged(cli, write_csv):
    df = _preds()
    df.loc[:9, "site"] = "s0 "
    code, out, err = ms(cli, write_csv(df))
    assert_ok((code, out, err))
    assert any("s0" in w for w in _warnings(err)), err


def test_float_study_labels_keep_their_digits(cli, tmp_path):
    df = _preds()
    df["site"] = np.repeat([1.0000001, 1.0000002, 2.5], 100)
    path = tmp_path / "p.parquet"
    df.to_parquet(path)
    out = assert_ok(cli("--format", "json", "multistudy", path, "--study", "site", *FAST))
    assert len(json.loads(out)["studies"]) == 3


def test_continuous_outcome_default_utility_is_squared_and_said(cli, write_csv):
    # before: accuracy of continuous predictions, U = 0 in every study, silently
    code, out, err = ms(cli, write_csv(_continuous()))
    assert_ok((code, out, err))
    assert any("squared" in w for w in _warnings(err)), err
    assert "squared" in out


def test_continuous_outcome_with_accuracy_is_refused(cli, write_csv):
    assert_clear_error(ms(cli, write_csv(_continuous()), "--utility", "accuracy"),
                       "--utility", "y_pred")


def test_probabilities_as_labels_with_accuracy_refused(cli, write_csv):
    df = _preds()
    df["y_pred"] = df["proba_1"]
    assert_clear_error(ms(cli, write_csv(df), "--utility", "accuracy"), "--utility")


@pytest.mark.parametrize("col,value", [("y_true", np.inf), ("y_pred", -np.inf),
                                       ("y_pred", 1e308)])
def test_infinite_or_huge_values(cli, write_csv, col, value):
    df = _continuous()
    df.loc[4, col] = value
    assert_clear_error(ms(cli, write_csv(df), "--utility", "squared"), col)


def test_nan_prediction(cli, write_csv):
    df = _preds()
    df["y_pred"] = df["y_pred"].astype(float)
    df.loc[4, "y_pred"] = np.nan
    assert_clear_error(ms(cli, write_csv(df)), "y_pred")


def test_nan_only_probability_column_with_log_score(cli, write_csv):
    df = _preds().assign(proba_1=np.nan, proba_0=np.nan)
    assert_clear_error(ms(cli, write_csv(df), "--utility", "log"), "proba_1")


def test_missing_study_labels(cli, write_csv):
    df = _preds()
    df.loc[4, "site"] = np.nan
    assert_clear_error(ms(cli, write_csv(df)), "study")


def test_study_column_absent(cli, write_csv):
    assert_clear_error(cli("multistudy", write_csv(_preds()), "--study", "nope"),
                       "--study", "nope")


def test_study_of_one_unit_is_flagged(cli, write_csv):
    df = _preds()
    df.loc[0, "site"] = "lonely"
    code, out, err = ms(cli, write_csv(df))
    assert_ok((code, out, err))
    assert any("lonely" in w for w in _warnings(err)), err


def test_min_units_leaves_tiny_studies_out_and_says_so(cli, write_csv):
    df = _preds()
    df.loc[0, "site"] = "lonely"
    code, out, err = cli("--format", "json", "multistudy", write_csv(df), "--study", "site",
                         *FAST, "--min-units", "5")
    assert_ok((code, out, err))
    assert "lonely" not in {r["study"] for r in json.loads(out)["studies"]}
    assert any("lonely" in w for w in _warnings(err)), err


def test_more_studies_than_units_per_study(cli, write_csv):
    df = _preds(n=10, K=10)
    code, out, err = ms(cli, write_csv(df))
    assert_ok((code, out, err))
    assert _warnings(err)


def test_study_missing_a_class(cli, write_csv):
    df = _preds()
    df.loc[df.site == "s1", "y_true"] = 1
    out = assert_ok(cli("--format", "json", "multistudy", write_csv(df), "--study", "site",
                        *FAST, "--utility", "cost:-5,-1"))
    assert len(json.loads(out)["studies"]) == 3


def test_string_labels_cost_utility_says_positive_class(cli, write_csv):
    df = _preds()
    for c in ("y_true", "y_pred"):
        df[c] = np.where(df[c] == 1, "malignant", "benign")
    df = df.rename(columns={"proba_1": "proba_malignant", "proba_0": "proba_benign"})
    code, out, err = ms(cli, write_csv(df), "--utility", "cost:-5,-1", "--threshold", "bayes")
    assert_ok((code, out, err))
    assert any("malignant" in w and "positive" in w for w in _warnings(err)), err


def test_multiclass_with_cost_utility(cli, write_csv):
    df = _preds()
    df["y_true"] = np.random.default_rng(0).integers(0, 3, len(df))
    assert_clear_error(ms(cli, write_csv(df), "--utility", "cost:-1,-2"), "--utility")


def test_dollar_in_study_names(cli, write_csv):
    df = _preds()
    df["site"] = df["site"].map({"s0": "$a", "s1": "b$", "s2": "$c$"})
    assert_ok(ms(cli, write_csv(df)))


def test_duplicated_prediction_keys(cli, write_csv):
    df = _preds()
    df["row"] = np.arange(len(df)) % 150
    df["site"] = "s0"
    df.loc[150:, "site"] = "s1"
    dup = pd.concat([df, df.iloc[:3]])
    assert_clear_error(ms(cli, write_csv(dup)), "row")


@pytest.mark.parametrize("args,flag", [
    (("--model", "xx"), "--model"),
    (("--utility", "xx"), "--utility"),
    (("--utility", "cost:5,1"), "--utility"),
    (("--threshold", "1.5", "--utility", "cost:-1,-2"), "--threshold"),
    (("--threshold", "bayes"), "--threshold"),
    (("--bootstrap", "xx"), "--bootstrap"),
    (("--bag-size", "3"), "--bag-size"),
    (("--tolerance", "-1"), "--tolerance"),
    (("--permutation-resamples", "0"), "--permutation-resamples"),
])
def test_multistudy_bad_options(cli, write_csv, args, flag):
    assert_clear_error(ms(cli, write_csv(_preds()), *args), flag)


def test_several_models_need_model(cli, write_csv):
    df = _preds()
    df["model"] = np.where(np.arange(len(df)) % 2, "lr", "rf")
    assert_clear_error(ms(cli, write_csv(df)), "--model")


def test_bad_option_refused_before_reading(cli, tmp_path):
    assert_clear_error(cli("multistudy", tmp_path / "none.csv", "--utility", "xx"),
                       "--utility")


# == crossstudy ===========================================================================

def test_crossstudy_baseline(cli, write_csv):
    out = assert_ok(cli("--format", "json", "crossstudy", "--data", write_csv(_data()),
                        "--target", "y", "--study", "school", "--models", "lr"))
    assert len(json.loads(out)["models"]["lr"]["cross_study_matrix"]) == 3


def test_study_of_one_row(cli, write_csv):
    # before: ValueError from KFold(n_splits=1), internal error
    df = _data()
    df.loc[0, "school"] = "tiny"
    code, out, err = cs(cli, write_csv(df))
    assert_ok((code, out, err))
    assert any("tiny" in w for w in _warnings(err)), err


def test_small_study_fewer_rows_than_folds(cli, write_csv):
    df = _data()
    df.loc[:1, "school"] = "small"
    code, out, err = cs(cli, write_csv(df))
    assert_ok((code, out, err))
    assert any("small" in w for w in _warnings(err)), err


def test_every_study_one_row(cli, write_csv):
    df = _data().iloc[:6].copy()
    df["school"] = list("abcdef")
    assert_clear_error(cs(cli, write_csv(df)), "--study")


def test_crossstudy_study_missing_a_class(cli, write_csv):
    # before: "fitting Pipeline failed: ... only one class", no result at all
    df = _data(classification=True)
    df.loc[df.school == "s2", "y"] = 1
    code, out, err = cs(cli, write_csv(df), "--stacking")
    assert_ok((code, out, err))
    assert any("s2" in w and "class" in w for w in _warnings(err)), err


def test_crossstudy_missing_class_json_has_empty_row(cli, write_csv):
    df = _data(classification=True)
    df.loc[df.school == "s2", "y"] = 1
    out = assert_ok(cli("--format", "json", "crossstudy", "--data", write_csv(df), "--target",
                        "y", "--study", "school", "--models", "lr", "--n-folds", "3"))
    rows = {r["train"]: r for r in json.loads(out)["models"]["lr"]["cross_study_matrix"]}
    assert rows["s2"]["s1"] is None and rows["s1"]["s2"] is not None


def test_crossstudy_rare_class_stratified(cli, write_csv):
    df = _data(classification=True)
    df.loc[df.school == "s1", "y"] = 0
    df.loc[df.index[:2], "y"] = 1      # two positives in s1
    assert_ok(cs(cli, write_csv(df)))


def test_crossstudy_string_labels(cli, write_csv):
    df = _data(classification=True)
    df["y"] = np.where(df["y"] == 1, "malignant", "benign")
    code, out, err = cs(cli, write_csv(df))
    assert_ok((code, out, err))


def test_crossstudy_nan_only_column_is_said(cli, write_csv):
    df = _data().assign(empty=np.nan)
    code, out, err = cs(cli, write_csv(df))
    assert_ok((code, out, err))
    assert any("empty" in w for w in _warnings(err)), err


@pytest.mark.parametrize("col,value", [("x1", np.inf), ("x1", 1e308), ("y", 1e308)])
def test_crossstudy_inf_or_huge(cli, write_csv, col, value):
    df = _data()
    df.loc[3, col] = value
    assert_clear_error(cs(cli, write_csv(df)), col)


def test_crossstudy_all_one_study(cli, write_csv):
    assert_clear_error(cs(cli, write_csv(_data().assign(school=5))), "--study", "school")


def test_crossstudy_dollar_in_column_and_study(cli, write_csv):
    df = _data().rename(columns={"x1": "$x1"})
    df["school"] = df["school"].map({"s1": "$a", "s2": "b$", "s3": "c"})
    assert_ok(cs(cli, write_csv(df)))


@pytest.mark.parametrize("metric", ["nope", "roc_auc", "accuracy", "log_loss"])
def test_crossstudy_metric_not_for_regression(cli, write_csv, metric):
    assert_clear_error(cs(cli, write_csv(_data()), "--metric", metric), "--metric", metric)


def test_crossstudy_roc_auc_multiclass(cli, write_csv):
    df = _data()
    df["y"] = np.random.default_rng(0).integers(0, 3, len(df))
    assert_clear_error(cs(cli, write_csv(df), "--metric", "roc_auc"), "--metric")


def test_crossstudy_stacking_multiclass(cli, write_csv):
    df = _data()
    df["y"] = np.random.default_rng(0).integers(0, 3, len(df))
    assert_clear_error(cs(cli, write_csv(df), "--stacking"), "--stacking")


def test_crossstudy_unknown_model(cli, write_csv):
    assert_clear_error(cs(cli, write_csv(_data()), models="nope"), "--models")


def test_crossstudy_duplicated_model_names(cli, write_csv):
    assert_clear_error(cs(cli, write_csv(_data()), models="lr,lr"), "--models")


def test_crossstudy_study_is_target(cli, write_csv):
    assert_clear_error(cs(cli, write_csv(_data()), study="y"), "--study", "--target")
