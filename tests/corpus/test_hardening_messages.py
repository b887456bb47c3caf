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


# --- control characters in names ----------------------------------------------------------

def _with_header(df: pd.DataFrame, header: list[str]) -> str:
    """``df`` as CSV text under ``header`` (names pandas would not write as they are)."""
    body = df.to_csv(index=False, header=False)
    return ",".join(header) + "\n" + body


def test_a_nul_in_the_header_is_escaped_and_named(cli, tmp_path, write_csv):
    df = _table()[["height", "weight", "clinic", "pressure"]]
    path = write_csv(_with_header(df, ["height\x00cm", "weight", "clinic", "pressure"]))
    code, out, err = result = cli("audit", "--data", path, "--target", "bp", "--out",
                                  tmp_path / "o")
    line = assert_clear_error(result, "--target", "'bp'", r"'height\x00cm'",
                              "holds a control character")
    assert "\x00" not in err and "\x00" not in line


def test_an_escape_sequence_in_a_class_label_cannot_reach_the_terminal(cli, tmp_path,
                                                                         write_csv):
    df = _table()
    df["pressure"] = np.where(df["pressure"] > df["pressure"].median(), "high\x1b[31m", "low")
    code, out, err = cli("audit", "--data", write_csv(df), "--target", "pressure",
                         "--sections", "overview", "--quick", "--out", tmp_path / "o")
    assert code == 0, err
    assert "\x1b" not in err and "\x1b" not in out
    assert r"high\x1b[31m → 0" in err  # the note on the encoding, escaped


def test_library_message_quotes_the_odd_name():
    from replikit.data.userdata import dataset_from_frame
    from replikit.errors import DataError

    df = _table().rename(columns={"weight": "weight\x1b[0m"})
    with pytest.raises(DataError) as exc:
        dataset_from_frame(df, target="bp")
    assert r"'weight\x1b[0m'" in str(exc.value) and "\x1b" not in str(exc.value)


def test_a_control_character_in_a_study_label_is_visible_in_the_report(cli, tmp_path,
                                                                       write_csv):
    df = _table()
    df["clinic"] = np.repeat(["Leeds\x1b[31m", "Hull", "York"], 20)
    out = tmp_path / "o"
    code, _, err = cli("audit", "--data", write_csv(df), "--target", "pressure", "--study",
                       "clinic", "--sections", "overview", "--out", out)
    assert code == 0, err
    html = (out / "report.html").read_text()
    assert "\x1b" not in html and "Leeds⟨U+001B⟩[31m" in html


# --- a tab- or semicolon-separated file named .csv ---------------------------------------

def test_a_semicolon_file_with_decimal_commas_is_refused_naming_the_column(cli, tmp_path,
                                                                          write_csv):
    text = "height;weight;pressure\n" + "\n".join(
        f"{170 + i % 7},{i % 10};{60 + i % 9},5;{110 + i},{i % 4}" for i in range(40))
    assert_clear_error(cli("audit", "--data", write_csv(text, "eu.csv"), "--target",
                           "pressure", "--out", tmp_path / "o"),
                       "--data", "semicolon-separated", "decimal comma", "'height'", "'170,0'")


def test_library_reads_a_tab_separated_csv_and_warns(tmp_path):
    import warnings

    from replikit.data import read_frame
    from replikit.errors import ReplikitWarning

    p = tmp_path / "t.csv"
    p.write_text("a\tb\tc\n1\t2\tx\n3\t4\ty\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = read_frame(p)
    assert list(frame.columns) == ["a", "b", "c"] and frame["b"].tolist() == [2, 4]
    assert [w.category for w in caught] == [ReplikitWarning]
    assert "t.csv is tab-separated" in str(caught[0].message)
    assert caught[0].filename == __file__  # points at the caller, not inside replikit
    q = tmp_path / "q.csv"
    q.write_text('"a;b"\nfoo\nbar\n')  # a quoted name holding a semicolon: one column
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert list(read_frame(q).columns) == ["a;b"]
