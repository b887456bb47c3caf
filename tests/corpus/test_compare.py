"""Corpus: bad and odd inputs to ``replikit compare`` and ``replikit simulate tests``.

Every case ends in a clear error (exit 2, one line naming the flag or column) or an honest
result (exit 0, what could not be concluded said in the table or on stderr).
"""

from __future__ import annotations

import json
import sqlite3
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest

from .conftest import assert_clear_error, assert_ok

SVG = "{http://www.w3.org/2000/svg}svg"


def scores(models=("lr", "rf"), r=10, k=10, metric="accuracy", seed=0, shift=0.03):
    rng = np.random.default_rng(seed)
    rows = []
    for i, m in enumerate(models):
        v = 0.8 + shift * i + 0.01 * rng.normal(size=(r, k))
        rows += [{"study": "s", "model": m, "repeat": a, "fold": b, "metric": metric,
                  "value": v[a, b], "n_train": 90, "n_test": 10}
                 for a in range(r) for b in range(k)]
    return pd.DataFrame(rows)


@pytest.fixture
def good(write_csv):
    return write_csv(scores(), "scores.csv")


@pytest.fixture
def data(write_csv):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(80, 2))
    f = pd.DataFrame(X, columns=["a", "b"])
    f["y"] = (X[:, 0] + rng.normal(size=80) > 0).astype(int)
    return write_csv(f, "data.csv")


# ------------------------------------------------------------------------------ Scores tables

def _broken(kind: str) -> pd.DataFrame | str:
    f = scores()
    if kind == "no value":
        return f.drop(columns="value")
    if kind == "no model":
        return f.drop(columns="model")
    if kind == "nan value":
        f.loc[4, "value"] = np.nan
        return f
    if kind == "inf value":
        f.loc[4, "value"] = np.inf
        return f
    if kind == "text value":
        f["value"] = f["value"].astype(object)
        f.loc[4, "value"] = "n/a?"
        return f
    if kind == "duplicate keys":
        return pd.concat([f, f.iloc[[3]]], ignore_index=True)
    if kind == "negative repeat":
        f.loc[0, "repeat"] = -1
        return f
    if kind == "fractional fold":
        f["fold"] = f["fold"].astype(float)
        f.loc[0, "fold"] = 1.5
        return f
    if kind == "header only":
        return "study,model,repeat,fold,metric,value\n"
    if kind == "empty":
        return ""
    raise AssertionError(kind)


@pytest.mark.parametrize("kind,mentions", [
    ("no value", ("value",)), ("no model", ("model",)), ("nan value", ("value",)),
    ("inf value", ("value",)), ("text value", ("value", "n/a?")),
    ("duplicate keys", ("key",)), ("negative repeat", ("repeat",)),
    ("fractional fold", ("fold",)), ("header only", ("SCORES",)), ("empty", ("SCORES",)),
])
def test_compare_broken_scores(cli, write_csv, kind, mentions):
    assert_clear_error(cli("compare", write_csv(_broken(kind), "bad.csv")), *mentions)


def test_compare_one_model(cli, write_csv):
    res = cli("compare", write_csv(scores(models=("lr",)), "one.csv"))
    assert_clear_error(res, "model")


def test_compare_models_on_different_splits(cli, write_csv):
    f = scores()
    f = f[~((f.model == "rf") & (f.fold == 9))]
    assert_clear_error(cli("compare", write_csv(f, "uneven.csv")), "split")


def test_compare_one_split(cli, write_csv):
    res = cli("compare", write_csv(scores(r=1, k=1), "single.csv"))
    code, out, err = res
    assert code in (0, 2) and "Traceback" not in err
    if code == 2:
        assert_clear_error(res)
    else:
        assert "no test" in (out + err).lower() or out.strip()


@pytest.mark.parametrize("extra,mentions", [
    (("--a", "svm", "--b", "rf"), ("--a", "svm")),
    (("--a", "lr", "--b", "nope"), ("--b", "nope")),
    (("--metric", "auc"), ("--metric", "auc")),
    (("--study", "elsewhere"), ("--study", "elsewhere")),
    (("--test", "paired_ttest_5x2cv"), ("--test", "5x2")),
    (("--test", "magic_test"), ("--test", "magic_test")),
    (("--all-tests", "--test", "naive_paired_ttest"), ("--all-tests", "--test")),
    (("--alpha", "2"), ("--alpha",)),
    (("--alpha", "0"), ("--alpha",)),
    (("--correction", "sidak-ish"), ("--correction",)),
    (("--alternative", "bigger"), ("--alternative",)),
    (("--tolerance", "-1"), ("--tolerance",)),
    (("--tolerance", "abc"), ("--tolerance",)),
    (("--target", "y"), ("--target", "--data")),
])
def test_compare_bad_options(cli, good, extra, mentions):
    assert_clear_error(cli("compare", good, *extra), *mentions)


def test_compare_identical_models_conclude_nothing_and_say_why(cli, write_csv):
    f = scores(shift=0.0)
    f.loc[f.model == "rf", "value"] = f.loc[f.model == "lr", "value"].to_numpy()
    res = cli("--format", "json", "compare", write_csv(f, "same.csv"))
    assert_ok(res)
    rows = json.loads(res[1])
    freq = [r for r in rows if r["test"] != "bayesian_correlated_t"]
    assert all(r["reject"] is None and "better" not in r["conclusion"] for r in freq)
    bayes = [r for r in rows if r["test"] == "bayesian_correlated_t"]
    assert all(r["conclusion"] == "practically equivalent" for r in bayes)


def test_compare_huge_values_bayesian_concludes_nothing(cli, write_csv):
    f = scores(metric="mse")
    rng = np.random.default_rng(0)
    lr = f.model == "lr"
    # finite scores whose sum overflows (an mse is never negative: Scores refuses -1e308)
    f.loc[lr, "value"] = rng.choice([1e308, 1.7e308], size=int(lr.sum()))
    res = cli("--format", "json", "compare", write_csv(f, "huge.csv"))
    assert_ok(res)
    rows = json.loads(res[1])
    assert all("better" not in r["conclusion"] for r in rows), rows
    bayes = [r for r in rows if r["test"] == "bayesian_correlated_t"][0]
    assert bayes["conclusion"].startswith("none") and "non-finite" in bayes["conclusion"]
    assert "not finite" in res[2]  # said once on stderr


def test_compare_labels_with_separators(cli, write_csv):
    f = scores(models=("m|a", "m"))
    f["study"] = np.where(f.model == "m", "a|b", "a|b")
    out = assert_ok(cli("compare", write_csv(f, "pipes.csv")))
    assert "m|a - m" in out


def test_compare_scores_from_sqlite_file(cli, tmp_path):
    db = tmp_path / "scores.db"
    con = sqlite3.connect(db)
    scores().to_sql("scores", con)
    con.close()
    line = assert_clear_error(cli("compare", db), "SCORES")
    assert "extension" not in line.lower()


# ------------------------------------------------------------------------------ fitting first

@pytest.mark.parametrize("extra,mentions", [
    (("--models", "lr"), ("--models",)),
    (("--models", "lr,rf", "--scheme", "banana"), ("--scheme",)),
    (("--models", "lr,dummy", "--metric", "nope"), ("--metric", "nope")),
    (("--models", "lr,dummy", "--metric", "roc_auc", "--scheme", "loo"), ("--metric",)),
])
def test_compare_fit_bad_options(cli, data, extra, mentions):
    assert_clear_error(cli("compare", "--data", data, "--target", "y", *extra), *mentions)


def test_compare_data_without_target(cli, data):
    assert_clear_error(cli("compare", "--data", data, "--models", "lr,dummy"), "--target")


def test_compare_scores_and_data_together(cli, good, data):
    assert_clear_error(cli("compare", good, "--data", data, "--target", "y", "--models",
                           "lr,dummy"), "SCORES", "--data")


# ------------------------------------------------------------------------------ outputs

def test_compare_out_refuses_existing_files_before_work(cli, good, tmp_path):
    out = tmp_path / "out"
    assert_ok(cli("compare", good, "--out", out))
    for name in ("comparisons.csv", "comparisons_accuracy.svg"):
        assert ET.parse(out / name).getroot().tag == SVG if name.endswith(".svg") else True
    before = (out / "comparisons.csv").read_text()
    line = assert_clear_error(cli("compare", good, "--out", out, "--alpha", "0.01"),
                              "--out", "--overwrite")
    assert "comparisons" in line
    assert (out / "comparisons.csv").read_text() == before
    assert_ok(cli("compare", good, "--out", out, "--overwrite"))


def test_compare_data_out_never_overwrites_scores_csv(cli, data, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "scores.csv").write_text("my own scores\n")
    res = cli("compare", "--data", data, "--target", "y", "--models", "lr,dummy", "--scheme",
              "5x2", "--out", out)
    assert_clear_error(res, "--out", "scores.csv")
    assert (out / "scores.csv").read_text() == "my own scores\n"
    assert not (out / "comparisons.csv").exists()


def test_compare_data_out_writes_everything(cli, data, tmp_path):
    out = tmp_path / "fit"
    assert_ok(cli("compare", "--data", data, "--target", "y", "--models", "lr,dummy",
                  "--scheme", "5x2", "--out", out))
    assert len(pd.read_csv(out / "scores.csv")) == 2 * 10
    assert ET.parse(out / "comparisons_accuracy.svg").getroot().tag == SVG


def test_compare_out_is_a_file(cli, good, tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    assert_clear_error(cli("compare", good, "--out", f), "--out")


def test_compare_metric_with_odd_characters_gets_a_safe_svg_name(cli, write_csv, tmp_path):
    path = write_csv(scores(metric="neg/mean $err"), "odd.csv")
    out = tmp_path / "odd"
    assert_ok(cli("compare", path, "--out", out))
    svgs = list(out.glob("comparisons_*.svg"))
    assert len(svgs) == 1 and "/" not in svgs[0].name[len("comparisons_"):]
    assert ET.parse(svgs[0]).getroot().tag == SVG


# ------------------------------------------------------------------------------ simulate tests

TINY = ("simulate", "tests", "--n-datasets", "4", "--n-rows", "40", "--n-repeats", "2",
        "--differences", "0.1", "--tests", "corrected_resampled_t,paired_t_5x2cv")


@pytest.mark.parametrize("extra,mentions", [
    (("--differences", "a,b"), ("--differences",)),
    (("--differences", "0.5"), ("--differences",)),
    (("--tests", "magic"), ("--tests", "magic")),
    (("--n-rows", "5"), ("--n-rows",)),
    (("--alpha", "1.5"), ("--alpha",)),
    (("--base-error", "0.7"), ("--base-error",)),
    (("--correlation", "1"), ("--correlation",)),
    (("--n-datasets", "1"), ("--n-datasets",)),
    (("--n-jobs", "0"), ("--n-jobs",)),
])
def test_simulate_tests_bad_options(cli, extra, mentions):
    assert_clear_error(cli(*TINY, *extra), *mentions)


def test_simulate_tests_out(cli, tmp_path):
    out = tmp_path / "cal"
    assert_ok(cli(*TINY, "--out", out))
    for name in ("rejection_rate.svg", "replicability.svg"):
        assert ET.parse(out / name).getroot().tag == SVG
    before = (out / "calibration.csv").read_text()
    assert_clear_error(cli(*TINY, "--out", out), "--out", "--overwrite")
    assert (out / "calibration.csv").read_text() == before
    assert_ok(cli(*TINY, "--out", out, "--overwrite"))


def test_simulate_tests_out_is_a_file(cli, tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    assert_clear_error(cli(*TINY, "--out", f), "--out")


def test_docs_compare_figures_are_standalone_svg():
    from pathlib import Path

    figures = sorted((Path(__file__).parents[2] / "docs" / "figures" / "compare").glob("*.svg"))
    assert len(figures) == 2
    for path in figures:
        assert ET.parse(path).getroot().tag == SVG, path
