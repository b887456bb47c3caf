"""``replikit audit --moderator``: study-level columns for the replication
section's meta-regression, checked before any work; run_audit passes them to the section."""

import json

import numpy as np
import pandas as pd
import pytest


@pytest.fixture
def sites_csv(tmp_path):
    rng = np.random.default_rng(5)
    rows = []
    for s in range(8):
        lat = 10.0 * s
        X = rng.normal(size=(60, 2))
        y = (0.4 + 0.02 * lat) * X[:, 0] + rng.normal(size=60)
        rows.append(pd.DataFrame({"x1": X[:, 0], "x2": X[:, 1], "y": y, "site": f"s{s}",
                                  "latitude": lat, "region": "north" if s < 4 else "south"}))
    path = tmp_path / "sites.csv"
    pd.concat(rows).to_csv(path, index=False)
    return path


def _error(code, err, *needles):
    assert code == 2, err
    lines = [ln for ln in err.strip().splitlines() if ln.startswith("replikit: error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    for n in needles:
        assert n in lines[0], lines[0]


@pytest.mark.parametrize("value, needles", [
    ("nope", ("--moderator", "'nope'", "latitude")),
    ("x1", ("--moderator", "'x1'", "varies within")),
    (",", ("--moderator", "column name")),
])
def test_bad_moderators_refused_before_any_work(cli, sites_csv, tmp_path, value, needles):
    out = tmp_path / "o"
    code, _, err = cli("audit", "--data", sites_csv, "--target", "y", "--study", "site",
                       "--moderator", value, "--out", out)
    _error(code, err, *needles)
    assert not out.exists() or not any(out.iterdir())


def test_moderator_needs_studies(cli, sites_csv, tmp_path):
    code, _, err = cli("audit", "--data", sites_csv, "--target", "y", "--moderator",
                       "latitude", "--out", tmp_path / "o")
    _error(code, err, "--moderator", "--study")


def test_given_moderators_reach_the_replication_section(cli, sites_csv, tmp_path):
    out = tmp_path / "o"
    code, stdout, err = cli("--format", "json", "audit", "--data", sites_csv, "--target", "y",
                            "--study", "site", "--sections", "replicate", "--quick",
                            "--moderator", "latitude", "--out", out)
    assert code == 0, err
    doc = json.loads(open(json.loads(stdout)["json"], encoding="utf-8").read())
    sec = next(s for s in doc["sections"] if s["key"] == "replicate")
    assert sec["data"]["moderators"] == ["latitude"]
    assert sec["data"]["moderator_source"] == "given"
