"""Batched least-squares fits for the design of Vijayakumar & Cheung (2021): per study, a
train/test split and K-fold CV on the training part, for many studies (and repeats) in one array
expression.

The rows of each study are assigned by the fold labels of
:class:`~replikit.replicate.design.HoldOutCV` (``f`` for CV fold f, ``-1`` for the test part),
so these fits use exactly the splits :func:`replikit.experiment.run` fits on that scheme.

Each fit is what scikit-learn's ``LinearRegression`` (or ``Ridge`` on standardized inputs)
returns: center X and y on the fitting rows, solve the centered normal equations for the slopes
(the minimum-norm solution when they are singular — a column constant within a study, duplicated
columns, more predictors than rows), intercept ``ybar - xbar' beta``. The centered Gram of every
fit comes from the same sufficient statistics: a fold fit uses
``sums(train) - sums(fold)``, so each study's K+1 fits cost one pass over its rows, and all
systems are solved in one batched call of :func:`replikit._linalg.sym_solve`.
"""

from __future__ import annotations

import numpy as np

from .._linalg import sym_solve
from .._threads import single_blas
from .design import TEST_LABEL

__all__ = ["ols_cv_test"]

# A column whose centered sum of squares on the fitting rows is below this share of its sum of
# squares about the training mean (plus the rounding of centering) is constant there: its slope
# is 0, as in scikit-learn, whose centered column is 0 up to rounding and dropped by lstsq.
_CONST_RTOL = 1e-11


def _r2(y: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """R2 over the rows axis (axis 1) of (S, n, m) arrays; NaN with fewer than 2 rows (as
    scikit-learn's ``r2_score``) or a constant outcome."""
    n = y.shape[1]
    if n < 2:
        return np.full((y.shape[0], y.shape[2]), np.nan)
    sse = ((y - pred) ** 2).sum(axis=1)
    sst = ((y - y.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(sst > 0, 1.0 - sse / np.where(sst > 0, sst, 1.0), np.nan)


def _slopes(cnt, sz, szz, sw, szw, scale, pen):
    """Centered least-squares (ridge) slopes from sufficient statistics.

    ``cnt`` rows with column sums ``sz`` (S, p), cross-products ``szz`` (S, p, p), outcome sums
    ``sw`` (S, m) and ``szw`` (S, p, m); ``scale`` (S, p) is the rounding floor of a centered
    sum of squares: a column at or below it is constant on these rows.
    Returns ``(beta (S, p, m), zbar (S, p), wbar (S, m))``.
    """
    cnt = float(cnt)
    zbar = sz / cnt
    wbar = sw / cnt
    gram = szz - cnt * zbar[:, :, None] * zbar[:, None, :]
    cxy = szw - cnt * zbar[:, :, None] * wbar[:, None, :]
    diag = np.diagonal(gram, axis1=1, axis2=2)
    const = diag <= scale
    if const.any():
        # decouple constant columns: slope exactly 0, the others solved without them
        keep = ~const
        gram = gram * keep[:, :, None] * keep[:, None, :]
        gram = gram + np.einsum("sp,pq->spq", const.astype(float), np.eye(gram.shape[-1]))
        cxy = cxy * keep[:, :, None]
    beta = sym_solve(gram + pen, cxy)
    return beta, zbar, wbar


def _layout(folds: np.ndarray):
    """Row order (S, n) grouping each study's rows by fold then the test part (rows in
    ascending order within each), and the K + 1 bounds of the folds in that order; every
    study must have the same number of rows in each fold and in the test part."""
    folds = np.asarray(folds)
    if folds.ndim != 2:
        raise ValueError(f"`folds` must have shape (S, n); got {folds.shape}.")
    k = int(folds.max()) + 1
    key = np.where(folds == TEST_LABEL, k, folds)
    if key.min() < 0:
        raise ValueError("fold labels must be 0..K-1 or -1 (test).")
    counts = np.stack([np.bincount(row, minlength=k + 1) for row in key])
    if not (counts == counts[0]).all():
        raise ValueError("every study needs the same number of rows in each fold and in the "
                         "test part.")
    order = np.argsort(key, axis=1, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(counts[0][:k])])
    return order, bounds


@single_blas
def ols_cv_test(X: np.ndarray, y: np.ndarray, folds: np.ndarray, *, n_folds: int | None = None,
                penalty: float = 0.0) -> dict:
    """Least-squares (or ridge, ``penalty > 0`` on standardized inputs) CV and test R2.

    Parameters
    ----------
    X : ndarray of shape (S, n, p)
        Features of S studies with n rows each.
    y : ndarray of shape (S, n) or (S, n, m)
        Outcome(s); m outcome columns share the design (one solve with m right-hand sides).
    folds : ndarray of int of shape (S, n)
        Fold label of every row (:meth:`HoldOutCV.fold_labels
        <replikit.replicate.design.HoldOutCV.fold_labels>`): ``f`` for a row of CV fold f of
        the training part, ``-1`` for a test row. Every study must have the same number of rows
        in each fold and in the test part.
    n_folds : int, optional
        Folds K, when some folds may be empty (default: the largest label + 1).
    penalty : float
        Ridge penalty (scikit-learn's ``Ridge`` alpha; 0 = ordinary least squares) on the slopes
        of the inputs standardized by the training rows' mean and SD (a constant column keeps SD 1, as ``StandardScaler``).

    Returns
    -------
    dict with ``fold_r2`` (S, K[, m]), ``fold_n`` (K,), ``test_r2`` (S[, m]), ``test_n``
    (int), ``test_rows`` (S, n_test: the test rows, ascending), ``test_y`` and ``test_pred``
    (S, n_test[, m]), ``p`` (predictors). An R2 over fewer than 2 rows (an empty or one-row fold
    of a tiny study) or of a constant outcome is NaN.

    Notes
    -----
    Every fit equals scikit-learn's ``LinearRegression`` (``Ridge`` for ``penalty > 0``) on the
    same rows: slopes solve the centered normal equations ``(Xc'Xc + penalty I) b = Xc'yc``, by the
    minimum-norm (pseudo-inverse) solution when ``Xc'Xc`` is singular, and the intercept is
    ``ybar - xbar'b``. Data are first shifted by the training mean, so the downdated sums lose
    no precision to large column means.
    """
    S, n, p = X.shape
    squeeze = y.ndim == 2
    if squeeze:
        y = y[..., None]
    X = np.asarray(X, float)
    y = np.asarray(y, float)
    order, bounds = _layout(folds)
    if n_folds is not None and n_folds > bounds.size - 1:  # empty last folds
        bounds = np.concatenate([bounds, np.full(n_folds - bounds.size + 1, bounds[-1])])
    n_folds = bounds.size - 1
    Xp = np.take_along_axis(X, order[..., None], axis=1)
    yp = np.take_along_axis(y, order[..., None], axis=1)
    n_train = int(bounds[-1])
    m = y.shape[-1]
    Xtr, ytr = Xp[:, :n_train], yp[:, :n_train]
    Xte, yte = Xp[:, n_train:], yp[:, n_train:]
    # shift by the training means: sums downdated for the folds stay well scaled
    mu = Xtr.mean(axis=1, keepdims=True) if n_train else np.zeros((S, 1, p))
    my = ytr.mean(axis=1, keepdims=True) if n_train else np.zeros((S, 1, m))
    Ztr, Zte = Xtr - mu, Xte - mu
    Wtr = ytr - my
    if penalty > 0:
        sd = Ztr.std(axis=1, keepdims=True) if n_train else np.ones((S, 1, p))
        sd = np.where(sd > 0, sd, 1.0)
        Ztr, Zte = Ztr / sd, Zte / sd
    pen = np.eye(p) * float(penalty)
    szz = np.einsum("sni,snj->sij", Ztr, Ztr)
    szw = np.einsum("sni,snm->sim", Ztr, Wtr)
    sz, sw = Ztr.sum(axis=1), Wtr.sum(axis=1)
    # rounding floor of a centered sum of squares: downdating (relative to the column's sum of
    # squares about the training mean) and centering itself (relative to its raw magnitude)
    eps = np.finfo(float).eps
    big = np.abs(Xtr).max(axis=1) / (sd[:, 0] if penalty > 0 else 1.0) if n_train else 0.0
    scale = (_CONST_RTOL * np.diagonal(szz, axis1=1, axis2=2)
             + max(n_train, 1) * (16 * eps * big) ** 2)
    if n_train >= 1:
        beta, zbar, wbar = _slopes(n_train, sz, szz, sw, szw, scale, pen)
        test_pred = (my + wbar[:, None, :]
                     + np.einsum("snp,spm->snm", Zte - zbar[:, None, :], beta))
    else:
        test_pred = np.full(yte.shape, np.nan)
    fold_r2 = np.full((S, n_folds, m), np.nan)
    for f in range(n_folds):
        a, b = bounds[f], bounds[f + 1]
        cnt = n_train - (b - a)
        if b - a < 2 or cnt < 1:
            continue  # R2 undefined on < 2 rows, or nothing left to fit on
        Zf, Wf = Ztr[:, a:b], Wtr[:, a:b]
        beta_f, zbar_f, wbar_f = _slopes(
            cnt, sz - Zf.sum(axis=1), szz - np.einsum("sni,snj->sij", Zf, Zf),
            sw - Wf.sum(axis=1), szw - np.einsum("sni,snm->sim", Zf, Wf), scale, pen)
        pred = wbar_f[:, None, :] + np.einsum("snp,spm->snm", Zf - zbar_f[:, None, :], beta_f)
        fold_r2[:, f] = _r2(Wf, pred)
    test_r2 = _r2(yte, test_pred)
    if squeeze:
        fold_r2, test_r2 = fold_r2[..., 0], test_r2[..., 0]
        yte, test_pred = yte[..., 0], test_pred[..., 0]
    return {"fold_r2": fold_r2, "fold_n": np.diff(bounds), "test_r2": test_r2,
            "test_n": n - n_train, "test_rows": order[:, n_train:], "test_y": yte, "test_pred": test_pred, "p": p}
