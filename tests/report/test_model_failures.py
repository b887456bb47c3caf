"""A model that cannot fit the data costs the audit that model, not the section: the section
runs with the others and says which model was left out and why (HTML callout, JSON, card)."""

import json

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.dummy import DummyRegressor
from sklearn.linear_model import LinearRegression, Ridge

from replikit.data.userdata import dataset_from_frame
from replikit.report import run_audit


class Refuses(RegressorMixin, BaseEstimator):
    def fit(self, X, y):
        raise ValueError("this solver does not support these data")

    def predict(self, X):  # pragma: no cover - never fitted
        return np.zeros(len(X))


def test_failing_model_is_left_out_of_the_section_not_the_section(tmp_path):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 3))
    frame = pd.DataFrame(X, columns=list("abc"))
    frame["y"] = X @ [1.0, -0.5, 0.2] + rng.normal(size=300)
    frame["site"] = np.repeat([f"s{i}" for i in range(6)], 50)
    ds = dataset_from_frame(frame, target="y", study="site")
    models = {"lr": LinearRegression(), "bad": Refuses(), "ridge": Ridge(),
              "dummy": DummyRegressor()}
    rep = run_audit(ds, tmp_path, models=models, sections=["compare"], quick=True,
                    random_state=0)
    doc = json.loads(rep.json_path.read_text())
    sec = next(s for s in doc["sections"] if s["key"] == "compare")
    assert not sec.get("skipped")
    assert set(sec["data"]["models_left_out"]) == {"bad"}
    assert "does not support these data" in sec["data"]["models_left_out"]["bad"]
    card = next(c for c in doc["summary"]["cards"] if c["key"] == "compare")
    assert "bad could not be fitted" in card["caveats"][0]
    html = rep.html_path.read_text()
    assert "Left out of this section: bad" in html
    # the comparison itself ran on the other three models
    assert "bad" not in json.dumps(sec["data"].get("verdict", {}).get("sentence", ""))


def test_two_models_left_then_the_section_is_skipped(tmp_path):
    rng = np.random.default_rng(3)
    frame = pd.DataFrame(rng.normal(size=(200, 2)), columns=["a", "b"])
    frame["y"] = frame["a"] + rng.normal(size=200)
    ds = dataset_from_frame(frame, target="y")
    rep = run_audit(ds, tmp_path, models={"lr": LinearRegression(), "bad": Refuses()},
                    sections=["compare"], quick=True, random_state=0)
    assert [s.key for s in rep.skipped] == ["compare"]
    assert "does not support these data" in rep.skipped[0].skipped
