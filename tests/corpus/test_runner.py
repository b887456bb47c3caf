"""Corpus: bad and odd inputs to ``replikit run``, ``estimate`` and ``simulate resampling``.

Every case ends in a clear error (exit 2, one line naming the flag or column) or an honest
result (exit 0, what was done said on stderr or in the output).
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest

from .conftest import assert_clear_error, assert_ok


def frame(n=60, seed=0, classes=2):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    f = pd.DataFrame(X, columns=["a", "b", "c"])
    if classes:
        f["y"] = np.arange(n) % classes
        f["a"] += f["y"]
    else:
        f["y"] = X[:, 0] + rng.normal(size=n)
    f["site"] = np.repeat(["p", "q"], [n // 2, n - n // 2])
    return f


@pytest.fixture
def data(write_csv):
    return write_csv(frame())


@pytest.fixture
def reg(write_csv):
    return write_csv(frame(classes=0), "reg.csv")


def run_args(path, tmp_path, *extra, target="y", out="o.csv"):
    return ("run", "--data", path, "--target", target, "--models", "lr", "--scheme", "3",
            "--out", tmp_path / out, *extra)


# -------------------------------------------------------------------------------- bad values

@pytest.mark.parametrize("value", [np.inf, -np.inf, 1e308])
def test_run_extreme_value_in_X(cli, write_csv, tmp_path, value):
    f = frame(classes=0)
    f.loc[3, "b"] = value
    res = cli(*run_args(write_csv(f), tmp_path))
    assert_clear_error(res, "b")


@pytest.mark.parametrize("value", [np.inf, 1e308])
def test_run_extreme_value_in_y(cli, write_csv, tmp_path, value):
    f = frame(classes=0)
    f.loc[5, "y"] = value
    assert_clear_error(cli(*run_args(write_csv(f), tmp_path)), "y")


def test_estimate_inf_in_X(cli, write_csv):
    f = frame()
    f.loc[2, "a"] = np.inf
    assert_clear_error(cli("estimate", "--data", write_csv(f), "--target", "y", "--method",
                           "kfold"), "a")


# -------------------------------------------------------------------------------- tiny data

def test_run_study_of_one_row(cli, write_csv, tmp_path):
    f = frame(classes=0)
    f.loc[0, "site"] = "lonely"
    line = assert_clear_error(cli(*run_args(write_csv(f), tmp_path, "--study", "site")))
    assert "lonely" in line


def test_run_study_with_one_class(cli, write_csv, tmp_path):
    f = frame()
    f.loc[f.site == "q", "y"] = 1
    line = assert_clear_error(cli(*run_args(write_csv(f), tmp_path, "--study", "site")))
    assert "'q'" in line and "class" in line


def test_run_fold_training_on_one_class_names_scheme_and_stratify(cli, write_csv, tmp_path):
    f = frame(n=60)
    f["y"] = 0
    f.loc[7, "y"] = 1  # one row of the rare class: the fold testing it trains on class 0 only
    res = cli("run", "--data", write_csv(f), "--target", "y", "--models", "lr", "--scheme",
              "10", "--metrics", "accuracy", "--out", tmp_path / "o.csv")
    line = assert_clear_error(res, "--scheme", "--stratify")
    assert "one class" in line


def test_run_rare_class_default_auc_undefined_in_test_folds(cli, write_csv, tmp_path):
    f = frame(n=60)
    f["y"] = 0
    f.loc[[3, 40], "y"] = 1
    res = cli("run", "--data", write_csv(f), "--target", "y", "--models", "lr", "--scheme",
              "10", "--out", tmp_path / "o.csv")
    assert_clear_error(res, "--metrics", "roc_auc")


def test_run_rows_fewer_than_folds(cli, write_csv, tmp_path):
    f = frame(n=6, classes=0)
    res = cli("run", "--data", write_csv(f), "--target", "y", "--models", "lr", "--scheme",
              "10", "--out", tmp_path / "o.csv")
    assert_clear_error(res, "--scheme")


def test_run_loo_with_r2_is_refused_before_fitting(cli, reg, tmp_path):
    res = cli("run", "--data", reg, "--target", "y", "--models", "lr", "--scheme", "loo",
              "--metrics", "r2", "--out", tmp_path / "o.csv")
    assert_clear_error(res, "--metrics", "r2")


def test_run_loo_default_metrics_on_regression(cli, reg, tmp_path):
    res = cli("run", "--data", reg, "--target", "y", "--models", "lr", "--scheme", "loo",
              "--out", tmp_path / "o.csv")
    assert_ok(res)
    s = pd.read_csv(tmp_path / "o.csv")
    assert set(s.metric) == {"mse"}  # r2 is undefined on one-row test sets: left out, said
    assert "r2" in res[2]


def test_estimate_two_rows(cli, write_csv):
    f = frame(n=2, classes=0)
    assert_clear_error(cli("estimate", "--data", write_csv(f), "--target", "y"))


# -------------------------------------------------------------------------------- schemes

@pytest.mark.parametrize("scheme", ["7y", "bootstrap:0", "holdout:1.5", "holdout:0", "1x10",
                                    "10x0", "kfold:", "bootstrap:-3", "loo:5"])
def test_run_scheme_nonsense(cli, data, tmp_path, scheme):
    res = cli("run", "--data", data, "--target", "y", "--scheme", scheme, "--out",
              tmp_path / "o.csv")
    assert_clear_error(res, "--scheme")


def test_run_loso_without_study(cli, data, tmp_path):
    res = cli("run", "--data", data, "--target", "y", "--scheme", "loso", "--out",
              tmp_path / "o.csv")
    assert_clear_error(res, "--study")


# -------------------------------------------------------------------------------- models, metrics

@pytest.mark.parametrize("extra,mentions", [
    (("--models", "nope"), ("models", "nope")),
    (("--model", "x=nonexistent_pkg_xyz.mod:Cls"), ("--model", "nonexistent_pkg_xyz")),
    (("--model", "x=sklearn.tree:NoSuchTree"), ("--model", "NoSuchTree")),
    (("--model", "x=os:system"), ("--model",)),
    (("--model", "x"), ("--model",)),
    (("--model", "x=sklearn.tree:DecisionTreeClassifier", "--param", "z.max_depth=2"),
     ("--param",)),
    (("--param", "lr.C=1"), ("--param",)),
    (("--metrics", "r3"), ("metrics", "r3")),
    (("--metrics", "accuracy,accuracy"), ("metrics",)),
    (("--backend", "spark"), ("--backend",)),
])
def test_run_models_and_metrics(cli, data, tmp_path, extra, mentions):
    res = cli("run", "--data", data, "--target", "y", "--scheme", "3", "--out",
              tmp_path / "o.csv", *extra)
    assert_clear_error(res, *mentions)


def test_run_jobs_zero(cli, data, tmp_path):
    assert_clear_error(cli(*run_args(data, tmp_path, "--n-jobs", "0")), "--n-jobs")


def test_run_multiclass_int_target_default_metrics_have_no_auc(cli, write_csv, tmp_path):
    f = frame(n=90, classes=9)
    res = cli("run", "--data", write_csv(f), "--target", "y", "--models", "dummy",
              "--scheme", "3", "--out", tmp_path / "o.csv")
    assert_ok(res)
    assert set(pd.read_csv(tmp_path / "o.csv").metric) == {"accuracy"}


def test_run_roc_auc_on_multiclass_refused_up_front(cli, write_csv, tmp_path):
    f = frame(n=90, classes=3)
    res = cli("run", "--data", write_csv(f), "--target", "y", "--models", "dummy",
              "--scheme", "3", "--metrics", "roc_auc", "--out", tmp_path / "o.csv")
    assert_clear_error(res, "--metrics", "roc_auc")


def test_run_classification_metric_on_continuous_target(cli, reg, tmp_path):
    res = cli("run", "--data", reg, "--target", "y", "--models", "lr", "--scheme", "3",
              "--metrics", "accuracy", "--out", tmp_path / "o.csv")
    assert_clear_error(res, "--metrics", "accuracy")


def test_run_metric_undefined_for_constant_predictions(cli, reg, tmp_path):
    res = cli("run", "--data", reg, "--target", "y", "--models", "dummy", "--scheme", "3",
              "--metrics", "r2_corr", "--out", tmp_path / "o.csv")
    assert_clear_error(res, "--metrics", "r2_corr", "dummy")


# -------------------------------------------------------------------------------- outputs

def test_run_existing_out_refused_before_any_fit(cli, data, tmp_path):
    (tmp_path / "o.csv").write_text("mine\n")
    t0 = time.perf_counter()
    line = assert_clear_error(cli("run", "--data", data, "--target", "y", "--models", "rf",
                                  "--scheme", "10x10", "--out", tmp_path / "o.csv"),
                              "--out", "--overwrite")
    assert time.perf_counter() - t0 < 5  # refused before 100 random-forest fits
    assert "overwrite=True" not in line
    assert (tmp_path / "o.csv").read_text() == "mine\n"


def test_run_overwrite_replaces_out(cli, data, tmp_path):
    (tmp_path / "o.csv").write_text("mine\n")
    assert_ok(cli(*run_args(data, tmp_path, "--overwrite")))
    assert len(pd.read_csv(tmp_path / "o.csv")) == 3 * 2


def test_run_predictions_equal_to_out(cli, data, tmp_path):
    res = cli(*run_args(data, tmp_path, "--predictions", tmp_path / "o.csv"))
    assert_clear_error(res, "--out", "--predictions")
    assert not (tmp_path / "o.csv").exists()


def test_run_out_equal_to_data(cli, data, tmp_path):
    res = cli("run", "--data", data, "--target", "y", "--out", data, "--overwrite")
    assert_clear_error(res, "--out", "--data")


def test_run_out_is_a_directory(cli, data, tmp_path):
    (tmp_path / "d.csv").mkdir()
    assert_clear_error(cli(*run_args(data, tmp_path, out="d.csv")), "--out")


def test_run_out_unknown_suffix(cli, data, tmp_path):
    assert_clear_error(cli(*run_args(data, tmp_path, out="o.xlsx")), "--out")


def test_run_out_in_read_only_directory(cli, data, tmp_path):
    import os
    from pathlib import Path

    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        if os.access(ro, os.W_OK):  # root writes anywhere: /proc refuses even root
            if not Path("/proc/self").exists():
                pytest.skip("no read-only directory available")
            ro = Path("/proc")
        line = assert_clear_error(cli(*run_args(data, tmp_path, out=ro / "o.csv")), "--out")
        assert "not writable" in line
    finally:
        (tmp_path / "ro").chmod(0o700)


def test_run_out_sqlite_db_never_reaches_duckdb(cli, data, tmp_path):
    import sqlite3

    db = tmp_path / "results.db"
    con = sqlite3.connect(db)
    con.execute("create table t (x)")
    con.commit()
    con.close()
    before = db.read_bytes()
    line = assert_clear_error(cli(*run_args(data, tmp_path, "--overwrite", out="results.db")),
                              "--out")
    assert "SQLite" in line and "extension" not in line.lower()
    assert db.read_bytes() == before


def test_run_out_duckdb_keeps_other_tables(cli, data, tmp_path):
    import duckdb

    path = tmp_path / "mine.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("create table keep as select 42 as x")
    assert_clear_error(cli(*run_args(data, tmp_path, out="mine.duckdb")), "--out", "--overwrite")
    assert_ok(cli(*run_args(data, tmp_path, "--overwrite", out="mine.duckdb")))
    with duckdb.connect(str(path), read_only=True) as con:
        assert con.execute("select x from keep").fetchall() == [(42,)]
        assert con.execute("select count(*) from scores").fetchone()[0] == 6


# -------------------------------------------------------------------------------- backends

def test_scheduler_with_another_backend_refused(cli, data, tmp_path):
    res = cli(*run_args(data, tmp_path, "--backend", "joblib", "--scheduler",
                        "tcp://127.0.0.1:1"))
    assert_clear_error(res, "--scheduler", "--backend")


@pytest.mark.slow
def test_unreachable_scheduler_is_one_line_naming_the_flag(cli, data, tmp_path):
    t0 = time.perf_counter()
    res = cli(*run_args(data, tmp_path, "--scheduler", "tcp://127.0.0.1:9"))
    assert_clear_error(res, "--scheduler", "127.0.0.1:9")
    # not a speed test: the connection timeout (5 s) must end the wait, not hang for minutes
    assert time.perf_counter() - t0 < 180


def test_jobs_imply_joblib_and_say_so(cli, data, tmp_path):
    res = cli(*run_args(data, tmp_path, "--n-jobs", "2"))
    assert_ok(res)
    assert "joblib" in res[2]


# -------------------------------------------------------------------------------- estimate

@pytest.mark.parametrize("extra,mentions", [
    (("--model", "nope"), ("--model", "nope")),
    (("--methods", "magic"), ("--methods", "magic")),
    (("--loss", "zero_one"), ("--loss",)),
    (("--n-folds", "500", "--methods", "kfold"), ("--n-folds",)),
    (("--test-size", "1.5", "--methods", "holdout"), ("--test-size",)),
    (("--n-resamples", "0"), ("--n-resamples",)),
    (("--rounding", "up", "--methods", "holdout"), ("--rounding",)),
])
def test_estimate_bad_options(cli, reg, extra, mentions):
    assert_clear_error(cli("estimate", "--data", reg, "--target", "y", *extra), *mentions)


def test_estimate_one_class(cli, write_csv):
    f = frame()
    f["y"] = 1
    f["y"] = f["y"].astype(str).radd("c")
    assert_clear_error(cli("estimate", "--data", write_csv(f), "--target", "y"), "y")


def test_estimate_out_writes_csv_and_standalone_svg(cli, reg, tmp_path):
    import xml.etree.ElementTree as ET

    out = tmp_path / "est"
    assert_ok(cli("estimate", "--data", reg, "--target", "y", "--methods", "kfold,.632+",
                  "--n-resamples", "20", "--out", out))
    table = pd.read_csv(out / "estimates.csv")
    assert list(table.method) == ["kfold", ".632+"]
    root = ET.parse(out / "estimates.svg").getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    res = cli("estimate", "--data", reg, "--target", "y", "--out", out)
    assert_clear_error(res, "--out", "--overwrite")


# -------------------------------------------------------------------------------- simulate resampling

def test_simulate_resampling_out_refuses_existing_files(cli, tmp_path):
    (tmp_path / "resampling_table.csv").write_text("mine\n")
    res = cli("simulate", "resampling", "--n-experiments", "3", "--out", tmp_path)
    assert_clear_error(res, "--out", "resampling_table.csv")
    assert (tmp_path / "resampling_table.csv").read_text() == "mine\n"


def test_simulate_resampling_out_is_a_file(cli, tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    assert_clear_error(cli("simulate", "resampling", "--n-experiments", "3", "--out", f), "--out")


def test_simulate_resampling_svg_is_standalone(cli, tmp_path):
    import xml.etree.ElementTree as ET

    assert_ok(cli("simulate", "resampling", "--n-experiments", "5", "--out", tmp_path / "s"))
    root = ET.parse(tmp_path / "s" / "resampling_densities.svg").getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert_ok(cli("simulate", "resampling", "--n-experiments", "5", "--out", tmp_path / "s",
                  "--overwrite"))


def test_simulate_resampling_zero_experiments(cli):
    assert_clear_error(cli("simulate", "resampling", "--n-experiments", "0"), "--n-experiments")
