"""Batched fits of linear models over many resamples at once (the fast path of the resampling
estimators of Etherington & Lieske (2019)).

A resample is a vector of non-negative *training weights* over the n rows: bootstrap counts, or
0/1 masks for folds and hold-outs. Fitting a weighted linear model only needs weighted moments of
the data, and the moments of all resamples come from one matrix product ``W @ F`` (``W``: the
``(R, n)`` weight matrix, ``F``: per-row features such as ``x_i``, ``x_i x_i'``, ``x_i y_i``).
The R small systems are then solved by batched Cholesky factorisations (:func:`spd_solve`) and
every row is predicted by every resample's rule in one more product. All functions take a leading *batch*
axis ``E`` (independent datasets, used by :func:`~replikit.resampling.simulate_resampling`;
``E = 1`` for one dataset):

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
of Etherington & Lieske (2019) ran; scikit-learn 1.9 divides by ``n``. The divisor scales the quadratic form against
the log-prior term, so the two agree exactly when the priors are equal and otherwise differ only
for rows very close to the boundary. ``divisor='n'`` reproduces scikit-learn >= 1.9.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._linalg import HADAMARD_TOL, pinv_solve, sym_solve
from .._threads import single_blas

__all__ = ["FastPredictor", "fast_predictor", "lda_decision", "lda_margin", "spd_solve", "least_squares_predict",
           "logistic_decision", "dummy_predict", "weighted_moments"]

_BLOCK = 4_000_000  # elements in a temporary block of per-row products
#: Cells of the rows' outer products the batched logistic regression keeps for all its Newton
#: steps (32,000,000: 256 MB); beyond, each step forms them a block of rows at a time.
_OUTER_CELLS = 32_000_000
#: Weighted moments come from the Gram matrices of the rows' distinct weight patterns when
#: there are at most ``n // PATTERN_SHARE`` of them (:func:`_weight_patterns`).
PATTERN_SHARE = 4
_PATTERN_SEED = 20_261_128  # the projection that finds the patterns (any fixed seed)
WIDE_FEATURES = 32  # from this many features, moments are built resample by resample (syrk)
#: The quasi-Newton steps of the batched logistic regression with many features renew a
#: resample's inverse Hessian when its step grew beyond this many times the one before
#: (:func:`_quasi_newton`).
RENEW_GROWTH = 2.0


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
        ``sum_i w_ri``, ``sum_i w_ri x_i`` and ``sum_i w_ri x_i x_i'``. With few features
        (``p < WIDE_FEATURES``) all resamples come from one product of ``W`` with the rows'
        outer products, over blocks of rows (memory stays bounded for large n); with more,
        each resample is one symmetric product ``(sqrt(w) X)'(sqrt(w) X)`` on its rows
        of non-zero weight (BLAS ``syrk``), which does half the arithmetic of the outer
        products and builds no ``n x p^2`` temporaries: 20 resamples of 20,000 x 200 rows
        3.9 s -> 1.1 s.
    """
    E, n, p = X.shape
    R = W.shape[1]
    sw = W.sum(axis=2)
    sx = np.matmul(W, X)
    patterns = []
    for e in range(E if R > 1 else 0):  # stops at the first dataset without few patterns
        found = _weight_patterns(W[e])
        if found is None:
            break
        patterns.append(found)
    if R > 1 and len(patterns) == E:
        sxx = np.stack([_pattern_grams(W[e], X[e], *patterns[e]) for e in range(E)])
        return sw, sx, sxx
    if p >= WIDE_FEATURES:
        sxx = _grams(W.reshape(E * R, n), X, np.repeat(np.arange(E), R))
        return sw, sx, sxx.reshape(E, R, p, p)
    sxx = np.zeros((E, R, p * p))
    step = max(1, _BLOCK // max(1, E * p * p))
    for start in range(0, n, step):
        stop = min(n, start + step)
        xb = X[:, start:stop, :]
        outer = (xb[:, :, :, None] * xb[:, :, None, :]).reshape(E, stop - start, p * p)
        sxx += np.matmul(W[:, :, start:stop], outer)
    return sw, sx, sxx.reshape(E, R, p, p)


def _blocked_moments(W: np.ndarray, n: int, width: int, features) -> np.ndarray:
    """``W @ F`` for per-row features ``F`` (``(E, n, width)``) built a block of rows at a time
    by ``features(start, stop)`` and summed: the ``n x width`` array (the rows' outer products
    of LDA, ``n p^2``: 9 GB at 1,000,000 x 34) is never formed whole; each block holds about
    :data:`_BLOCK` elements per dataset. With one block (``n`` up to ``_BLOCK / width`` rows,
    whatever the datasets ``E``) this is exactly the single product, as before."""
    E, R = W.shape[:2]
    step = max(1, _BLOCK // max(1, width))
    if step >= n:
        return np.matmul(W, features(0, n))
    out = np.zeros((E, R, width))
    for start in range(0, n, step):
        stop = min(n, start + step)
        out += np.matmul(W[:, :, start:stop], features(start, stop))
    return out


def _weight_patterns(V: np.ndarray):
    """The distinct weight columns of ``V`` (``(M, n)``: a row's weights in the ``M`` fits):
    ``(first, inverse)`` with ``V[:, first[inverse]] == V``, or ``None`` when there are more
    than ``n // PATTERN_SHARE`` of them. Cross-validation's masks have few (a row's weights
    follow its fold: ``K`` patterns for the ``K**2`` fits of one repetition of nested CV),
    the bootstrap's counts about one per row. Found by one random projection of every column
    and checked exactly (a projection shared by different columns only costs the shortcut)."""
    M, n = V.shape
    key = np.random.default_rng(_PATTERN_SEED).random(M)
    _, first, inverse = np.unique(key @ V, return_index=True, return_inverse=True)
    if first.size > n // PATTERN_SHARE or not np.array_equal(V[:, first[inverse]], V):
        return None
    return first, inverse


def _pattern_grams(V: np.ndarray, X: np.ndarray, first: np.ndarray,
                   inverse: np.ndarray) -> np.ndarray:
    """``sum_i v_mi x_i x_i'`` for every row of ``V`` (``(M, n)``) when the rows' weight
    columns take few distinct values (:func:`_weight_patterns`): the Gram matrix of each
    pattern's rows once (``n p^2`` in all), then every fit's as the weighted sum of the
    patterns' (``M G p^2``) instead of ``M n p^2``. One repetition of nested 10-fold CV of
    20,000 x 200 rows (55 fits): 2.9 s -> 0.33 s in all, of which these moments 0.08 s."""
    M, n = V.shape
    p = X.shape[1]
    G = first.size
    coef = V[:, first].astype(float)  # (M, G): each fit's weight on each pattern
    order = np.argsort(inverse, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(np.bincount(inverse, minlength=G))])
    grams = np.zeros((G, p, p))
    for g in np.flatnonzero(coef.any(axis=0)):  # a pattern no fit uses needs no Gram matrix
        rows = X[order[bounds[g]:bounds[g + 1]]]
        grams[g] = rows.T @ rows
    return (coef @ grams.reshape(G, p * p)).reshape(M, p, p)


def _grams(V: np.ndarray, X: np.ndarray, owner: np.ndarray) -> np.ndarray:
    """``sum_i v_mi x_i x_i'`` for every weight row ``V[m]`` (``(M, n)``, non-negative) on the
    rows of dataset ``X[owner[m]]`` (``X``: ``(E, n, p)``): one symmetric rank-k update
    ``(sqrt(v) X)'(sqrt(v) X)`` (BLAS ``syrk``) per weight row, on its rows of non-zero
    weight (see :func:`weighted_moments`)."""
    M = V.shape[0]
    p = X.shape[2]
    out = np.empty((M, p, p))
    X = np.ascontiguousarray(X)  # rows are gathered: a data frame's columns come F-ordered
    buffer = np.empty((X.shape[1], p))  # the scaled rows, gathered in place
    for m in range(M):
        v = V[m]
        rows = np.flatnonzero(v)
        scaled = buffer[:rows.size]
        np.take(X[owner[m]], rows, axis=0, out=scaled, mode="clip")  # (rows are valid:
        # "clip" skips the bounds check that makes "raise" buffer its output)
        scaled *= np.sqrt(v[rows])[:, None]
        np.matmul(scaled.T, scaled, out=out[m])  # numpy runs a' a as one syrk
    return out


def _scale_variances(sw, sx, sxx_diag):
    """Weighted variances (ddof 0) per resample from ``sum w``, ``sum w x`` and ``sum w x^2``;
    zero variances become 1 (StandardScaler)."""
    mean = sx / sw[..., None]
    var = sxx_diag / sw[..., None] - mean**2
    var = np.maximum(var, 0.0)
    tiny = var <= 10 * np.finfo(float).eps * np.maximum(1.0, mean**2)
    return np.where(tiny, 1.0, var)


def spd_solve(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Solve a stack of symmetric PSD systems ``A x = B`` by batched Cholesky factorisations.

    The same contract as :func:`replikit._linalg.sym_solve` (systems whose Hadamard ratio
    ``det(A) / prod(diag(A))`` is below ``HADAMARD_TOL`` get the minimum-norm solution), about
    2.5 times faster on the many small systems of a batched fit: one LAPACK ``potrf`` per
    system (``numpy.linalg.cholesky``) gives both the determinant (``prod(diag(L))**2``) and
    the factor, and the two triangular solves run vectorised over the stack (a loop over the
    ``p`` rows, each step one numpy operation on every system), instead of ``sym_solve``'s
    ``slogdet`` and ``solve`` (two LU factorisations per system). If a system is not
    numerically positive definite the whole stack goes to ``sym_solve``.

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
    if p > _MAX_CHOL_P or A.size == 0:
        return sym_solve(A, B)
    A2 = A.reshape(-1, p, p)
    B2 = B.reshape(A2.shape[0], p, -1)
    fact = _cholesky(A2)
    if fact is None:
        return sym_solve(A, B)
    L, logdet = fact
    diag_a = np.diagonal(A2, axis1=1, axis2=2)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = logdet - np.sum(np.log(diag_a), axis=1)
    ok = np.all(diag_a > 0, axis=1) & (ratio > np.log(HADAMARD_TOL))
    x = _cho_solve(L if ok.all() else np.where(ok[:, None, None], L, np.eye(p)), B2)
    if not ok.all():
        x[~ok] = pinv_solve(A2[~ok], B2[~ok])
    return x.reshape(*shape, p, B2.shape[-1])


_MAX_CHOL_P = 64  # above this, one LU solve per system is as fast as the vectorised loops


def _cholesky(A2: np.ndarray):
    """``(L, log det A)`` of a stack ``(N, p, p)`` by ``numpy.linalg.cholesky``, or ``None``
    if a matrix is not numerically positive definite."""
    try:
        L = np.linalg.cholesky(A2)
    except np.linalg.LinAlgError:
        return None
    with np.errstate(divide="ignore"):
        logdet = 2 * np.sum(np.log(np.diagonal(L, axis1=1, axis2=2)), axis=1)
    return L, logdet


def _cho_solve(L: np.ndarray, B2: np.ndarray) -> np.ndarray:
    """Solve ``L L' x = B`` for a stack ``L (N, p, p)``, ``B (N, p, m)``: forward and back
    substitution, each step one vectorised operation over the stack (laid out with the stack
    last, so that every operation runs along it)."""
    p = L.shape[-1]
    Lt = np.ascontiguousarray(np.moveaxis(L, 0, -1))  # (p, p, N)
    Bt = np.ascontiguousarray(np.moveaxis(B2, 0, -1).swapaxes(0, 1))  # (m, p, N)
    z = np.empty(Bt.shape, float)
    for i in range(p):  # L z = B
        acc = Bt[:, i] - np.einsum("kn,mkn->mn", Lt[i, :i], z[:, :i]) if i else Bt[:, i]
        z[:, i] = acc / Lt[i, i]
    x = np.empty_like(z)
    for i in range(p - 1, -1, -1):  # L' x = z
        acc = z[:, i] - np.einsum("kn,mkn->mn", Lt[i + 1:, i], x[:, i + 1:]) if i < p - 1 else z[:, i]
        x[:, i] = acc / Lt[i, i]
    return np.moveaxis(x.swapaxes(0, 1), -1, 0)


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
    ``Ridge(alpha=...)``, and ``penalty = 0`` is ordinary least squares.

    The systems are formed and solved in standardised coordinates, whatever the columns'
    units: the rows are first centred and scaled by the dataset's column means and SDs (all
    rows), and each resample's centred Gram matrix is then rescaled to unit weighted variances
    (its correlation matrix times ``sum w``), so that a column in the billions next to 0/1
    dummies neither swamps the others in the Cholesky factorisation nor in the pseudo-inverse's
    eigenvalue cut-off. Least-squares predictions do not depend on the columns' scales (exactly,
    in exact arithmetic); the penalty is carried over so that it means what scikit-learn's
    does: ``penalty`` on the resample-standardised coefficients when ``scaled``, ``penalty /
    scale^2`` on them otherwise. When a resample's centred Gram matrix is singular (full dummy
    sets next to the intercept, a column that is a combination of others) the solution is the
    minimum-norm one in the resample-standardised coordinates: what scikit-learn's
    ``make_pipeline(StandardScaler(), LinearRegression())`` fitted on the resample's rows
    returns; predictions on rows in the span of the training rows are unique, and on the
    gapminder data (a 1e9-scale population next to 141 country dummies) the batched fit gives
    scikit-learn's pipeline's predictions to about 1e-12 on either dummy encoding. A column
    constant on a resample's rows gets a zero coefficient (``StandardScaler`` leaves it
    unscaled, and ``LinearRegression``'s least-squares solver finds it null).

    Returns
    -------
    ndarray of shape (E, R, n)
    """
    E, n, p = X.shape
    X = np.asarray(X, float)
    if fit_intercept:
        centre = X.mean(axis=1, keepdims=True)
        spread = X.std(axis=1, keepdims=True)
    else:  # no centring without an intercept: only a scale (the root mean square)
        centre = np.zeros((E, 1, p))
        spread = np.sqrt(np.mean(X * X, axis=1, keepdims=True))
    spread = np.where(spread > 10 * np.finfo(float).eps * np.maximum(1.0, np.abs(X).max(
        axis=1, keepdims=True)), spread, 1.0)
    Z = (X - centre) / spread  # (E, n, p): every column in units of its full-data SD
    sw, sx, sxx = weighted_moments(W, Z)
    sy = np.matmul(W, y[..., None])[..., 0]
    sxy = np.matmul(W * y[..., None, :], Z)  # (w y)' Z: no (n, p) copy of Z times y
    if fit_intercept:
        xm = sx / sw[..., None]
        ym = sy / sw
        gram = sxx - sw[..., None, None] * xm[..., :, None] * xm[..., None, :]
        rhs = sxy - sw[..., None] * xm * ym[..., None]
        # each resample's weighted SDs in these units; a column constant on its rows (to
        # rounding: an absent dummy level, a study-level covariate within one study) is null
        var = np.maximum(np.diagonal(gram, axis1=-2, axis2=-1) / sw[..., None], 0.0)
        constant = var <= 64 * n * np.finfo(float).eps * (1.0 + xm**2)
        sd = np.sqrt(np.where(constant, 1.0, var))
    else:
        xm = np.zeros_like(sx)
        gram, rhs = sxx, sxy
        constant = np.diagonal(gram, axis1=-2, axis2=-1) <= 0
        sd = np.ones_like(sx)
    # u = z / sd: unit weighted variance in every resample (the resample-standardised columns)
    gram = gram / (sd[..., :, None] * sd[..., None, :])
    rhs = rhs / sd
    idx = np.arange(p)
    if constant.any():  # a null column: coefficient 0 (rows and columns cleared, unit diagonal)
        gram = np.where(constant[..., :, None] | constant[..., None, :], 0.0, gram)
        gram[..., idx, idx] = np.where(constant, 1.0, gram[..., idx, idx])
        rhs = np.where(constant, 0.0, rhs)
    if penalty > 0:
        # scaled: penalty on the coefficients of the resample-standardised columns, which are
        # the u columns; otherwise on the raw coefficients, beta_j = gamma_j / (spread_j sd_rj)
        pen = np.ones_like(sx) if scaled else 1.0 / (spread[:, 0][:, None, :] * sd) ** 2
        gram[..., idx, idx] += penalty * np.where(constant, 0.0, pen)
    gamma = spd_solve(gram, rhs[..., None])[..., 0]  # (E, R, p), on the u columns
    beta = gamma / sd  # on the z columns
    pred = np.matmul(beta, np.swapaxes(Z, 1, 2))  # (E, R, n)
    if fit_intercept:
        pred += (ym - np.sum(xm * beta, axis=-1))[..., None]
    return pred


def _unit_scale(X: np.ndarray) -> np.ndarray:
    """``X`` with every column divided by its SD over the dataset's rows (constant columns
    kept). LDA's discriminant scores are invariant to the columns' scales in exact arithmetic;
    on the raw columns a 1e9-scale column next to 0/1 dummies puts the dummies' directions
    under the pseudo-inverse's relative cut-off whenever the pooled covariance is singular (a
    full dummy set, a level absent from a resample's training rows)."""
    X = np.asarray(X, float)
    sd = X.std(axis=1, keepdims=True)
    big = np.abs(X).max(axis=1, keepdims=True)
    return X / np.where(sd > 10 * np.finfo(float).eps * np.maximum(1.0, big), sd, 1.0)


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
    X = _unit_scale(X)
    if n_classes == 2:
        d = _lda_two_class(X, y, W, priors=priors, divisor=divisor)
        if d is not None:
            return np.stack([np.zeros_like(d), d], axis=-1)
    return _lda_general(X, y, W, n_classes, priors=priors, divisor=divisor)


@single_blas
def lda_margin(X: np.ndarray, y: np.ndarray, W: np.ndarray, *,
               priors: np.ndarray | None = None, divisor: str = "n-k") -> np.ndarray:
    """Two-class LDA: ``delta_1(x) - delta_0(x)`` of every row under every resample's rule
    (:func:`lda_decision`'s two columns in one; a row is predicted class 1 when it is > 0).

    Returns
    -------
    ndarray of shape (E, R, n)
    """
    X = _unit_scale(X)
    d = _lda_two_class(X, y, W, priors=priors, divisor=divisor)
    if d is None:
        scores = _lda_general(X, y, W, 2, priors=priors, divisor=divisor)
        with np.errstate(invalid="ignore"):
            d = scores[..., 1] - scores[..., 0]
    return d


def _lda_two_class(X, y, W, *, priors, divisor):
    """Two-class LDA without forming the within-class scatter ``S_w``: with ``G`` the weighted
    Gram matrix of the centred rows, ``T = G - n m m'`` the total scatter and ``d = m_1 - m_0``,
    ``S_w = T - (n_0 n_1 / n) d d'`` (Fisher 1936; e.g. Hastie, Tibshirani & Friedman 2009,
    sec. 4.3.3), so two Sherman–Morrison updates (Sherman & Morrison 1950) give
    ``S_w^-1 d`` from one Cholesky factorisation of ``G`` and two right-hand sides — no
    ``p x p`` arithmetic beyond the Gram product and the factorisation. ``det S_w = det G
    (1 - n m'G^-1 m)(1 - c d'T^-1 d)`` gives ``sym_solve``'s Hadamard-ratio test on ``S_w``
    exactly; the resamples that fail it (or whose training rows miss a class, or when ``G``
    is not positive definite) are refitted by the general path. Returns ``None`` when
    the whole batch must take the general path.

    The rule is that of :func:`_lda_general` up to rounding: LDA is equivariant under a shift
    of the features, so centring every dataset's rows on their mean changes no prediction.
    """
    E, n, p = X.shape
    if p > _MAX_CHOL_P:
        return None
    W = np.asarray(W, float)
    R = W.shape[1]
    Xc = X - X.mean(axis=1, keepdims=True)
    y1 = (y == 1).astype(float)
    if not np.all((y == 0) | (y == 1)):
        return None

    def features(a, b):  # [x x', x y1, x, y1] per row of a block
        xb, yb = Xc[:, a:b], y1[:, a:b, None]
        outer = (xb[..., :, None] * xb[..., None, :]).reshape(E, b - a, p * p)
        return np.concatenate([outer, xb * yb, xb, yb], axis=2)

    M = _blocked_moments(W, n, p * p + 2 * p + 1, features)
    sw = W.sum(axis=2)
    n1 = M[..., -1]
    n0 = sw - n1
    if not (np.all(n1 > 0) and np.all(n0 > 0)):
        return None
    G = M[..., :p * p].reshape(E * R, p, p)
    fact = _cholesky(G)
    if fact is None:
        return None
    L, logdet = fact
    s1 = M[..., p * p:p * p + p]
    sx = M[..., p * p + p:p * p + 2 * p]
    s0 = sx - s1
    m1, m0 = s1 / n1[..., None], s0 / n0[..., None]
    diff = m1 - m0
    m = sx / sw[..., None]
    Z = _cho_solve(L, np.stack([diff, m], axis=-1).reshape(E * R, p, 2)).reshape(E, R, p, 2)
    zd, zm = Z[..., 0], Z[..., 1]
    den1 = 1.0 - sw * np.sum(m * zm, axis=-1)  # det T / det G
    with np.errstate(divide="ignore", invalid="ignore"):
        h = zd + zm * (sw * np.sum(m * zd, axis=-1) / den1)[..., None]  # T^-1 d
        den2 = 1.0 - (n0 * n1 / sw) * np.sum(diff * h, axis=-1)  # det S_w / det T
        a = h / den2[..., None]  # S_w^-1 d
        diag_g = np.diagonal(G, axis1=1, axis2=2).reshape(E, R, p)
        diag_w = diag_g - s1 ** 2 / n1[..., None] - s0 ** 2 / n0[..., None]
        ratio = (logdet.reshape(E, R) + np.log(den1) + np.log(den2)
                 - np.sum(np.log(diag_w), axis=-1))
    ok = (den1 > 0) & (den2 > 0) & np.all(diag_w > 0, axis=-1) & (ratio > np.log(HADAMARD_TOL))
    denom = sw - 2 if divisor == "n-k" else sw
    if priors is None:
        dlogp = np.log(n1) - np.log(n0)
    else:
        pri = np.asarray(priors, float)
        dlogp = np.log(pri[1]) - np.log(pri[0])
    with np.errstate(invalid="ignore", over="ignore"):  # failed resamples are refitted below
        a = a * denom[..., None]  # S^-1 d with S = S_w / denom
        c = -np.sum(0.5 * (m1 + m0) * a, axis=-1) + dlogp
        d = np.matmul(a, np.swapaxes(Xc, 1, 2)) + c[..., None]  # (E, R, n)
    for e in np.flatnonzero(~ok.all(axis=1)):  # one general fit per dataset with failures
        r_idx = np.flatnonzero(~ok[e])
        sub = _lda_general(X[e:e + 1], y[e:e + 1], W[e:e + 1, r_idx], 2, priors=priors,
                           divisor=divisor)[0]
        d[e, r_idx] = sub[..., 1] - sub[..., 0]
    return d


def _lda_general(X, y, W, n_classes, *, priors=None, divisor="n-k"):
    E, n, p = X.shape
    K = n_classes
    W = np.asarray(W, float)

    def features(a, b):  # every weighted moment: [x x', onehot_k x, onehot_k] per row
        xb = X[:, a:b]
        onehot = (y[:, a:b, None] == np.arange(K)).astype(float)  # (E, rows, K)
        outer = (xb[..., :, None] * xb[..., None, :]).reshape(E, b - a, p * p)
        per_class = (onehot[..., :, None] * xb[..., None, :]).reshape(E, b - a, K * p)
        return np.concatenate([outer, per_class, onehot], axis=2)

    M = _blocked_moments(W, n, p * p + K * p + K, features)
    R = W.shape[1]
    within = M[..., :p * p]  # sum_i w_i x_i x_i', made within below
    sk = M[..., p * p:p * p + K * p].reshape(E, R, K, p)
    nk = M[..., p * p + K * p:]  # (E, R, K)
    sw = nk.sum(axis=-1)
    present = nk > 0
    safe_nk = np.where(present, nk, 1.0)
    means = sk / safe_nk[..., None]
    for k in range(K):  # minus sum_k n_k m_k m_k', in place (flat p*p rows: long inner loops)
        root = sk[..., k, :] / np.sqrt(safe_nk[..., k])[..., None]
        within -= (root[..., :, None] * root[..., None, :]).reshape(E, R, p * p)
    within = within.reshape(E, R, p, p)
    n_present = present.sum(axis=-1)
    denom = sw - n_present if divisor == "n-k" else sw
    if priors is None:
        with np.errstate(divide="ignore"):
            logp = np.log(nk / sw[..., None])
    else:
        logp = np.broadcast_to(np.log(np.asarray(priors, float)), nk.shape).copy()
    if K == 2 and present.all():
        # two classes: only delta_1 - delta_0 matters, one right-hand side;
        # S^-1 (m1 - m0) = denom * within^-1 (m1 - m0)
        diff = means[..., 1, :] - means[..., 0, :]
        a = spd_solve(within, diff[..., None])[..., 0] * denom[..., None]
        mid = 0.5 * (means[..., 1, :] + means[..., 0, :])
        c = -np.sum(mid * a, axis=-1) + logp[..., 1] - logp[..., 0]
        d = np.matmul(a, np.swapaxes(X, 1, 2)) + c[..., None]  # (E, R, n)
        return np.stack([np.zeros_like(d), d], axis=-1)
    cov = within / np.maximum(denom, 1e-300)[..., None, None]
    coef = spd_solve(cov, np.swapaxes(means, -1, -2))  # (E, R, p, K)
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

    The Newton iterations run in standardised coordinates ``z = (x - mean) / sd`` (the full
    rows' mean and SD of each dataset; the penalty rescaled to match), which solve the same
    problem — the decision values are the same — but keep the Hessian well conditioned and
    make ``tol`` a relative criterion, whatever the features' units. Every resample starts from
    the fit to all rows with unit weights (a warm start: a resample's optimum is close to it),
    each Hessian ``sum_i v_ri z_i z_i'`` of all resamples comes from one matrix product with the
    rows' outer products, and each Newton system is solved by a Cholesky factorisation (the
    Hessian is positive definite: the penalty and ``v > 0``).

    Returns
    -------
    ndarray of shape (E, R, n)
    """
    E, n, p = X.shape
    W = np.asarray(W, float)
    R = W.shape[1]
    mean = X.mean(axis=1, keepdims=True)
    sd = X.std(axis=1, keepdims=True)
    sd = np.where(sd > 10 * np.finfo(float).eps * np.maximum(1.0, np.abs(mean)), sd, 1.0)
    # (E, n, p + 1), C-ordered: the Hessians gather its rows (a data frame's columns come
    # F-ordered, and concatenate keeps that order)
    Z1 = np.ascontiguousarray(np.concatenate([(X - mean) / sd, np.ones((E, n, 1))], axis=2))
    pen = np.zeros((E, R, p + 1))
    if scaled:  # each resample's variances: sums of w, w x and w x^2 (no Gram matrices)
        pen[..., :p] = _scale_variances(W.sum(axis=2), np.matmul(W, X),
                                        np.matmul(W, X * X)) / C
    else:
        pen[..., :p] = 1.0 / C
    pen[..., :p] /= sd ** 2  # beta_j = gamma_j / sd_j: the same penalty in z coordinates
    q = p + 1
    iu, ju = np.triu_indices(q)
    # the Hessians' upper triangles from the rows' outer products (E, n, q (q + 1) / 2), or,
    # with many features, one syrk per resample (no n x q^2 / 2 temporary: 3.2 GB at 20,000 x 200)
    wide = q >= WIDE_FEATURES
    k = iu.size
    # with many rows the outer products are formed a block of rows at a time in each Newton
    # step instead of once (n q (q + 1) / 2: 4 GB at 1,000,000 x 31); up to _OUTER_CELLS
    # cells they are kept, as before
    outer = Z1[..., iu] * Z1[..., ju] if not wide and E * n * k <= _OUTER_CELLS else None
    Z1t = np.swapaxes(Z1, 1, 2)

    def hessian_triangles(v, e):
        """``sum_i v_ri z_i z_i'`` (upper triangles) of the resamples ``v`` ``(m, n)`` on
        their datasets' rows ``e``."""
        if outer is not None:
            return (np.einsum("rn,rnk->rk", v, outer[e]) if E > 1 else v @ outer[0])
        step = max(1, _BLOCK // k)
        tri = np.zeros((v.shape[0], k))
        for a in range(0, n, step):
            b = min(n, a + step)
            ob = Z1[:, a:b, iu] * Z1[:, a:b, ju]  # (E, rows, k)
            tri += (np.einsum("rn,rnk->rk", v[:, a:b], ob[e]) if E > 1
                    else v[:, a:b] @ ob[0])
        return tri

    def newton(theta, W, pen, start_inverse=None):
        """Newton steps until every resample's largest step is below ``tol``; a resample that
        has converged leaves the batch (its later steps would be below rounding). With many
        features, quasi-Newton steps instead (:func:`_quasi_newton`)."""
        theta = theta.reshape(E * theta.shape[1], q).copy()
        Wf, penf = W.reshape(-1, n), np.broadcast_to(pen, (*W.shape[:2], q)).reshape(-1, q)
        owner = np.repeat(np.arange(E), W.shape[1])  # dataset of every resample
        if wide:
            return _quasi_newton(theta, Wf, penf, owner, Z1, y, start_inverse, tol,
                                 4 * max_iter).reshape(E, -1, q)
        active = np.arange(theta.shape[0])
        for _ in range(max_iter):
            e = owner[active]
            th = theta[active]
            eta = np.einsum("rj,rnj->rn", th, Z1[e]) if E > 1 else th @ Z1t[0]
            mu = 0.5 * (1.0 + np.tanh(0.5 * eta))
            w = Wf[active]
            if E > 1:
                grad = np.einsum("rn,rnj->rj", w * (mu - y[e]), Z1[e])
            else:
                grad = (w * (mu - y[0])) @ Z1[0]
            grad += penf[active] * th
            tri = hessian_triangles(w * (mu * (1.0 - mu)), e)
            hess = np.empty((active.size, q, q))
            hess[:, iu, ju] = tri
            hess[:, ju, iu] = tri
            hess[:, np.arange(q), np.arange(q)] += penf[active]
            step = _newton_solve(hess, grad)
            theta[active] = th - step
            active = active[np.max(np.abs(step), axis=1) >= tol]
            if active.size == 0:
                break
        return theta.reshape(E, -1, q)

    # the warm start: every dataset's fit to its rows with unit weights (the full-data penalty)
    full_w = np.ones((E, 1, n))
    pen_full = np.zeros((E, 1, q))
    if scaled:  # the full rows' variances are sd ** 2: a penalty of 1 / C on z
        pen_full[..., :p] = 1.0 / C
    else:
        pen_full[..., :p] = 1.0 / (C * sd ** 2)
    start = newton(np.zeros((E, 1, q)), full_w, pen_full)
    start_inverse = None
    if wide:  # the full-data inverse Hessian at the full-data fit: every resample's
        # first quasi-Newton steps (a resample's own differs by O(1 / sqrt(n)))
        mu = 0.5 * (1.0 + np.tanh(0.5 * np.matmul(start, Z1t)[:, 0]))  # (E, n)
        hess = _grams(mu * (1.0 - mu), Z1, np.arange(E))
        hess[:, np.arange(q), np.arange(q)] += pen_full[:, 0]
        start_inverse = sym_solve(hess, np.broadcast_to(np.eye(q), hess.shape))
    theta = newton(np.repeat(start, R, axis=1), W, pen, start_inverse)
    return np.matmul(theta, Z1t)


def _quasi_newton(theta, W, pen, owner, Z1, y, start_inverse, tol, max_iter):
    """The batched logistic regression's steps with many features, where a resample's Hessian
    (``n q^2``) costs about ``q`` gradients (``n q``): each resample keeps an inverse Hessian
    ``B`` and steps by ``B g``; ``B`` starts at its dataset's full-data inverse Hessian
    ``start_inverse`` (or, without one, at the resample's own Hessian) and takes a BFGS update
    after every step (Nocedal & Wright 2006, eq. 6.17: ``B+ = (I - r s y') B (I - r y s') +
    r s s'``, ``r = 1 / y's``, skipped unless ``y's > 0``), so that the steps converge
    superlinearly with few Hessians; a resample whose step grew beyond :data:`RENEW_GROWTH`
    times the one before gets its exact inverse Hessian at its current coefficients (a
    Newton step). Stops a resample when its largest step is below ``tol``.

    ``theta`` ``(N, q)``: the starting coefficients of the ``N`` resamples (weights ``W``
    ``(N, n)``, penalties ``pen`` ``(N, q)``, dataset ``owner`` ``(N,)`` of ``Z1`` ``(E, n,
    q)``, outcomes ``y`` ``(E, n)``). The state of the resamples still stepping is kept
    compact (no gathers of ``N q^2`` per step). 50 bootstrap fits of the 20,000 x 200
    table of ``benchmarks/audit_budget.py``: 12.5 s (the chord method: a resample's own
    Hessian renewed whenever its step shrank by less than 0.8, about 4 per resample) -> 4.2 s
    (about 1.2 per resample), with the scaled penalties' variances taken from sums of ``w x^2``
    rather than from Gram matrices."""
    N, q = theta.shape
    E = Z1.shape[0]
    out = theta.copy()
    ids = np.arange(N)  # the resamples still stepping (the compact state's rows)
    th, w, pen_a, own = theta.copy(), W, pen, owner
    B = np.zeros((N, q, q)) if start_inverse is None else start_inverse[owner]
    exact = np.full(N, start_inverse is not None)  # B set (from some Hessian)
    last = np.full(N, np.inf)
    grad_before = step_before = None
    Z1t0 = Z1[0].T
    for _ in range(max_iter):
        eta = np.einsum("rj,rnj->rn", th, Z1[own]) if E > 1 else th @ Z1t0
        mu = 0.5 * (1.0 + np.tanh(0.5 * eta))
        resid = w * (mu - y[own] if E > 1 else mu - y[0])
        grad = np.einsum("rn,rnj->rj", resid, Z1[own]) if E > 1 else resid @ Z1[0]
        grad += pen_a * th
        if grad_before is not None:  # BFGS: B += U M U' with U = [s, B y]
            s, yv = -step_before, grad - grad_before
            By = np.matmul(B, yv[:, :, None])[:, :, 0]
            sy = np.einsum("rj,rj->r", s, yv)
            yBy = np.einsum("rj,rj->r", yv, By)
            ok = sy > 1e-12 * np.linalg.norm(s, axis=1) * np.linalg.norm(yv, axis=1)
            r = np.where(ok, 1.0 / np.where(ok, sy, 1.0), 0.0)
            U = np.stack([s, By], axis=2)  # (m, q, 2)
            M = np.zeros((th.shape[0], 2, 2))
            M[:, 0, 0] = r * r * yBy + r
            M[:, 0, 1] = M[:, 1, 0] = -r
            B += np.matmul(U, np.matmul(M, np.swapaxes(U, 1, 2)))
        step = np.matmul(B, grad[:, :, None])[:, :, 0]
        size = np.max(np.abs(step), axis=1)
        renew = np.flatnonzero(~exact | (size > RENEW_GROWTH * last))
        if renew.size:
            hess = _grams((w * (mu * (1.0 - mu)))[renew], Z1, own[renew])
            hess[:, np.arange(q), np.arange(q)] += pen_a[renew]
            B[renew] = sym_solve(hess, np.broadcast_to(np.eye(q), hess.shape))
            exact[renew] = True
            step[renew] = np.matmul(B[renew], grad[renew][:, :, None])[:, :, 0]
            size[renew] = np.max(np.abs(step[renew]), axis=1)
        th = th - step
        going = size >= tol
        if not going.all():  # converged resamples leave; the state is compacted
            out[ids[~going]] = th[~going]
            if not going.any():
                return out
            ids, th, w, pen_a, own = ids[going], th[going], w[going], pen_a[going], own[going]
            B, exact, size = B[going], exact[going], size[going]
            grad, step = grad[going], step[going]
        last, grad_before, step_before = size, grad, step
    out[ids] = th
    return out


def _newton_solve(H: np.ndarray, g: np.ndarray) -> np.ndarray:
    """``H^-1 g`` for a stack of positive definite Newton systems (Cholesky; ``sym_solve`` if a
    factorisation fails)."""
    shape = g.shape
    q = shape[-1]
    H2 = H.reshape(-1, q, q)
    if q <= _MAX_CHOL_P:
        fact = _cholesky(H2)
        if fact is not None:
            return _cho_solve(fact[0], g.reshape(-1, q, 1)).reshape(shape)
    return sym_solve(H2, g.reshape(-1, q, 1)).reshape(shape)


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


def _unwrap(model) -> tuple[Any, bool, bool] | None:
    """(final estimator, scaled, centred) for a bare estimator or Pipeline(StandardScaler,
    estimator)."""
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    if isinstance(model, Pipeline):
        steps = [s for _, s in model.steps if s not in (None, "passthrough")]
        if len(steps) == 1:
            return steps[0], False, False
        if len(steps) == 2 and type(steps[0]) is StandardScaler:
            return steps[1], bool(steps[0].with_std), bool(steps[0].with_mean)
        return None
    return model, False, False


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
    est, scaled, centred = unwrapped
    t = type(est)
    if task == "regression":
        if t is LinearRegression and not est.positive:
            if centred and not est.fit_intercept:  # centred columns, no intercept: another fit
                return None
            # the scaler changes no prediction; it only says in which units a rank-deficient
            # fit's minimum-norm coefficients are taken (:func:`least_squares_predict`)
            return FastPredictor("ols", {"fit_intercept": bool(est.fit_intercept),
                                         "scaled": scaled}, False, False)
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
