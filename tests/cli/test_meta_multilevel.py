"""``replikit meta --clusters ... --robust ...``: the multilevel meta-analysis from the command
line, its outputs and one-line errors."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

REF = Path(__file__).parents[1] / "reference" / "replicate"
KONST = REF / "dat_konstantopoulos2011.csv"

FOLDS = pd.DataFrame({"study": list("aabbccdd"), "fold": [1, 2] * 4,
                      "yi": [0.10, 0.30, 0.20, 0.50, 0.40, 0.60, 0.00, 0.20],
                      "vi": [0.01] * 8})


def _error_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.startswith("replikit: error:")]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def test_clusters_fit_rma_mv(cli, tmp_path):
    path = tmp_path / "folds.csv"
    FOLDS.to_csv(path, index=False)
    code, out, err = cli("--format", "json", "meta", path, "--clusters", "study,fold",
                         "--robust", "cr2")
    assert code == 0, err
    data = json.loads(out)
    rows = {r["quantity"]: r for r in data["result"]}
    # d <- read.csv("folds.csv"); f <- rma.mv(yi, vi, random = ~ 1 | study/fold, data = d)
    # cat(f$sigma2, f$beta, f$se): 0.017500000193662 0.0162500001374194 0.2875
    # 0.0875000003748166
    assert rows["sigma2.study"]["estimate"] == pytest.approx(0.0175, rel=1e-6)
    assert rows["sigma2.fold"]["estimate"] == pytest.approx(0.01625, rel=1e-6)
    assert rows["intercept"]["estimate"] == pytest.approx(0.2875, rel=1e-10)
    assert rows["intercept"]["se"] == pytest.approx(0.0875, rel=1e-6)
    # robust(f, cluster = study, clubSandwich = TRUE): se 0.0875, dfs 3, pval 0.0462266735370049
    rob = data["robust"][0]
    assert rob["se"] == pytest.approx(0.0875, rel=1e-6)
    assert rob["df"] == pytest.approx(3, rel=1e-8)
    assert rob["pvalue"] == pytest.approx(0.0462266735370049, rel=1e-6)


def test_human_output_and_files(cli, tmp_path):
    code, out, err = cli("meta", KONST, "--effect", "yi", "--clusters", "district,school",
                         "--robust", "CR1", "--out", tmp_path)
    assert code == 0, err
    assert "σ² district (11 clusters)" in out and "CR1" in out
    table = pd.read_csv(tmp_path / "multilevel.csv")
    assert table["quantity"].tolist() == ["intercept", "sigma2.district", "sigma2.school"]
    # rma.mv(yi, vi, random = ~ 1 | district/school): beta 0.18471316367288151
    np.testing.assert_allclose(table["estimate"][0], 0.18471316367288151, rtol=1e-6)
    robust = pd.read_csv(tmp_path / "robust.csv")
    # robust(f, cluster = district): se 0.0845022171523695, df 10
    np.testing.assert_allclose(robust["se"][0], 0.0845022171523695, rtol=1e-6)
    assert robust["df"][0] == 10


def test_ml_t_and_moderators(cli, tmp_path):
    path = tmp_path / "folds.csv"
    FOLDS.assign(x=np.arange(8.0)).to_csv(path, index=False)
    code, out, err = cli("--format", "json", "meta", path, "--clusters", "study",
                         "--tau2-method", "ml", "--interval", "t", "--moderator", "x")
    assert code == 0, err
    rows = json.loads(out)["result"]
    assert [r["quantity"] for r in rows] == ["intercept", "x", "sigma2.study"]
    assert rows[0]["df"] == 6


@pytest.mark.parametrize("args, words", [
    (["--clusters", "nope"], "`--clusters`: column 'nope'"),
    (["--robust", "CR1"], "`--robust` needs `--clusters`"),
    (["--clusters", "study", "--robust", "CR3"], "`--robust` must be one of CR1, CR2"),
    (["--clusters", "study", "--funnel"], "`--funnel` does not go with `--clusters`"),
    (["--clusters", "study", "--tau2-method", "DL"], "`--tau2-method`"),
    (["--clusters", "study", "--interval", "knha"], "`--interval`"),
])
def test_errors_are_one_line(cli, tmp_path, args, words):
    path = tmp_path / "folds.csv"
    FOLDS.to_csv(path, index=False)
    code, _, err = cli("meta", path, *args)
    assert code == 2
    assert words in _error_line(err)


def test_one_outer_cluster_is_refused(cli, tmp_path):
    path = tmp_path / "one.csv"
    FOLDS.assign(study="a").to_csv(path, index=False)
    code, _, err = cli("meta", path, "--clusters", "study")
    assert code == 2
    assert "at least 2 clusters" in _error_line(err)
