"""Batched fits of linear models over many resamples at once (the fast path of seed 003's
estimators).

A resample is a vector of non-negative *training weights* over the n rows: bootstrap counts, or
0/1 masks for folds and hold-outs. Fitting a weighted linear model only needs weighted moments of
the data, and the moments of all resamples come from one matrix product ``W @ F`` (``W``: the
``(R, n)`` weight matrix, ``F``: per-row features such as ``x_i``, ``x_i x_i'``, ``x_i y_i``).
The R small systems are then solved as one batched ``numpy.linalg.solve`` and every row is
predicted by every resample's rule in one more product. All functions take a leading *batch*
axis ``E`` (independent datasets, used by the seed-003 experiment; ``E = 1`` for one dataset):

- ``X``: ``(E, n, p)`` features, ``y``: ``(E, n)`` outcome (class codes ``0..K-1`` for
  classifiers), ``W``: ``(E, R, n)`` training weights.

Every public function here runs with one BLAS thread (:func:`replikit._threads.single_blas`):
the matrices are small and many, so threads inside one product only add synchronisation (and,
on a busy machine, contention that was seen to slow a ``replikit estimate`` from 15 s to over
17 minutes); parallelism belongs to the tasks.

Fitting with integer weights ``w`` is the same as fitting on the rows repeated ``w`` times, which
is what the generic path does with ``X[train_index]``; so both paths give the same rule (up to
the optimiser's tolerance for logistic regression, and up to ties in the predicted labels).

Supported estimators (see :func:`fast_predictor`): ``LinearRegression``, ``Ridge``,
``LinearDiscriminantAnalysis`` (no shrinkage), binary ``LogisticRegression`` (L2, lbfgs /
newton-cg / newton-cholesky / sag / saga), ``DummyRegressor`` (mean), ``DummyClassifier``
(prior / most_frequent), each optionally behind a ``StandardScaler`` in a ``Pipeline``.

LDA uses the classic pooled within-class covariance with divisor ``n - K`` (n training rows, K
classes present), as scikit-learn's ``svd`` solver did up to version 1.8 and as the original code
of seed 003 ran; scikit-learn 1.9 divides by ``n``. The divisor scales the quadratic form against
the log-prior term, so the two agree exactly when the priors are equal and otherwise differ only
for rows very close to the boundary. ``divisor='n'`` reproduces scikit-learn >= 1.9.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._linalg import sym_solve
from .._threads import single_blas

__all__ = ["FastPredictor", "fast_predictor", "lda_decision", "least_squares_predict",
           "logistic_decision", "dummy_predict", "weighted_moments"]

_BLOCK = 4_000_000  # elements in a temporary block of per-row products


# --------------------------------------------------------------------------------------------
# weighted moments and batched symmetric solves
# --------------------------------------------------------------------------------------------

@single_blas
def weighted_moments(W: np.ndarray, X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Weighted sums of 1, x and x x' for every resample.

    Parameters
    ----------
    W : ndarray of shape (E, R, n)
        Training weights.
    X : ndarray of shape (E, n, p)

    Returns
    -------
    sw : (E, R)
    sx : (E, R, p)
    sxx : (E, R, p, p)
        ``sum_i w_ri``, ``sum_i w_ri x_i`` and ``sum_i w_ri x_i x_i'``, from matrix products
        over blocks of rows (memory stays bounded for large n).
    """
    E, n, p = X.shape
    R = W.shape[1]
    sw = W.sum(axis=2)
    sx = np.matmul(W, X)
    sxx = np.zeros((E, R, p * p))
    step = max(1, _BLOCK // max(1, E * p * p))
    for start in range(0, n, step):
        stop = min(n, start + step)
        xb = X[:, start:stop, :]
        outer = (xb[:, :, :, None] * xb[:, :, None, :]).reshape(E, stop - start, p * p)
        sxx += np.matmul(W[:, :, start:stop], outer)
    return sw, sx, sxx.reshape(E, R, p, p)


def _scale_variances(sw, sx, sxx):
    """Weighted variances (ddof 0) per resample; zero variances become 1 (StandardScaler)."""
    mean = sx / sw[..., None]
    var = np.diagonal(sxx, axis1=-2, axis2=-1) / sw[..., None] - mean**2
    var = np.maximum(var, 0.0)
    tiny = var <= 10 * np.finfo(float).eps * np.maximum(1.0, mean**2)
    return np.where(tiny, 1.0, var)


# --------------------------------------------------------------------------------------------
# the models
# --------------------------------------------------------------------------------------------

@single_blas
def least_squares_predict(X: np.ndarray, y: np.ndarray, W: np.ndarray, *, penalty: float = 0.0,
                          fit_intercept: bool = True, scaled: bool = False) -> np.ndarray:
    """Predictions of weighted least squares / ridge fits for every resample and every row.

    Solves, for each resample r,
    ``min_{b, beta} sum_i w_ri (y_i - b - x_i' beta)^2 + penalty * sum_j s_rj^2 beta_j^2``
    where ``s_rj`` is the weighted SD of feature j in the resample when ``scaled`` (a
    ``StandardScaler`` in front of ``Ridge``) and 1 otherwise; ``penalty`` is scikit-learn's
    ``Ridge(alpha=...)``, and ``penalty = 0`` is ordinary least
    squares (minimum-norm solution when the centred Gram matrix is singular).

    Returns
    -------
    ndarray of shape (E, R, n)
    """
    sw, sx, sxx = weighted_moments(W, X)
    sy = np.matmul(W, y[..., None])[..., 0]
    sxy = np.matmul(W, X * y[..., None])
    if fit_intercept:
        xm = sx / sw[..., None]
        ym = sy / sw
        gram = sxx - sw[..., None, None] * xm[..., :, None] * xm[..., None, :]
        rhs = sxy - sw[..., None] * xm * ym[..., None]
    else:
        gram, rhs = sxx, sxy
    if penalty > 0:
        pen = _scale_variances(sw, sx, sxx) if scaled else np.ones_like(sx)
        idx = np.arange(X.shape[2])
        gram = gram.copy()
        gram[..., idx, idx] += penalty * pen
    beta = sym_solve(gram, rhs[..., None])[..., 0]  # (E, R, p)
    pred = np.matmul(beta, np.swapaxes(X, 1, 2))  # (E, R, n)
    if fit_intercept:
        pred += (ym - np.sum(xm * beta, axis=-1))[..., None]
    return pred


@single_blas
def lda_decision(X: np.ndarray, y: np.ndarray, W: np.ndarray, n_classes: int, *,
                 priors: np.ndarray | None = None, divisor: str = "n-k") -> np.ndarray:
    """Linear discriminant scores of every row under every resample's LDA rule.

    ``delta_k(x) = x' S^-1 m_k - m_k' S^-1 m_k / 2 + log pi_k`` with class means ``m_k``,
    pooled within-class covariance ``S`` (weighted scatter / (n - K), or / n when
    ``divisor='n'``) and priors ``pi_k`` (the training class shares unless given). Classes
    absent from a resample's training rows get ``-inf``.

    Returns
    -------
    ndarray of shape (E, R, n, K)
    """
    E, n, p = X.shape
    K = n_classes
    onehot = (y[..., None] == np.arange(K)).astype(float)  # (E, n, K)
    nk = np.matmul(W, onehot)  # (E, R, K)
    per_class = (onehot[..., :, None] * X[..., None, :]).reshape(E, n, K * p)
    sk = np.matmul(W, per_class).reshape(E, -1, K, p)
    sw, _, sxx = weighted_moments(W, X)
    present = nk > 0
    means = sk / np.where(present, nk, 1.0)[..., None]
    root = sk / np.sqrt(np.where(present, nk, 1.0))[..., None]  # sum_k n_k m_k m_k'
    within = sxx - np.matmul(np.swapaxes(root, -1, -2), root)
    n_present = present.sum(axis=-1)
    denom = sw - n_present if divisor == "n-k" else sw
    cov = within / np.maximum(denom, 1e-300)[..., None, None]
    if priors is None:
        with np.errstate(divide="ignore"):
            logp = np.log(nk / sw[..., None])
    else:
        logp = np.broadcast_to(np.log(np.asarray(priors, float)), nk.shape).copy()
    if K == 2 and present.all():
        # two classes: only delta_1 - delta_0 matters, one right-hand side
        diff = means[..., 1, :] - means[..., 0, :]
        a = sym_solve(cov, diff[..., None])[..., 0]  # S^-1 (m1 - m0)
        mid = 0.5 * (means[..., 1, :] + means[..., 0, :])
        c = -np.sum(mid * a, axis=-1) + logp[..., 1] - logp[..., 0]
        d = np.matmul(a, np.swapaxes(X, 1, 2)) + c[..., None]  # (E, R, n)
        return np.stack([np.zeros_like(d), d], axis=-1)
    coef = sym_solve(cov, np.swapaxes(means, -1, -2))  # (E, R, p, K)
    intercept = -0.5 * np.einsum("erkp,erpk->erk", means, coef) + logp
    scores = np.matmul(X[:, None, :, :], coef) + intercept[..., None, :]
    return np.where(present[..., None, :], scores, -np.inf)


@single_blas
def logistic_decision(X: np.ndarray, y: np.ndarray, W: np.ndarray, *, C: float = 1.0,
                      scaled: bool = False, max_iter: int = 100,
                      tol: float = 1e-10) -> np.ndarray:
    """Decision values of binary L2-penalised logistic regressions, one per resample.

    Minimises ``sum_i w_ri logloss(y_i, b + x_i' beta) + sum_j s_rj^2 beta_j^2 / (2 C)``
    (scikit-learn's objective; ``s_rj`` as in :func:`least_squares_predict`) by batched Newton
    steps for all resamples at once, until the largest step is below ``tol``.

    Returns
    -------
    ndarray of shape (E, R, n)
    """
    E, n, p = X.shape
    R = W.shape[1]
    X1 = np.concatenate([X, np.ones((E, n, 1))], axis=2)
    pen = np.zeros((E, R, p + 1))
    if scaled:
        sw, sx, sxx = weighted_moments(W, X)
        pen[..., :p] = _scale_variances(sw, sx, sxx) / C
    else:
        pen[..., :p] = 1.0 / C
    theta = np.zeros((E, R, p + 1))
    X1t = np.swapaxes(X1, 1, 2)  # (E, p+1, n)
    idx = np.arange(p + 1)
    for _ in range(max_iter):
        eta = np.matmul(theta, X1t)  # (E, R, n)
        mu = 0.5 * (1.0 + np.tanh(0.5 * eta))
        grad = np.matmul(W * (mu - y[:, None, :]), X1) + pen * theta
        v = W * mu * (1.0 - mu)  # (E, R, n)
        hess = np.matmul(X1t[:, None, :, :] * v[..., None, :], X1[:, None, :, :])
        hess[..., idx, idx] += pen
        step = sym_solve(hess, grad[..., None])[..., 0]
        theta -= step
        if np.max(np.abs(step)) < tol:
            break
    return np.matmul(theta, X1t)


@single_blas
def dummy_predict(y: np.ndarray, W: np.ndarray, *, kind: str, n_classes: int = 0) -> np.ndarray:
    """Baselines: the weighted training mean (``kind='mean'``, shape (E, R, n)) or the training
    class shares (``kind='prior'``, shape (E, R, n, K)) for every row."""
    n = W.shape[2]
    if kind == "mean":
        mean = np.matmul(W, y[..., None])[..., 0] / W.sum(axis=2)
        return np.repeat(mean[..., None], n, axis=2)
    onehot = (y[..., None] == np.arange(n_classes)).astype(float)
    share = np.matmul(W, onehot) / W.sum(axis=2)[..., None]
    return np.repeat(share[..., None, :], n, axis=2)


# --------------------------------------------------------------------------------------------
# recognising supported estimators
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class FastPredictor:
    """A recognised estimator: ``kind`` and the settings the batched fit needs.

    ``predict(X, y, W, n_classes)`` returns ``(E, R, n)`` predictions (class codes for
    classifiers); ``predict_proba(...)`` returns ``(E, R, n, K)`` probabilities (classifiers).
    """

    kind: str  # 'ols', 'ridge', 'lda', 'logistic', 'dummy_mean', 'dummy_prior', 'dummy_mode'
    options: dict[str, Any]
    is_classifier: bool
    has_proba: bool

    def _raw(self, X, y, W, n_classes):
        o = self.options
        if self.kind in ("ols", "ridge"):
            return least_squares_predict(X, y, W, **o)
        if self.kind == "lda":
            return lda_decision(X, y, W, n_classes, **o)
        if self.kind == "logistic":
            return logistic_decision(X, y, W, **o)
        if self.kind == "dummy_mean":
            return dummy_predict(y, W, kind="mean")
        return dummy_predict(y, W, kind="prior", n_classes=n_classes)

    def predict(self, X, y, W, n_classes: int = 0) -> np.ndarray:
        raw = self._raw(X, y, W, n_classes)
        if not self.is_classifier:
            return raw
        if self.kind == "logistic":
            return (raw > 0).astype(np.int64)
        return np.argmax(raw, axis=-1)

    def predict_proba(self, X, y, W, n_classes: int) -> np.ndarray:
        raw = self._raw(X, y, W, n_classes)
        if self.kind == "logistic":
            p1 = 0.5 * (1.0 + np.tanh(0.5 * raw))
            return np.stack([1.0 - p1, p1], axis=-1)
        if self.kind == "lda":
            z = raw - np.max(raw, axis=-1, keepdims=True)
            ez = np.exp(z)
            return ez / ez.sum(axis=-1, keepdims=True)
        if self.kind == "dummy_mode":
            return (np.argmax(raw, axis=-1)[..., None] == np.arange(n_classes)).astype(float)
        return raw


def _unwrap(model) -> tuple[Any, bool] | None:
    """(final estimator, scaled) for a bare estimator or Pipeline(StandardScaler, estimator)."""
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    if isinstance(model, Pipeline):
        steps = [s for _, s in model.steps if s not in (None, "passthrough")]
        if len(steps) == 1:
            return steps[0], False
        if len(steps) == 2 and type(steps[0]) is StandardScaler:
            return steps[1], bool(steps[0].with_std)
        return None
    return model, False


def fast_predictor(model, task: str) -> FastPredictor | None:
    """The batched equivalent of ``model`` for ``task``, or ``None`` if there is none.

    Only exact types are recognised (a subclass may change the fit), with the settings under
    which the batched fit solves the same problem as scikit-learn.
    """
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    from sklearn.dummy import DummyClassifier, DummyRegressor
    from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge

    unwrapped = _unwrap(model)
    if unwrapped is None:
        return None
    est, scaled = unwrapped
    t = type(est)
    if task == "regression":
        if t is LinearRegression and not est.positive:
            return FastPredictor("ols", {"fit_intercept": bool(est.fit_intercept)}, False, False)
        if (t is Ridge and not est.positive and np.ndim(est.alpha) == 0 and est.fit_intercept
                and est.alpha > 0):
            return FastPredictor("ridge", {"penalty": float(est.alpha), "scaled": scaled},
                                 False, False)
        if t is DummyRegressor and est.strategy == "mean":
            return FastPredictor("dummy_mean", {}, False, False)
        return None
    if t is LinearDiscriminantAnalysis:
        if est.shrinkage is not None or est.covariance_estimator is not None:
            return None
        if est.solver != "svd" and est.priors is not None:
            return None
        priors = None if est.priors is None else np.asarray(est.priors, float)
        return FastPredictor("lda", {"priors": priors, "divisor": "n-k"}, True, True)
    if t is LogisticRegression:
        penalty = getattr(est, "penalty", "deprecated")
        l1 = getattr(est, "l1_ratio", None)
        if (est.solver == "liblinear" or penalty not in ("l2", "deprecated")
                or l1 not in (None, 0, 0.0) or not est.fit_intercept
                or est.class_weight is not None or not np.isfinite(est.C)):
            return None
        return FastPredictor("logistic", {"C": float(est.C), "scaled": scaled},
                             True, True)
    if t is DummyClassifier and est.strategy in ("prior", "most_frequent"):
        kind = "dummy_prior" if est.strategy == "prior" else "dummy_mode"
        return FastPredictor(kind, {}, True, True)
    return None
