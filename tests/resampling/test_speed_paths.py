"""The faster kernels against the references they replace: the Cholesky solver
against LU / the minimum-norm solution, the two-class LDA (Sherman–Morrison) against the
general path and a textbook LDA, the numpy KDE against scipy, and the stacked legacy draws of the
exact replay of Etherington & Lieske's script against single draws."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import gaussian_kde

from replikit._linalg import sym_solve
from replikit.resampling._fast import _lda_general, _unit_scale, lda_decision, lda_margin, spd_solve
from replikit.resampling.plots import gaussian_kde_1d
from replikit.resampling.simulation import (
    EXPERIMENT_METHODS,
    _draw_modern,
    _first_accepted,
    _layout,
)


def _spd(rng, N, p, m=2):
    Z = rng.normal(size=(N, p + 3, p))
    return Z.transpose(0, 2, 1) @ Z, rng.normal(size=(N, p, m))


def test_spd_solve_matches_lu_and_min_norm_fallback():
    rng = np.random.default_rng(0)
    A, B = _spd(rng, 50, 6)
    np.testing.assert_allclose(spd_solve(A, B), np.linalg.solve(A, B), rtol=1e-10, atol=1e-12)
    # a singular system in the stack: the same minimum-norm answer as sym_solve
    v = rng.normal(size=(6, 5))
    A[3] = v @ v.T  # rank 5
    A[7, :, 0] = A[7, 0, :] = 0.0  # a zero row and column
    np.testing.assert_allclose(spd_solve(A, B), sym_solve(A, B), rtol=1e-8, atol=1e-10)
    # leading batch axes are kept
    A2, B2 = _spd(rng, 12, 4, m=1)
    out = spd_solve(A2.reshape(3, 4, 4, 4), B2.reshape(3, 4, 4, 1))
    np.testing.assert_allclose(out.reshape(12, 4, 1), np.linalg.solve(A2, B2), rtol=1e-10)


def _weights(rng, E, R, n):
    idx = rng.integers(0, n, size=(E, R, n))
    return np.apply_along_axis(np.bincount, 2, idx, minlength=n).astype(float)


@pytest.mark.parametrize("priors, divisor", [(None, "n-k"), (None, "n"),
                                             (np.array([0.3, 0.7]), "n-k")])
def test_two_class_lda_equals_general_path(priors, divisor):
    rng = np.random.default_rng(1)
    E, R, n, p = 3, 40, 30, 10
    X = rng.normal(size=(E, n, p)) * rng.uniform(0.5, 20, size=p) + 50.0  # far from 0
    y = (rng.random(size=(E, n)) < 0.4).astype(np.int64)
    y[:, :2] = [0, 1]
    W = _weights(rng, E, R, n)
    W[:, :, :2] = np.maximum(W[:, :, :2], 1)  # both classes in every resample
    W[0, 5] = 0.0
    W[0, 5, :8] = 1.0  # 8 training rows, 10 features: singular within-class scatter
    W[0, 5, :2] = 1.0
    # the public entries work on unit-SD columns (the singular resample's minimum-norm rule
    # depends on the columns' scales; a regular one's does not)
    ref = _lda_general(_unit_scale(X), y, W, 2, priors=priors, divisor=divisor)
    ref_margin = ref[..., 1] - ref[..., 0]
    margin = lda_margin(X, y, W, priors=priors, divisor=divisor)
    regular = np.ones((E, R), bool)
    regular[0, 5] = False
    np.testing.assert_allclose(margin[regular], ref_margin[regular], rtol=1e-7, atol=1e-7)
    # the singular resample takes the general path: identical numbers
    np.testing.assert_array_equal(margin[0, 5], ref_margin[0, 5])
    scores = lda_decision(X, y, W, 2, priors=priors, divisor=divisor)
    np.testing.assert_allclose(scores[..., 1] - scores[..., 0], margin, rtol=0, atol=0)


def test_two_class_lda_against_textbook_fit():
    rng = np.random.default_rng(2)
    n, p = 30, 10
    X = rng.normal(size=(n, p))
    y = rng.binomial(1, 0.5, size=n)
    W = _weights(rng, 1, 25, n)[0]
    margin = lda_margin(X[None], y[None], W[None])[0]
    for r in range(25):
        rows = np.repeat(np.arange(n), W[r].astype(int))
        Xr, yr = X[rows], y[rows]
        if np.unique(yr).size < 2:
            continue
        means = np.array([Xr[yr == k].mean(axis=0) for k in (0, 1)])
        resid = Xr - means[yr]
        cov = resid.T @ resid / (len(yr) - 2)
        a = np.linalg.solve(cov, means[1] - means[0])
        c = -0.5 * (means[1] + means[0]) @ a + np.log(np.mean(yr) / (1 - np.mean(yr)))
        np.testing.assert_allclose(margin[r], X @ a + c, rtol=1e-8, atol=1e-8)


def test_lda_margin_with_a_missing_class_uses_general_path():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(1, 12, 2))
    y = np.array([[0] * 6 + [1] * 6])
    W = np.ones((1, 2, 12))
    W[0, 1, 6:] = 0  # no class 1 in the second resample
    m = lda_margin(X, y, W)
    assert np.all(np.isneginf(m[0, 1]))
    assert np.all(np.isfinite(m[0, 0]))


def test_gaussian_kde_1d_matches_scipy():
    rng = np.random.default_rng(4)
    values = rng.beta(5, 5, size=300)
    grid = np.linspace(-0.1, 1.1, 101)
    for bw in (1.0, 0.3):
        np.testing.assert_allclose(gaussian_kde_1d(values, grid, bw_factor=bw),
                                   gaussian_kde(values, bw_method=bw)(grid), rtol=1e-12)


def test_first_accepted_consumes_the_stream_like_single_draws():
    # many rejections: a bootstrap of a response with one positive must contain it
    y = np.zeros(30, int)
    y[7] = 1
    rs_loop, rs_batch = np.random.RandomState(11), np.random.RandomState(11)
    ref = []
    for _ in range(40):
        while True:
            idx = rs_loop.choice(np.arange(30), size=30)
            if 0 < y[idx].sum() < 30:
                break
        ref.append(idx)
    got = _first_accepted(lambda m: rs_batch.randint(0, 30, size=(m, 30)),
                          lambda d: (s := y[d].sum(axis=1)) * (30 - s) > 0, 40)
    np.testing.assert_array_equal(got, np.array(ref))
    assert rs_loop.randint(0, 2**31) == rs_batch.randint(0, 2**31)  # same point of the stream


def test_modern_draws_follow_the_redraw_rules():
    rng = np.random.default_rng(5)
    E = 40
    X, y, W, T = _draw_modern(E, rng)
    spans, R = _layout()
    assert W.shape == T.shape == (E, R, 30)
    for label, family, param in EXPERIMENT_METHODS:
        a, b = spans[label]
        train_pos = (W[:, a:b] * y[:, None, :]).sum(axis=2)
        if family == "bootstrap":
            assert np.all(W[:, a:b].sum(axis=2) == 30)
            assert np.all((train_pos > 0) & (train_pos < 30))
            np.testing.assert_array_equal(T[:, a:b], W[:, a:b] == 0)
        elif family == "holdout":
            assert np.all(T[:, a:b].sum(axis=2) == int(30 * param[1]))
            assert np.all(train_pos > 0)
        elif family == "kfold":
            assert np.all(T[:, a:b].sum(axis=1) == 1)  # every row tested once


@pytest.mark.parametrize("scaled", [True, False])
def test_logistic_newton_on_collinear_unscaled_features_matches_sklearn(scaled):
    # breast cancer: features in units from 1e-3 to 1e3 and nearly collinear (radius,
    # perimeter, area) — the case that made the batched Newton slow before
    from sklearn.datasets import load_breast_cancer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from replikit.resampling._fast import logistic_decision

    X, y = load_breast_cancer(return_X_y=True)
    X, y = X[::3, :12], y[::3]
    n = len(y)
    rng = np.random.default_rng(6)
    idx = rng.integers(0, n, size=(6, n))
    W = np.apply_along_axis(np.bincount, 1, idx, minlength=n).astype(float)
    C = 1.0 if scaled else 1e-3
    dec = logistic_decision(X[None], y[None], W[None], C=C, scaled=scaled)[0]
    for r in range(6):
        ref = LogisticRegression(C=C, solver="newton-cholesky", tol=1e-12, max_iter=1000)
        model = make_pipeline(StandardScaler(), ref) if scaled else ref
        model.fit(X[idx[r]], y[idx[r]])
        np.testing.assert_allclose(dec[r], model.decision_function(X), rtol=1e-6, atol=1e-6)


def test_retained_freed_memory_block_runs_and_exits_cleanly():
    from replikit.cli.estimate import _retained_freed_memory

    with _retained_freed_memory():
        a = np.ones((64, 1 << 15))  # 16 MiB, from the heap inside the block
        del a
    b = np.ones((64, 1 << 15))  # and after it, with glibc's defaults again
    assert b.sum() == 64 * (1 << 15)


def test_experiment_threads_and_chunks_change_no_number():
    """simulate_resampling(n_jobs=2) computes blocks of datasets in threads; each block and
    each LDA chunk is computed the same way whatever the thread or chunk size, so the errors
    are bit-identical (default and exact streams)."""
    from replikit.resampling import simulation as S

    for exact in (False, True):
        one = S.simulate_resampling(n_experiments=120, exact=exact, random_state=1)
        two = S.simulate_resampling(n_experiments=120, exact=exact, random_state=1, n_jobs=2)
        pd.testing.assert_frame_equal(one.errors, two.errors, check_exact=True)
    X, y, W, T = S._draw_modern(60, np.random.default_rng(5))
    ref = S._errors(X, y, W, T, chunk=10)
    for chunk in (1, 3, 7):  # chunks need not divide the block
        pd.testing.assert_frame_equal(S._errors(X, y, W, T, chunk=chunk, n_jobs=2), ref,
                                      check_exact=True)
