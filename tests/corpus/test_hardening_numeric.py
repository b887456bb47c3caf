"""One numeric path: badly scaled and collinear designs (gapminder's pathology, offline).

gapminder (1,704 rows: a 142-level country one-hot encoded next to a population up to 1.3e9)
made scikit-learn's plain ``LinearRegression`` stop at a resubstitution MSE of 108.9 where the
least-squares optimum is 11.36 (its singular-value cut-off is relative to the 1e9-scale column),
and the batched fast path gave 11.36 on one dummy encoding and 108.9 on the other. The table
below has the same pathology (1,700 rows, 140 levels, a population up to ~1e9) and is built
here: nothing is downloaded.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LinearRegression, Ridge
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import StandardScaler

from replikit.data.userdata import dataset_from_frame
from replikit.experiment import make_model
from replikit.resampling import estimate_errors
from replikit.resampling._fast import fast_predictor


def _frame(seed: int = 0, n: int = 1700, levels: int = 140) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    lev = np.arange(n) % levels
    year = 1952 + 5 * (np.arange(n) // levels % 12)
    pop = rng.lognormal(16, 1.5, n) * (1 + 0.02 * (year - 1952))
    gdp = rng.lognormal(8, 1, n)
    y = (50 + rng.normal(0, 8, levels)[lev] + 0.3 * (year - 1980) + 2 * np.log(gdp)
         + 2e-9 * pop + rng.normal(0, 3, n))
    return pd.DataFrame({"country": [f"c{i:03d}" for i in lev], "year": year.astype(float),
                         "pop": pop, "gdp": gdp, "life": y})


def _design(frame: pd.DataFrame, drop_first: bool):
    X = pd.get_dummies(frame.drop(columns="life"), columns=["country"], drop_first=drop_first,
                       dtype=float).to_numpy()
    return X, frame["life"].to_numpy()


def _optimum(X, y):
    """Least-squares fitted values with an intercept, solved on standardised columns."""
    Z = np.column_stack([np.ones(len(X)), (X - X.mean(0)) / X.std(0)])
    return Z @ np.linalg.lstsq(Z, y, rcond=None)[0]


@pytest.fixture(scope="module")
def frame():
    f = _frame()
    assert f["pop"].max() > 5e8 and f["country"].nunique() == 140
    return f


def test_default_lr_reaches_the_least_squares_optimum(frame):
    # the premise: plain LinearRegression stops far from the optimum on this table
    X, y = _design(frame, drop_first=True)
    plain = np.mean((y - LinearRegression().fit(X, y).predict(X)) ** 2)
    assert plain > 5 * np.mean((y - _optimum(X, y)) ** 2)
    model = make_model("lr", "regression")
    assert isinstance(model, Pipeline) and isinstance(model.steps[0][1], StandardScaler)
    for drop_first in (True, False):
        X, y = _design(frame, drop_first)
        pred = model.fit(X, y).predict(X)
        np.testing.assert_allclose(pred, _optimum(X, y), rtol=1e-8, atol=1e-8 * np.abs(y).max())


def _resample_weights(n: int, frame: pd.DataFrame) -> np.ndarray:
    rng = np.random.default_rng(3)
    W = [np.bincount(rng.integers(0, n, n), minlength=n) for _ in range(3)]  # bootstraps
    W.append((rng.random(n) > 0.5).astype(int))  # a 2-fold-like half
    W.append((~frame["country"].isin(["c000", "c007", "c139"])).astype(int).to_numpy())
    return np.asarray(W, float)  # the last: three countries absent from the training rows


def test_fast_path_equals_the_pipeline_on_both_encodings(frame):
    # drop_first dummies (full rank) and full dummies (rank-deficient next to the intercept),
    # with bootstrap counts, a half, and training rows missing whole levels; least squares
    # and ridge (whose penalty keeps scikit-learn's meaning on the standardised columns)
    for model, drop_first in [(make_pipeline(StandardScaler(), m), d)
                              for m in (LinearRegression(), Ridge(alpha=2.0))
                              for d in (True, False)]:
        fp = fast_predictor(model, "regression")
        X, y = _design(frame, drop_first)
        W = _resample_weights(len(y), frame)
        pred = fp.predict(X[None], y[None], W[None])[0]
        for r, w in enumerate(W):
            rows = np.repeat(np.arange(len(y)), w.astype(int))
            ref = model.fit(X[rows], y[rows]).predict(X)
            np.testing.assert_allclose(pred[r], ref, rtol=0, atol=1e-8 * np.abs(ref).max(),
                                       err_msg=f"drop_first={drop_first}, resample {r}")


def test_error_estimates_fast_equal_generic_on_full_dummies(frame):
    X, y = _design(frame, drop_first=False)
    model = make_model("lr", "regression")
    kw = dict(methods=["resubstitution", "kfold"], n_folds=5, n_repeats=1, random_state=4,
              interval="wald")
    fast = estimate_errors(model, X, y, fast=True, **kw)
    generic = estimate_errors(model, X, y, fast=False, **kw)
    for m in ("resubstitution", "kfold"):
        assert fast[m].estimate == pytest.approx(generic[m].estimate, rel=1e-8), m
    assert fast["resubstitution"].estimate == pytest.approx(np.mean((y - _optimum(X, y)) ** 2),
                                                            rel=1e-8)


def test_dataset_notes_name_badly_scaled_columns(frame):
    ds = dataset_from_frame(frame, target="life")
    notes = [n for n in ds.notes if "scales differ" in n]
    assert len(notes) == 1 and "'pop'" in notes[0] and "standardise" in notes[0]
    assert not any("collinear" in n for n in ds.notes)  # drop_first dummies: full rank


def test_dataset_notes_name_collinear_columns():
    rng = np.random.default_rng(1)
    f = pd.DataFrame({"a": rng.normal(size=200), "b": rng.normal(size=200)})
    f["total"] = f["a"] + 2 * f["b"]  # a linear combination of the others
    f["y"] = f["a"] + rng.normal(size=200)
    ds = dataset_from_frame(f, target="y")
    notes = [n for n in ds.notes if "collinear" in n]
    assert notes == ["the encoded columns are collinear (rank 2 of 3 next to the intercept): "
                     "least-squares coefficients are not unique; predictions are"]


def test_fast_lda_on_full_dummies_equals_sklearn(frame):
    # the batched LDA's pseudo-inverse (singular pooled covariance: full dummies) on the raw
    # columns dropped the dummies' directions next to the 1e9 column: 55% agreement
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

    X, y = _design(frame, drop_first=False)
    labels = (y > np.median(y)).astype(int)
    model = LinearDiscriminantAnalysis(priors=[0.5, 0.5])
    W = _resample_weights(len(y), frame)[[0, 4]]
    pred = fast_predictor(model, "classification").predict(X[None], labels[None], W[None], 2)[0]
    for r, w in enumerate(W):
        rows = np.repeat(np.arange(len(y)), w.astype(int))
        ref = model.fit(X[rows], labels[rows]).predict(X)
        assert np.mean(pred[r] == ref) > 0.995, r
