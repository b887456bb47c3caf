"""``replikit audit`` from results already made: --scores, --predictions, --benchmark,
--estimates. The run says which entry it used; bad input gets one line on stderr naming the flag
or column, exit code 2, before any work and before any file is written."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from replikit.cli._common import OutputFormat, state
from replikit.data.examples import score_export


@pytest.fixture(autouse=True)
def _human():
    yield
    state.format, state.quiet = OutputFormat.human, False


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("entries")
    pd.DataFrame({"dataset": [f"d{i}" for i in range(6)],
                  "a": [0.81, 0.77, 0.90, 0.66, 0.72, 0.85],
                  "b": [0.79, 0.78, 0.88, 0.61, 0.70, 0.80]}).to_csv(d / "bench.csv",
                                                                     index=False)
    pd.DataFrame({"study": ["orig", "rep1", "rep2"], "r2": [0.31, 0.25, 0.28],
                  "n": [400, 650, 520], "role": ["original", "replication", "replication"]}
                 ).to_csv(d / "estimates.csv", index=False)
    return d


def test_scores_entry_says_what_it_read(cli, tmp_path):
    out_dir = tmp_path / "audit"
    code, out, err = cli("--format", "json", "audit", "--scores", score_export("mlr3"),
                         "--sections", "overview", "--out", out_dir)
    assert code == 0, err
    assert "Auditing mlr3_nwtco_scores.csv: per-fold scores" in err
    assert "read as an mlr3 benchmark export" in err
    report = json.loads((out_dir / "report.json").read_text())
    assert report["meta"]["entry"] == "scores"
    assert report["sections"][0]["data"]["scheme"] == "kfold"
    assert json.loads(out)["cards"] == report["summary"]["cards"]


@pytest.mark.parametrize(("args", "flag"), [
    (("--benchmark", "{d}/bench.csv", "--scheme", "kfold"), "`--scheme` does not apply"),
    (("--benchmark", "{d}/bench.csv", "--scores", "{d}/bench.csv"), "give one input"),
    (("--benchmark", "{d}/bench.csv", "--models", "lr,rf"), "`--models` goes with --data"),
    (("--benchmark", "{d}/bench.csv", "--study", "site"), "`--study` names a column"),
    (("--estimates", "{d}/estimates.csv", "--original", "rep1"), "`--original`: the table"),
    (("--scores", "{d}/bench.csv", "--test-fraction", "2"), "`--test-fraction` must be"),
    (("--scores", "{d}/bench.csv"), "scores: the columns match no layout"),
    (("--target", "y"), "`--target` describes an input"),
    (("--benchmark", "{d}/missing.csv"), "missing.csv"),
])
def test_bad_entries_fail_in_one_line(cli, files, tmp_path, args, flag):
    out_dir = tmp_path / "never"
    code, out, err = cli("audit", *[a.format(d=files) for a in args], "--out", out_dir)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("replikit: error:"), err
    assert flag in lines[0]
    assert not out_dir.exists() or not any(out_dir.iterdir())


def test_estimates_entry_reports_the_original(cli, files, tmp_path):
    code, out, err = cli("audit", "--estimates", files / "estimates.csv", "--sections",
                         "overview", "--out", tmp_path / "o")
    assert code == 0, err
    assert "original: orig" in err
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert report["sections"][0]["data"]["original"] == "orig"


@pytest.mark.parametrize(("example", "entry"), [("mlr3", "scores"), ("demsar", "benchmark"),
                                                ("estimates", "estimates")])
def test_shipped_samples_audit_by_name(cli, tmp_path, example, entry):
    code, out, err = cli("audit", "--example", example, "--sections", "overview",
                         "--out", tmp_path / "o")
    assert code == 0, err
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert report["meta"]["entry"] == entry
