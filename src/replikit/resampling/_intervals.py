"""Intervals for prediction-error estimates: the reductions of per-row loss matrices behind
:meth:`replikit.resampling.ErrorEstimate.confidence_interval`.

- **nested cross-validation** (Bates, Hastie & Tibshirani (2024), Algorithm 1; the authors' R
  package ``nestedcv``, ``nested_cv`` and ``nested_cv_helper``): for each of R random
  partitions into K folds, the model is fitted without every pair of folds ``{a, b}``
  (``K (K - 1) / 2`` fits, each tested on the rows of ``a`` and ``b``) and without every single
  fold ``j`` (``K`` fits, tested on ``j``). For outer fold ``j``:
  ``a_j = mean(e_in) - mean(e_out)`` with ``e_in`` the inner cross-validation errors of the
  data without ``j`` (rows of every fold ``f != j`` from the fit without ``{j, f}``) and
  ``e_out`` the errors on ``j`` from the fit without ``j``; ``b_j = var(e_out) / n_j``. Then
  ``MSE_hat = mean(a_j^2) - mean(b_j)`` over all (repeat, fold) pairs (their eq. 15), the
  nested estimate ``err_NCV`` is the mean of all inner errors, the bias correction is
  ``bias = (1 + ((K - 2) / K)^1.5) (err_NCV - err_CV)`` (Algorithm 1, step 4; ``err_CV`` the
  K-fold estimate of the same partitions) and the interval is
  ``err_NCV - bias ± z_{1-α/2} · SE`` with ``SE = sqrt((K - 1) / K) · sqrt(max(0, MSE_hat))``,
  kept between the naive ``sd(e) / sqrt(n)`` and ``sqrt(K)`` times it (``sd(e)`` the SD of the
  inner errors; the package's ``ugp_infl`` clipped to ``[1, sqrt(K)]``).
- **Wald (naive)**: ``estimate ± z · sd(e_i) / sqrt(n)`` with ``e_i`` each row's loss averaged
  over the repeats (Bates et al. (2024), eq. 3): rows are treated as independent, folds and
  repeats are not (repeating the partition does not shrink the SE).
- **t** / **exact**: one hold-out split's per-row test losses, ``mean ± t_{m-1} sd / sqrt(m)``,
  or the Clopper–Pearson interval of the error count for the 0–1 loss.
- **corrected t** (Nadeau & Bengio (2003), the corrected resampled t): H random hold-out
  splits with ``m`` test rows each, ``SE^2 = (1/H + m / (n - m)) s^2`` with ``s^2`` the
  variance of the split errors, Student's t on ``H - 1`` df.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["NestedAccumulator", "pair_index", "wald_rows", "holdout_single", "corrected_t"]


def pair_index(K: int) -> tuple[np.ndarray, np.ndarray]:
    """The pairs ``a < b`` of K folds, in the order of ``numpy.triu_indices(K, 1)``."""
    return np.triu_indices(K, 1)


class NestedAccumulator:
    """Sums over chunks of repetitions of nested CV, reduced to the interval by :meth:`result`.

    ``add(L_pairs, L_out, fold)``: ``L_pairs`` (r, P, n) losses of the pair fits (NaN off their
    test rows), ``L_out`` (r, K, n) losses of the single-fold fits (NaN off fold j), ``fold``
    (r, n) each row's fold.
    """

    def __init__(self, K: int, n: int):
        self.K, self.n = K, n
        self.a2 = self.b = 0.0
        self.pivots = 0
        self.ho_sum = self.ho_sumsq = 0.0
        self.ho_count = 0
        self.cv_sum = 0.0
        self.cv_count = 0
        self.repeats = 0

    def add(self, L_pairs: np.ndarray, L_out: np.ndarray, fold: np.ndarray) -> None:
        K = self.K
        ia, ib = pair_index(K)
        Fm = (fold[:, None, :] == np.arange(K)[None, :, None]).astype(float)  # (r, K, n)
        nk = Fm.sum(axis=2)  # (r, K)
        Lp = np.nan_to_num(L_pairs, nan=0.0)
        S = np.einsum("rpn,rkn->rpk", Lp, Fm)  # pair p's loss sum on each fold's rows
        P = ia.size
        Lo = np.nan_to_num(L_out, nan=0.0)
        out_sum = Lo.sum(axis=2)
        out_mean = out_sum / nk
        dev = np.where(Fm > 0, Lo - out_mean[..., None], 0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            out_var = np.where(nk > 1, (dev ** 2).sum(axis=2) / (nk - 1), 0.0)
        finite = np.isfinite(L_pairs)
        vals = L_pairs[finite]
        self.add_sums(S[:, np.arange(P), ia], S[:, np.arange(P), ib], float(vals.sum()),
                      float(np.sum(vals ** 2)), int(vals.size), out_sum, out_var, nk)

    def add_sums(self, s_a: np.ndarray, s_b: np.ndarray, ho_sum: float, ho_sumsq: float,
                 ho_count: int, out_sum: np.ndarray, out_var: np.ndarray,
                 nk: np.ndarray) -> None:
        """:meth:`add` from the sums it needs, for ``r`` partitions: ``s_a``/``s_b`` (r, P)
        pair p's loss sums on the rows of its folds ``a``/``b`` (:func:`pair_index`);
        ``ho_sum``, ``ho_sumsq``, ``ho_count`` the sum, sum of squares and number of every
        pair fit's test losses; ``out_sum``, ``out_var``, ``nk`` (r, K) the single-fold fits'
        loss sums, loss variances (``ddof=1``; 0 for one row) and rows per fold. The
        batched path computes them a few fits at a time without the (r, P, n) losses."""
        ia, ib = pair_index(self.K)
        P = ia.size
        A = np.zeros((P, self.K))
        A[np.arange(P), ia] = 1.0
        B = np.zeros((P, self.K))
        B[np.arange(P), ib] = 1.0
        in_sum = s_b @ A + s_a @ B  # (r, K): inner CV of the data without each outer fold
        in_cnt = self.n - nk
        e_in = in_sum / in_cnt
        out_mean = out_sum / nk
        a = e_in - out_mean
        self.a2 += float(np.sum(a ** 2))
        self.b += float(np.sum(out_var / nk))
        self.pivots += a.size
        self.ho_sum += ho_sum
        self.ho_sumsq += ho_sumsq
        self.ho_count += ho_count
        self.cv_sum += float(out_sum.sum())
        self.cv_count += int(nk.sum())
        self.repeats += nk.shape[0]

    def result(self) -> dict:
        """The interval's parts: ``center`` (err_NCV − bias), ``se``, and the pieces."""
        K, n = self.K, self.n
        err_ncv = self.ho_sum / self.ho_count
        err_cv = self.cv_sum / self.cv_count
        var_ho = max(0.0, (self.ho_sumsq - self.ho_sum ** 2 / self.ho_count)
                     / max(1, self.ho_count - 1))
        sd_ho = math.sqrt(var_ho)
        mse = self.a2 / self.pivots - self.b / self.pivots
        n_sub = math.floor(n * (K - 1) / K)
        base = sd_ho / math.sqrt(n_sub) if sd_ho > 0 else 0.0
        infl = math.sqrt(max(0.0, mse)) / base if base > 0 else 1.0
        infl = min(max(infl, 1.0), math.sqrt(K))
        se = sd_ho / math.sqrt(n) * infl
        bias = (1.0 + ((K - 2) / K) ** 1.5) * (err_ncv - err_cv)
        return {"center": err_ncv - bias, "se": se, "nested_estimate": err_ncv,
                "nested_cv_estimate": err_cv, "bias": bias, "mse": mse, "inflation": infl,
                "nested_repeats": self.repeats}


def wald_rows(L: np.ndarray, n_repeats: int) -> float:
    """Naive SE of K-fold / leave-one-out: the SD of each row's loss averaged over the repeats,
    over sqrt(n). ``L`` is (n_repeats * K, n) with each row tested once per repeat."""
    row = np.nansum(L.reshape(n_repeats, -1, L.shape[1]), axis=1).mean(axis=0)
    return float(np.std(row, ddof=1) / math.sqrt(row.size))


def holdout_single(losses: np.ndarray, exact: bool) -> dict:
    """Parts of one split's interval: the t interval of the per-row losses, or the counts of
    the Clopper–Pearson interval (``exact``, 0–1 losses)."""
    m = losses.size
    mean = float(losses.mean())
    sd = float(np.std(losses, ddof=1)) if m > 1 else math.nan
    out = {"center": mean, "se": sd / math.sqrt(m), "df": float(m - 1), "m": m}
    if exact:
        out["errors"] = int(round(float(losses.sum())))
    return out


def clopper_pearson(k: int, m: int, level: float) -> tuple[float, float]:
    """The exact (Clopper–Pearson) interval of a binomial proportion ``k / m``."""
    from scipy import stats

    a = (1 - level) / 2
    low = 0.0 if k == 0 else float(stats.beta.ppf(a, k, m - k + 1))
    high = 1.0 if k == m else float(stats.beta.ppf(1 - a, k + 1, m - k))
    return low, high


def corrected_t(split_errors: np.ndarray, n_test: int, n: int) -> dict:
    """Nadeau & Bengio's (2003) corrected resampled t for H hold-out splits."""
    H = split_errors.size
    s2 = float(np.var(split_errors, ddof=1))
    se = math.sqrt((1.0 / H + n_test / (n - n_test)) * s2)
    return {"center": float(split_errors.mean()), "se": se, "df": float(H - 1)}
