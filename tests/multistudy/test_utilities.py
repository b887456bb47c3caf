"""Utilities per study (Parmigiani 2023, eqs. 1-4): closed forms on hand-built tables."""

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import brier_score_loss, log_loss, mean_absolute_error, mean_squared_error

from replikit.errors import DataError, ParameterError, ParameterTypeError
from replikit.multistudy import (
    error_cost,
    from_arrays,
    optimal_threshold,
    parse_utility,
    study_utilities,
)
from replikit.multistudy.utilities import custom_utility


def _table(cells_a, cells_b):
    """Two studies from confusion counts {(phi, y): count}."""
    y, p, s = [], [], []
    for name, cells in (("A", cells_a), ("B", cells_b)):
        for (phi, yy), c in cells.items():
            y += [yy] * c
            p += [phi] * c
            s += [name] * c
    return from_arrays(y, p, s)


def test_accuracy_and_cost_closed_form():
    d = _table({(0, 0): 50, (0, 1): 10, (1, 0): 5, (1, 1): 35},
               {(0, 0): 20, (0, 1): 4, (1, 0): 6, (1, 1): 10})
    acc = study_utilities(d, "accuracy")
    assert acc.utility.tolist() == pytest.approx([0.85, 0.75])
    u01, u10 = -5.0, -1.0
    cost = study_utilities(d, error_cost(u01, u10))
    # eq. 4: U_k = u01 f01 + u10 f10
    assert cost.utility.tolist() == pytest.approx([u01 * 0.10 + u10 * 0.05, u01 * 0.10 + u10 * 0.15])
    t = cost.table.set_index("study")
    assert t.loc["A", "f01"] == pytest.approx(0.10)
    assert t.loc["B", "f10"] == pytest.approx(0.15)
    # decomposition: f01 = prev (1 - sens), f10 = (1 - prev)(1 - spec)
    for k in "AB":
        r = t.loc[k]
        assert r.f01 == pytest.approx(r.prevalence * (1 - r.sensitivity))
        assert r.f10 == pytest.approx((1 - r.prevalence) * (1 - r.specificity))
    assert cost.smallest_tolerance() == pytest.approx(0.10)
    assert cost.is_replicable(0.1) and not cost.is_replicable(0.099)
    m = cost.matrix().to_numpy()
    assert np.allclose(m, -m.T) and np.all(np.diag(m) == 0)


def test_relative_epsilon_closed_form():
    d = _table({(1, 1): 8, (0, 1): 2}, {(1, 1): 6, (0, 1): 4})
    su = study_utilities(d, "accuracy")
    assert su.smallest_tolerance("relative") == pytest.approx(2 * 0.2 / 1.4)


def test_squared_absolute_log_match_sklearn():
    rng = np.random.default_rng(0)
    y = rng.normal(size=60)
    p = y + rng.normal(size=60)
    s = np.repeat(["a", "b", "c"], 20)
    d = from_arrays(y, p, s)
    sq = study_utilities(d, "squared").utility
    ab = study_utilities(d, "absolute").utility
    for k, lab in enumerate("abc"):
        m = s == lab
        assert -sq[k] == pytest.approx(mean_squared_error(y[m], p[m]))
        assert -ab[k] == pytest.approx(mean_absolute_error(y[m], p[m]))
    yb = rng.integers(0, 2, 60)
    pr = rng.uniform(0.05, 0.95, 60)
    db = from_arrays(yb, (pr > 0.5).astype(int), s, proba=pr)
    ls = study_utilities(db, "log").utility
    for k, lab in enumerate("abc"):
        m = s == lab
        assert -ls[k] == pytest.approx(log_loss(yb[m], pr[m], labels=[0, 1]))
    br = study_utilities(db, "brier").utility
    for k, lab in enumerate("abc"):
        m = s == lab
        assert -br[k] == pytest.approx(brier_score_loss(yb[m], pr[m]))


def test_brier_three_classes_is_half_the_summed_squared_error():
    rng = np.random.default_rng(1)
    proba = rng.dirichlet([1.0, 1.0, 1.0], size=30)
    y = rng.integers(0, 3, 30)
    d = from_arrays(y, proba.argmax(1), np.repeat(["a", "b"], 15), proba=proba)
    u = study_utilities(d, "brier").utility
    onehot = np.eye(3)[y]
    per_unit = 0.5 * ((proba - onehot) ** 2).sum(axis=1)
    assert -u[0] == pytest.approx(per_unit[:15].mean())
    assert np.all((u >= -1) & (u <= 0))


def test_bayes_threshold_is_optimal_for_calibrated_user():
    u01, u10 = -4.0, -1.0
    t = optimal_threshold([0.1], [0], u01, u10)
    assert t == pytest.approx(u10 / (u01 + u10))
    # expected utility for a calibrated user: predicting 1 iff p >= t beats every other cut
    p = np.linspace(0.001, 0.999, 999)
    eu = lambda cut: np.mean(np.where(p >= cut, (1 - p) * u10, p * u01))  # noqa: E731
    best = max(np.linspace(0, 1, 401), key=eu)
    assert eu(t) >= eu(best) - 1e-12


def test_empirical_threshold_maximizes_empirical_utility():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 200)
    score = np.clip(0.3 * y + rng.uniform(0, 0.7, 200), 0, 1)
    u01, u10 = -3.0, -1.0
    t = optimal_threshold(score, y, u01, u10, method="empirical")
    util = lambda c: np.mean(u01 * ((score < c) & (y == 1)) + u10 * ((score >= c) & (y == 0)))  # noqa: E731
    cands = np.concatenate([np.unique(score), [1.01]])
    assert util(t) == pytest.approx(max(util(c) for c in cands))


def test_user_probability_model_threshold():
    # user believes pi(s) = s**2: Bayes threshold 0.25 on pi means s = 0.5
    t = optimal_threshold([0.1], [0], -1.0, -1.0 / 3.0, user_probability=lambda s: s**2)
    assert t == pytest.approx(0.5, abs=1e-9)


def test_threshold_on_risk_scores_changes_decisions():
    s = np.repeat(["a", "b"], 4)
    y = np.array([1, 0, 1, 0, 1, 0, 1, 0])
    pr = np.array([0.3, 0.1, 0.9, 0.4, 0.25, 0.2, 0.6, 0.05])
    d = from_arrays(y, (pr >= 0.5).astype(int), s, proba=pr)
    su = study_utilities(d, error_cost(-3, -1, threshold="bayes"))  # threshold 0.25
    assert su.threshold == pytest.approx(0.25)
    # a: decisions 1,0,1,1 -> one false alarm; b: 1,0,1,0 -> no error
    assert su.utility.tolist() == pytest.approx([-0.25, 0.0])


def test_custom_utility_and_parse():
    d = from_arrays([1.0, 2.0, 3.0, 4.0], [1.0, 2.0, 2.0, 2.0], ["a", "a", "b", "b"])
    u = custom_utility(lambda pred, X, y: -(np.abs(y - pred) > 0.5).astype(float), "miss")
    assert study_utilities(d, u).utility.tolist() == [0.0, -1.0]
    assert parse_utility("cost:-2,-1").u10 == -1.0
    with pytest.raises(ParameterError, match="u01"):
        parse_utility("cost:2,-1")
    with pytest.raises(ParameterError, match="cost:u01,u10"):
        parse_utility("cost:abc")
    with pytest.raises(ParameterError, match="utility"):
        parse_utility("nonsense")
    with pytest.raises(ParameterTypeError):
        parse_utility(3)


def test_input_errors():
    with pytest.raises(DataError, match="same length"):
        from_arrays([1, 0], [1], ["a", "b"])
    d = from_arrays([0, 1, 2], [0, 1, 1], ["a", "b", "b"])
    with pytest.raises(DataError, match="binary"):
        study_utilities(d, "cost:-1,-1")
    with pytest.raises(DataError, match="probabilities"):
        study_utilities(d, "log")


def test_predictions_table_input_and_model_choice():
    f = pd.DataFrame({"study": ["a", "a", "b", "b"] * 2, "model": ["m1"] * 4 + ["m2"] * 4,
                      "repeat": 0, "fold": 0, "row": [0, 1, 2, 3] * 2,
                      "y_true": [1, 0, 1, 0] * 2, "y_pred": [1, 0, 0, 0, 1, 1, 1, 1]})
    with pytest.raises(ParameterError, match="model"):
        study_utilities(f)
    assert study_utilities(f, model="m1").utility.tolist() == [1.0, 0.5]
    assert study_utilities(f, model="m2").utility.tolist() == [0.5, 0.5]
