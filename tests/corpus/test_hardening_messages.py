"""Messages that must say the right thing about odd files: a table too short to fit anything,
a tab- or semicolon-separated file named ``.csv``, control characters in names, labels a
hundred thousand characters long, and the warnings of the libraries replikit calls."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from .conftest import assert_clear_error


def _table(n=60, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"height": rng.normal(170, 10, n), "weight": rng.normal(70, 8, n),
                       "clinic": np.repeat(["Leeds", "Hull", "York"], n // 3)})
    df["pressure"] = 0.3 * df["weight"] + rng.normal(0, 5, n)
    return df


# --- a table too short to fit anything ---------------------------------------------------

@pytest.mark.parametrize("command, needed", [("audit", "20"), ("run", "2")])
def test_one_row_says_the_file_has_one_row(cli, tmp_path, write_csv, command, needed):
    path = write_csv("height,weight,pressure\n171.5,68.2,120.4\n", "one.csv")
    out = tmp_path / ("o" if command == "audit" else "scores.csv")
    line = assert_clear_error(cli(command, "--data", path, "--target", "pressure", "--out",
                                  out), "--data", "one.csv has 1 row", f"at least {needed}")
    assert "missing" not in line  # nothing is missing: the file is short


def test_few_rows_for_an_audit_says_how_many_it_needs(cli, tmp_path, write_csv):
    path = write_csv(_table(12))
    line = assert_clear_error(cli("audit", "--data", path, "--target", "pressure", "--out",
                                  tmp_path / "o"), "--data", "12 rows", "at least 20")
    assert "missing" not in line


def test_missing_values_leaving_too_few_rows_name_the_columns(cli, tmp_path, write_csv):
    df = _table()
    df.loc[:45, "weight"] = np.nan
    line = assert_clear_error(cli("audit", "--data", write_csv(df), "--target", "pressure",
                                  "--out", tmp_path / "o"),
                              "--data", "14 rows of 60 are complete", "at least 20", "weight (46 missing)")
    assert "none" not in line


def test_library_names_the_parameter_and_its_minimum():
    from replikit.data.userdata import dataset_from_frame
    from replikit.errors import DataError

    with pytest.raises(DataError, match=r"`data`: clinics has 1 row; at least 2 are needed"):
        dataset_from_frame(_table().head(1), target="pressure", name="clinics")
    ds = dataset_from_frame(_table().head(5), target="pressure", min_rows=5)
    assert len(ds.y) == 5
    with pytest.raises(DataError, match="at least 6 are needed"):
        dataset_from_frame(_table().head(5), target="pressure", min_rows=6)
