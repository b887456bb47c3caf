"""``replikit simulate validity``: discovery of the capabilities' studies, outputs checked
before any work, the table, the CSV and figures, JSON rows and one-line errors.

The command is exercised with small stand-in studies (the real ones run in
test_validity_suite.py); the discovery test below uses the real modules.
"""

import json
import xml.etree.ElementTree as ET

import pandas as pd
import pytest

from replikit._calibration import COLUMNS, rate_row
from replikit.cli import validity as validity_cli
from replikit.errors import ParameterError

from .test_validity_suite import CAPABILITIES as EXPECTED


class Study:
    """A stand-in ``validity`` function: records its calls, returns fixed rows."""

    def __init__(self, capability, hits=(190, 9), raises=None):
        self.capability, self.hits, self.raises, self.calls = capability, hits, raises, []

    def __call__(self, *, size="small", random_state=None, n_jobs=1):
        self.calls.append(dict(size=size, random_state=random_state, n_jobs=n_jobs))
        if self.raises is not None:
            raise self.raises
        return pd.DataFrame([
            rate_row(self.capability, "interval", "m1", f"size={size}", "coverage",
                     hits=self.hits[0], n_replications=200, nominal=0.95),
            rate_row(self.capability, "test", "m2", f"seed={random_state}", "size",
                     hits=self.hits[1], n_replications=200, nominal=0.05,
                     claim="documented")])


@pytest.fixture
def studies(monkeypatch):
    found = {"replicate": Study("replicate"), "compare": Study("compare")}
    monkeypatch.setattr(validity_cli, "providers", lambda: found)
    return found


def _one_line_error(code, err, *needles):
    assert code == 2, err
    lines = [line for line in err.strip().splitlines() if line.startswith("replikit: error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in lines[0], lines[0]


def test_the_capabilities_that_ship_a_study_are_found():
    found = validity_cli.providers()
    assert tuple(found) == EXPECTED
    assert all(callable(f) for f in found.values())


def test_runs_every_study_and_writes_table_and_figures(cli, studies, tmp_path):
    out = tmp_path / "v"
    code, stdout, err = cli("simulate", "validity", "--size", "small", "--random-state", "7",
                            "--n-jobs", "2", "--out", out)
    assert code == 0, err
    for s in studies.values():
        assert s.calls == [dict(size="small", random_state=7, n_jobs=2)]
    assert "[1/2] replicate" in err and "[2/2] compare" in err  # a progress line each
    table = pd.read_csv(out / "validity.csv")
    assert list(table.columns) == list(COLUMNS)
    assert table["capability"].tolist() == ["replicate"] * 2 + ["compare"] * 2
    assert table["estimate"].tolist() == pytest.approx([0.95, 0.045] * 2)
    for name in ("replicate", "compare"):
        assert ET.parse(out / f"validity_{name}.svg").getroot().tag.endswith("svg")
    assert "0.950 ± 0.015" in stdout and "all 2 calibrated rows lie within" in stdout


def test_json_rows(cli, studies):
    code, stdout, _ = cli("simulate", "validity", "--size", "small", "--format", "json")
    assert code == 0
    doc = json.loads(stdout)
    assert doc["size"] == "small" and doc["random_state"] == 0 and doc["n_failures"] == 0
    assert doc["capabilities"] == ["replicate", "compare"]
    assert [r["method"] for r in doc["rows"]] == ["m1", "m2", "m1", "m2"]
    assert set(doc["rows"][0]) == set(COLUMNS)


def test_capabilities_option_selects_and_orders(cli, studies, tmp_path):
    code, _, err = cli("simulate", "validity", "--capabilities", "compare", "--out",
                       tmp_path)
    assert code == 0, err
    assert studies["replicate"].calls == [] and len(studies["compare"].calls) == 1
    assert studies["compare"].calls[0]["size"] == "full"  # the default size
    assert sorted(p.name for p in tmp_path.iterdir()) == ["validity.csv",
                                                         "validity_compare.svg"]


def test_a_calibrated_row_outside_its_band_is_named(cli, studies):
    studies["compare"].hits = (150, 9)  # coverage .75 of a calibrated 95% interval
    code, stdout, err = cli("simulate", "validity", "--size", "small")
    assert code == 0
    assert "1 of 2 calibrated rows lie outside" in stdout
    assert "compare interval: m1 (size=small) coverage 0.750 outside [0.904, 0.996]" in stdout
    assert "warning: 1 calibrated row(s)" in err
    fail_lines = [line for line in stdout.splitlines() if line.rstrip().endswith("FAIL")]
    assert len(fail_lines) == 1 and fail_lines[0].startswith("compare")


def test_existing_outputs_refused_before_any_work(cli, studies, tmp_path):
    (tmp_path / "validity.csv").write_text("keep")
    code, _, err = cli("simulate", "validity", "--out", tmp_path)
    _one_line_error(code, err, "--out", "validity.csv", "--overwrite")
    assert all(s.calls == [] for s in studies.values())
    assert (tmp_path / "validity.csv").read_text() == "keep"
    code, _, err = cli("simulate", "validity", "--out", tmp_path, "--overwrite",
                       "--capabilities", "replicate")
    assert code == 0, err
    assert (tmp_path / "validity.csv").read_text() != "keep"


def test_out_is_a_file(cli, studies, tmp_path):
    (tmp_path / "f").write_text("")
    code, _, err = cli("simulate", "validity", "--out", tmp_path / "f")
    _one_line_error(code, err, "--out", "is a file")
    assert all(s.calls == [] for s in studies.values())


@pytest.mark.parametrize("value, needles", [
    ("bogus", ["--capabilities", "unknown capability 'bogus'", "replicate, compare"]),
    ("replicate,multistudy", ["--capabilities", "multistudy ships no validity study"]),
    (" , ", ["--capabilities", "names no capability"]),
])
def test_bad_capabilities(cli, studies, value, needles):
    code, _, err = cli("simulate", "validity", "--capabilities", value)
    _one_line_error(code, err, *needles)
    assert all(s.calls == [] for s in studies.values())


def test_bad_size_and_jobs(cli, studies):
    code, _, err = cli("simulate", "validity", "--size", "huge")
    _one_line_error(code, err, "--size", "huge")
    code, _, err = cli("simulate", "validity", "--n-jobs", "0")
    _one_line_error(code, err, "--n-jobs")


def test_a_study_parameter_error_names_the_flag(cli, studies):
    studies["replicate"].raises = ParameterError("`n_jobs` must be at most 64; got 99.")
    code, _, err = cli("simulate", "validity", "--n-jobs", "99")
    _one_line_error(code, err, "`--n-jobs` must be at most 64")


def test_no_study_at_all(cli, monkeypatch):
    monkeypatch.setattr(validity_cli, "providers", dict)
    code, _, err = cli("simulate", "validity")
    _one_line_error(code, err, "no capability ships a validity study")
