"""Per-fold scores exported by mlr3 and by the Weka Experimenter, read as Scores.

The oracle: the same numbers written by hand in the Scores layout (plain pandas on the raw
file, not the reader) give the same ``compare_scores`` table, number for number.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from pandas.testing import assert_frame_equal
from typer.testing import CliRunner

from replikit.cli import app, main
from replikit.compare import compare_scores
from replikit.data import Scores
from replikit.data.examples import score_export
from replikit.data.foreign import read_scores, recognise_layout, scores_from_frame
from replikit.errors import DataError, ParameterError
from replikit.experiment.metrics import higher_is_better


def _compare(scores) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compare_scores(scores).frame


def mlr3_raw() -> pd.DataFrame:
    return pd.read_csv(score_export("mlr3"))


def weka_raw() -> pd.DataFrame:
    return pd.read_csv(score_export("weka"))


def mlr3_by_hand(raw: pd.DataFrame) -> Scores:
    rows = []
    for col, metric in (("classif.ce", "error_rate"), ("classif.auc", "roc_auc")):
        rows.append(pd.DataFrame({"study": raw["task_id"], "model": raw["learner_id"],
                                  "repeat": 0, "fold": raw["iteration"] - 1, "metric": metric,
                                  "value": raw[col]}))
    return Scores(pd.concat(rows, ignore_index=True))


def weka_by_hand(raw: pd.DataFrame) -> Scores:
    model = raw["Key_Scheme"].map({"weka.classifiers.functions.Logistic": "Logistic",
                                   "weka.classifiers.trees.SimpleCart": "SimpleCart"})
    rows = []
    for col, metric, scale in (("Percent_correct", "accuracy", 100.0),
                               ("Mean_absolute_error", "mae", 1.0),
                               ("Root_mean_squared_error", "rmse", 1.0),
                               ("Area_under_ROC", "roc_auc", 1.0)):
        rows.append(pd.DataFrame({
            "study": raw["Key_Dataset"], "model": model, "repeat": raw["Key_Run"] - 1,
            "fold": raw["Key_Fold"] - 1, "n_train": raw["Number_of_training_instances"],
            "n_test": raw["Number_of_testing_instances"], "metric": metric,
            "value": raw[col] / scale}))
    return Scores(pd.concat(rows, ignore_index=True))


def test_shipped_mlr3_export_compares_as_the_scores_written_by_hand():
    raw = mlr3_raw()
    read, layout = scores_from_frame(raw)
    assert layout.name == "mlr3"
    assert layout.description.startswith("read as an mlr3 benchmark export: 2 task(s)")
    assert sorted(read.metrics) == ["error_rate", "roc_auc"]
    assert not higher_is_better("error_rate")  # classif.ce is an error: lower is better
    assert_frame_equal(_compare(read), _compare(mlr3_by_hand(raw)))
    assert read == read_scores(score_export("mlr3"))


def test_shipped_weka_export_compares_as_the_scores_written_by_hand():
    raw = weka_raw()
    read, layout = scores_from_frame(raw)
    assert layout.name == "weka" and "training/test set sizes from the file" in layout.description
    frame = read.frame
    acc = frame[frame["metric"] == "accuracy"]["value"]
    assert acc.between(0, 1).all() and acc.mean() > 0.8  # proportions, not percentages
    sizes = frame.groupby("study")[["n_train", "n_test"]].agg(["min", "max"])
    total = frame["n_train"] + frame["n_test"]
    assert (total.groupby(frame["study"]).nunique() == 1).all()  # each fold splits the trial
    assert ((sizes[("n_test", "max")] - sizes[("n_test", "min")]) <= 1).all()  # 10 equal folds
    assert_frame_equal(_compare(read), _compare(weka_by_hand(raw)))


def test_mlr3_repeated_cv_needs_n_folds_and_then_matches_the_runs():
    # the Weka file's 10 runs x 10 folds, exported as mlr3's repeated_cv would number them
    raw = weka_raw()
    raw = raw[raw["Key_Dataset"] == "nwtco-NWTS-3"]
    mlr3 = pd.DataFrame({
        "task_id": raw["Key_Dataset"],
        "learner_id": raw["Key_Scheme"].str.rsplit(".", n=1).str[-1],
        "resampling_id": "repeated_cv",
        "iteration": (raw["Key_Run"] - 1) * 10 + raw["Key_Fold"],
        "classif.acc": raw["Percent_correct"] / 100})
    with pytest.raises(ParameterError, match=r"`n_folds`: .*repeated_cv"):
        scores_from_frame(mlr3)
    read, _ = scores_from_frame(mlr3, n_folds=10)
    weka = weka_by_hand(raw).frame
    weka = weka[weka["metric"] == "accuracy"].drop(columns=["n_train", "n_test"])
    mine = read.frame.sort_values(["model", "repeat", "fold"]).reset_index(drop=True)
    theirs = weka.sort_values(["model", "repeat", "fold"]).reset_index(drop=True)
    np.testing.assert_array_equal(mine[["repeat", "fold"]], theirs[["repeat", "fold"]])
    np.testing.assert_allclose(mine["value"], theirs["value"], rtol=1e-12)
    with pytest.raises(ParameterError, match="n_folds"):
        scores_from_frame(mlr3, n_folds=1)


def test_file_without_repeat_column_is_one_repeat(tmp_path):
    full = mlr3_by_hand(mlr3_raw()).frame
    path = tmp_path / "scores.csv"
    full.drop(columns="repeat").to_csv(path, index=False)
    read, layout = scores_from_frame(pd.read_csv(path))
    assert layout.name == "scores"
    assert read == Scores(full)
    assert_frame_equal(_compare(read), _compare(Scores(full)))


def test_columns_maps_any_other_layout():
    raw = mlr3_raw()
    other = raw.rename(columns={"task_id": "dataset", "learner_id": "algo",
                                "iteration": "split"})
    long = other.melt(id_vars=["dataset", "algo", "split"], value_vars=["classif.ce"],
                      var_name="measure", value_name="score")
    long["split"] -= 1
    long["measure"] = "error_rate"
    read, layout = scores_from_frame(long, columns={"study": "dataset", "model": "algo",
                                                    "fold": "split", "metric": "measure",
                                                    "value": "score"})
    assert layout.name == "columns"
    hand = mlr3_by_hand(raw).frame
    assert read == Scores(hand[hand["metric"] == "error_rate"].reset_index(drop=True))


@pytest.mark.parametrize("frame, kwargs, match", [
    (pd.DataFrame({"task_id": ["t"], "learner_id": ["l"], "iteration": [1],
                   "classif.fbeta": [0.5]}), {}, r"no measure column.*`classif\.ce`"),
    (pd.DataFrame({"task_id": ["t"], "learner_id": ["l"], "classif.ce": [0.5]}), {},
     r"missing column\(s\) `iteration`"),
    (pd.DataFrame({"task_id": ["t"], "learner_id": ["l"], "iteration": [0],
                   "classif.ce": [0.5]}), {}, r"`iteration` must hold integers >= 1"),
    (pd.DataFrame({"task_id": ["t"], "learner_id": ["l"], "iteration": [1],
                   "resampling_id": ["subsampling"], "classif.ce": [0.5]}), {},
     r"`resampling_id` holds 'subsampling'"),
    (pd.DataFrame({"Key_Dataset": ["d"], "Key_Scheme": ["s"], "Key_Run": [1],
                   "Percent_correct": [80.0]}), {}, r"missing column\(s\) `Key_Fold`"),
    (pd.DataFrame({"Key_Dataset": ["d"], "Key_Scheme": ["s"], "Key_Run": [1],
                   "Key_Fold": [1.5], "Percent_correct": [80.0]}), {},
     r"`Key_Fold` must hold integers"),
    (pd.DataFrame({"a": [1], "b": [2.0]}), {}, r"match no layout.*`columns`"),
    (pd.DataFrame({"a": [1], "b": [2.0]}), {"columns": {"study": "c"}},
     r"names column `c`"),
])
def test_bad_layouts_say_in_one_line_what_was_expected(frame, kwargs, match):
    with pytest.raises(DataError, match=match) as info:
        scores_from_frame(frame, **kwargs)
    assert "\n" not in str(info.value)


def test_columns_naming_an_unknown_scores_column_is_refused():
    with pytest.raises(ParameterError, match=r"'dataset' is not a Scores column"):
        scores_from_frame(pd.DataFrame({"a": [1]}), columns={"dataset": "a"})


def test_recognise_layout():
    assert recognise_layout(mlr3_raw()) == "mlr3"
    assert recognise_layout(weka_raw()) == "weka"
    assert recognise_layout(pd.DataFrame(columns=["x", "y"])) == "unknown"


# -- the command line ----------------------------------------------------------------------


def test_cli_reads_both_exports_and_announces_the_layout():
    run = CliRunner().invoke
    for tool, words in (("mlr3", "read as an mlr3 benchmark export"),
                        ("weka", "read as a Weka Experimenter file")):
        res = run(app, ["compare", str(score_export(tool)), "--a", "classif.log_reg"
                        if tool == "mlr3" else "Logistic"])
        assert res.exit_code == 0, res.output
        assert words in res.output
        assert "corrected_repeated_kfold_t" in res.output


def test_cli_json_numbers_equal_compare_scores_on_the_hand_written_scores():
    import json

    res = CliRunner().invoke(app, ["--format", "json", "--quiet", "compare",
                                   str(score_export("weka")), "--metric", "accuracy"])
    assert res.exit_code == 0, res.output
    got = pd.DataFrame(json.loads(res.stdout))
    hand = weka_by_hand(weka_raw())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = compare_scores(hand, metrics="accuracy").frame
    np.testing.assert_allclose(got["estimate"].to_numpy(float), want["estimate"].to_numpy(float))
    np.testing.assert_allclose(got["pvalue"].to_numpy(float), want["pvalue"].to_numpy(float))


def _cli(capsys, args):
    """``replikit ARGS`` as the script runs it: exit code, stdout, stderr."""
    try:
        main(list(map(str, args)))
        code = 0
    except SystemExit as exc:
        code = exc.code or 0
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("args, words", [
    (["--n-folds", "5"], None),
    ([], "`--n-folds`"),
    (["--columns", "study"], "`--columns`"),
    (["--n-folds", "1"], "--n-folds"),
])
def test_cli_repeated_cv_and_bad_columns(tmp_path, capsys, args, words):
    raw = weka_raw()
    mlr3 = pd.DataFrame({"task_id": raw["Key_Dataset"],
                         "learner_id": raw["Key_Scheme"].str.rsplit(".", n=1).str[-1],
                         "resampling_id": "repeated_cv",
                         "iteration": (raw["Key_Run"] - 1) * 10 + raw["Key_Fold"],
                         "classif.acc": raw["Percent_correct"] / 100})
    path = tmp_path / "mlr3.csv"
    mlr3.to_csv(path, index=False)
    code, out, err = _cli(capsys, ["compare", path, *args])
    if words is None:  # 100 iterations read as 20 repeats of 5 folds: a valid design
        assert code == 0, err
        assert "20 repeat(s) of 5 folds" in err
    else:
        assert code == 2
        assert words in err and len(err.strip().splitlines()) == 1
        assert "Traceback" not in err


def test_cli_unknown_layout_exits_2_with_one_line(tmp_path, capsys):
    path = tmp_path / "odd.csv"
    pd.DataFrame({"a": [1, 2], "b": [0.1, 0.2], "run": [1, 2]}).to_csv(path, index=False)
    code, _, err = _cli(capsys, ["compare", path])
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "match no layout" in err and "`--columns`" in err


def test_cli_columns_maps_another_layout(tmp_path, capsys):
    raw = mlr3_raw().rename(columns={"task_id": "dataset", "learner_id": "algo"})
    long = pd.DataFrame({"dataset": raw["dataset"], "algo": raw["algo"],
                         "split": raw["iteration"] - 1, "measure": "error_rate",
                         "score": raw["classif.ce"]})
    path = tmp_path / "mine.csv"
    long.to_csv(path, index=False)
    code, out, err = _cli(capsys, ["compare", path, "--columns",
                                   "study=dataset,model=algo,fold=split,metric=measure,"
                                   "value=score"])
    assert code == 0, err
    assert "read with the column mapping study=dataset" in err
    assert "corrected_repeated_kfold_t" in out
