"""Corpus: what replikit writes is safe to open and comes back as written.

- CSV/TSV outputs are spreadsheet-safe: a text cell that a spreadsheet would run as a formula
  (``=``, ``+``, ``-``, ``@``, tab, carriage return first) gets a leading ``'``, and replikit's
  reader takes it off again; numbers are never touched; Parquet and DuckDB are left as they are.
"""

from __future__ import annotations

import csv

import numpy as np
import pandas as pd
import pytest

from replikit.data import read_frame, write_frame

from .conftest import assert_ok

TRIGGERS = ["=", "+", "-", "@", "\t", "\r"]


def cells(path, sep=","):
    """The raw cells of a CSV file, as a spreadsheet sees them (header first)."""
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh, delimiter=sep))


def column(path, name, sep=","):
    rows = cells(path, sep)
    j = rows[0].index(name)
    return [r[j] for r in rows[1:]]


# ------------------------------------------------------------------ the writer and the reader

@pytest.mark.parametrize("trigger", TRIGGERS, ids=["eq", "plus", "minus", "at", "tab", "cr"])
def test_csv_quotes_every_formula_trigger(tmp_path, trigger):
    value = f"{trigger}HYPERLINK(\"http://example.org\",\"x\")"
    f = pd.DataFrame({"model": [value, "lr"], "value": [-1.5, 0.25], "fold": [-3, 4]})
    path = write_frame(f, tmp_path / "t.csv")
    assert column(path, "model") == ["'" + value, "lr"]
    assert column(path, "value") == ["-1.5", "0.25"]  # numbers are never quoted
    assert column(path, "fold") == ["-3", "4"]
    back = read_frame(path)
    assert back["model"].tolist() == [value, "lr"]
    assert back["value"].tolist() == [-1.5, 0.25] and back["fold"].tolist() == [-3, 4]


def test_csv_genuine_leading_quote_survives(tmp_path):
    f = pd.DataFrame({"label": ["'=x", "''+y", "'plain", "it's", "'"], "v": [1, 2, 3, 4, 5]})
    path = write_frame(f, tmp_path / "q.csv")
    # a quote before a trigger gets one more; a quote before anything else is left alone
    assert column(path, "label") == ["''=x", "'''+y", "'plain", "it's", "'"]
    assert read_frame(path)["label"].tolist() == f["label"].tolist()


def test_csv_negative_number_as_text_label_is_quoted_and_read_back_as_text(tmp_path):
    f = pd.DataFrame({"y_true": ["-1", "1", "-1"], "score": [0.1, 0.2, 0.3]})
    path = write_frame(f, tmp_path / "l.csv")
    assert column(path, "y_true") == ["'-1", "1", "'-1"]
    back = read_frame(path)
    assert back["y_true"].tolist() == ["-1", "1", "-1"]  # text, as written; not -1 and 1


def test_csv_round_trip_gives_the_same_frame(tmp_path):
    f = pd.DataFrame({
        "study": ["=1+1", "+cmd", "-x", "@SUM(A1)", "\tt", "\rr", "'=q", "plain"],
        "model": ["lr", "'", "''@", "a-b", "=", "-", "rf", "x y"],
        "value": [-1.5, 0.0, 1e-12, -2.25, 3.0, -0.5, 7.0, 8.0],
        "n": np.arange(8, dtype=np.int64) - 3,
        "flag": [True, False] * 4,
    })
    for name, sep in (("r.csv", ","), ("r.tsv", "\t")):
        path = write_frame(f, tmp_path / name)
        assert cells(path, sep)[1][0] == "'=1+1"
        pd.testing.assert_frame_equal(read_frame(path), f, check_dtype=False)
        assert read_frame(path)["study"].tolist() == f["study"].tolist()
    # Parquet and DuckDB are not spreadsheets: their values are stored as they are
    for name in ("r.parquet", "r.duckdb"):
        path = write_frame(f, tmp_path / name)
        raw = pd.read_parquet(path) if name.endswith(".parquet") else read_frame(path)
        assert raw["study"].tolist() == f["study"].tolist()


def test_csv_text_with_a_carriage_return_stays_one_row(tmp_path):
    # the csv module quotes only the characters of its line terminator: a lone \r written
    # unquoted was read back as a line break (two rows, the text cut in two)
    f = pd.DataFrame({"model": ["a\rb", "\rlead", "c"], "value": [1.0, 2.0, 3.0]})
    path = write_frame(f, tmp_path / "cr.csv")
    back = read_frame(path)
    assert len(back) == 3
    assert back["model"].tolist() == ["a\rb", "\rlead", "c"]


def test_csv_column_names_are_quoted_too(tmp_path):
    f = pd.DataFrame({"=cmd": ["a", "b"], "-x": [1.0, 2.0]})
    path = write_frame(f, tmp_path / "h.csv")
    assert cells(path)[0] == ["'=cmd", "'-x"]
    pd.testing.assert_frame_equal(read_frame(path, dtype={"=cmd": str}), f, check_dtype=False)


def test_csv_caller_frame_is_not_modified(tmp_path):
    f = pd.DataFrame({"model": ["=a"], "metric": pd.Categorical(["@b"]), "value": [1.0]})
    before = f.copy()
    path = write_frame(f, tmp_path / "c.csv")
    pd.testing.assert_frame_equal(f, before)
    assert column(path, "metric") == ["'@b"]


# ------------------------------------------------------------------------- end to end (CLI)

@pytest.fixture
def sites(write_csv):
    """Two-class data whose study labels and class labels are formula-like texts."""
    rng = np.random.default_rng(7)
    n = 120
    X = rng.normal(size=(n, 2))
    f = pd.DataFrame(X, columns=["a", "b"])
    f["y"] = np.where(X[:, 0] + rng.normal(size=n) > 0, "=HYPERLINK(\"http://x\")", "@no")
    f["site"] = np.array(["=1+1", "+cmd", "-2", "@s"])[np.arange(n) % 4]
    return write_csv(f, "sites.csv")


def test_run_outputs_are_spreadsheet_safe_and_compare_reads_them_back(cli, sites, tmp_path):
    scores, preds = tmp_path / "scores.csv", tmp_path / "preds.csv"
    assert_ok(cli("run", "--data", sites, "--target", "y", "--study", "site", "--models",
                  "lr,dummy", "--scheme", "5x2", "--out", scores, "--predictions", preds))
    assert set(column(scores, "study")) == {"'=1+1", "'+cmd", "'-2", "'@s"}
    assert set(column(preds, "study")) == {"'=1+1", "'+cmd", "'-2", "'@s"}
    assert all(float(v) >= 0 for v in column(scores, "value"))  # numbers untouched
    # replikit reads its own file back: the study is found by its label as the user wrote it
    out = tmp_path / "cmp"
    assert_ok(cli("compare", scores, "--study", "=1+1", "--out", out))
    assert set(column(out / "comparisons.csv", "study")) == {"'=1+1"}
    back = pd.read_csv(out / "comparisons.csv")
    assert back["estimate"].notna().all()


def test_meta_tables_are_spreadsheet_safe(cli, write_csv, tmp_path):
    est = write_csv(pd.DataFrame({"study": ["=cmd|calc", "+1", "-2", "@x", "plain"],
                                  "yi": [0.3, 0.5, -0.1, 0.4, 0.2],
                                  "vi": [0.01, 0.02, 0.015, 0.01, 0.02]}), "est.csv")
    out = tmp_path / "meta"
    assert_ok(cli("meta", est, "--label", "study", "--influence", "--leave-one-out",
                  "--out", out))
    want = ["'=cmd|calc", "'+1", "'-2", "'@x", "plain"]
    assert column(out / "influence.csv", "label") == want
    assert column(out / "leave_one_out.csv", "omitted") == want
    assert any(v.startswith("-") for v in column(out / "influence.csv", "resid"))


def test_replicate_and_generalize_tables_are_spreadsheet_safe(cli, write_csv, tmp_path):
    rep = write_csv(pd.DataFrame({"study": ["=orig", "+rep1", "-rep2"],
                                  "r2": [0.3, 0.25, 0.28], "n": [200, 150, 300]}), "rep.csv")
    assert_ok(cli("replicate", rep, "--out", tmp_path / "rep"))
    assert column(tmp_path / "rep" / "replications.csv", "replication") == ["'+rep1", "'-rep2"]
    rng = np.random.default_rng(0)
    models = ["=a", "+b", "@c", "-d"]
    bench = write_csv(pd.DataFrame(
        [{"dataset": f"-ds{d}", "model": m, "score": rng.normal() + 0.5 * i}
         for d in range(12) for i, m in enumerate(models)]), "bench.csv")
    assert_ok(cli("generalize", bench, "--alternative", "model", "--score", "score",
                  "--factor", "dataset", "--n-resamples", "20", "--out", tmp_path / "gen"))
    ranks = tmp_path / "gen" / "generalize_ranks.csv"
    assert set(column(ranks, "alternative")) == {"'=a", "'+b", "'@c", "'-d"}
    assert column(ranks, "dataset")[0] == "'-ds0"

