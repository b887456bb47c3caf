"""Batched linear algebra shared by every closed-form fit (least squares, ridge, LDA, Newton
steps of logistic regression).

A design can be rank-deficient for ordinary reasons — a study-level covariate is constant within
a study, a dummy column is empty in a fold, there are more predictors than rows — so no fit may
assume an invertible Gram matrix. :func:`sym_solve` solves well-conditioned systems by one
batched LU solve and falls back to the minimum-norm solution (the Moore–Penrose pseudo-inverse,
what ``numpy.linalg.lstsq`` and scikit-learn's ``LinearRegression`` return) for the others.
"""

from __future__ import annotations

import numpy as np

__all__ = ["sym_solve", "pinv_solve"]

HADAMARD_TOL = 1e-10  # det / prod(diag) below this: treat the system as (near) singular
EIG_RCOND = 1e-12  # relative eigenvalue cut-off of the pseudo-inverse


def pinv_solve(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Minimum-norm solutions of a stack of symmetric PSD systems ``A x = B``.

    ``x = A⁺ B`` by an eigendecomposition of ``A`` (eigenvalues below ``EIG_RCOND`` times the
    largest are treated as zero). For normal equations ``A = X'X``, ``B = X'y`` this is the
    minimum-norm least-squares solution ``X⁺ y``.

    Parameters
    ----------
    A : ndarray of shape (..., p, p)
    B : ndarray of shape (..., p, m)
    """
    vals, vecs = np.linalg.eigh(A)
    top = np.max(np.abs(vals), axis=-1, keepdims=True)
    keep = vals > EIG_RCOND * np.where(top > 0, top, 1.0)
    inv = np.where(keep, 1.0 / np.where(keep, vals, 1.0), 0.0)
    proj = np.matmul(np.swapaxes(vecs, -1, -2), B)
    return np.matmul(vecs, inv[..., :, None] * proj)


def sym_solve(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Solve a stack of symmetric PSD systems ``A x = B``, singular ones included.

    Well-conditioned systems go through one batched LU solve; systems whose Hadamard ratio
    ``det(A) / prod(diag(A))`` (a scale-free measure of collinearity) is below 1e-10, or with a
    zero on the diagonal, get the minimum-norm solution of :func:`pinv_solve` instead.

    Parameters
    ----------
    A : ndarray of shape (..., p, p)
    B : ndarray of shape (..., p, m)

    Returns
    -------
    ndarray of shape (..., p, m)
    """
    shape = A.shape[:-2]
    p = A.shape[-1]
    A2 = A.reshape(-1, p, p)
    B2 = B.reshape(A2.shape[0], p, -1)
    diag = np.diagonal(A2, axis1=1, axis2=2)
    ok = np.all(diag > 0, axis=1)
    sign, logdet = np.linalg.slogdet(A2)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = logdet - np.sum(np.log(np.where(diag > 0, diag, 1.0)), axis=1)
    ok &= (sign > 0) & (ratio > np.log(HADAMARD_TOL))
    out = np.empty_like(B2, dtype=float)
    if ok.any():
        out[ok] = np.linalg.solve(A2[ok], B2[ok])
    if (~ok).any():
        out[~ok] = pinv_solve(A2[~ok], B2[~ok])
    return out.reshape(*shape, p, B2.shape[-1])
