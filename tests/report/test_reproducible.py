"""The audit is reproducible: the same seed gives the same numbers, serial or with workers."""

import json

import numpy as np
import pandas as pd
import pytest

from replikit.data.userdata import dataset_from_frame
from replikit.report import run_audit

pytestmark = pytest.mark.slow


def _numbers(path):
    doc = json.loads(path.read_text())
    meta = doc["meta"]
    for k in ("seconds", "section_seconds", "fit_seconds", "command"):
        meta.pop(k, None)
    for s in doc["sections"]:
        for k in list(s["data"]):
            if "seconds" in k:
                s["data"].pop(k)
    return json.dumps(doc, sort_keys=True)


def test_same_seed_same_report_serial_and_two_workers(tmp_path):
    rng = np.random.default_rng(0)
    n = 400
    df = pd.DataFrame(rng.normal(size=(n, 4)), columns=list("abcd"))
    df["y"] = df.a - df.b + 0.5 * rng.normal(size=n)
    df["site"] = np.repeat(["s1", "s2", "s3", "s4"], n // 4)
    ds = dataset_from_frame(df, target="y", study="site")
    from replikit.experiment.models import make_models

    runs = []
    for i, n_jobs in enumerate([1, 2]):
        models = make_models("lr,rf,dummy", "regression")
        # a random forest is the model whose fits depend on the seed each task is given; 20
        # trees draw bootstrap rows and split features as 100 do, at a fifth of the time
        models["rf"].set_params(n_estimators=20)
        rep = run_audit(ds, tmp_path / f"r{i}", models=models,
                        random_state=7, n_jobs=n_jobs, quick=True,
                        sections=["resampling", "compare", "replicate", "multistudy",
                                  "generalize"])
        assert not rep.skipped, [s.skipped for s in rep.skipped]
        runs.append(_numbers(rep.json_path))
    assert runs[0] == runs[1]
