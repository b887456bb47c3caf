"""Corpus of bad and odd inputs for ``replikit replicate``, ``meta`` and ``simulate replication``:
every case ends in a clear error (exit 2, one line naming the flag or column) or an honest
result (exit 0, with a warning line where something was odd).
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from .conftest import assert_clear_error, assert_ok

REF = Path(__file__).parents[1] / "reference" / "replicate"
BCG = pd.read_csv(REF / "dat_bcg.csv")

STUDIES = pd.DataFrame({"study": ["2002", "2004", "2006", "2008"],
                        "r2": [0.41, 0.39, 0.30, 0.42], "n": [667, 650, 2000, 690], "k": 36})
META = pd.DataFrame({"study": ["a", "b", "c", "d"], "yi": [0.30, 0.10, 0.45, 0.20],
                     "se": [0.10, 0.12, 0.15, 0.08]})


def _scores(values_by_study, n_test=100):
    rows = [{"study": s, "model": "lr", "repeat": 0, "fold": f, "metric": "r2", "value": v,
             "n_test": n_test}
            for s, vals in values_by_study.items() for f, v in enumerate(vals)]
    return pd.DataFrame(rows)


def _parse_svgs(directory: Path) -> list[Path]:
    svgs = sorted(directory.glob("*.svg"))
    for p in svgs:
        root = ET.parse(p).getroot()  # standalone, valid XML
        assert root.tag == "{http://www.w3.org/2000/svg}svg", (p, root.tag)
    return svgs


def _warnings(err: str) -> list[str]:
    return [ln for ln in err.splitlines() if ln.startswith("replikit: warning:")]


# ---------------------------------------------------------------------------------------------
# meta: bad effects, variances and standard errors


@pytest.mark.parametrize("column, value, mentions", [
    ("se", -0.12, ("'se'", "negative")),
    ("se", 0.0, ("'se'",)),
    ("se", np.nan, ("'se'",)),
    ("se", np.inf, ("'se'",)),
    ("yi", np.nan, ("'yi'",)),
    ("yi", -np.inf, ("'yi'",)),
])
def test_meta_refuses_bad_numbers(cli, write_csv, column, value, mentions):
    frame = META.copy()
    frame.loc[1, column] = value
    line = assert_clear_error(cli("meta", write_csv(frame)), *mentions)
    assert "'b'" in line or "row 2" in line  # which study


@pytest.mark.parametrize("value", [-0.01, 0.0, np.nan])
def test_meta_refuses_bad_variances(cli, write_csv, value):
    frame = BCG[["author", "yi", "vi"]].copy()
    frame.loc[3, "vi"] = value
    assert_clear_error(cli("meta", write_csv(frame)), "'vi'")


@pytest.mark.parametrize("text", ["0.3x", "n/a?", "abc"])
def test_meta_string_effects(cli, write_csv, text):
    frame = META.astype({"yi": object})
    frame.loc[2, "yi"] = text
    assert_clear_error(cli("meta", write_csv(frame)), "'yi'", text)


def test_meta_string_standard_errors(cli, write_csv):
    frame = META.astype({"se": object})
    frame.loc[0, "se"] = "0.1 (approx)"
    assert_clear_error(cli("meta", write_csv(frame)), "'se'")


def test_meta_one_study(cli, write_csv):
    assert_clear_error(cli("meta", write_csv(META.iloc[:1])), "2")


def test_meta_duplicate_labels_flagged(cli, write_csv):
    frame = META.assign(study=["a", "a", "c", "d"])
    code, out, err = cli("meta", write_csv(frame), "--label", "study")
    assert_ok((code, out, err))
    assert any("'a'" in w and "label" in w for w in _warnings(err)), err


@pytest.mark.parametrize("flag", ["--effect", "--se", "--variance", "--label"])
def test_meta_named_column_missing(cli, write_csv, flag):
    assert_clear_error(cli("meta", write_csv(META), flag, "nope"), flag, "'nope'")


def test_meta_no_variance_column(cli, write_csv):
    assert_clear_error(cli("meta", write_csv(META[["study", "yi"]])), "--variance", "--se")


def test_meta_both_variance_and_se_named(cli, write_csv):
    frame = META.assign(vi=META.se ** 2)
    assert_clear_error(cli("meta", write_csv(frame), "--variance", "vi", "--se", "se"),
                       "--variance", "--se")


@pytest.mark.parametrize("text", ["", "yi,se\n"])
def test_meta_empty_inputs(cli, write_csv, text):
    assert_clear_error(cli("meta", write_csv(text)), "PATH")


@pytest.mark.parametrize("flag, value", [("--tau2-method", "XX"), ("--interval", "t"),
                                         ("--pi-dist", "t(k-3)")])
def test_meta_bad_choices(cli, write_csv, flag, value):
    assert_clear_error(cli("meta", write_csv(META), flag, value), flag)


def test_meta_leave_one_out_needs_three(cli, write_csv):
    assert_clear_error(cli("meta", write_csv(META.iloc[:2]), "--leave-one-out"),
                       "--leave-one-out")


def test_meta_pi_dist_follows_ci(cli, write_csv):
    out = assert_ok(cli("meta", write_csv(BCG), "--interval", "knha"))
    assert "prediction interval" in out and "t(k-1)" in out
    out = assert_ok(cli("meta", write_csv(BCG), "--pi-dist", "t(k-2)"))
    assert "t(k-2)" in out


# ---------------------------------------------------------------------------------------------
# meta/replicate/simulate: outputs are checked before any work


def test_meta_out_refuses_existing_outputs_then_overwrites(cli, write_csv, tmp_path):
    out = tmp_path / "m"
    out.mkdir()
    (out / "meta.csv").write_text("mine\n")
    (out / "notes.txt").write_text("keep me\n")
    line = assert_clear_error(cli("meta", write_csv(BCG), "--out", out), "--out", "meta.csv")
    assert "--overwrite" in line
    assert (out / "meta.csv").read_text() == "mine\n"
    assert_ok(cli("meta", write_csv(BCG), "--out", out, "--overwrite", "--leave-one-out"))
    assert pd.read_csv(out / "meta.csv")["k"].iloc[0] == 13
    assert (out / "notes.txt").read_text() == "keep me\n"  # never touched
    assert [p.name for p in _parse_svgs(out)] == ["forest.svg"]
    assert len(pd.read_csv(out / "leave_one_out.csv")) == 13
    assert not list(out.glob(".*.tmp"))  # atomic writes leave no temporary files


def test_outputs_checked_before_reading_data(cli, tmp_path):
    # the data file does not even exist: the output refusal comes first
    out = tmp_path / "o"
    out.mkdir()
    (out / "forest.svg").write_text("<svg/>")
    assert_clear_error(cli("meta", tmp_path / "missing.csv", "--out", out), "--out")
    (out / "replications.csv").write_text("x\n")
    assert_clear_error(cli("replicate", tmp_path / "missing.csv", "--out", out), "--out")
    (out / "study2_table.csv").write_text("x\n")
    assert_clear_error(cli("simulate", "replication", "--models", "lr", "--out", out), "--out")


@pytest.mark.parametrize("command", ["meta", "replicate", "simulate"])
def test_out_is_a_file(cli, write_csv, tmp_path, command):
    target = tmp_path / "taken.txt"
    target.write_text("not a directory\n")
    args = {"meta": ("meta", write_csv(BCG)), "replicate": ("replicate", write_csv(STUDIES)),
            "simulate": ("simulate", "replication", "--n-repeats", "1",
                         "--n-per-study", "200")}[command]
    assert_clear_error(cli(*args, "--out", target), "--out")
    assert target.read_text() == "not a directory\n"


def test_out_unwritable(cli, write_csv, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    if os.geteuid() == 0:  # root ignores permission bits; no file can be created under /proc
        locked = Path("/proc/replikit-test")
    try:
        assert_clear_error(cli("meta", write_csv(BCG), "--out", locked / "m"), "--out")
        assert_clear_error(cli("replicate", write_csv(STUDIES), "--out", locked), "--out")
    finally:
        (tmp_path / "locked").chmod(0o700)


# ---------------------------------------------------------------------------------------------
# replicate: study tables


@pytest.mark.parametrize("r2, mention", [(1.2, "1.2"), (-0.05, "-0.05"), (np.nan, "r2")])
def test_replicate_r2_outside_unit_interval(cli, write_csv, r2, mention):
    frame = STUDIES.copy()
    frame.loc[2, "r2"] = r2
    assert_clear_error(cli("replicate", write_csv(frame)), "'r2'", "2006", mention)


def test_replicate_string_r2(cli, write_csv):
    frame = STUDIES.astype({"r2": object})
    frame.loc[1, "r2"] = "n/a?"
    assert_clear_error(cli("replicate", write_csv(frame)), "'r2'", "n/a?")


@pytest.mark.parametrize("n, mention", [(0, "'n'"), (-5, "'n'"), (2.5, "'n'"), (np.nan, "'n'")])
def test_replicate_bad_sample_sizes(cli, write_csv, n, mention):
    frame = STUDIES.copy()
    frame["n"] = frame["n"].astype(float)
    frame.loc[1, "n"] = n
    assert_clear_error(cli("replicate", write_csv(frame)), mention, "2004")


def test_replicate_more_predictors_than_rows_with_se(cli, write_csv):
    # n = 3 with k = 5 predictors: an R2 from such a fit is 1 by construction; a reported SE
    # does not make it an estimate
    frame = pd.DataFrame({"study": ["a", "b", "c"], "r2": [0.4, 0.5, 0.45], "n": [3, 300, 280],
                          "k": 5, "se": [0.05, 0.04, 0.04]})
    assert_clear_error(cli("replicate", write_csv(frame)), "'a'", "n = 3", "k = 5")


@pytest.mark.parametrize("se", [-0.02, 0.0, np.inf])
def test_replicate_bad_reported_se(cli, write_csv, se):
    frame = STUDIES.assign(se=0.03)
    frame.loc[3, "se"] = se
    assert_clear_error(cli("replicate", write_csv(frame)), "'se'", "2008")


def test_replicate_missing_se_for_other_metric(cli, write_csv):
    frame = STUDIES.rename(columns={"r2": "value"})
    assert_clear_error(cli("replicate", write_csv(frame), "--metric", "mae"), "--metric", "se")


def test_replicate_one_study(cli, write_csv):
    assert_clear_error(cli("replicate", write_csv(STUDIES.iloc[:1])), "2", "studies")


def test_replicate_duplicate_study_labels(cli, write_csv):
    frame = STUDIES.assign(study=["2002", "2004", "2004", "2008"])
    assert_clear_error(cli("replicate", write_csv(frame)), "'2004'", "study")


def test_replicate_five_studies_all_labeled_the_same(cli, write_csv):
    frame = pd.concat([STUDIES, STUDIES.iloc[:1]]).assign(study=5)
    assert_clear_error(cli("replicate", write_csv(frame)), "'5'", "study")


def test_replicate_missing_study_column(cli, write_csv):
    assert_clear_error(cli("replicate", write_csv(STUDIES.drop(columns="study"))), "--study")


@pytest.mark.parametrize("flag", ["--estimate", "--study"])
def test_replicate_named_column_missing(cli, write_csv, flag):
    assert_clear_error(cli("replicate", write_csv(STUDIES), flag, "nope"), flag, "'nope'")


def test_replicate_no_size_column(cli, write_csv):
    assert_clear_error(cli("replicate", write_csv(STUDIES.drop(columns="n"))), "n", "se")


def test_replicate_original_not_found(cli, write_csv):
    line = assert_clear_error(cli("replicate", write_csv(STUDIES), "--original", "1999"),
                              "--original", "1999")
    assert "2002" in line  # lists the studies there are


@pytest.mark.parametrize("text", ["", "study,r2,n\n"])
def test_replicate_empty_inputs(cli, write_csv, text):
    assert_clear_error(cli("replicate", write_csv(text)), "PATH")


@pytest.mark.parametrize("flag, value", [
    ("--interval", "percentile"), ("--tau2-method", "XX"), ("--meta-interval", "t"),
    ("--se-method", "exact"), ("--pooling", "mixed"), ("--tolerance", "0"),
    ("--tolerance", "-0.1"),
])
def test_replicate_bad_options(cli, write_csv, flag, value):
    assert_clear_error(cli("replicate", write_csv(STUDIES), flag, value), flag)


def test_replicate_scores_with_one_fold(cli, write_csv):
    frame = _scores({"a": [0.4, 0.42, 0.38], "b": [0.41]})
    assert_clear_error(cli("replicate", write_csv(frame)), "'b'", "fold")


@pytest.mark.parametrize("bad", [0.0, -0.3])
def test_replicate_scores_fold_r2_without_olkin_finn_se(cli, write_csv, bad):
    frame = _scores({"a": [0.4, 0.42, 0.38], "b": [0.41, bad, 0.39]})
    assert_clear_error(cli("replicate", write_csv(frame)), "'b'", "fold")


def test_replicate_out_refuses_then_overwrites(cli, write_csv, tmp_path):
    out = tmp_path / "figs"
    path = write_csv(STUDIES)
    assert_ok(cli("replicate", path, "--out", out))
    names = sorted(p.name for p in out.iterdir())
    assert names == ["consistency_model_reported.svg", "forest_model_reported.svg",
                     "inconsistency_model_reported.svg", "pooled.csv", "replications.csv"]
    assert len(_parse_svgs(out)) == 3
    before = (out / "pooled.csv").read_text()
    assert_clear_error(cli("replicate", path, "--out", out), "--out", "--overwrite")
    assert_clear_error(cli("replicate", path, "--out", out, "--interval", "mover"), "--out")
    assert_ok(cli("replicate", path, "--out", out, "--overwrite", "--meta-interval", "knha"))
    assert (out / "pooled.csv").read_text() != before
    assert len(_parse_svgs(out)) == 3


def test_replicate_help_keeps_square_brackets(cli):
    code, out, _ = cli("replicate", "--help")
    assert code == 0
    text = " ".join(out.split())
    assert "[k]" in text and "[se]" in text and "[model]" in text, out


def test_replicate_mover_on_lee_failure_inputs(cli, write_csv):
    # Lee's limits once failed on these inputs inside MOVER; through the command line
    frame = pd.DataFrame({"study": ["o", "r1", "r2"], "r2": [0.4682924644806017, 0.41, 0.1],
                          "n": [2000, 1800, 50], "k": [10, 10, 3]})
    out = assert_ok(cli("replicate", write_csv(frame), "--interval", "mover"))
    assert "nan" not in out.lower()


# ---------------------------------------------------------------------------------------------
# simulate replication


def test_simulate_three_studies(cli, tmp_path):
    out = assert_ok(cli("simulate", "replication", "--n-studies", "3", "--n-repeats", "2",
                        "--n-per-study", "200", "--models", "lr"))
    assert "1 changed studies" in out


@pytest.mark.parametrize("args, flag", [
    (("--n-studies", "2"), "--n-studies"), (("--n-repeats", "0"), "--n-repeats"),
    (("--n-per-study", "10"), "--n-per-study"), (("--n-per-study", "100000"), "--n-per-study"),
    (("--models", "lr,bogus"), "--models"), (("--models", ","), "--models"),
    (("--tau2-method", "XX"), "--tau2-method"), (("-j", "0"), "--n-jobs"),
])
def test_simulate_bad_flags(cli, args, flag):
    assert_clear_error(cli("simulate", "replication", "--n-repeats", "1", *args), flag)


def test_simulate_tiny_n_is_flagged(cli):
    code, out, err = cli("simulate", "replication", "--n-repeats", "1", "--n-per-study", "50",
                         "--models", "lr")
    assert_ok((code, out, err))
    assert any("below 0.001" in w for w in _warnings(err)), err


def test_simulate_out_writes_valid_files_and_refuses_reuse(cli, tmp_path):
    out = tmp_path / "sim"
    args = ("simulate", "replication", "--n-repeats", "1", "--n-per-study", "200", "--models",
            "lr")
    assert_ok(cli(*args, "--out", out))
    assert len(_parse_svgs(out)) == 8
    table = pd.read_csv(out / "study2_table.csv")
    assert set(table["model"]) == {"lr"}
    assert_clear_error(cli(*args, "--out", out), "--out", "--overwrite")
    assert_ok(cli(*args, "--out", out, "--overwrite"))


# ---------------------------------------------------------------------------------------------
# odd but valid inputs: honest results


def test_meta_extreme_magnitudes(cli, write_csv):
    frame = META.copy()
    frame.loc[0, "yi"] = 1e308
    assert_clear_error(cli("meta", write_csv(frame)), "'yi'", "'a'")
    frame = META.copy()
    frame.loc[2, "se"] = 1e-200   # its square underflows to a zero variance
    assert_clear_error(cli("meta", write_csv(frame)), "'se'", "'c'")


def test_meta_identical_effects(cli, write_csv):
    out = assert_ok(cli("meta", write_csv(META.assign(yi=0.25))))
    assert "τ² = 0 " in out and "I² = 0%" in out


def test_meta_mathtext_and_unicode_labels_in_figures(cli, write_csv, tmp_path):
    frame = META.assign(study=["a$b$", "$", "Zoë (2019)", "x_{1}^2"])
    out = tmp_path / "plots"
    assert_ok(cli("meta", write_csv(frame), "--out", out))
    svg = _parse_svgs(out)[0].read_text()
    assert "a$b$" in svg and "Zoë (2019)" in svg


def test_meta_two_studies_knha_and_higgins(cli, write_csv):
    out = assert_ok(cli("meta", write_csv(META.iloc[:2]), "--interval", "knha", "--pi-dist",
                        "t(k-2)", "--tau2-method", "DL"))
    assert "Knapp-Hartung t(1)" in out


def test_meta_json_after_the_subcommand(cli, write_csv):
    import json

    code, out, err = cli("meta", write_csv(BCG), "--format", "json", "--interval", "knha")
    doc = json.loads(assert_ok((code, out, err)))
    assert doc["result"][0]["pi_dist"] == "t(k-1)" and doc["result"][0]["df"] == 12


def test_replicate_negative_r2_with_reported_se(cli, write_csv):
    # a test R2 below 0 is a real result when its SE was reported (e.g. by a bootstrap)
    frame = STUDIES.assign(se=0.03)
    frame.loc[2, "r2"] = -0.04
    out = assert_ok(cli("replicate", write_csv(frame), "--original", "2002"))
    assert "inconsistent" in out


def test_replicate_r2_of_one_without_se(cli, write_csv):
    frame = STUDIES.copy()
    frame.loc[0, "r2"] = 1.0
    assert_clear_error(cli("replicate", write_csv(frame)), "'r2'", "2002")


def test_replicate_huge_sample_size(cli, write_csv):
    frame = STUDIES.copy()
    frame["n"] = frame["n"].astype(float)
    frame.loc[1, "n"] = 1e300
    assert_clear_error(cli("replicate", write_csv(frame)), "'n'", "2004")


def test_replicate_bootstrap_interval_refused_for_tables(cli, write_csv):
    # a study table carries no bootstrap replicates
    assert_clear_error(cli("replicate", write_csv(STUDIES), "--interval", "basic"),
                       "--interval")


def test_replicate_models_with_odd_names_get_safe_distinct_files(cli, write_csv, tmp_path):
    a = STUDIES.assign(model="lin reg/v1")
    b = STUDIES.assign(model="lin_reg_v1", r2=STUDIES.r2 - 0.02)
    c = STUDIES.assign(model="$rf$", r2=STUDIES.r2 - 0.05)
    out = tmp_path / "figs"
    assert_ok(cli("replicate", write_csv(pd.concat([a, b, c])), "--out", out))
    svgs = _parse_svgs(out)
    assert len(svgs) == 9  # three models x three figures, none overwrote another
    assert all(" " not in p.name and "/" not in p.name and "$" not in p.name for p in svgs)
    assert len(pd.read_csv(out / "replications.csv")) == 9


def test_replicate_out_keeps_other_files(cli, write_csv, tmp_path):
    out = tmp_path / "shared"
    out.mkdir()
    (out / "my_notes.csv").write_text("keep\n")
    (out / "forest_old.png").write_bytes(b"\x89PNG")
    assert_ok(cli("replicate", write_csv(STUDIES), "--out", out))
    assert (out / "my_notes.csv").read_text() == "keep\n"
    assert (out / "forest_old.png").read_bytes() == b"\x89PNG"


def test_replicate_scores_table_two_models(cli, write_csv):
    frame = pd.concat([_scores({"a": [0.40, 0.42, 0.38], "b": [0.41, 0.37, 0.39]}),
                       _scores({"a": [0.30, 0.32, 0.28], "b": [0.20, 0.22, 0.19]})
                       .assign(model="rf")])
    out = assert_ok(cli("replicate", write_csv(frame), "--pooling", "fixed"))
    assert "rf" in out and "lr" in out


def test_replicate_old_flags_are_gone(cli, write_csv):
    # one name per concept: the difference interval is --interval (--method names an
    # estimator), the column of estimates --estimate
    code, _, err = cli("replicate", write_csv(STUDIES), "--method", "mover")
    assert code == 2 and "--method" in err
    code, _, err = cli("replicate", write_csv(STUDIES), "--value", "r2")
    assert code == 2 and "--value" in err


def test_replicate_json_names(cli, write_csv):
    import json

    doc = json.loads(assert_ok(cli("--format", "json", "replicate", write_csv(STUDIES),
                                   "--interval", "mover")))
    assert doc["interval"] == "mover"
    row = doc["replications"][0]
    assert {"estimate", "difference", "statistic", "pvalue", "pvalue_tost"} <= set(row)
    assert not {"value", "p_tost"} & set(row)


def test_simulate_random_state_flag(cli):
    a = assert_ok(cli("--format", "json", "simulate", "replication", "--n-repeats", "1",
                      "--n-per-study", "200", "--models", "lr", "--random-state", "3"))
    b = assert_ok(cli("--format", "json", "simulate", "replication", "-R", "1", "--n", "200",
                      "--models", "lr", "--seed", "3"))  # the old flags still work
    import json

    assert json.loads(a)["table"] == json.loads(b)["table"]


def test_replicate_numeric_study_labels(cli, write_csv):
    # labels read as numbers keep their spelling (2002, not 2002.0)
    out = assert_ok(cli("replicate", write_csv(STUDIES.assign(study=[2002, 2004, 2006, 2008])),
                        "--original", "2002"))
    assert "2002.0" not in out and "2004" in out


# ---------------------------------------------------------------------------------------------
# meta --moderator / --influence / --funnel

def test_meta_moderator_not_a_column(cli, write_csv):
    assert_clear_error(cli("meta", write_csv(BCG), "--moderator", "latitude"), "--moderator",
                       "latitude")


def test_meta_moderator_with_a_missing_value(cli, write_csv):
    frame = BCG.copy()
    frame["ablat"] = frame["ablat"].astype(object)
    frame.loc[2, "ablat"] = ""
    assert_clear_error(cli("meta", write_csv(frame), "--moderator", "ablat"), "'ablat'")


def test_meta_too_many_moderators_for_the_studies(cli, write_csv):
    frame = META.assign(a=[1, 2, 3, 5], b=[2, 1, 4, 3], c=[0, 1, 1, 0])
    assert_clear_error(cli("meta", write_csv(frame), "--moderator", "a,b,c"), "studies")


def test_meta_constant_moderator_is_dropped_with_a_warning(cli, write_csv):
    code, out, err = cli("meta", write_csv(BCG.assign(same=1.0)), "--moderator", "ablat,same")
    assert_ok((code, out, err))
    assert any("same" in w for w in _warnings(err))
    assert "Test of moderators (ablat)" in out


def test_meta_text_moderator_becomes_dummies(cli, write_csv):
    out = assert_ok(cli("meta", write_csv(BCG), "--moderator", "alloc"))
    assert "alloc[random]" in out and "alloc[systematic]" in out


@pytest.mark.parametrize("flag", ["--influence", "--funnel"])
def test_meta_diagnostics_need_three_studies(cli, write_csv, flag):
    frame = META.iloc[:2]
    assert_clear_error(cli("meta", write_csv(frame), flag), "3 studies")


def test_meta_extras_write_standalone_svgs(cli, write_csv, tmp_path):
    out_dir = tmp_path / "o"
    assert_ok(cli("meta", write_csv(BCG), "--moderator", "ablat", "--influence", "--funnel",
                  "--out", out_dir))
    assert {p.name for p in _parse_svgs(out_dir)} == {"forest.svg", "bubble.svg",
                                                      "influence.svg", "baujat.svg",
                                                      "funnel.svg"}
