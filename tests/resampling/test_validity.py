"""The coverage study of the error intervals: the rows do not depend on the workers, and the
exact Err_XY agrees with a Monte-Carlo estimate of the fitted model's error.

Its small size (nested CV, claimed calibrated, in its band: 12 calibrated rows, all nested CV)
is run once, in tests/validity/test_validity_suite_others.py with every other capability's
study (``OWN`` in test_validity_suite.py); it ran here too, the same 8 s computation twice."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from replikit.resampling import validity as study


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
