"""The audit section of the resampling capability (quick mode, small data)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from replikit.data.userdata import Dataset
from replikit.experiment.models import make_models
from replikit.report.context import AuditContext
from replikit.report.sections.resampling import SECTION


def _dataset(task):
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(300, 4)), columns=list("abcd"))
    if task == "regression":
        y = pd.Series(2 * X["a"] + rng.normal(size=300), name="y")
    else:
        y = pd.Series((X["a"] + rng.normal(size=300) > 0).astype(int), name="y")
    return Dataset("toy", X, y, None, task, 0)


def test_section_regression_default_models():
    out = SECTION.build(AuditContext(_dataset("regression"), quick=True, random_state=1))
    assert SECTION.order == 10 and out.key == "resampling" and not out.skipped
    table = out.blocks[-1].frame
    assert list(table["model"]) == ["lr", "rf", "dummy"]
    assert list(table["fit path"]) == ["fast", "generic", "fast"]
    # the random forest fits its training rows much better than new rows
    rf = table.set_index("model").loc["rf"]
    assert rf["optimism (CV − resub.)"] > 0
    assert any(b.kind == "figure" and b.svg.startswith("<svg") for b in out.blocks)
    assert len(out.data["estimates"]) == 15
    data = out.json()["data"]
    assert data["loss"] == "squared"
    # the section shows the audit entry's verdict and notes, and keeps timings apart
    assert data["verdict"]["metric"] == "mean squared error"
    assert data["verdict"]["sentence"] in [b.text for b in out.blocks if b.kind == "callout"]
    assert data["notes"] and set(data["model_seconds"]) == {"lr", "rf", "dummy"}
    assert not any("seconds" in row for row in data["estimates"])


def test_section_classification_with_lda():
    ds = _dataset("classification")
    out = SECTION.build(AuditContext(ds, models=make_models("lda,tree", "classification"),
                                     quick=True))
    table = out.blocks[-1].frame.set_index("model")
    est = table.drop(columns=["rows used", "fit path", "K-fold 95% interval"]).drop(
        columns=["optimism (CV − resub.)"]).to_numpy(float)
    assert table["K-fold 95% interval"].str.match(r"\[.*\] \((nested CV|naive)\)").all()
    assert np.all(np.isfinite(est)) and np.all(est >= 0)  # losses (0/1 or log)
    # LDA's batched fit gives labels; its probabilities (log loss) go through the generic path
    loss = out.json()["data"]["loss"]
    assert table.loc["lda", "fit path"] == ("fast" if loss == "zero_one" else "generic")
