"""Bad and odd inputs to ``replikit audit``: a clear one-line error naming the flag or column,
or an honest result that says what it did. Errors are found before any model is fitted."""

from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pytest

from .conftest import assert_clear_error, assert_ok


def _frame(n=60, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.normal(size=n),
                       "site": np.repeat(["a", "b", "c"], n // 3)})
    df["y"] = df["x1"] + rng.normal(size=n)
    return df


@pytest.fixture
def good(write_csv):
    return write_csv(_frame())


def _bad_frame(kind: str) -> tuple[pd.DataFrame | str, list[str], dict]:
    """(data, flag/column mentions expected in the error, extra CLI args)."""
    df = _frame()
    if kind == "inf in feature":
        df.loc[3, "x1"] = np.inf
        return df, ["x1", "infinite"], {}
    if kind == "1e308 in target":
        df.loc[3, "y"] = 1e308
        return df, ["--target", "'y'", "1e+150"], {}
    if kind == "-inf in target":
        df.loc[3, "y"] = -np.inf
        return df, ["--target", "infinite"], {}
    if kind == "stray text":
        df["x2"] = df["x2"].astype(object)
        df.loc[10, "x2"] = "n/a?"
        return df, ["x2", "n/a?"], {}
    if kind == "constant target":
        return df.assign(y=1.5), ["--target", "constant"], {}
    if kind == "all-missing target":
        return df.assign(y=np.nan), ["--target", "no values"], {}
    if kind == "duplicate header":
        text = "x1,y,y\n" + "\n".join(f"{i},{i * 2},{i * 3}" for i in range(30))
        return text, ["--data", "['y']", "more than once"], {}
    if kind == "text target as regression":
        return df.assign(y=np.where(df.x1 > 0, "hi", "lo")), ["--target", "numeric"], \
            {"--task": "regression"}
    if kind == "singleton class":
        return df.assign(y=np.r_[np.ones(59), 2.0].astype(int)), ["--target", "1 row"], {}
    if kind == "too few complete rows":
        df.loc[:50, "x1"] = np.nan
        return df, ["--data", "20"], {}
    if kind == "mostly missing feature":
        df.loc[:58, "x1"] = np.nan
        return df, ["x1", "missing"], {}
    if kind == "one study":
        return df.assign(site="a"), ["--study", "1 distinct study"], {"--study": "site"}
    if kind == "study equals target":
        return df, ["--study", "--target", "must differ"], {"--study": "y"}
    if kind == "no feature":
        return df[["y"]], ["feature"], {}
    raise AssertionError(kind)


BAD = ["inf in feature", "1e308 in target", "-inf in target", "stray text", "constant target",
       "all-missing target", "duplicate header", "text target as regression", "singleton class",
       "too few complete rows", "mostly missing feature", "one study", "study equals target",
       "no feature"]


@pytest.mark.parametrize("kind", BAD)
def test_bad_data_is_refused_before_any_work(cli, tmp_path, write_csv, kind):
    data, mentions, extra = _bad_frame(kind)
    path = write_csv(data)
    args = ["audit", "--data", path, "--target", "y", "--out", tmp_path / "o"]
    for k, v in extra.items():
        args += [k, v]
    assert_clear_error(cli(*args), *mentions)
    assert not (tmp_path / "o" / "report.html").exists()


@pytest.mark.parametrize("args, mentions", [
    (["--target", "y"], ["--target", "--data"]),
    (["--study", "site"], ["--data"]),
    (["--example", "iris"], ["--example", "anes"]),
    (["--sections", ","], ["--sections"]),
    (["--sections", "overview,bogus"], ["--sections", "bogus"]),
    (["--models", "lr,xgb"], ["--models", "xgb"]),
    (["--models", "lr,lr"], ["--models", "twice"]),
    (["--models", ""], ["--models"]),
    (["--n-jobs", "0"], ["--n-jobs"]),
    (["--random-state", "-1"], ["--random-state"]),
    (["--no-such-flag"], ["--no-such-flag"]),
])
def test_bad_options(cli, tmp_path, args, mentions):
    assert_clear_error(cli("audit", "--out", tmp_path / "o", *args), *mentions)


@pytest.mark.parametrize("args, mentions", [
    (["--target", "nope"], ["--target", "nope", "x1, x2, site, y"]),
    (["--target", "y", "--study", "place"], ["--study", "place"]),
    (["--target", "y", "--task", "ordinal"], ["--task", "ordinal"]),
    (["--target", "y", "--models", "lda"], ["--models", "lda", "classifier"]),
    (["--target", "y", "--table", "t"], ["table"]),
])
def test_bad_columns_and_choices(cli, tmp_path, good, args, mentions):
    assert_clear_error(cli("audit", "--data", good, "--out", tmp_path / "o", *args), *mentions)


@pytest.mark.parametrize("name, content, mentions", [
    ("missing.csv", None, ["--data", "does not exist"]),
    ("empty.csv", "", ["--data", "empty"]),
    ("header.csv", "x,y\n", ["--data", "no rows"]),
    ("data.xlsx", "x", ["--data", ".csv"]),
])
def test_bad_files(cli, tmp_path, name, content, mentions):
    path = tmp_path / name
    if content is not None:
        path.write_text(content)
    assert_clear_error(cli("audit", "--data", path, "--target", "y", "--out", tmp_path / "o"),
                       *mentions)


def test_directory_as_data(cli, tmp_path):
    d = tmp_path / "dir.csv"
    d.mkdir()
    assert_clear_error(cli("audit", "--data", d, "--target", "y", "--out", tmp_path / "o"),
                       "--data", "directory")


def test_sqlite_file_as_data_is_refused_without_touching_duckdb(cli, tmp_path):
    import sqlite3

    db = tmp_path / "results.db"
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE t (a REAL, y REAL)")
        con.execute("INSERT INTO t VALUES (1, 2)")
    before = db.read_bytes()
    assert_clear_error(cli("audit", "--data", db, "--target", "y", "--out", tmp_path / "o"),
                       "--data", "SQLite", "not a DuckDB database")
    assert db.read_bytes() == before


def test_duckdb_with_two_tables_needs_table(cli, tmp_path):
    import duckdb

    db = tmp_path / "two.duckdb"
    df = _frame()  # noqa: F841 — read by DuckDB's replacement scan
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE a AS SELECT * FROM df")
        con.execute("CREATE TABLE b AS SELECT * FROM df")
    assert_clear_error(cli("audit", "--data", db, "--target", "y", "--out", tmp_path / "o"),
                       "table", "'a', 'b'")


# --- outputs: checked before any work, never replaced without --overwrite -------------------

def test_existing_report_refused_then_replaced_with_overwrite(cli, tmp_path, good):
    out = tmp_path / "o"
    out.mkdir()
    (out / "report.html").write_text("my notes")
    (out / "keep.txt").write_text("not replikit's")
    args = ["audit", "--data", good, "--target", "y", "--out", out, "--sections", "overview"]
    assert_clear_error(cli(*args), "--out", "report.html", "--overwrite")
    assert (out / "report.html").read_text() == "my notes"
    assert_ok(cli(*args, "--overwrite"))
    assert "Replicability audit" in (out / "report.html").read_text()
    assert (out / "keep.txt").read_text() == "not replikit's"


def test_out_is_a_file(cli, tmp_path, good):
    f = tmp_path / "file"
    f.write_text("x")
    assert_clear_error(cli("audit", "--data", good, "--target", "y", "--out", f), "--out",
                       "is a file")


@pytest.mark.parametrize("where", ["read-only dir", "/proc"])
def test_out_not_writable(cli, tmp_path, good, where):
    if where == "/proc":  # not writable even for root
        target = "/proc/replikit-audit-test"
    else:
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o500)
        target = ro / "o"
        if os.geteuid() == 0:  # root ignores permission bits: use a read-only mount instead
            target = "/proc/self/replikit"
    try:
        assert_clear_error(cli("audit", "--data", good, "--target", "y", "--out", target),
                           "--out", "not writable")
    finally:
        if where != "/proc":
            (tmp_path / "ro").chmod(0o700)


def test_out_under_a_file(cli, tmp_path, good):
    f = tmp_path / "file"
    f.write_text("x")
    assert_clear_error(cli("audit", "--data", good, "--target", "y", "--out", f / "sub"),
                       "--out", "is a file")


# --- odd but valid: an honest result that says what it did ----------------------------------

def _overview(cli, tmp_path, path, *extra):
    out = tmp_path / "o"
    stdout = assert_ok(cli("--format", "json", "audit", "--data", path, "--target", "y",
                           "--out", out, "--sections", "overview", *extra))
    doc = json.loads(open(json.loads(stdout)["json"], encoding="utf-8").read())
    return doc


def test_identifier_column_left_out_with_a_note(cli, tmp_path, write_csv):
    df = _frame(120).assign(pid=[f"p{i:04d}" for i in range(120)])
    doc = _overview(cli, tmp_path, write_csv(df))
    assert "pid" not in doc["sections"][0]["data"]["features"]
    assert any("'pid'" in n for n in doc["meta"]["data_notes"])


def test_missing_rows_dropped_and_counted(cli, tmp_path, write_csv):
    df = _frame()
    df.loc[[1, 2, 3], "x2"] = np.nan
    doc = _overview(cli, tmp_path, write_csv(df))
    assert doc["sections"][0]["data"]["n_dropped"] == 3
    assert any("x2: 3" in n for n in doc["meta"]["data_notes"])


def test_dollar_and_markup_in_names(cli, tmp_path, write_csv):
    df = _frame().rename(columns={"x1": "cost $"}).assign(site=lambda d: d["site"] + "$<b>")
    doc = _overview(cli, tmp_path, write_csv(df), "--study", "site")
    assert doc["sections"][0]["data"]["n_studies"] == 3


def test_numeric_study_labels_and_string_classes(cli, tmp_path, write_csv):
    df = _frame().assign(site=lambda d: d["site"].map({"a": 2001.0, "b": 2002.0, "c": 2003.0}),
                         y=lambda d: np.where(d["y"] > 0, "yes", "no"))
    doc = _overview(cli, tmp_path, write_csv(df), "--study", "site")
    studies = {r["study"] for r in doc["sections"][0]["tables"]["table_0"]["rows"]}
    assert studies == {"2001.0", "2002.0", "2003.0"}  # as written in the file
    assert doc["meta"]["task"] == "classification"


def test_format_json_after_the_command(cli, tmp_path, good):
    code, out, _ = cli("audit", "--data", good, "--target", "y", "--out", tmp_path / "o",
                       "--sections", "overview", "--format", "json", "--quiet")
    assert code == 0 and json.loads(out)["sections"] == ["overview"]


def test_flags_have_no_bool_label(cli):
    code, out, _ = cli("audit", "--help")
    assert code == 0 and "<bool>" not in out and "--overwrite" in out
