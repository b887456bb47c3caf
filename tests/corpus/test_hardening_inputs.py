"""Corpus: user data that every data-reading command must refuse with one clear line (or
handle soundly) — nested cells, stratified splits of a continuous outcome, a stray text cell in
a numeric outcome, an identifier as the outcome, error metrics on text labels — and the
Knapp-Hartung meta-analysis of identical effects.

Each case runs through the command line (exit 2, one ``replikit: error:`` line naming the flag
or column) and through the library entry (the same :class:`~replikit.errors.ReplikitError`
subclass).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from replikit.data.userdata import dataset_from_frame, load_dataset
from replikit.errors import DataError

from .conftest import assert_clear_error, assert_ok


def orchard(n=72, seed=3):
    """Trees in four orchards: girth and height predict the yield (kg, continuous); ``ripe``
    is a two-class text label."""
    rng = np.random.default_rng(seed)
    f = pd.DataFrame({"girth": rng.gamma(4.0, 5.0, n), "height": rng.normal(3.0, 0.4, n),
                      "orchard": np.repeat(["north", "south", "east", "west"], n // 4)})
    f["kg"] = (1.5 * f.girth + 4 * f.height + rng.normal(0, 3, n)).round(2)
    f["ripe"] = np.where(f.girth + rng.normal(0, 4, n) > 20, "ripe", "green")
    return f


#: Every command that reads ``--data``: its arguments before ``--data FILE --target COL``.
COMMANDS = {
    "run": lambda tmp: ("run", "--models", "lr", "--scheme", "3", "--out", tmp / "o.csv"),
    "estimate": lambda tmp: ("estimate", "--methods", "kfold"),
    "crossstudy": lambda tmp: ("crossstudy", "--study", "orchard", "--models", "lr"),
    "compare": lambda tmp: ("compare", "--models", "lr,dummy", "--scheme", "3"),
    "audit": lambda tmp: ("audit", "--out", tmp / "report"),
}


def data_command(name, tmp_path, path, target):
    return (*COMMANDS[name](tmp_path), "--data", path, "--target", target)


# ------------------------------------------------------------------------ nested cells (Parquet)

def _nested(kind: str) -> tuple[pd.DataFrame, str, list[str]]:
    """(frame, target, what the error must name) with a list or struct column."""
    f = orchard().drop(columns="ripe")
    n = len(f)
    if kind == "list feature":
        f["pests"] = [["aphid"] * (i % 3) for i in range(n)]
        return f, "kg", ["'pests'", "feature", "nested", "[]"]
    if kind == "struct feature":
        f["soil"] = [{"ph": 6.0 + (i % 5) / 10, "clay": bool(i % 2)} for i in range(n)]
        return f, "kg", ["'soil'", "feature", "nested", "'ph': 6.0"]
    if kind == "list target":
        f["harvest"] = [[float(v), float(v) / 2] for v in f.kg]
        return f, "harvest", ["--target", "'harvest'", "nested", "outcome"]
    if kind == "struct target":
        f["harvest"] = [{"kg": float(v)} for v in f.kg]
        return f, "harvest", ["--target", "'harvest'", "nested", "outcome"]
    raise AssertionError(kind)


NESTED = ["list feature", "struct feature", "list target", "struct target"]


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("kind", NESTED)
def test_nested_parquet_column_is_one_clear_line(cli, tmp_path, kind, command):
    frame, target, mentions = _nested(kind)
    path = tmp_path / "orchard.parquet"
    frame.to_parquet(path)
    line = assert_clear_error(cli(*data_command(command, tmp_path, path, target)), *mentions)
    assert "data row 1 " in line and "flatten" in line


@pytest.mark.parametrize("kind", NESTED)
def test_nested_column_library_raises_data_error(tmp_path, kind):
    frame, target, mentions = _nested(kind)
    with pytest.raises(DataError, match="nested values"):
        dataset_from_frame(frame, target=target)
    path = tmp_path / "orchard.parquet"
    frame.to_parquet(path)
    with pytest.raises(DataError, match="`target`" if "target" in kind else "feature column"):
        load_dataset(path, target=target)


def test_nested_cell_found_below_the_first_row_and_in_a_duckdb_list(tmp_path):
    import duckdb

    f = orchard().drop(columns="ripe")
    f["note"] = pd.Series(["ok"] * len(f), dtype=object)
    f.at[9, "note"] = ("bruised", "early")  # one tuple among text cells
    with pytest.raises(DataError, match=r"'note'.*data row 10 holds \('bruised', 'early'\)"):
        dataset_from_frame(f, target="kg")
    path = tmp_path / "orchard.duckdb"
    with duckdb.connect(str(path)) as con:
        con.execute("CREATE TABLE trees AS SELECT range AS id, range * 1.5 AS kg, "
                    "[range, range + 1] AS rings FROM range(30)")
    with pytest.raises(DataError, match=r"'rings'.*data row 1 holds \[0, 1\]"):
        load_dataset(path, target="kg")


def test_nested_study_column_is_refused(cli, tmp_path):
    f = orchard().drop(columns="ripe")
    f["orchard"] = [[o] for o in f.orchard]
    path = tmp_path / "orchard.parquet"
    f.to_parquet(path)
    assert_clear_error(cli(*data_command("crossstudy", tmp_path, path, "kg")), "--study",
                       "'orchard'", "nested")


# ------------------------------------------------------------------------ stratified splits

@pytest.fixture
def yields(write_csv):
    return write_csv(orchard(), "orchard.csv")


@pytest.mark.parametrize("scheme", ["4", "5x2", "holdout:0.25x3", "bootstrap:10"])
def test_run_stratify_on_a_continuous_target(cli, yields, tmp_path, scheme):
    res = cli("run", "--data", yields, "--target", "kg", "--models", "lr", "--scheme", scheme,
              "--stratify", "--out", tmp_path / "o.csv")
    line = assert_clear_error(res, "--stratify", "continuous", "class labels")
    assert "redraw_single_class" not in line
    assert not (tmp_path / "o.csv").exists()


def test_compare_data_stratify_on_a_continuous_target(cli, yields):
    res = cli("compare", "--data", yields, "--target", "kg", "--models", "lr,dummy",
              "--scheme", "3", "--stratify")
    assert_clear_error(res, "--stratify", "continuous")


@pytest.mark.parametrize("scheme,option", [
    ("kfold", "stratify"), ("5x2", "stratify"), ("holdout", "stratify"),
    ("bootstrap", "redraw_single_class")])
def test_library_stratified_scheme_on_a_continuous_outcome(scheme, option):
    from sklearn.linear_model import LinearRegression

    from replikit.errors import ParameterError
    from replikit.experiment import Bootstrap, FiveByTwo, HoldOut, RepeatedKFold, run

    make = {"kfold": lambda: RepeatedKFold(4, stratify=True),
            "5x2": lambda: FiveByTwo(stratify=True),
            "holdout": lambda: HoldOut(0.25, 3, stratify=True),
            "bootstrap": lambda: Bootstrap(10, redraw_single_class=True)}[scheme]
    f = orchard()
    with pytest.raises(ParameterError, match=f"`{option}`: stratified splits need class labels"):
        run({"ols": LinearRegression()}, f[["girth", "height"]], f["kg"], scheme=make(),
            metrics="mse", random_state=0)


def test_stratified_folds_more_than_the_largest_class(cli, write_csv, tmp_path):
    from sklearn.dummy import DummyClassifier

    from replikit.errors import ParameterError
    from replikit.experiment import RepeatedKFold, run

    f = orchard(n=24)
    f["grade"] = np.tile(["A", "B", "C", "D"], 6)  # four classes of 6 rows
    res = cli("run", "--data", write_csv(f.drop(columns=["kg", "ripe"])), "--target", "grade",
              "--models", "dummy", "--scheme", "8", "--stratify", "--out", tmp_path / "o.csv")
    line = assert_clear_error(res, "--stratify", "8-fold", "largest class has 6")
    assert "at most 6 folds" in line
    with pytest.raises(ParameterError, match="largest class has 6 of 24 rows"):
        run({"d": DummyClassifier()}, f[["girth"]], f["grade"],
            scheme=RepeatedKFold(8, stratify=True), metrics="accuracy", random_state=0)


# ------------------------------------------------------------------------ Knapp-Hartung, Q = 0

#: Six studies reporting the same effect, 0.42, with different variances, and a moderator.
#: Reference values from metafor 3.8-1:
#:   yi <- rep(0.42, 6); vi <- c(0.012, 0.03, 0.02, 0.05, 0.018, 0.026)
#:   dose <- c(1, 2, 3, 5, 8, 13)
#:   r <- rma(yi, vi, test="knha")       # beta 0.42, se 0, ci [0.42, 0.42], pval 0, s2w 0
#:   rma(yi, vi, mods=~dose, test="knha") # QM NA, QMp NA; beta 0.42, -1.0e-17; se 0, 0;
#:                                        # zval Inf, -Inf (the slope's rounding error over 0)
#:   influence(r)                         # error: chol2inv ... not positive definite
#:   influence(rma(yi, vi))$inf$cov.r     # 1.422261 1.134762 1.216747 1.076721 1.246773
#:                                        # 1.158786; cook.d all 0
#:   regtest(r)                           # zval -Inf, pval 0 (rounding error over 0 again)
SAME = pd.DataFrame({"trial": [f"T{i}" for i in range(1, 7)], "yi": [0.42] * 6,
                     "vi": [0.012, 0.03, 0.02, 0.05, 0.018, 0.026],
                     "dose": [1, 2, 3, 5, 8, 13]})


@pytest.fixture
def same_effects(write_csv):
    return write_csv(SAME, "same.csv")


def test_meta_knha_identical_effects_with_a_moderator(cli, same_effects):
    import json

    out = json.loads(assert_ok(cli("meta", same_effects, "--interval", "knha", "--label",
                                   "trial", "--moderator", "dose", "--format", "json")))
    res = out["result"][0]
    assert res["estimate"] == pytest.approx(0.42) and res["se"] == 0.0 and res["pvalue"] == 0
    assert res["ci_low"] == pytest.approx(0.42) and res["ci_high"] == pytest.approx(0.42)
    summary = out["meta_regression_summary"][0]
    assert summary["qm"] is None and summary["qm_pvalue"] is None  # metafor: QM NA
    coef = {row["term"]: row for row in out["meta_regression"]}
    assert coef["intercept"]["estimate"] == pytest.approx(0.42)
    assert coef["intercept"]["se"] == 0.0 and coef["intercept"]["pvalue"] == 0.0  # t = +inf
    assert abs(coef["dose"]["estimate"]) < 1e-12 and coef["dose"]["se"] == 0.0
    assert coef["dose"]["pvalue"] is None  # 0/0: no test (metafor: -Inf, p 0)


def test_meta_knha_identical_effects_funnel_tests_are_undefined(cli, same_effects):
    out = " ".join(assert_ok(cli("meta", same_effects, "--interval", "knha",
                                 "--funnel")).split())
    tests = out.split("Regression test for funnel-plot asymmetry")[1:]
    assert len(tests) == 2
    for text in tests:  # not metafor's t = -Inf, p = 0: identical effects show no asymmetry
        assert "t = –, df = 4, p = –" in text
    assert re.search(r"missing studies on the \w+ side: 0 ", out)  # metafor: no convergence


def test_meta_knha_identical_effects_influence_is_one_clear_line(cli, same_effects):
    from replikit.replicate import influence, meta_analysis

    res = cli("meta", same_effects, "--interval", "knha", "--influence")
    line = assert_clear_error(res, "influence", "Knapp-Hartung", "--interval", "--knha-floor")
    assert "QE = 0" in line
    knha = meta_analysis(SAME.yi, SAME.vi, interval="knha")
    with pytest.raises(DataError, match="`interval`='wald' or `knha_floor`"):
        influence(knha)
    wald = influence(meta_analysis(SAME.yi, SAME.vi)).table  # what the message suggests
    assert wald.cov_r.to_numpy() == pytest.approx(
        [1.422261, 1.134762, 1.216747, 1.076721, 1.246773, 1.158786], abs=1e-6)
    assert np.abs(wald.cook_d.to_numpy()).max() < 1e-20  # metafor: 0


# ------------------------------------------------------------------------ a stray text cell

def _stray(cells: dict) -> pd.DataFrame:
    """The orchard with the yield column as text, ``cells`` (row -> text) written into it."""
    f = orchard().drop(columns="ripe")
    f["kg"] = f["kg"].astype(object)
    for row, text in cells.items():
        f.at[row, "kg"] = text
    return f


@pytest.mark.parametrize("command", list(COMMANDS))
def test_one_text_cell_in_a_numeric_target(cli, write_csv, tmp_path, command):
    path = write_csv(_stray({40: "pending"}))
    line = assert_clear_error(cli(*data_command(command, tmp_path, path, "kg")),
                              "--target", "'kg'", "71 of 72 values are numbers",
                              "data row 41 holds 'pending'", "--task")
    assert "class" in line


def test_several_text_cells_in_a_numeric_target(cli, write_csv, tmp_path):
    cells = {3: "n.a.", 9: "?", 30: "n.a.", 31: "tbd", 50: "n.a."}  # 'n/a' reads as missing
    res = cli(*data_command("run", tmp_path, write_csv(_stray(cells)), "kg"))
    line = assert_clear_error(res, "67 of 72 values are numbers", "data row 4 holds 'n.a.'",
                              "4 more text cells: data rows 10, 31, 32, ...")
    assert "--task`" in line
    with pytest.raises(DataError, match=r"row 4 holds 'n\.a\.'.*set `task` to classification"):
        dataset_from_frame(_stray(cells), target="kg")


def test_stray_target_cell_library_regression_and_index_labels():
    f = _stray({5: "bad"})
    with pytest.raises(DataError, match="71 of 72 values are numbers but data row 6 holds 'bad'"):
        dataset_from_frame(f, target="kg", task="regression")
    labelled = f.set_axis([f"tree{i:02d}" for i in range(len(f))])
    with pytest.raises(DataError, match=r"data row 6 \(index 'tree05'\) holds 'bad'"):
        dataset_from_frame(labelled, target="kg")


def test_task_classification_takes_the_column_as_labels(cli, write_csv, tmp_path):
    # the way out the error offers: on `run`, `estimate`, `crossstudy` and `compare --data`
    # too (only `audit` had --task); a mostly numeric text column of codes is then classes
    f = orchard(n=48).drop(columns=["kg", "ripe"])
    f["variety"] = np.tile([f"{c}" for c in range(100, 112)], 4).astype(object)
    f.loc[f.index[::12], "variety"] = "wild"  # 4 of 48 cells are text: 12 numeric codes
    path = write_csv(f)
    assert_clear_error(cli("run", "--data", path, "--target", "variety", "--models", "dummy",
                           "--scheme", "2", "--out", tmp_path / "a.csv"), "--target", "wild")
    out = assert_ok(cli("run", "--data", path, "--target", "variety", "--task", "classification",
                        "--models", "dummy", "--scheme", "2", "--out", tmp_path / "b.csv"))
    assert "accuracy" in out
    assert_ok(cli("estimate", "--data", path, "--target", "variety", "--task",
                  "classification", "--model", "dummy", "--methods", "resubstitution"))


# ------------------------------------------------------------------------ an identifier as target

@pytest.mark.parametrize("command", list(COMMANDS))
def test_identifier_column_as_target(cli, write_csv, tmp_path, command):
    f = orchard().drop(columns=["kg", "ripe"])
    f["tag"] = [f"OR-{7 * i + 3:04d}" for i in range(len(f))]
    path = write_csv(f)
    line = assert_clear_error(cli(*data_command(command, tmp_path, path, "tag")), "--target",
                              "'tag'", "each of its 72 rows", "identifier")
    assert "'OR-0003'" in line
    with pytest.raises(DataError, match="every class would have a single row"):
        dataset_from_frame(f, target="tag")


# ------------------------------------------------------------------------ error metrics on labels

@pytest.fixture
def ripeness(write_csv):
    return write_csv(orchard().drop(columns="kg"), "ripe.csv")


@pytest.mark.parametrize("metric", ["mse", "rmse", "mae", "r2", "r2_corr"])
def test_run_error_metric_on_text_labels_refused_before_any_fit(cli, ripeness, tmp_path,
                                                                  metric):
    res = cli("run", "--data", ripeness, "--target", "ripe", "--models", "lr", "--scheme", "3",
              "--metrics", f"accuracy,{metric}", "--out", tmp_path / "o.csv")
    line = assert_clear_error(res, "--metrics", f"'{metric}'", "class labels", "'green'")
    assert "accuracy" in line.split("use", 1)[1]
    assert not (tmp_path / "o.csv").exists()


def test_error_metric_on_text_labels_compare_and_crossstudy(cli, ripeness, write_csv,
                                                           tmp_path):
    assert_clear_error(cli("compare", "--data", ripeness, "--target", "ripe", "--models",
                           "lr,dummy", "--scheme", "3", "--metric", "rmse"),
                       "--metric", "'rmse'", "class labels")
    for metric in ("mae", "squared"):
        assert_clear_error(cli("crossstudy", "--data", ripeness, "--target", "ripe", "--study",
                               "orchard", "--models", "lr", "--metric", metric),
                           "--metric", metric, "class labels")
    # numbers as classes keep their error metrics (an ordinal grade's mean absolute error)
    f = orchard().drop(columns=["kg", "ripe"])
    f["grade"] = np.digitize(f.girth, [12, 20, 28])
    res = cli("run", "--data", write_csv(f, "grades.csv"), "--target", "grade", "--models",
              "lda", "--scheme", "3", "--metrics", "mae", "--out", tmp_path / "g.csv")
    assert_ok(res)


def test_error_metric_on_text_labels_library_entries():
    from sklearn.linear_model import LogisticRegression

    from replikit.compare import audit as compare_audit
    from replikit.errors import ParameterError
    from replikit.experiment import run
    from replikit.experiment.metrics import check_metrics

    ds = dataset_from_frame(orchard().drop(columns="kg"), target="ripe", study="orchard")
    assert ds.classes == ("green", "ripe") and set(ds.y) == {0, 1}  # the runner gets codes
    with pytest.raises(ParameterError, match="`metrics`: 'mse' needs a numeric outcome"):
        check_metrics("mse", ds.task, classes=ds.classes)
    with pytest.raises(ParameterError, match="`metrics`: 'mae' needs a numeric outcome"):
        compare_audit(ds, models="lr,dummy", metric="mae")
    f = orchard()
    with pytest.raises(ParameterError, match="but the outcome holds class labels"):
        run({"lr": LogisticRegression()}, f[["girth", "height"]], f["ripe"], scheme="3",
            metrics="r2", random_state=0)
