"""The command line: version, exit codes, one-line errors, the audit command on small data."""

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from replikit import __version__
from replikit.cli import main


@pytest.fixture
def small_csv(tmp_path):
    rng = np.random.default_rng(0)
    n = 120
    df = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.normal(size=n),
                       "site": np.repeat(["north", "<script>alert(1)</script>"], n // 2)})
    df["y"] = df.x1 + 0.5 * rng.normal(size=n)
    df["label"] = np.where(df.y > 0, "pos", "neg")
    path = tmp_path / "x.csv"
    df.to_csv(path, index=False)
    return path


def test_version(cli):
    code, out, _ = cli("--version")
    assert code == 0 and out.strip() == f"replikit {__version__}"


def _one_line_error(code, err, *needles):
    assert code == 2
    lines = [line for line in err.strip().splitlines() if line.startswith("replikit: error:")]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0]


def test_unknown_target_lists_columns(cli, small_csv, tmp_path):
    code, _, err = cli("audit", "--data", str(small_csv), "--target", "nope",
                           "--out", str(tmp_path / "o"))
    _one_line_error(code, err, "nope", "x1, x2, site, y, label")


def test_missing_file(cli, tmp_path):
    code, _, err = cli("audit", "--data", str(tmp_path / "missing.csv"), "--target", "y",
                       "--out", str(tmp_path / "o"))
    _one_line_error(code, err, "missing.csv", "does not exist")


def test_empty_file(cli, tmp_path):
    (tmp_path / "e.csv").write_text("")
    code, _, err = cli("audit", "--data", str(tmp_path / "e.csv"), "--target", "y",
                       "--out", str(tmp_path / "o"))
    _one_line_error(code, err, "empty")


def test_non_numeric_target_for_regression(cli, small_csv, tmp_path):
    code, _, err = cli("audit", "--data", str(small_csv), "--target", "label", "--task",
                       "regression", "--out", str(tmp_path / "o"))
    _one_line_error(code, err, "`--target`", "label", "must be numeric for regression")


def test_single_study(cli, tmp_path):
    df = pd.DataFrame({"x": np.arange(20.0), "y": np.arange(20.0) ** 0.5, "s": "one"})
    df.to_csv(tmp_path / "one.csv", index=False)
    code, _, err = cli("audit", "--data", str(tmp_path / "one.csv"), "--target", "y",
                       "--study", "s", "--out", str(tmp_path / "o"))
    _one_line_error(code, err, "`--study`", "1 distinct study")


def test_usage_error_is_one_line(cli):
    code, _, err = cli("audit", "--no-such-option")
    _one_line_error(code, err, "--no-such-option")


def test_debug_shows_traceback(tmp_path):
    from replikit.errors import InputFileError

    with pytest.raises(InputFileError):
        main(["--debug", "audit", "--data", str(tmp_path / "x.csv"), "--target", "y",
              "--out", str(tmp_path / "o")])


def test_audit_user_data_escapes_and_json(cli, small_csv, tmp_path):
    out_dir = tmp_path / "audit"
    code, out, _ = cli("--quiet", "--format", "json", "audit", "--data", str(small_csv),
                           "--target", "y", "--study", "site", "--out", str(out_dir),
                           "--sections", "overview", "--quick")
    assert code == 0
    paths = json.loads(out)
    html = open(paths["html"], encoding="utf-8").read()
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "http://" not in html and "https://" not in html
    report = json.loads(open(paths["json"], encoding="utf-8").read())
    overview = report["sections"][0]
    assert overview["data"]["n_rows"] == 120 and overview["data"]["n_studies"] == 2
    studies = {r["study"] for r in overview["tables"]["table_0"]["rows"]}
    assert "<script>alert(1)</script>" in studies  # JSON keeps the raw name


def test_unknown_section(cli, small_csv, tmp_path):
    code, _, err = cli("audit", "--data", str(small_csv), "--target", "y",
                       "--sections", "nonsense", "--out", str(tmp_path / "o"))
    _one_line_error(code, err, "nonsense", "overview")


def test_python_dash_m_entry_point():
    proc = subprocess.run([sys.executable, "-m", "replikit", "--version"], capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 0 and proc.stdout.strip() == f"replikit {__version__}"
