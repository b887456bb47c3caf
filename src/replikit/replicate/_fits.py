"""Batched least-squares fits for the seed-000 design: per study, a 2:1 train/test split and
K-fold CV on the training part, for many studies (and repetitions) in one array expression.

Fold fits use ``X'X_train-fold = X'X_train - X'X_fold`` so each study's K+1 fits cost one pass
over its rows; ``numpy.linalg.solve`` is batched over studies.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ols_cv_test", "ridge_path_penalty"]


def _with_intercept(X: np.ndarray) -> np.ndarray:
    ones = np.ones(X.shape[:-1] + (1,), dtype=float)
    return np.concatenate([ones, X], axis=-1)


def _r2(y: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """R2 over the rows axis (axis 1) of (S, n, m) arrays."""
    sse = ((y - pred) ** 2).sum(axis=1)
    sst = ((y - y.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
    return 1.0 - sse / sst


def ridge_path_penalty(p: int, alpha: float) -> np.ndarray:
    """Penalty matrix ``alpha * I`` without penalising the intercept (first column)."""
    pen = np.eye(p + 1) * float(alpha)
    pen[0, 0] = 0.0
    return pen


def ols_cv_test(X: np.ndarray, y: np.ndarray, perm: np.ndarray, *, n_splits: int = 10,
                train_share: float = 2 / 3, alpha: float = 0.0) -> dict:
    """Least-squares (or ridge, ``alpha > 0`` on standardised inputs) CV and test R2.

    Parameters
    ----------
    X : ndarray of shape (S, n, p)
        Features of S studies with n rows each.
    y : ndarray of shape (S, n) or (S, n, m)
        Outcome(s); m outcome columns share the design (one solve with m right-hand sides).
    perm : ndarray of shape (S, n)
        A random permutation of rows per study: the first ``round(n * train_share)`` rows train,
        the rest test; the training rows are cut into ``n_splits`` contiguous folds.
    n_splits : int
    train_share : float
    alpha : float
        Ridge penalty (0 = ordinary least squares).

    Returns
    -------
    dict with ``fold_r2`` (S, K[, m]), ``fold_n`` (K,), ``test_r2`` (S[, m]), ``test_n``
    (int), ``test_y`` and ``test_pred`` (S, n_test[, m]), ``p`` (predictors).
    """
    S, n, p = X.shape
    squeeze = y.ndim == 2
    if squeeze:
        y = y[..., None]
    Xp = np.take_along_axis(X, perm[..., None], axis=1)
    yp = np.take_along_axis(y, perm[..., None], axis=1)
    n_train = int(round(n * train_share))
    Xtr, ytr = _with_intercept(Xp[:, :n_train]), yp[:, :n_train]
    Xte, yte = _with_intercept(Xp[:, n_train:]), yp[:, n_train:]
    if alpha > 0:
        mu = Xtr[..., 1:].mean(axis=1, keepdims=True)
        sd = Xtr[..., 1:].std(axis=1, keepdims=True)
        sd = np.where(sd > 0, sd, 1.0)
        Xtr = np.concatenate([Xtr[..., :1], (Xtr[..., 1:] - mu) / sd], axis=-1)
        Xte = np.concatenate([Xte[..., :1], (Xte[..., 1:] - mu) / sd], axis=-1)
    pen = ridge_path_penalty(p, alpha)
    xtx = np.einsum("sni,snj->sij", Xtr, Xtr)
    xty = np.einsum("sni,snm->sim", Xtr, ytr)
    beta = np.linalg.solve(xtx + pen, xty)
    test_pred = np.einsum("sni,sim->snm", Xte, beta)
    bounds = np.linspace(0, n_train, n_splits + 1).round().astype(int)
    m = y.shape[-1]
    fold_r2 = np.empty((S, n_splits, m))
    for f in range(n_splits):
        a, b = bounds[f], bounds[f + 1]
        Xf, yf = Xtr[:, a:b], ytr[:, a:b]
        xtx_f = xtx - np.einsum("sni,snj->sij", Xf, Xf)
        xty_f = xty - np.einsum("sni,snm->sim", Xf, yf)
        bf = np.linalg.solve(xtx_f + pen, xty_f)
        fold_r2[:, f] = _r2(yf, np.einsum("sni,sim->snm", Xf, bf))
    test_r2 = _r2(yte, test_pred)
    if squeeze:
        fold_r2, test_r2 = fold_r2[..., 0], test_r2[..., 0]
        yte, test_pred = yte[..., 0], test_pred[..., 0]
    return {"fold_r2": fold_r2, "fold_n": np.diff(bounds), "test_r2": test_r2,
            "test_n": n - n_train, "test_y": yte, "test_pred": test_pred, "p": p}
