"""The `replikit multistudy` / `replikit crossstudy` commands, the audit section and plots."""

import json

import numpy as np
import pandas as pd
import pytest

from replikit.data.userdata import dataset_from_frame
from replikit.multistudy import from_arrays, study_utilities
from replikit.multistudy.plots import (
    plot_dominance,
    plot_epsilon_test,
    plot_matrix,
    plot_study_utilities,
)
from replikit.report.context import AuditContext
from replikit.report.sections import multistudy as section


@pytest.fixture
def preds_csv(tmp_path):
    rng = np.random.default_rng(0)
    n = 300
    y = rng.integers(0, 2, n)
    p1 = np.clip(0.5 * y + rng.uniform(0, 0.5, n), 0, 1)
    df = pd.DataFrame({"site": np.repeat(["a", "b", "c"], n // 3), "y_true": y,
                       "y_pred": (p1 > 0.5).astype(int), "proba_1": p1, "proba_0": 1 - p1})
    path = tmp_path / "preds.csv"
    df.to_csv(path, index=False)
    return path, df


@pytest.fixture
def data_csv(tmp_path):
    rng = np.random.default_rng(1)
    n = 180
    df = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.normal(size=n),
                       "school": np.repeat(["s1", "s2", "s3"], n // 3)})
    df["y"] = df.x1 + 0.5 * rng.normal(size=n)
    path = tmp_path / "data.csv"
    df.to_csv(path, index=False)
    return path, df


def test_multistudy_command_json(cli, preds_csv):
    path, df = preds_csv
    code, out, err = cli("--format", "json", "multistudy", str(path), "--study",
                             "site", "--utility", "cost:-5,-1", "--tolerance", "0.05",
                             "--permutation-resamples", "99", "--n-resamples", "50")
    assert code == 0, err
    res = json.loads(out)
    got = {r["study"]: r["utility"] for r in res["studies"]}
    for s in "abc":
        m = df.site == s
        expect = np.mean(-5 * ((df.y_pred == 0) & (df.y_true == 1))[m]
                         - 1 * ((df.y_pred == 1) & (df.y_true == 0))[m])
        assert got[s] == pytest.approx(expect)
    assert {r["definition"] for r in res["summary"]} >= {"Def. 3.1 (absolute)"}
    assert 0 < res["permutation"][0][0]["pvalue"] <= 1
    # --epsilon: the intersection-union test of every form, as epsilon_test gives it
    from replikit.multistudy import assess, epsilon_test, load_predictions, parse_utility
    tests = {t[0]["kind"]: t[0] for t in res["epsilon_test"]}
    assert set(tests) == {"absolute", "relative", "tv"}
    assert tests["tv"]["tolerance"] is None and tests["tv"]["smallest_tolerance"] > 0
    a = assess(load_predictions(path, study="site"), parse_utility("cost:-5,-1"),
               n_resamples=10, random_state=0)
    ref = epsilon_test(a, tolerance=0.05)
    assert tests["absolute"]["pvalue"] == pytest.approx(ref.pvalue)
    assert tests["absolute"]["smallest_tolerance"] == pytest.approx(ref.smallest_tolerance)
    assert len(res["epsilon_pairs"]) == 3


def test_multistudy_command_prints_the_epsilon_test(cli, preds_csv):
    path, _ = preds_csv
    code, out, err = cli("multistudy", str(path), "--study", "site", "--tolerance", "0.2",
                         "--permutation-resamples", "19", "--n-resamples", "20")
    assert code == 0, err
    out = " ".join(out.split())  # the terminal may wrap long lines
    assert "intersection-union test of pairwise TOSTs" in out
    assert "ε = 0.2: shown at level 0.05" in out or "ε = 0.2: not shown" in out
    code, out, err = cli("multistudy", str(path), "--study", "site",
                         "--permutation-resamples", "19", "--n-resamples", "20")
    out = " ".join(out.split())
    assert code == 0 and "replicable within any ε >=" in out and "ε = " not in out


def test_multistudy_command_threshold_and_errors(cli, preds_csv):
    path, _ = preds_csv
    code, out, _ = cli("multistudy", str(path), "--study", "site", "--utility",
                           "cost:-5,-1", "--threshold", "bayes", "--permutation-resamples",
                           "19", "--n-resamples", "20")
    assert code == 0 and "threshold 0.1667" in out
    code, _, err = cli("multistudy", str(path), "--study", "nope")
    assert code == 2 and "--study" in err and len(err.strip().splitlines()) == 1
    code, _, err = cli("multistudy", str(path), "--study", "site", "--utility",
                           "cost:5,1")
    assert code == 2 and "u01" in err
    code, _, err = cli("multistudy", str(path), "--study", "site", "--threshold",
                           "0.3")
    assert code == 2 and "--threshold" in err


def test_crossstudy_command(cli, data_csv):
    path, _ = data_csv
    code, out, err = cli("--format", "json", "crossstudy", "--data", str(path),
                             "--target", "y", "--study", "school", "--models", "lr",
                             "--stacking", "--n-folds", "3")
    assert code == 0, err
    res = json.loads(out)["models"]["lr"]
    assert len(res["cross_study_matrix"]) == 3
    assert all(r["stack"] >= 0 for r in res["stacking_weights"])
    code, _, err = cli("crossstudy", "--data", str(path), "--target", "y",
                           "--study", "x9")
    assert code == 2 and "--study" in err


def _ctx(df, study, quick=True):
    ds = dataset_from_frame(df, target="y", study=study)
    return AuditContext(dataset=ds, random_state=0, quick=quick)


def test_section_builds_and_is_reproducible(data_csv):
    _, df = data_csv
    out = section.build(_ctx(df, "school"))
    assert not out.skipped
    d = out.data
    assert d["rule"] in {"lr", "rf", "dummy"}
    assert d["smallest_epsilon_absolute"] >= 0 and 0 < d["pvalue_utility"] <= 1
    assert len(d["studies"]) == 3
    assert any(getattr(b, "kind", "") == "figure" for b in out.blocks)
    again = section.build(_ctx(df, "school"))
    assert again.data["pvalue_distance"] == d["pvalue_distance"]
    assert again.data["smallest_epsilon_absolute_ci"] == d["smallest_epsilon_absolute_ci"]


def test_section_skips_one_study(data_csv):
    _, df = data_csv
    out = section.build(_ctx(df, None))
    assert out.skipped and "one study" in out.skipped


def test_plot_epsilon_test_marks_the_bound_and_the_spread():
    from replikit.multistudy import epsilon_test

    t = pd.DataFrame({"study": ["a", "b", "c"], "utility": [0.8, 0.82, 0.7],
                      "se": [0.01, 0.01, 0.02]})
    r = epsilon_test(t, tolerance=0.2)
    ax = plot_epsilon_test(r)
    xs = sorted(line.get_xdata()[0] for line in ax.get_lines() if len(line.get_xdata()) == 2)
    assert r.smallest_tolerance in xs and 0.2 in xs and r.estimate in xs
    assert len(ax.get_yticks()) == 3


def test_plots_return_axes():
    y = np.array([1, 1, 0, 0, 1, 0, 1, 0])
    s = np.array(["a"] * 4 + ["b"] * 4)
    a = study_utilities(from_arrays(y, y, s))
    b = study_utilities(from_arrays(y, 1 - y, s))
    assert plot_study_utilities(a).get_xlabel().startswith("average utility")
    assert plot_matrix(a.matrix()).get_title() == ""
    ax = plot_dominance(a, [b], names=["phi", "alt"])
    assert "Fig. 1" in ax.get_title()


def test_plots_draw_dollar_labels_literally():
    """Study and rule names with '$' print as text (before: ParseSyntaxException on '$^$'),
    rendered by replikit or by the user's own savefig."""
    import io
    import xml.etree.ElementTree as ET

    from replikit._plotting import svg_document

    y = np.array([1, 1, 0, 0, 1, 0, 1, 0])
    s = np.array(["$^$"] * 4 + ["b$"] * 4)
    a = study_utilities(from_arrays(y, y, s))
    b = study_utilities(from_arrays(y, 1 - y, s))
    for ax in (plot_study_utilities(a), plot_matrix(a.matrix(), title="$^$"),
               plot_dominance(a, [b], names=["$\\frac$", "$x"])):
        ax.figure.savefig(io.StringIO(), format="svg")   # mathtext enabled: must not raise
        svg = svg_document(ax.figure)
        ET.fromstring(svg.encode())
        assert "$^$" in svg
