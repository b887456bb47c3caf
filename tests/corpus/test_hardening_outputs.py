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

from .conftest import assert_clear_error, assert_ok

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


# --------------------------------------------------- predictions keep the user's class labels

def labelled(labels, n=150, seed=5, sites=("s1", "s2", "s3")):
    """Data whose target takes ``labels`` (in order of a latent score) and a study column."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    z = X[:, 0] + rng.normal(size=n)
    cuts = np.quantile(z, np.linspace(0, 1, len(labels) + 1)[1:-1])
    f = pd.DataFrame(X, columns=["a", "b"])
    f["y"] = np.asarray(labels, dtype=object)[np.digitize(z, cuts)]
    f["site"] = np.asarray(sites)[np.arange(n) % len(sites)]
    return f


def run_predictions(cli, path, tmp_path, name="preds.csv", *extra):
    out = tmp_path / name
    assert_ok(cli("run", "--data", path, "--target", "y", "--study", "site", "--models",
                  "lr,dummy", "--scheme", "5x2", "--out", tmp_path / f"scores_{name}.csv",
                  "--predictions", out, *extra))
    return out


def test_run_predictions_hold_text_labels(cli, write_csv, tmp_path):
    preds = run_predictions(cli, write_csv(labelled(["no", "yes"]), "yn.csv"), tmp_path)
    f = pd.read_csv(preds)
    assert [c for c in f.columns if c.startswith("proba_")] == ["proba_no", "proba_yes"]
    assert set(f["y_true"]) == {"no", "yes"} and set(f["y_pred"]) <= {"no", "yes"}
    np.testing.assert_allclose(f["proba_no"] + f["proba_yes"], 1.0)
    # the predicted label is the more probable one
    lr = f[f["model"] == "lr"]
    assert ((lr["proba_yes"] > 0.5) == (lr["y_pred"] == "yes")).all()


def test_run_predictions_awkward_labels_give_valid_distinct_columns(cli, write_csv, tmp_path):
    preds = run_predictions(cli, write_csv(labelled(["very good", "c", "=d"]), "aw.csv"),
                            tmp_path)
    header = cells(preds)[0]
    assert header[-3:] == ["proba_=d", "proba_c", "proba_very good"]
    assert set(column(preds, "y_true")) == {"'=d", "c", "very good"}  # spreadsheet-safe
    from replikit.data import Predictions

    p = Predictions.read(preds)
    assert p.proba_columns == ["proba_=d", "proba_c", "proba_very good"]
    assert set(p.frame["y_true"]) == {"=d", "c", "very good"}


def test_run_predictions_number_labels_are_the_users_numbers(cli, write_csv, tmp_path):
    preds = run_predictions(cli, write_csv(labelled([1, 2]), "12.csv"), tmp_path)
    f = pd.read_csv(preds)
    assert set(f["y_true"]) == {1, 2}
    assert [c for c in f.columns if c.startswith("proba_")] == ["proba_1", "proba_2"]
    neg = pd.read_csv(run_predictions(cli, write_csv(labelled([-1, 1]), "pm.csv"), tmp_path,
                                      "pm_preds.csv"))
    assert set(neg["y_true"]) == {-1, 1}
    assert [c for c in neg.columns if c.startswith("proba_")] == ["proba_-1", "proba_1"]
    # 0/1 labels are their own codes: the columns stay proba_0, proba_1
    zo = pd.read_csv(run_predictions(cli, write_csv(labelled([0, 1]), "01.csv"), tmp_path,
                                     "01_preds.csv"))
    assert set(zo["y_true"]) == {0, 1}
    assert [c for c in zo.columns if c.startswith("proba_")] == ["proba_0", "proba_1"]


def test_run_predictions_labels_differing_in_case(cli, write_csv, tmp_path):
    data = write_csv(labelled(["Yes", "yes"]), "case.csv")
    f = pd.read_csv(run_predictions(cli, data, tmp_path))
    assert [c for c in f.columns if c.startswith("proba_")] == ["proba_Yes", "proba_yes"]
    # DuckDB compares column names without case and would rename one to proba_yes_1:
    # refused before any fit, naming the flag
    res = cli("run", "--data", data, "--target", "y", "--models", "lr", "--scheme", "5x2",
              "--out", tmp_path / "s.csv", "--predictions", tmp_path / "p.duckdb")
    assert_clear_error(res, "--predictions", "proba_Yes", "proba_yes", "case")
    assert not (tmp_path / "s.csv").exists()


def test_write_frame_refuses_columns_duckdb_would_rename(tmp_path):
    from replikit.errors import OutputError

    with pytest.raises(OutputError, match="'A'.*'a'.*case"):
        write_frame(pd.DataFrame({"A": [1.0], "a": [2.0]}), tmp_path / "t.duckdb")


def test_labelled_predictions_read_as_the_coded_ones(cli, write_csv, tmp_path):
    """``multistudy`` and ``audit --predictions`` read the new files, and give the same
    numbers as on a file with codes (as earlier releases wrote it)."""
    preds = run_predictions(cli, write_csv(labelled(["no", "yes"]), "yn.csv"), tmp_path)
    f = pd.read_csv(preds)
    assert "proba_yes" in f.columns
    old = f.copy()
    for c in ("y_true", "y_pred"):
        old[c] = (old[c] == "yes").astype(int)
    old = old.rename(columns={"proba_no": "proba_0", "proba_yes": "proba_1"})
    coded = write_csv(old, "coded.csv")
    for utility in ("brier", "log", "accuracy"):
        args = ("--model", "lr", "--utility", utility, "--n-resamples", "20",
                "--permutation-resamples", "19", "--random-state", "1")
        new_out = assert_ok(cli("multistudy", preds, *args))
        old_out = assert_ok(cli("multistudy", coded, *args))
        assert new_out.replace(str(preds), "") == old_out.replace(str(coded), "")
    reports = {}
    for name, path in (("new", preds), ("old", coded)):
        assert_ok(cli("audit", "--predictions", path, "--quick", "--sections",
                      "resampling,multistudy", "--out", tmp_path / name))
        reports[name] = (tmp_path / name / "report.json").read_text()
    import json

    def numbers(tree):  # the report without its timings and file names
        if isinstance(tree, dict):
            return {k: numbers(v) for k, v in tree.items() if "seconds" not in k}
        if isinstance(tree, list):
            return [numbers(v) for v in tree]
        return tree.replace("preds.csv", "X").replace("coded.csv", "X") \
            if isinstance(tree, str) else tree

    new, old = (numbers(json.loads(reports[k])["sections"]) for k in ("new", "old"))
    assert new == old


# ------------------------------------------------- scores outside their metric's range; "–"

def fold_scores(metric="accuracy", models=("lr", "rf"), r=5, k=2, base=0.8, seed=0, copy=None):
    """Per-fold scores of ``models`` (``copy``: a model scoring exactly as ``lr``)."""
    rng = np.random.default_rng(seed)
    rows = []
    for i, m in enumerate(models):
        v = base + 0.03 * i + 0.01 * rng.normal(size=(r, k))
        rows += [{"study": "s", "model": m, "repeat": a, "fold": b, "metric": metric,
                  "value": v[a, b], "n_train": 90, "n_test": 90} for a in range(r)
                 for b in range(k)]
    f = pd.DataFrame(rows)
    if copy:
        f = pd.concat([f, f[f["model"] == "lr"].assign(model=copy)], ignore_index=True)
    return f


@pytest.mark.parametrize("metric,value,base", [
    ("accuracy", 1.7, 0.8), ("accuracy", -0.2, 0.8), ("roc_auc", 1.2, 0.8),
    ("roc_auc", -0.1, 0.8), ("mse", -0.1, 0.5), ("r2", 1.5, 0.3),
    ("neg_mean_squared_error", 0.3, -0.5), ("f1_macro", 2.0, 0.7),
])
def test_compare_refuses_a_score_its_metric_cannot_take(cli, write_csv, metric, value, base):
    f = fold_scores(metric, base=base)
    f.loc[7, "value"] = value
    line = assert_clear_error(cli("compare", write_csv(f, "bad.csv")), "`value`",
                              repr(metric), f"{value:g}", "row(s) 7")
    assert "expected values" in line


def test_percentages_are_refused_with_a_hint_unknown_metrics_are_not_checked(cli, write_csv):
    pct = fold_scores("accuracy").assign(value=lambda f: f["value"] * 100)
    assert_clear_error(cli("compare", write_csv(pct, "pct.csv")), "'accuracy'", "[0, 1]",
                       "percentages")
    neg = fold_scores("mse", base=-0.5)
    assert_clear_error(cli("compare", write_csv(neg, "neg.csv")), "'mse'", ">= 0",
                       "minus sign")
    # a metric replikit does not know may take any value
    assert_ok(cli("compare", write_csv(pct.assign(metric="my_score"), "mine.csv")))


def test_compare_says_why_a_cell_is_not_computed(cli, write_csv):
    f = fold_scores("accuracy", copy="lr_copy")
    out = assert_ok(cli("compare", write_csv(f, "same.csv"), "--metric", "accuracy"))
    notes = " ".join(ln for ln in out.splitlines())
    assert "– not computed:" in notes
    # 5x2: the combined F test has no interval for the difference, by construction
    assert "5x2cv combined F test: no interval" in notes
    # a - b is 0 on every split: no variance, so no statistic, p-value or conclusion
    assert "0 on every split" in notes and "lr - lr_copy" in notes
    from replikit.compare import compare_scores
    from replikit.errors import ValidityWarning

    with pytest.warns(ValidityWarning):  # tests="all" runs the invalid ones too
        text = str(compare_scores(f, tests="all"))
    assert "– not computed:" in text and "z test: no degrees of freedom" in text.replace(
        "\n", " ")


def test_audit_report_says_why_a_cell_is_empty(cli, write_csv, tmp_path):
    f = fold_scores("accuracy", copy="lr_copy")
    assert_ok(cli("audit", "--scores", write_csv(f, "same.csv"), "--sections", "compare",
                  "--out", tmp_path / "audit"))
    html = (tmp_path / "audit" / "report.html").read_text()
    assert "Not computed (empty cells):" in html
    assert "no interval" in html
