import numpy as np
import pandas as pd
import pytest

from replikit.data.userdata import dataset_from_frame, infer_task, load_dataset
from replikit.errors import DataError, InputFileError


def frame():
    rng = np.random.default_rng(0)
    return pd.DataFrame({"x1": rng.normal(size=40), "cat": rng.choice(["a", "b", "c"], 40),
                         "site": np.repeat(["s1", "s2"], 20), "y": rng.normal(size=40)})


def test_features_encoded_and_missing_rows_counted():
    df = frame()
    df.loc[[3, 7], "x1"] = np.nan
    d = dataset_from_frame(df, target="y", study="site")
    assert d.n_dropped == 2 and len(d.y) == 38
    assert list(d.X.columns) == ["x1", "cat_b", "cat_c"]
    assert d.task == "regression" and d.n_studies == 2


def test_errors_name_the_parameter_and_list_columns():
    with pytest.raises(DataError, match=r"`target`: no column 'nope'.*available columns: x1, cat, site, y"):
        dataset_from_frame(frame(), target="nope")
    with pytest.raises(DataError, match="`study`: no column 'place'"):
        dataset_from_frame(frame(), target="y", study="place")
    with pytest.raises(DataError, match="`target`: column 'cat' must be numeric for regression"):
        dataset_from_frame(frame(), target="cat", task="regression")
    one = frame().assign(site="only")
    with pytest.raises(DataError, match="holds 1 distinct study"):
        dataset_from_frame(one, target="y", study="site", min_studies=2)


def test_infer_task():
    assert infer_task(pd.Series([0, 1, 1, 0])) == "classification"
    assert infer_task(pd.Series([0.0, 1.0])) == "classification"
    assert infer_task(pd.Series(np.linspace(0, 1, 50))) == "regression"
    assert infer_task(pd.Series(["a", "b"])) == "classification"


def test_load_dataset_missing_file(tmp_path):
    with pytest.raises(InputFileError, match="`data`: file .* does not exist"):
        load_dataset(tmp_path / "x.csv", target="y")


# --- ordinary data that used to fail or go silently wrong -----------------------------------

def test_string_class_labels_are_encoded_in_sorted_order():
    df = frame().assign(y=np.where(np.arange(40) % 3 == 0, "malignant", "benign"))
    d = dataset_from_frame(df, target="y", study="site")
    assert d.task == "classification"
    assert d.classes == ("benign", "malignant")
    assert set(d.y) == {0, 1}
    assert (d.y == 1).sum() == (df["y"] == "malignant").sum()
    assert any("malignant → 1" in n for n in d.notes)


def test_integer_labels_0_to_k_kept_and_other_codes_encoded():
    df = frame().assign(y=np.arange(40) % 2)
    d = dataset_from_frame(df, target="y")
    assert d.classes == (0, 1) and d.y.tolist() == df["y"].tolist() and not d.notes
    d2 = dataset_from_frame(df.assign(y=df["y"] + 1), target="y")  # labels 1/2
    assert d2.classes == (1, 2) and d2.y.tolist() == df["y"].tolist()


def test_many_integer_values_flagged_and_task_overridable():
    df = frame().assign(y=np.arange(40) % 9)
    d = dataset_from_frame(df, target="y")
    assert d.task == "classification"
    assert any("set `task` to regression" in n for n in d.notes)
    r = dataset_from_frame(df, target="y", task="regression")
    assert r.task == "regression" and r.y.dtype == float


def test_constant_target_refused():
    with pytest.raises(DataError, match=r"`target`: column 'y' is constant"):
        dataset_from_frame(frame().assign(y=3.0), target="y", task="regression")


@pytest.mark.parametrize("bad", [np.inf, -np.inf, 1e308])
def test_infinite_or_overflowing_values_refused(bad):
    df = frame()
    df.loc[5, "x1"] = bad
    with pytest.raises(DataError, match="feature column 'x1'.*data row 6"):  # loc 5: sixth row
        dataset_from_frame(df, target="y")
    df = frame()
    df.loc[5, "y"] = bad
    with pytest.raises(DataError, match="`target`: column 'y'"):
        dataset_from_frame(df, target="y")


def test_stray_text_in_numeric_column_refused_not_dummy_encoded():
    df = frame()
    df["x1"] = df["x1"].astype(object)
    df.loc[7, "x1"] = "n/a?"
    with pytest.raises(DataError, match=r"'x1' is numeric except for 1 value such as \['n/a\?'\]"):
        dataset_from_frame(df, target="y")


def test_identifier_and_empty_columns_left_out_with_a_note():
    n = 120
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"id": [f"p{i:04d}" for i in range(n)], "x": rng.normal(size=n),
                       "empty": np.nan, "y": rng.normal(size=n)})
    d = dataset_from_frame(df, target="y")
    assert list(d.X.columns) == ["x"]
    assert any("'id'" in note and "identifier" in note for note in d.notes)
    assert any("'empty'" in note for note in d.notes)
    assert d.n_dropped == 0


def test_duplicated_column_names_refused(tmp_path):
    path = tmp_path / "dup.csv"
    path.write_text("x,y,y\n1,2,3\n4,5,6\n7,8,9\n")
    with pytest.raises(DataError, match=r"`data`: column name\(s\) \['y'\] appear more than once"):
        load_dataset(path, target="y")
    df = pd.DataFrame([[1, 2, 3], [4, 5, 6]], columns=["x", "y", "y"])
    with pytest.raises(DataError, match="appear more than once"):
        dataset_from_frame(df, target="x")


def test_rows_dropped_for_missing_values_are_explained():
    df = frame()
    df.loc[:38, "x1"] = np.nan  # 39 of 40 rows miss x1
    with pytest.raises(DataError, match=r"only 1 row of 40 is complete.*x1 \(39 missing\)"):
        dataset_from_frame(df, target="y")
    df = frame()
    df.loc[:9, "x1"] = np.nan
    d = dataset_from_frame(df, target="y")
    assert d.n_dropped == 10 and any("x1: 10" in n for n in d.notes)


def test_no_study_column_counts_as_one_study_and_float_years_print_as_years():
    d = dataset_from_frame(frame(), target="y")
    assert d.n_studies == 1
    df = frame().assign(site=np.repeat([1978.0, 1980.0], 20))
    d = dataset_from_frame(df, target="y", study="site")
    assert sorted(d.study.unique()) == ["1978", "1980"]


def test_numbers_stored_as_text_in_the_target_are_numbers():
    df = frame()
    df["y"] = df["y"].map(lambda v: f"{v:.6f}")
    d = dataset_from_frame(df, target="y")
    assert d.task == "regression" and d.y.dtype == float


def test_study_labels_read_as_written(tmp_path):
    """'5', '05' and '5.0' in a CSV study column are three studies (pandas would read all three
    as the number 5 and merge them), and a note says they look alike."""
    rng = np.random.default_rng(2)
    rows = ["x,y,site"] + [f"{rng.normal():.4f},{rng.normal():.4f},{lab}"
                           for lab in ["5", "05", "5.0"] for _ in range(10)]
    path = tmp_path / "s.csv"
    path.write_text("\n".join(rows) + "\n")
    d = load_dataset(path, target="y", study="site")
    assert sorted(d.study.unique()) == ["05", "5", "5.0"]
    assert any("look alike" in n for n in d.notes)


def test_outcome_by_study_matches_pandas_and_names_the_class():
    df = frame().assign(y=np.where(np.arange(40) % 4 == 0, "malignant", "benign"))
    d = dataset_from_frame(df, target="y", study="site")
    t = d.outcome_by_study()
    assert list(t.columns) == ["study", "n", "share malignant"]
    for row in t.itertuples():
        m = df["site"] == row.study
        assert row.n == m.sum()
        assert row[3] == pytest.approx((df.loc[m, "y"] == "malignant").mean())
    r = dataset_from_frame(frame(), target="y", study="site").outcome_by_study()
    assert r.loc[r.study == "s1", "sd"].iloc[0] == pytest.approx(frame()["y"][:20].std())
