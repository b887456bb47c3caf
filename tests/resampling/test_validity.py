"""The coverage study of the error intervals at its small size: nested CV (claimed
calibrated) stays in its band, the rows do not depend on the workers, and the exact Err_XY
agrees with a Monte-Carlo estimate of the fitted model's error."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from replikit._calibration import COLUMNS, check_table, format_table, stack_tables
from replikit.resampling import validity as study


@pytest.mark.slow
def test_small_study_nested_cv_in_band():
    raw = study.validity(size="small", random_state=0, n_jobs=1)
    assert list(raw.columns) == list(COLUMNS)
    table = stack_tables([raw])
    assert not table[["study", "method", "setting", "quantity"]].duplicated().any()
    calibrated = table[table["claim"] == "calibrated"]
    assert set(calibrated["method"]) == {"nested CV"} and len(calibrated) == 12
    failures = check_table(table)
    assert failures.empty, format_table(failures)


@pytest.mark.parametrize("kind, p", [("ols", 5), ("lda", 10)])
def test_exact_err_xy_matches_monte_carlo(kind, p):
    rng = np.random.default_rng(0)
    X, y = study._draw(kind, 50, p, rng)
    exact = study._err_xy(kind, X[None], y[None])[0]
    # the same fitted model, on 400,000 new rows
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.linear_model import LinearRegression

    model = (LinearRegression() if kind == "ols" else
             LinearDiscriminantAnalysis()).fit(X, y)
    Xn, yn = study._draw(kind, 400_000, p, rng)
    pred = model.predict(Xn)
    mc = np.mean((yn - pred) ** 2) if kind == "ols" else np.mean(pred != yn)
    # LDA: scikit-learn's divisor (n) against the n - 2 of the exact rule: rows near the
    # boundary only, so a loose tolerance
    assert mc == pytest.approx(exact, rel=0.01 if kind == "ols" else 0.03)


def test_rows_do_not_depend_on_workers(monkeypatch):
    monkeypatch.setitem(study.SIZES, "tiny", {"replications": 3, "truth": 200,
                                              "nested_repeats": 2})
    monkeypatch.setattr(study, "SETTINGS", {"OLS, n=50, p=5": ("ols", 50, 5)})
    one = study.validity(size="tiny", random_state=1, n_jobs=1)
    two = study.validity(size="tiny", random_state=1, n_jobs=2)
    pd.testing.assert_frame_equal(one, two)
