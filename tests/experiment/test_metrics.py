import numpy as np
import pytest
from sklearn import metrics as skm

from replikit.errors import ParameterError
from replikit.experiment.metrics import check_metrics, compute_metric


def test_regression_metrics_match_sklearn():
    rng = np.random.default_rng(0)
    y = rng.normal(size=50)
    p = y + rng.normal(scale=0.7, size=50)
    assert compute_metric("r2", y, p) == pytest.approx(skm.r2_score(y, p), rel=1e-12)
    assert compute_metric("mse", y, p) == pytest.approx(skm.mean_squared_error(y, p), rel=1e-12)
    assert compute_metric("mae", y, p) == pytest.approx(skm.mean_absolute_error(y, p), rel=1e-12)
    assert compute_metric("r2_corr", y, p) == pytest.approx(np.corrcoef(y, p)[0, 1] ** 2, rel=1e-12)
    # r2_corr ignores a linear miscalibration that r2 penalises
    assert compute_metric("r2_corr", y, 3 * p + 2) == pytest.approx(compute_metric("r2_corr", y, p))
    assert compute_metric("r2", y, 3 * p + 2) < 0


def test_classification_metrics_match_sklearn():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 80)
    p1 = np.clip(0.3 * y + rng.uniform(size=80) * 0.7, 0, 1)
    p1[:5] = 0.5  # ties
    proba = np.column_stack([1 - p1, p1])
    pred = (p1 > 0.5).astype(int)
    classes = np.array([0, 1])
    assert compute_metric("roc_auc", y, pred, proba, classes) == pytest.approx(skm.roc_auc_score(y, p1), rel=1e-12)
    assert compute_metric("log_loss", y, pred, proba, classes) == pytest.approx(skm.log_loss(y, proba), rel=1e-10)
    assert compute_metric("accuracy", y, pred) + compute_metric("error_rate", y, pred) == pytest.approx(1)
    assert compute_metric("balanced_accuracy", y, pred) == pytest.approx(skm.balanced_accuracy_score(y, pred))


def test_check_metrics():
    assert check_metrics("r2, mse") == ["r2", "mse"]
    assert check_metrics(["neg_median_absolute_error"]) == ["neg_median_absolute_error"]
    with pytest.raises(ParameterError, match="unknown metric 'r3'"):
        check_metrics("r3")
    with pytest.raises(ParameterError, match="'accuracy' needs a categorical outcome"):
        check_metrics("accuracy", "regression")
    with pytest.raises(ParameterError, match="named twice"):
        check_metrics("r2,r2")


def test_direction_of_every_metric():
    from replikit.experiment.metrics import HIGHER_IS_BETTER, METRICS, higher_is_better

    assert HIGHER_IS_BETTER <= set(METRICS)
    errors = {"mse", "rmse", "mae", "error_rate", "log_loss"}
    for m in METRICS:
        assert higher_is_better(m) == (m not in errors), m
    assert higher_is_better("neg_log_loss") and higher_is_better("f1")  # scikit-learn scorers
