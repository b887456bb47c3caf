"""Every public result of replikit.multistudy keeps the contract of a result (DESIGN.md).

``FACTORIES`` builds a small real instance of each result type (``tests/core/
test_result_base.py`` checks that every public result type is built here), and ``NO_METHOD``
lists the public functions that compute no statistical method, so cite no paper.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import pytest

from _checks import check_result


@functools.cache
def _data():
    from replikit.multistudy import from_arrays

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 240)
    pred = np.where(rng.random(240) < 0.8, y, 1 - y)
    proba = np.clip(np.where(pred == 1, 0.75, 0.25) + rng.normal(0, 0.05, 240), 0.01, 0.99)
    return from_arrays(y, pred, np.repeat(["a", "b", "c"], 80), proba=proba)


@functools.cache
def _assessment():
    from replikit.multistudy import PermutationMethod, assess

    return assess(_data(), "accuracy", n_resamples=50, permutation=PermutationMethod(49),
                  tolerance=0.1, random_state=0)


@functools.cache
def _regression():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(90, 2))
    y = X[:, 0] + rng.normal(size=90) * 0.3
    return X, y, np.repeat(["s1", "s2", "s3"], 30)


def _utilities():
    from replikit.multistudy import study_utilities

    return study_utilities(_data(), "accuracy")


def _dominance():
    from replikit.multistudy import dominance, from_arrays, study_utilities

    s = ["x", "x", "y", "y"]
    a = study_utilities(from_arrays([1, 1, 1, 1], [1, 1, 1, 0], s))
    b = study_utilities(from_arrays([1, 1, 1, 1], [1, 0, 0, 0], s))
    return dominance(a, b, names=("lr", "rf"))


def _benchmark():
    from replikit.multistudy import benchmark_comparison

    return benchmark_comparison(_data(), 0.75, tolerance=0.1)


def _cross_study():
    from sklearn.linear_model import LinearRegression

    from replikit.multistudy import cross_study_matrix

    X, y, s = _regression()
    return cross_study_matrix(LinearRegression(), X, y, s, n_folds=3, random_state=0)


def _loso():
    from sklearn.linear_model import LinearRegression

    from replikit.multistudy import leave_one_study_out

    X, y, s = _regression()
    return leave_one_study_out(LinearRegression(), X, y, s, random_state=0)


def _stacking():
    from sklearn.linear_model import LinearRegression

    from replikit.multistudy import multistudy_stacking

    X, y, s = _regression()
    return multistudy_stacking(LinearRegression(), X, y, s, random_state=0)


def _epsilon_test():
    from replikit.multistudy import epsilon_test

    return epsilon_test(_assessment(), tolerance=0.15)


def _replicated_in():
    from replikit.multistudy import replicated_in

    t = pd.DataFrame({"study": ["s1", "s2", "s3"] * 2,
                      "finding": ["lr beats rf"] * 3 + ["rf beats lr"] * 3,
                      "pvalue": [0.001, 0.004, 0.02, 0.9, 0.7, 0.99]})
    return replicated_in(t)


@functools.cache
def _audit():
    from sklearn.linear_model import LinearRegression, Ridge

    from replikit.data.userdata import dataset_from_frame
    from replikit.multistudy import audit

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.normal(size=120), "site": np.repeat(["a", "b", "c"], 40)})
    df["y"] = 30 * df.x + rng.normal(size=120) * 30
    return audit(dataset_from_frame(df, target="y", study="site"),
                 models={"lr": LinearRegression(), "ridge": Ridge()}, quick=True,
                 random_state=0)


@functools.cache
def _survival():
    from replikit.data.examples import uis
    from replikit.experiment.models import make_model
    from replikit.multistudy import audit_survival

    ex = uis()
    return audit_survival(ex.X, ex.outcome, ex.study, random_state=0,
                          models={"cox": make_model("cox", "survival")})


FACTORIES = {
    "SurvivalCrossStudy": _survival,
    "StudyUtilities": _utilities,
    "DistanceMatrix": lambda: _assessment().distance,
    "DominanceResult": _dominance,
    "BenchmarkComparison": _benchmark,
    "ResampleResult": lambda: _assessment().bootstrap,
    "PermutationResult": lambda: _assessment().permutation_utility,
    "CrossStudyResult": _cross_study,
    "LeaveOneStudyOutResult": _loso,
    "StackingResult": _stacking,
    "Assessment": _assessment,
    "EpsilonTest": _epsilon_test,
    "ReplicatedIn": _replicated_in,
    "MultiStudyAudit": _audit,
}

#: Public functions of replikit.multistudy that compute no statistical method.
NO_METHOD = {
    "from_arrays": "builds the units of several studies from arrays",
    "from_estimator": "applies a fitted estimator to every study",
    "from_predictions": "reads the units of one rule from a Predictions table",
    "load_predictions": "reads a Predictions table from a file",
    "study_labels_as_text": "writes study labels as text",
    "parse_utility": "a parser of utility names",
    "custom_utility": "wraps a user's function as a utility",
    "check_utility_data": "an input check",
    "get_metric": "a parser of metric names",
}


@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_contract(name):
    check_result(FACTORIES[name]())


def test_test_results_share_statistic_pvalue_alternative():
    for result in (_assessment(), _assessment().permutation_utility, _epsilon_test(), _audit()):
        assert np.isfinite(result.statistic) and 0 <= result.pvalue <= 1
        assert result.alternative in ("greater", "less")


def test_plots_draw_the_results():
    from replikit._plotting import new_axes

    for result in (_utilities(), _assessment().distance, _dominance(), _epsilon_test(),
                   _cross_study(), _assessment(), _audit(), _survival()):
        ax = result.plot(ax=new_axes())
        labels = [ax.get_xlabel(), ax.get_ylabel(), ax.get_title()]
        assert all("_" not in t.replace("U_k", "").replace("U_a", "").replace("U_b", "")
                   .replace("F_a", "").replace("F_b", "") for t in labels), labels


def test_verdict_labels_its_key_number_in_plain_notation():
    v = _audit().verdict
    assert v.label == "largest difference between studies, mean squared error"
    assert "e+0" not in v.sentence and "e-0" not in v.sentence
    # the squared errors here are in the hundreds: numbers are written whole with separators
    assert "on a mean squared error of about" in v.sentence
