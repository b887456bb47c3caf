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


def test_errors_name_option_and_list_columns():
    with pytest.raises(DataError, match=r"`--target`: no column 'nope'.*available columns: x1, cat, site, y"):
        dataset_from_frame(frame(), target="nope", target_option="--target")
    with pytest.raises(DataError, match="`study`: no column 'place'"):
        dataset_from_frame(frame(), target="y", study="place")
    with pytest.raises(DataError, match="must be numeric"):
        dataset_from_frame(frame(), target="cat")
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
