"""``replikit meta --moderator/--influence/--funnel``: outputs, JSON, clear errors; old flags."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from replikit.replicate import meta_regression

REF = Path(__file__).parents[1] / "reference" / "replicate"
BCG_PATH = REF / "dat_bcg.csv"
BCG = pd.read_csv(BCG_PATH)


def _error_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.startswith("replikit: error:")]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def test_moderators_repeatable_or_comma_list(cli):
    code, out, err = cli("--format", "json", "meta", BCG_PATH, "--moderator", "ablat",
                         "--moderator", "year")
    assert code == 0, err
    a = json.loads(out)
    code, out, _ = cli("--format", "json", "meta", BCG_PATH, "--moderator", "ablat,year")
    b = json.loads(out)
    assert a["meta_regression"] == b["meta_regression"]
    coef = pd.DataFrame(a["meta_regression"])
    assert coef["term"].tolist() == ["intercept", "ablat", "year"]
    ref = meta_regression(BCG["yi"], BCG["vi"], moderators=BCG[["ablat", "year"]])
    np.testing.assert_allclose(coef["estimate"], ref.beta, rtol=1e-10)
    summary = a["meta_regression_summary"][0]
    assert summary["qm"] == pytest.approx(ref.qm) and summary["qe_df"] == 10


def test_human_output_and_files(cli, tmp_path):
    out_dir = tmp_path / "out"
    code, out, err = cli("meta", BCG_PATH, "--moderator", "ablat", "--influence", "--funnel",
                         "--out", out_dir)
    assert code == 0, err
    assert "Test of moderators (ablat)" in out and "Influence diagnostics" in out
    assert "Trim-and-fill" in out and "Q-profile" in out
    files = sorted(p.name for p in out_dir.iterdir())
    assert files == sorted(["forest.svg", "meta.csv", "metareg.csv", "bubble.svg",
                            "influence.csv", "influence.svg", "baujat.svg", "small_study.csv",
                            "funnel.svg"])
    for svg in out_dir.glob("*.svg"):
        assert svg.read_text().lstrip().startswith("<?xml")
    inf = pd.read_csv(out_dir / "influence.csv")
    assert len(inf) == 13 and "dfbetas_ablat" in inf.columns
    # outputs are checked before any work: a second run refuses, --overwrite replaces
    code, _, err = cli("meta", BCG_PATH, "--funnel", "--out", out_dir)
    assert code == 2 and "--overwrite" in _error_line(err)
    code, _, err = cli("meta", BCG_PATH, "--funnel", "--out", out_dir, "--overwrite")
    assert code == 0, err


def test_json_without_moderators_has_heterogeneity_intervals(cli):
    code, out, err = cli("--format", "json", "meta", BCG_PATH, "--tau2-method", "DL", "--funnel")
    assert code == 0, err
    data = json.loads(out)
    het = pd.DataFrame(data["heterogeneity"]).set_index("quantity")
    # metafor tests/testthat/test_misc_confint.r:13: tau2 0.3088 [0.1197, 1.1115]
    assert het.loc["tau2", "estimate"] == pytest.approx(0.3088, abs=5e-5)
    assert het.loc["tau2", "ci_low"] == pytest.approx(0.1197, abs=5e-5)
    assert het.loc["tau2", "ci_high"] == pytest.approx(1.1115, abs=5e-5)
    assert [r["test"] for r in data["small_study"]] == ["regression", "regression",
                                                        "rank correlation", "trim-and-fill"]


@pytest.mark.parametrize("args,mentions", [
    (["--moderator", "nope"], ["--moderator", "nope"]),
    (["--moderator", "ablat,"], ["--moderator"]),
])
def test_clear_errors(cli, args, mentions):
    code, _, err = cli("meta", BCG_PATH, *args)
    assert code == 2
    line = _error_line(err)
    for m in mentions:
        assert m in line


def test_missing_moderator_value_is_a_clear_error(cli, tmp_path):
    frame = BCG.copy()
    frame.loc[3, "ablat"] = np.nan
    path = tmp_path / "d.csv"
    frame.to_csv(path, index=False)
    code, _, err = cli("meta", path, "--moderator", "ablat")
    assert code == 2 and "'ablat'" in _error_line(err)


def test_too_few_studies_for_influence(cli, tmp_path):
    path = tmp_path / "two.csv"
    pd.DataFrame({"yi": [0.1, 0.3], "vi": [0.01, 0.02]}).to_csv(path, index=False)
    code, _, err = cli("meta", path, "--influence")
    assert code == 2 and "studies" in _error_line(err)


def test_old_flags_and_values_warn_and_agree(cli):
    code, new, err = cli("--format", "json", "meta", BCG_PATH, "--tau2-method", "DL",
                         "--interval", "wald", "--pi-dist", "t(k-1)")
    assert code == 0 and "is now" not in err, err
    code, old, err = cli("--format", "json", "meta", BCG_PATH, "--method", "DL", "--ci", "z",
                         "--pi", "t(k-1)")
    assert code == 0, err
    warnings = [ln for ln in err.splitlines() if ln.startswith("replikit: warning:")]
    assert any("--tau2-method" in w for w in warnings), err
    assert any("--interval" in w for w in warnings), err
    assert any("--interval wald" in w for w in warnings), err
    assert any("--pi-dist" in w for w in warnings), err
    assert json.loads(old)["result"] == json.loads(new)["result"]
