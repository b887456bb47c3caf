"""``replikit compare`` and the audit's comparison section."""

import json

import numpy as np
import pandas as pd
import pytest

import replikit.compare as compare_pkg
from replikit.compare import compare_scores
from replikit.data.userdata import dataset_from_frame
from replikit.report import run_audit


@pytest.fixture
def scores_csv(tmp_path):
    rng = np.random.default_rng(0)
    split = 0.02 * rng.normal(size=(10, 10))
    rows = []
    for m, shift in (("lr", 0.0), ("rf", 0.03), ("gb", 0.0)):
        v = 0.8 + shift + split + 0.01 * rng.normal(size=(10, 10))
        rows += [{"study": 2001, "model": m, "repeat": i, "fold": j, "metric": "accuracy",
                  "value": v[i, j], "n_train": 900, "n_test": 100}
                 for i in range(10) for j in range(10)]
    frame = pd.DataFrame(rows)
    path = tmp_path / "scores.csv"
    frame.to_csv(path, index=False)
    return path, frame


@pytest.fixture
def data_csv(tmp_path):
    rng = np.random.default_rng(1)
    n = 240
    X = rng.normal(size=(n, 3))
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(int)
    path = tmp_path / "data.csv"
    pd.DataFrame({"x1": X[:, 0], "x2": X[:, 1], "x3": X[:, 2], "y": y,
                  "site": np.repeat(["a", "b"], n // 2)}).to_csv(path, index=False)
    return path


def test_every_export_resolves():
    for name in compare_pkg.__all__:
        assert getattr(compare_pkg, name) is not None, name
    with pytest.raises(AttributeError):
        compare_pkg.not_a_name  # noqa: B018


def test_cli_scores_human_and_json(cli, scores_csv):
    path, frame = scores_csv
    code, out, err = cli("compare", path)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("Model comparisons")
    assert sum("corrected_repeated_kfold_t" in ln for ln in lines) == 3  # every pair
    assert "rf better" in out and "!" not in out
    code, out, err = cli("compare", path, "--simultaneous")
    assert code == 0 and "95% simult. CI" in out and "each interval at 98.33%" in out
    code, out, err = cli("--format", "json", "compare", path, "--a", "rf", "--b", "lr",
                         "--study", "2001")
    assert code == 0, err
    records = json.loads(out)
    direct = compare_scores(frame, "rf", "lr").frame
    assert [r["test"] for r in records] == list(direct["test"])
    assert records[0]["statistic"] == pytest.approx(direct["statistic"].iloc[0])
    assert records[0]["reject"] is True and records[1]["pvalue"] is None


def test_cli_all_tests_marks_invalid_and_warns_once(cli, scores_csv):
    path, _ = scores_csv
    code, out, err = cli("compare", path, "--a", "lr", "--b", "rf", "--all-tests")
    assert code == 0, err
    marked = [ln for ln in out.splitlines() if ln.startswith("!")]
    assert any("naive_paired_t" in ln for ln in marked)
    assert any("proportions_z" in ln for ln in marked)
    assert err.count("warning:") == 2  # one line per invalid test, not per pair
    valid_rows = [ln for ln in out.splitlines() if "corrected_repeated_kfold_t" in ln]
    assert out.index(valid_rows[0]) < out.index(marked[0])  # valid first


def test_cli_tests_option_and_errors(cli, scores_csv, tmp_path, monkeypatch):
    path, _ = scores_csv
    code, out, _ = cli("compare", path, "--test", "sorted_runs_ttest,naive_paired_ttest",
                       "--a", "lr", "--b", "gb")
    assert code == 0 and "sorted_runs_t" in out and "naive_paired_t" in out
    for args, needle in [
        (("--a", "svm"), "models present: lr, rf, gb"),
        (("--test", "paired_ttest_5x2cv"), "5x2"),
        (("--metric", "r2"), "metrics present"),
        (("--study", "1999"), "studies present"),
        (("--all-tests", "--test", "naive_paired_ttest"), "exclude"),
        (("--models", "lr,rf"), "needs --data"),
        (("--alternative", "both"), "`--alternative` must be one of"),
    ]:
        code, out, err = cli("compare", path, *args)
        assert code == 2, args
        assert needle in err and len(err.strip().splitlines()) == 1, err
    code, _, err = cli("compare")
    assert code == 2 and "SCORES" in err
    monkeypatch.setenv("COLUMNS", "200")  # wide enough that rich does not truncate names
    code, out, _ = cli("compare", "--help")
    assert code == 0 and "SCORES" in out
    from replikit.compare import TESTS

    flat = " ".join(out.replace("│", " ").split())
    assert all(name in flat for name in TESTS)  # the help lists every test
    code, _, err = cli("compare", tmp_path / "missing.csv")
    assert code == 2 and len(err.strip().splitlines()) == 1


def test_cli_fits_models_first(cli, data_csv, tmp_path):
    code, out, err = cli("compare", "--data", data_csv, "--target", "y", "--models", "lr,dummy",
                         "--scheme", "5x2", "--metric", "accuracy,balanced_accuracy",
                         "--out", tmp_path / "out")
    assert code == 0, err
    assert "paired_t_5x2cv" in out and "combined_f_5x2cv" in out and "lr better" in out
    written = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert written == ["comparisons.csv", "comparisons_accuracy.svg",
                       "comparisons_balanced_accuracy.svg", "scores.csv"]
    saved = pd.read_csv(tmp_path / "out" / "comparisons.csv")
    assert set(saved["metric"]) == {"accuracy", "balanced_accuracy"}
    svg = (tmp_path / "out" / "comparisons_accuracy.svg").read_text()
    import xml.etree.ElementTree as ET

    assert ET.fromstring(svg).tag == "{http://www.w3.org/2000/svg}svg"  # standalone SVG file
    assert "5x2cv paired t-test" in svg and "paired_t_5x2cv" not in svg  # named in words
    # with a study column the scheme runs within each study, each compared on its own
    code, out, err = cli("--format", "json", "compare", "--data", data_csv, "--target", "y",
                         "--models", "lr,dummy", "--study", "site", "--scheme", "5x2")
    assert code == 0, err
    assert {r["study"] for r in json.loads(out)} == {"a", "b"}
    code, _, err = cli("compare", "--data", data_csv, "--target", "y", "--models", "lr")
    assert code == 2 and "at least two models" in err
    code, _, err = cli("compare", "--data", data_csv, "--target", "nope", "--models", "lr,rf")
    assert code == 2 and "nope" in err


def _study_data(n_per=150, studies=(1990, 1992, 1994, 1996), seed=2):
    rng = np.random.default_rng(seed)
    n = n_per * len(studies)
    df = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.normal(size=n),
                       "year": np.repeat(studies, n_per)})
    df["y"] = df.x1 + 0.5 * df.x2 + rng.normal(size=n)
    return df


def test_audit_section(tmp_path):
    ds = dataset_from_frame(_study_data(), target="y", study="year")
    rep = run_audit(ds, tmp_path, sections=["compare"], quick=True)
    doc = json.loads(rep.json_path.read_text())
    sec = [s for s in doc["sections"] if s["key"] == "compare"][0]
    data = sec["data"]
    assert data["scheme"] == "5x2" and data["metrics"] == ["r2", "mae"]
    comps = pd.DataFrame(data["comparisons"])
    pairs = {("lr", "rf"), ("lr", "dummy"), ("rf", "dummy")}
    assert set(zip(comps["a"], comps["b"], strict=True)) == pairs
    assert set(comps["test"]) == {"paired_t_5x2cv", "combined_f_5x2cv", "equivalence_tost",
                                  "bayesian_correlated_t"}
    assert comps["valid"].all()
    # one Holm family per test across the 3 pairs x 2 metrics
    from statsmodels.stats.multitest import multipletests

    t = comps[comps["test"] == "paired_t_5x2cv"]
    np.testing.assert_allclose(t["pvalue_adjusted"], multipletests(t["pvalue"], method="holm")[1])
    # a linear signal: the linear model beats the baseline on R2
    lr_dummy = comps[(comps.a == "lr") & (comps.b == "dummy") & (comps.metric == "r2")]
    assert (lr_dummy["estimate"] > 0.2).all()
    assert lr_dummy["reject"].iloc[0] is True and "lr better (lr vs dummy" in sec["summary"]
    # the headline reads one test per pair (quick mode: the combined F), each pair named once
    head = comps[comps["headline"] & (comps.metric == "r2")]
    assert set(head["test"]) == {"combined_f_5x2cv"} and len(head) == 3
    for a, b in pairs:
        assert sec["summary"].count(f"{a} vs {b}") == 1
    assert data["verdict"]["sentence"] == sec["summary"] and data["verdict"]["metric"] == "R²"
    assert data["headline_test"] == "combined_f_5x2cv" and data["simultaneous"] is True
    across = data["across_studies"]
    assert across["n_studies"] == 4 and across["critical_distance"] > 0
    assert set(across["mean_ranks"]) == {"lr", "rf", "dummy"}
    assert np.isclose(sum(across["mean_ranks"].values()), 6.0)  # ranks 1..3 average to 2
    html = rep.html_path.read_text()
    assert "Critical-difference diagram" in html and html.count("<svg") >= 2


def test_audit_section_without_studies_and_one_model(tmp_path):
    df = _study_data(n_per=100, studies=(1,))
    ds = dataset_from_frame(df.drop(columns="year"), target="y")
    rep = run_audit(ds, tmp_path, sections=["compare"], quick=True)
    sec = json.loads(rep.json_path.read_text())["sections"][0]
    assert "across_studies" not in sec["data"] and len(sec["data"]["comparisons"]) == 3 * 2 * 4
    from sklearn.linear_model import LinearRegression

    rep1 = run_audit(ds, tmp_path / "one", sections=["compare"], quick=True,
                     models={"ols": LinearRegression()})
    sec1 = json.loads(rep1.json_path.read_text())["sections"][0]
    assert "one model" in sec1["skipped"]


def test_section_figure_in_view_is_the_headline_test_per_pair(tmp_path):
    """The first figure shows each pair once, by the headline test on the primary metric; the
    all-tests figures per metric come after it (under "More" in the HTML)."""
    from sklearn.dummy import DummyRegressor
    from sklearn.linear_model import LinearRegression, Ridge

    ds = dataset_from_frame(_study_data(), target="y", study="year")
    models = {"lr": LinearRegression(), "ridge": Ridge(), "dummy": DummyRegressor()}
    rep = run_audit(ds, tmp_path, sections=["compare"], quick=True, models=models,
                    random_state=0)
    sec = next(s for s in rep.sections if s.key == "compare")
    figures = [b for b in sec.blocks if b.kind == "figure"]
    doc = json.loads(rep.json_path.read_text())
    data = next(s for s in doc["sections"] if s["key"] == "compare")["data"]
    assert data["headline_test"] in figures[0].caption or "combined" in figures[0].caption
    assert figures[0].caption.startswith("R²")
    # the headline figure has one row per pair; the all-tests figure one per (pair, test)
    for pair in (": lr − ridge", ": lr − dummy", ": ridge − dummy"):
        assert figures[0].svg.count(pair) == 1
        assert figures[1].svg.count(pair) >= 2


def test_audit_tolerance_reaches_the_card(tmp_path):
    """``run_audit(tolerances={'compare': ...})`` is the TOST margin of the card: two nearly
    identical linear models are undecided at the default ±0.01 and shown equivalent at ±0.1."""
    from sklearn.linear_model import LinearRegression, Ridge

    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.normal(size=(200, 3)), columns=["a", "b", "c"])
    df["y"] = df.a + rng.normal(size=200)
    ds = dataset_from_frame(df, target="y")
    models = {"ols": LinearRegression(), "ridge": Ridge(alpha=5.0)}
    cards = {}
    for tol in (None, 0.1):
        rep = run_audit(ds, tmp_path / str(tol), sections=["compare"], quick=True,
                        random_state=0, models=models,
                        tolerances=None if tol is None else {"compare": tol})
        cards[tol] = json.loads(rep.json_path.read_text())["sections"][0]["data"]["verdict"]
    assert cards[None]["level"] == "warn" and "Undecided on R²: ols vs ridge" in \
        cards[None]["sentence"]
    assert "equivalent" not in cards[None]["sentence"]
    assert cards[None]["tolerance"].startswith("judged against ±0.01 in R² (the default")
    assert cards[0.1]["level"] == "good"
    assert "Shown equivalent within ±0.1 (TOST" in cards[0.1]["sentence"]
    assert cards[0.1]["tolerance"].startswith("judged against ±0.1 in R² (the tolerance given)")
    assert "simultaneous 95% CI" in cards[0.1]["tolerance"]
