"""Every validation path of Scores and Predictions, and round trips through CSV, Parquet, DuckDB."""

import duckdb
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replikit.data import Predictions, Scores
from replikit.errors import (
    DataError,
    InputFileError,
    OutputError,
    OutputExistsError,
    ParameterTypeError,
)


def scores_frame(n_models=2, n_folds=3):
    rows = []
    for m in range(n_models):
        for f in range(n_folds):
            rows.append({"study": "s1", "model": f"m{m}", "repeat": 0, "fold": f,
                         "metric": "accuracy", "value": 0.5 + 0.1 * m + 0.01 * f,
                         "n_train": 20, "n_test": 10})
    return pd.DataFrame(rows)


def predictions_frame():
    return pd.DataFrame({
        "study": ["a"] * 4, "model": ["lr"] * 4, "repeat": 0, "fold": [0, 0, 1, 1],
        "row": [0, 1, 2, 3], "y_true": [0, 1, 1, 0], "y_pred": [0, 1, 0, 0],
        "proba_1": [0.2, 0.8, 0.4, 0.1], "proba_0": [0.8, 0.2, 0.6, 0.9],
    })


# -- construction -----------------------------------------------------------------------------
def test_valid_scores_and_caller_frame_untouched():
    df = scores_frame()
    before = df.copy()
    s = Scores(df)
    assert len(s) == 6
    assert s.models == ["m0", "m1"] and s.metrics == ["accuracy"] and s.studies == ["s1"]
    pd.testing.assert_frame_equal(df, before)
    out = s.frame
    out.loc[0, "value"] = -99  # the copy we get cannot corrupt the table
    assert s.frame.loc[0, "value"] != -99


@pytest.mark.parametrize("column", ["study", "model", "fold", "metric", "value"])
def test_missing_required_column(column):
    with pytest.raises(DataError, match=f"missing required column.*[`']{column}[`']"):
        Scores(scores_frame().drop(columns=column))


def test_without_repeat_column_is_one_repeat():
    one = scores_frame()
    s = Scores(one.drop(columns="repeat"))
    assert s == Scores(one)  # repeat 0 inserted where it belongs
    assert list(s.frame.columns) == list(one.columns)
    # two repeats without the column: the folds recur, so the keys clash and say so
    two = pd.concat([one, one.assign(repeat=1)], ignore_index=True)
    with pytest.raises(DataError, match="share a key"):
        Scores(two.drop(columns="repeat"))


@pytest.mark.parametrize("column", ["study", "model", "repeat", "fold", "row", "y_true", "y_pred"])
def test_predictions_missing_required_column(column):
    with pytest.raises(DataError, match=f"[`']{column}[`']"):
        Predictions(predictions_frame().drop(columns=column))


def test_wrong_dtype_value_names_column_and_row():
    df = scores_frame()
    df["value"] = df["value"].astype(object)
    df.loc[4, "value"] = "n/a"
    with pytest.raises(DataError, match=r"column `value` must be numeric.*'n/a'.*row\(s\) 4"):
        Scores(df)


def test_wrong_dtype_fold_not_integer():
    df = scores_frame()
    df["fold"] = df["fold"] + 0.5
    with pytest.raises(DataError, match="column `fold` must hold integers"):
        Scores(df)


def test_negative_repeat():
    df = scores_frame()
    df.loc[2, "repeat"] = -1
    with pytest.raises(DataError, match=r"column `repeat` must be >= 0.*row\(s\) 2"):
        Scores(df)


def test_float_model_label_rejected():
    df = scores_frame()
    df["model"] = 1.5
    with pytest.raises(DataError, match="column `model` must hold names"):
        Scores(df)


def test_boolean_value_rejected():
    df = scores_frame()
    df["value"] = True
    with pytest.raises(DataError, match="column `value` must be numeric"):
        Scores(df)


def test_nan_in_value():
    df = scores_frame()
    df.loc[[1, 3], "value"] = np.nan
    with pytest.raises(DataError, match=r"column `value` has 2 missing value\(s\) at row\(s\) 1, 3"):
        Scores(df)


def test_inf_in_value():
    df = scores_frame()
    df.loc[0, "value"] = np.inf
    with pytest.raises(DataError, match="column `value` must be finite"):
        Scores(df)


def test_nan_in_label():
    df = scores_frame()
    df.loc[5, "study"] = None
    with pytest.raises(DataError, match=r"column `study` has 1 missing.*row\(s\) 5"):
        Scores(df)


def test_duplicated_key():
    df = pd.concat([scores_frame(), scores_frame().iloc[[2]]], ignore_index=True)
    with pytest.raises(DataError, match=r"2 rows share a key.*row\(s\) 2, 6"):
        Scores(df)


def test_extra_factor_columns_are_part_of_the_key():
    a, b = scores_frame(), scores_frame()
    a["dataset"], b["dataset"] = "d1", "d2"
    s = Scores(pd.concat([a, b], ignore_index=True))
    assert s.key_columns(s.frame)[-1] == "dataset"
    a["fit_time"] = 0.1  # a float extra column is a measurement, not a key
    assert "fit_time" not in Scores(a).key_columns(Scores(a).frame)


def test_empty_table():
    with pytest.raises(DataError, match="empty"):
        Scores(scores_frame().iloc[:0])
    with pytest.raises(DataError, match="empty"):
        Predictions(predictions_frame().iloc[:0])


def test_not_a_dataframe():
    with pytest.raises(ParameterTypeError, match="DataFrame"):
        Scores([1, 2, 3])


def test_duplicated_column_names():
    df = scores_frame()
    df.columns = ["study", "model", "repeat", "fold", "metric", "value", "n_train", "n_train"]
    with pytest.raises(DataError, match="duplicated column"):
        Scores(df)


def test_optional_sizes_may_be_missing_but_not_negative():
    df = scores_frame()
    df.loc[0, "n_train"] = np.nan
    assert Scores(df).frame["n_train"].isna().sum() == 1
    df.loc[1, "n_test"] = -3
    with pytest.raises(DataError, match="column `n_test` must be >= 0"):
        Scores(df)


def test_predictions_probability_range_and_key():
    p = Predictions(predictions_frame())
    assert sorted(p.proba_columns) == ["proba_0", "proba_1"]
    bad = predictions_frame()
    bad.loc[2, "proba_1"] = 1.2
    with pytest.raises(DataError, match=r"column `proba_1` must be <= 1.*row\(s\) 2"):
        Predictions(bad)
    dup = predictions_frame()
    dup.loc[3, "row"] = 2
    dup.loc[3, "fold"] = 1
    with pytest.raises(DataError, match="share a key"):
        Predictions(dup)


def test_predictions_mixed_label_types():
    df = predictions_frame()
    df["y_pred"] = pd.Series([0, "one", 1, 0], dtype=object)
    with pytest.raises(DataError, match="mixes value types"):
        Predictions(df)


def test_concat_revalidates():
    s = Scores(scores_frame())
    with pytest.raises(DataError, match="share a key"):
        Scores.concat([s, s])
    other = scores_frame()
    other["study"] = "s2"
    assert len(Scores.concat([s, Scores(other)])) == 12


# -- IO -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".duckdb"])
def test_round_trip_scores(tmp_path, suffix):
    s = Scores(scores_frame())
    path = tmp_path / f"scores{suffix}"
    s.write(path)
    back = Scores.read(path)
    pd.testing.assert_frame_equal(back.frame, s.frame, check_dtype=False)
    assert back.frame["value"].to_numpy().tobytes() == s.frame["value"].to_numpy().tobytes()


@pytest.mark.parametrize("suffix", [".csv", ".parquet", ".duckdb"])
def test_round_trip_predictions(tmp_path, suffix):
    p = Predictions(predictions_frame())
    path = tmp_path / f"pred{suffix}"
    p.write(path)
    back = Predictions.read(path)
    pd.testing.assert_frame_equal(back.frame, p.frame, check_dtype=False)


def test_duckdb_quoted_table_names_and_other_tables_kept(tmp_path):
    path = tmp_path / "store.duckdb"
    s = Scores(scores_frame())
    weird = 'my "scores"; DROP TABLE x'
    s.write(path, table=weird)
    Predictions(predictions_frame()).write(path, table="select")  # a keyword
    assert Scores.read(path, table=weird) == s
    assert len(Predictions.read(path, table="select")) == 4
    with duckdb.connect(str(path), read_only=True) as con:
        names = sorted(r[0] for r in con.execute(
            "SELECT table_name FROM information_schema.tables").fetchall())
    assert names == sorted([weird, "select"])
    with pytest.raises(Exception, match="holds 2 tables"):
        Scores.read(path)


def test_writers_never_overwrite_silently(tmp_path):
    s = Scores(scores_frame())
    for name in ("a.csv", "a.parquet"):
        s.write(tmp_path / name)
        with pytest.raises(OutputExistsError, match="`path`: .* pass `overwrite` to replace"):
            s.write(tmp_path / name)
        s.write(tmp_path / name, overwrite=True)
        assert Scores.read(tmp_path / name) == s
        assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
    s.write(tmp_path / "a.duckdb")
    with pytest.raises(OutputExistsError, match="already holds table 'scores'"):
        s.write(tmp_path / "a.duckdb")


def test_writer_refuses_a_file_that_is_not_duckdb(tmp_path):
    import sqlite3

    s = Scores(scores_frame())
    db = tmp_path / "results.db"
    con = sqlite3.connect(db)
    con.execute("create table t (x)")
    con.commit()
    con.close()
    before = db.read_bytes()
    with pytest.raises(OutputError, match="is an SQLite database, not a DuckDB database"):
        s.write(db, overwrite=True)
    assert db.read_bytes() == before
    (tmp_path / "dir.duckdb").mkdir()
    with pytest.raises(OutputError, match="is a directory"):
        s.write(tmp_path / "dir.duckdb")


def test_read_errors(tmp_path):
    with pytest.raises(InputFileError, match="does not exist"):
        Scores.read(tmp_path / "nope.csv")
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(InputFileError, match="is empty"):
        Scores.read(empty)
    header = tmp_path / "header.csv"
    header.write_text("study,model,repeat,fold,metric,value\n")
    with pytest.raises(DataError, match="no rows"):
        Scores.read(header)
    with pytest.raises(Exception, match="must end in one of"):
        Scores.read(tmp_path / "scores.xlsx")


@settings(max_examples=25, deadline=None)
@given(values=st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=20))
def test_round_trip_parquet_is_exact(tmp_path_factory, values):
    # any float: a metric replikit does not know (an mse is refused below 0)
    df = pd.DataFrame({"study": "s", "model": "m", "repeat": 0, "fold": range(len(values)),
                       "metric": "score", "value": values})
    path = tmp_path_factory.mktemp("rt") / "s.parquet"
    Scores(df).write(path)
    np.testing.assert_array_equal(Scores.read(path).frame["value"].to_numpy(), np.asarray(values))
