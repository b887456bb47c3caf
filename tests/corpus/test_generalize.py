"""Corpus of bad and odd inputs for ``replikit generalize`` (odd labels, bad values, output files).

Every case ends in a clear one-line error naming the flag or column, or in an honest result
whose warnings say what was done.
"""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest

from .conftest import assert_clear_error, assert_ok

ALTS = ["m1", "m2", "m3", "m4", "m5"]
BASE = ("--alternative", "model", "--score", "score", "--factor", "dataset", "--n-resamples", "40")


def _results(n_alt=5, n_cond=12, random_state=0, alts=None, col="model"):
    rng = np.random.default_rng(random_state)
    alts = alts or [f"m{i + 1}" for i in range(n_alt)]
    rows = [{col: a, "dataset": f"d{j}", "score": rng.normal(0.1 * i, 0.2)}
            for i, a in enumerate(alts) for j in range(n_cond)]
    return pd.DataFrame(rows)


def _warnings(err: str) -> list[str]:
    return [ln for ln in err.splitlines() if ln.startswith("warning:")]


def _parse_svgs(directory) -> int:
    n = 0
    for p in sorted(os.listdir(directory)):
        if p.endswith(".svg"):
            root = ET.parse(os.path.join(directory, p)).getroot()
            assert root.tag == "{http://www.w3.org/2000/svg}svg", p
            n += 1
    return n


# -- baseline ------------------------------------------------------------------------------

def test_baseline_json(cli, write_csv):
    path = write_csv(_results())
    out = assert_ok(cli("--format", "json", "generalize", path, *BASE))
    data = json.loads(out)
    assert data["nstar"][0]["kernel"] == "mallows"
    # per-alternative summary with 1 = best ranks
    ranks = {r["alternative"]: r["mean_rank"] for r in data["alternatives"]}
    assert min(ranks.values()) >= 1 and max(ranks.values()) <= 5


# -- alternatives and goals ---------------------------------------------------------------

def test_one_alternative_is_a_clear_error(cli, write_csv):
    # before: ZeroDivisionError (internal error, exit 1)
    path = write_csv(_results(n_alt=1))
    assert_clear_error(cli("generalize", path, *BASE), "--alternative", "model")


@pytest.mark.parametrize("k", [5, 99])
def test_jaccard_k_not_below_the_number_of_alternatives(cli, write_csv, k):
    # before: jaccard:99 with 5 alternatives gave n* = 1 silently (every alternative is always
    # in the top 99 tiers, so the kernel is constant)
    path = write_csv(_results())
    line = assert_clear_error(cli("generalize", path, *BASE, "--goal", f"jaccard:{k}"),
                              "--goal", "5 alternatives")
    assert f"jaccard:{k}" in line or f"k={k}" in line


def test_jaccard_k_below_n_alternatives_is_fine(cli, write_csv):
    path = write_csv(_results())
    assert_ok(cli("generalize", path, *BASE, "--goal", "jaccard:4"))


@pytest.mark.parametrize("goal", ["foo", "jaccard:x", "mallows:abc", "borda", "jaccard:0",
                                  "mallows:-1"])
def test_unknown_or_malformed_goal(cli, write_csv, goal):
    path = write_csv(_results())
    assert_clear_error(cli("generalize", path, *BASE, "--goal", goal), "--goal")


def test_unknown_goal_refused_before_reading(cli, tmp_path):
    # the results file does not exist: the goal is checked first
    assert_clear_error(cli("generalize", tmp_path / "none.csv", *BASE, "--goal", "foo"),
                       "--goal")


def test_borda_unknown_alternative(cli, write_csv):
    path = write_csv(_results())
    assert_clear_error(cli("generalize", path, *BASE, "--goal", "borda:NOPE"), "--goal",
                       "NOPE")


# -- alpha* (--confidence-level), delta* (--tolerance), other options -----------------------

LEVEL = "--confidence-level"


@pytest.mark.parametrize("flag,value", [(LEVEL, "1.5"), (LEVEL, "0"), (LEVEL, "1"),
                                        (LEVEL, "x"), (LEVEL, "nan"),
                                        ("--tolerance", "0"), ("--tolerance", "1"),
                                        ("--tolerance", "-0.1"), ("--tolerance", "0.05,x"),
                                        (LEVEL, "")])
def test_level_tolerance_out_of_range(cli, tmp_path, flag, value):
    # checked before the results are read (the file does not exist)
    assert_clear_error(cli("generalize", tmp_path / "none.csv", *BASE, flag, value), flag)


@pytest.mark.parametrize("flag,value", [("--missing", "median"), ("--grid", "odd"),
                                        ("--hold", "noequals")])
def test_bad_choices(cli, tmp_path, flag, value):
    assert_clear_error(cli("generalize", tmp_path / "none.csv", *BASE, flag, value), flag)


# -- columns ------------------------------------------------------------------------------

@pytest.mark.parametrize("flag", ["--alternative", "--score", "--factor"])
def test_missing_column(cli, write_csv, flag):
    path = write_csv(_results())
    args = list(BASE)
    args[args.index(flag) + 1] = "nope"
    assert_clear_error(cli("generalize", path, *args), flag, "nope")


def test_design_missing_column_and_overlap(cli, write_csv):
    path = write_csv(_results())
    assert_clear_error(cli("generalize", path, *BASE, "--design", "nope"), "--design", "nope")
    assert_clear_error(cli("generalize", path, *BASE, "--design", "dataset"), "--design",
                       "--factor")


def test_hold_unknown_column_and_level(cli, write_csv):
    path = write_csv(_results())
    assert_clear_error(cli("generalize", path, *BASE, "--hold", "nope=1"), "--hold", "nope")
    assert_clear_error(cli("generalize", path, *BASE, "--hold", "model=zz"), "--hold", "zz")


def test_dollar_in_column_and_names_with_figures(cli, write_csv, tmp_path):
    # before: a `$` in a label reached matplotlib's mathtext parser (ParseSyntaxException)
    df = _results(alts=["$m1$", "m$2", "m3", "m4"], col="$model")
    df["$design"] = np.where(df["dataset"].isin([f"d{j}" for j in range(6)]), "$x$", "y$")
    df = pd.concat([df, df.assign(dataset=df["dataset"] + "b")])
    path = write_csv(df)
    out = tmp_path / "figs"
    assert_ok(cli("generalize", path, "--alternative", "$model", "--score", "score",
                  "--factor", "dataset", "--design", "$design", "--goal", "borda:$m1$",
                  "--goal", "mallows", "--n-resamples", "30", "--out", out))
    assert _parse_svgs(out) >= 3


# -- scores -----------------------------------------------------------------------------

def test_ties_everywhere_is_flagged(cli, write_csv):
    path = write_csv(_results().assign(score=0.5))
    code, out, err = cli("generalize", path, *BASE)
    assert_ok((code, out, err))
    assert any("tie" in w for w in _warnings(err)), err


def test_single_condition(cli, write_csv):
    path = write_csv(_results(n_cond=1))
    assert_clear_error(cli("generalize", path, *BASE), "--factor", "dataset")


def test_design_combination_with_one_condition_is_flagged(cli, write_csv):
    df = _results()
    df["tuning"] = "full"
    lone = _results(n_cond=1).assign(tuning="none")
    path = write_csv(pd.concat([df, lone]))
    code, out, err = cli("generalize", path, *BASE, "--design", "tuning")
    assert_ok((code, out, err))
    assert any("none" in w and "condition" in w for w in _warnings(err)), err


def test_alternative_without_any_score_is_flagged(cli, write_csv):
    df = _results()
    df.loc[df["model"] == "m2", "score"] = np.nan
    code, out, err = cli("generalize", write_csv(df), *BASE)
    assert_ok((code, out, err))
    assert any("m2" in w for w in _warnings(err)), err


def test_all_scores_missing(cli, write_csv):
    path = write_csv(_results().assign(score=np.nan))
    assert_clear_error(cli("generalize", path, *BASE), "--score", "score")


@pytest.mark.parametrize("bad", [np.inf, -np.inf])
def test_infinite_score_is_ranked_and_flagged(cli, write_csv, bad):
    # before: ranked silently (and -inf could share the tier of the missing results); real
    # benchmarks hold -inf (BIG-bench log-likelihoods): ranked as the worst result, flagged
    df = _results()
    df.loc[5, "score"] = bad
    code, out, err = cli("--format", "json", "generalize", write_csv(df), *BASE)
    assert_ok((code, out, err))
    assert any("infinite" in w and "data row 6" in w for w in _warnings(err)), err  # loc 5
    assert_clear_error(cli("generalize", write_csv(df), *BASE, "--goal", "rbf"), "--score")


def test_huge_score_ranks_fine_but_rbf_is_refused(cli, write_csv):
    df = _results()
    df.loc[5, "score"] = 1e308
    path = write_csv(df)
    assert_ok(cli("generalize", path, *BASE))                       # rankings only
    assert_clear_error(cli("generalize", path, *BASE, "--goal", "rbf"), "--score", "score")


def test_stray_text_in_score(cli, write_csv):
    # before: 'n/a?' became a missing evaluation ranked worst, silently
    df = _results()
    df["score"] = df["score"].astype(str)
    df.loc[7, "score"] = "n/a?"
    assert_clear_error(cli("generalize", write_csv(df), *BASE), "--score", "n/a?")


def test_text_score_column(cli, write_csv):
    df = _results()
    df["score"] = np.where(df["score"] > 0.2, "good", "bad")
    assert_clear_error(cli("generalize", write_csv(df), *BASE), "--score", "score")


def test_duplicated_results_are_averaged_and_said(cli, write_csv):
    df = _results()
    path = write_csv(pd.concat([df, df.assign(score=df["score"] + 1)]))
    code, out, err = cli("generalize", path, *BASE)
    assert_ok((code, out, err))
    assert "averaged" in err


def test_lower_is_better_reverses_the_ranks(cli, write_csv):
    # m5 has the highest scores: best by default, last with --lower-is-better
    path = write_csv(_results())
    best = {}
    for flag in ("--higher-is-better", "--lower-is-better"):
        data = json.loads(assert_ok(cli("--format", "json", "generalize", path, *BASE, flag)))
        ranks = {r["alternative"]: r["mean_rank"] for r in data["alternatives"]}
        best[flag] = min(ranks, key=ranks.get)
    assert best == {"--higher-is-better": "m5", "--lower-is-better": "m1"}


def test_numeric_looking_labels_are_kept_as_written(cli, write_csv):
    # before: '01', '1' and '1.0' were parsed as the number 1 and merged into one alternative
    df = _results(alts=["01", "1", "1.0", "2"])
    code, out, err = cli("--format", "json", "generalize", write_csv(df), *BASE)
    assert_ok((code, out, err))
    alts = {r["alternative"] for r in json.loads(out)["alternatives"]}
    assert alts == {"01", "1", "1.0", "2"}
    assert any("01" in w and "1.0" in w for w in _warnings(err)), err


def test_two_conditions(cli, write_csv):
    code, out, err = cli("generalize", write_csv(_results(n_cond=2)), *BASE)
    assert_ok((code, out, err))
    assert _warnings(err), err   # n* from a single subsample size is flagged


def test_drop_policy_leaving_nothing(cli, write_csv):
    df = _results()
    df.loc[df["model"].isin(["m1", "m2"]), "score"] = np.nan   # every condition: 3/5
    assert_clear_error(cli("generalize", write_csv(df), *BASE, "--missing", "drop",
                           "--coverage", "0.9"), "--coverage")


def test_more_alternatives_than_conditions(cli, write_csv):
    assert_ok(cli("generalize", write_csv(_results(n_alt=30, n_cond=4)), *BASE,
                  "--goal", "jaccard:1", "--goal", "mallows"))


# -- outputs -----------------------------------------------------------------------------

def test_out_writes_valid_svgs_and_csvs(cli, write_csv, tmp_path):
    out = tmp_path / "gen"
    assert_ok(cli("generalize", write_csv(_results()), *BASE, "--goal", "jaccard:1",
                  LEVEL, "0.9,0.95", "--out", out))
    assert (out / "generalize_nstar.csv").exists()
    ranks = pd.read_csv(out / "generalize_ranks.csv")
    assert ranks["rank"].min() == 1
    assert _parse_svgs(out) >= 3


@pytest.mark.parametrize("existing", ["generalize_nstar.csv", "fit_all_mallows.svg",
                                      "generalize_nstar_by_confidence_level.svg"])
def test_out_existing_outputs_refused_before_reading(cli, tmp_path, existing):
    out = tmp_path / "gen"
    out.mkdir()
    (out / existing).write_text("mine")
    # the results file does not exist: the output check comes first
    assert_clear_error(cli("generalize", tmp_path / "none.csv", *BASE, "--out", out),
                       "--out", "--overwrite")
    assert (out / existing).read_text() == "mine"


def test_out_overwrite_replaces_only_outputs(cli, write_csv, tmp_path):
    out = tmp_path / "gen"
    out.mkdir()
    (out / "generalize_nstar.csv").write_text("old")
    (out / "notes.txt").write_text("keep")
    assert_ok(cli("generalize", write_csv(_results()), *BASE, "--out", out, "--overwrite"))
    assert (out / "generalize_nstar.csv").read_text() != "old"
    assert (out / "notes.txt").read_text() == "keep"


def test_out_is_a_file(cli, write_csv, tmp_path):
    f = tmp_path / "file.txt"
    f.write_text("x")
    assert_clear_error(cli("generalize", write_csv(_results()), *BASE, "--out", f), "--out")


def _unwritable_dir(tmp_path):
    """A directory where no file can be created: chmod'ed, or /proc when running as root."""
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        (locked / "probe").write_text("x")
    except OSError:
        return locked
    (locked / "probe").unlink()
    if os.path.isdir("/proc"):
        try:
            open("/proc/replikit-probe", "w").close()
        except OSError:
            return "/proc"
    pytest.skip("no unwritable directory available")


def test_out_unwritable(cli, write_csv, tmp_path):
    locked = _unwritable_dir(tmp_path)
    assert_clear_error(cli("generalize", write_csv(_results()), *BASE, "--out",
                           os.path.join(locked, "g")), "--out")
