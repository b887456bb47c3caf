"""``replikit compare --predictions``: two fitted models on one test set (paired bootstrap,
randomization), the numbers equal to the library's, errors naming flags."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest


@pytest.fixture
def predictions(tmp_path):
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 150)
    rows = []
    for model, acc in (("rf", 0.9), ("lr", 0.75)):
        pred = np.where(rng.random(150) < acc, y, 1 - y)
        rows.append(pd.DataFrame({"study": "s", "model": model, "repeat": 0, "fold": 0,
                                  "row": np.arange(150), "y_true": y, "y_pred": pred}))
    path = tmp_path / "preds.csv"
    pd.concat(rows).to_csv(path, index=False)
    return path


def test_paired_bootstrap_and_randomization_from_the_command_line(cli, predictions):
    from replikit.compare import (
        paired_bootstrap_test_from_predictions,
        randomization_test_from_predictions,
    )

    code, out, err = cli("--format", "json", "compare", "--predictions", predictions,
                         "--a", "rf", "--b", "lr", "--test", "paired-bootstrap,randomization",
                         "--scoring", "f1", "--n-resamples", "500", "--random-state", "3")
    assert code == 0, err
    rows = json.loads(out)
    assert [r["test"] for r in rows] == ["paired_bootstrap", "randomization"]
    frame = pd.read_csv(predictions)
    boot = paired_bootstrap_test_from_predictions(frame, ["rf", "lr"], scoring="f1",
                                                  n_resamples=500, random_state=3)
    rand = randomization_test_from_predictions(frame, ["rf", "lr"], scoring="f1",
                                               n_resamples=500, random_state=3)
    assert rows[0]["pvalue"] == pytest.approx(boot.pvalue)
    assert rows[0]["ci_low"] == pytest.approx(boot.confidence_interval().low)
    assert rows[1]["pvalue"] == pytest.approx(rand.pvalue)
    assert rows[0]["n_resamples"] == 500 and rows[0]["pvalue_mcse"] > 0
    code, out, err = cli("compare", "--predictions", predictions, "--a", "rf", "--b", "lr",
                         "--n-resamples", "200")
    assert code == 0, err
    assert "Paired bootstrap test" in out and "Monte Carlo SE of p" in out


def test_errors_name_the_flags(cli, predictions):
    code, _, err = cli("compare", "--predictions", predictions, "--a", "rf", "--b", "lr",
                       "--test", "mcnemar")
    assert code == 2 and "`--test` with --predictions" in err
    code, _, err = cli("compare", "--predictions", predictions, "--a", "rf", "--b", "lr",
                       "--n-resamples", "10")
    assert code == 2 and "`--n-resamples` must be >= 100" in err
    code, _, err = cli("compare", "--predictions", predictions, "--a", "rf", "--b", "lr",
                       "--scoring", "f2")
    assert code == 2 and "`--scoring` must be one of" in err
    code, _, err = cli("compare", "--predictions", predictions, "--a", "rf")
    assert code == 2 and "`--a` and `--b`" in err
    assert "Traceback" not in err
