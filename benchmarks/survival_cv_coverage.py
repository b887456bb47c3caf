"""Calibration (not speed): how often does the interval of a cross-validated C-index cover?

The audit's resampling section, given per-fold scores (``--scores``), reports the mean of the
split scores with the corrected repeated-CV t interval of Nadeau & Bengio (2003)
(:func:`replikit.resampling.summarize_scores`). This script measures its coverage when the
metric is Harrell's C of a Cox model under repeated 5-fold CV, and the naive t interval's (the
fold scores treated as independent) for contrast. The table is in docs/survival.md ("How
honest is the interval of a cross-validated C-index?").

The model: x ~ N(0, I_8), beta = (0.8, -0.6, 0.4, 0, 0, 0, 0, 0); event time from a Cox model
with a Weibull baseline hazard h0(t) = lam * rho * t^(rho - 1), rho = 1.5, lam = 0.1:
T = (-log U / (lam e^{x'beta}))^(1/rho); censoring time exponential, independent of both, its
rate set (on 400,000 subjects) for 30% or 60% censored. n = 100, 300, 1,000.

The learner: scikit-survival ``CoxPHSurvivalAnalysis(alpha=1e-4)``; its risk is x'w. The
resampling: 5 repeats of 5-fold CV (J = 25 splits, n_test/n_train = 1/4), per-fold Harrell's C
(:func:`replikit.experiment.survival.concordance_index`) on the test fold; the intervals from
:func:`replikit.resampling.summarize_scores` on a Scores table (one study per data set, with
``n_train`` and ``n_test``): exactly what the section computes. A test fold without an event
(with 60% censored, a fold of 20 rows has none with probability 0.6^20 = 4e-5) has no C; its
row is left out of the Scores table (which refuses a missing value), as a user would have to.

The targets. Harrell's C has a limit that depends on the censoring, so every truth is taken
under the same censoring: the concordance of a linear risk x'w is P((x_i - x_j)'w > 0 | the pair
is comparable), computed on 1,000,000 comparable pairs of fresh subjects (i the one with the
earlier time, an event); Monte Carlo SD of a truth 0.0005, common to all data sets.

- ``C_XY``: the C of the rule fitted on the data set's n rows (conditional on the data set);
- ``C(n)``: its mean over data sets (the expected C of the learner trained on n rows);
- ``C(n_train)``: the expected C of the learner trained on n_train = 4n/5 rows — the mean over
  data sets and folds of the C of each fold's fitted rule — the quantity the corrected t
  interval is meant for (Nadeau & Bengio (2003); Bates, Hastie & Tibshirani (2024));
- ``C_XY(n_train)``: per data set, the mean C of its own 25 fold rules (conditional).

Run: ``.venv/bin/python benchmarks/survival_cv_coverage.py [n_sims] [n_jobs] [file.npz]``
(defaults 1,000 and 2; about an hour on 2 cores, most of it the Cox fits; with a file, the fold
scores and truths of every data set are saved in it).
``.venv/bin/python benchmarks/survival_cv_coverage.py details file.npz`` prints more of each
setting from that file (:func:`details`).
"""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np

BETA = np.array([0.8, -0.6, 0.4, 0.0, 0.0, 0.0, 0.0, 0.0])
RHO, LAM = 1.5, 0.1
N_FOLDS, N_REPEATS = 5, 5
SIZES = (100, 300, 1000)
CENSORED = (0.3, 0.6)
N_PAIRS = 1_000_000


def _events(rng, size: int) -> tuple[np.ndarray, np.ndarray]:
    x = rng.normal(size=(size, BETA.size))
    u = rng.uniform(size=size)
    t = (-np.log(u) / (LAM * np.exp(x @ BETA))) ** (1.0 / RHO)
    return x, t


def draw(rng, n: int, rate: float):
    """n subjects: covariates, observed time, event indicator."""
    x, t = _events(rng, n)
    c = rng.exponential(scale=1.0 / rate, size=n)
    return x, np.minimum(t, c), t <= c


def censoring_rate(share: float, seed: int = 1) -> float:
    """The exponential censoring rate that censors ``share`` of the subjects (400,000 drawn)."""
    from scipy.optimize import brentq

    rng = np.random.default_rng(seed)
    _, t = _events(rng, 400_000)
    e = rng.exponential(size=t.size)  # censoring time = e / rate

    def censored(log_rate):
        return np.mean(e / np.exp(log_rate) < t) - share
    return float(np.exp(brentq(censored, -12.0, 8.0, xtol=1e-10)))


def comparable_pairs(rng, rate: float, m: int = N_PAIRS) -> np.ndarray:
    """``x_i - x_j`` of ``m`` comparable pairs of independent subjects (i: the earlier time,
    an event): the concordance of a risk x'w is ``mean((D @ w) > 0)``."""
    out, have = [], 0
    while have < m:
        xa, ta, ea = draw(rng, 2 * m, rate)
        a, b = slice(0, m), slice(m, 2 * m)
        a_first = ta[a] < ta[b]
        ok = np.where(a_first, ea[a], ea[b])
        d = np.where(a_first[:, None], xa[a] - xa[b], xa[b] - xa[a])[ok]
        out.append(d.astype(np.float32))
        have += len(d)
    return np.concatenate(out)[:m]


def one_dataset(seed, n: int, rate: float):
    """One data set: the 25 fold C's, the coefficients of the full fit and of the 25 fold fits
    (rows: full, then repeat-major folds)."""
    from sksurv.linear_model import CoxPHSurvivalAnalysis
    from sksurv.util import Surv

    from replikit.errors import DataError
    from replikit.experiment.survival import concordance_index

    rng = np.random.default_rng(seed)
    x, t, e = draw(rng, n, rate)
    y = Surv.from_arrays(e, t)
    coefs = np.empty((1 + N_FOLDS * N_REPEATS, x.shape[1]))
    values = np.empty(N_FOLDS * N_REPEATS)
    sizes = np.empty((N_FOLDS * N_REPEATS, 2), dtype=int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        coefs[0] = CoxPHSurvivalAnalysis(alpha=1e-4).fit(x, y).coef_
        k = 0
        for _ in range(N_REPEATS):
            perm = rng.permutation(n)
            for test in np.array_split(perm, N_FOLDS):
                train = np.setdiff1d(perm, test)
                w = CoxPHSurvivalAnalysis(alpha=1e-4).fit(x[train], y[train]).coef_
                coefs[1 + k] = w
                try:
                    values[k] = concordance_index(t[test], e[test], x[test] @ w).estimate
                except DataError:  # a test fold without an event (or a comparable pair)
                    values[k] = np.nan
                sizes[k] = (train.size, test.size)
                k += 1
    return values, coefs, sizes


def _chunk(seeds, n, rate):
    return [one_dataset(s, n, rate) for s in seeds]


def population_c(pairs: np.ndarray, coefs: np.ndarray, batch: int = 64) -> np.ndarray:
    """The concordance (under the pairs' censoring) of each rule x'w, w a row of ``coefs``."""
    w = coefs.reshape(-1, coefs.shape[-1]).astype(np.float32)
    out = np.empty(len(w))
    for s in range(0, len(w), batch):
        out[s:s + batch] = np.mean((pairs @ w[s:s + batch].T) > 0, axis=0)
    return out.reshape(coefs.shape[:-1])


def naive_t(values: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """mean ± t(J-1) S / sqrt(J), per row of ``values`` (data sets x splits; NaN: no score)."""
    from scipy import stats

    J = np.sum(np.isfinite(values), axis=1)
    m, s = np.nanmean(values, axis=1), np.nanstd(values, axis=1, ddof=1)
    q = stats.t.ppf((1 + level) / 2, J - 1)
    return m - q * s / np.sqrt(J), m + q * s / np.sqrt(J)


def section_intervals(values: np.ndarray, sizes: np.ndarray, level: float = 0.95):
    """The section's intervals: :func:`replikit.resampling.summarize_scores` on a Scores table
    with one study per data set (ordered as ``values``)."""
    import pandas as pd

    from replikit.resampling import summarize_scores

    n_sets, J = values.shape
    rep = np.tile(np.repeat(np.arange(N_REPEATS), N_FOLDS), n_sets)
    frame = pd.DataFrame({
        "study": np.repeat([f"d{i:05d}" for i in range(n_sets)], J), "model": "cox",
        "repeat": rep, "fold": np.tile(np.arange(J) % N_FOLDS, n_sets), "metric": "c_index",
        "value": values.ravel(), "n_train": sizes[..., 0].ravel(),
        "n_test": sizes[..., 1].ravel()}).dropna(subset=["value"])  # a fold without a C
    est = summarize_scores(frame, confidence_level=level).to_frame().sort_values("study")
    return est


def _covers(lo, hi, truth) -> float:
    return float(np.mean((lo <= truth) & (truth <= hi)))


def run(n_sims: int = 1000, n_jobs: int = 2, seed: int = 20240531, sizes=SIZES,
        censored=CENSORED, verbose: bool = True, save: str | None = None) -> list[dict]:
    """Every setting's coverage; prints the table as it goes and returns its rows (with
    ``save``, also the fold scores and truths of every data set, in an ``.npz`` file)."""
    from joblib import Parallel, delayed

    rows, raw = [], {}
    for share in censored:
        pct = int(round(100 * share))
        rate = censoring_rate(share)
        pairs = comparable_pairs(np.random.default_rng([seed, pct]), rate)
        for n in sizes:
            start = time.perf_counter()
            children = np.random.SeedSequence([seed, pct, n]).spawn(n_sims)
            chunks = [children[i::max(1, 4 * n_jobs)] for i in range(max(1, 4 * n_jobs))]
            done = Parallel(n_jobs=n_jobs)(delayed(_chunk)(c, n, rate) for c in chunks)
            # put the data sets back in seed order
            order = [i for c in range(len(chunks)) for i in range(c, n_sims, len(chunks))]
            got = [None] * n_sims
            for i, res in zip(order, [r for part in done for r in part], strict=True):
                got[i] = res
            values = np.stack([g[0] for g in got])
            coefs = np.stack([g[1] for g in got])
            sizes_ = np.stack([g[2] for g in got])
            pop = population_c(pairs, coefs)
            c_xy, c_folds = pop[:, 0], pop[:, 1:]
            c_n, c_ntrain = c_xy.mean(), c_folds.mean()
            c_xy_train = c_folds.mean(axis=1)
            est = section_intervals(values, sizes_)
            lo, hi = est["ci_low"].to_numpy(), est["ci_high"].to_numpy()
            nlo, nhi = naive_t(values)
            mean = np.nanmean(values, axis=1)
            row = {
                "censored": share, "n": n, "n_sims": n_sims, "rate": rate,
                "C(n_train)": c_ntrain, "C(n)": c_n, "mean CV": mean.mean(),
                "SD CV": mean.std(ddof=1), "SD C_XY": c_xy.std(ddof=1),
                "SD CV-C_XY": (mean - c_xy).std(ddof=1),
                "mean SE corr": est["se"].mean(),
                "mean SE naive": np.mean(np.nanstd(values, axis=1, ddof=1)
                                         / np.sqrt(np.sum(np.isfinite(values), axis=1))),
                "folds without C": int(np.sum(~np.isfinite(values))),
                "corr C(n_train)": _covers(lo, hi, c_ntrain),
                "corr C_XY": _covers(lo, hi, c_xy),
                "corr C_XY(n_train)": _covers(lo, hi, c_xy_train),
                "corr C(n)": _covers(lo, hi, c_n),
                "naive C(n_train)": _covers(nlo, nhi, c_ntrain),
                "naive C_XY": _covers(nlo, nhi, c_xy),
                "naive C_XY(n_train)": _covers(nlo, nhi, c_xy_train),
                "width corr": float(np.mean(hi - lo)), "width naive": float(np.mean(nhi - nlo)),
                "inside [0,1]": bool(np.all((lo >= 0) & (hi <= 1))),
                "seconds": time.perf_counter() - start,
            }
            rows.append(row)
            key = f"{share:g}_{n}"
            raw.update({f"values_{key}": values, f"c_xy_{key}": c_xy,
                        f"c_folds_{key}": c_folds, f"sizes_{key}": sizes_})
            if save:
                np.savez_compressed(save, **raw)
            if verbose:
                _print_row(row, header=len(rows) == 1)
    return rows


_COLS = [("censored", "{:.0%}"), ("n", "{:d}"), ("C(n_train)", "{:.4f}"), ("C(n)", "{:.4f}"),
         ("mean CV", "{:.4f}"), ("SD CV", "{:.4f}"), ("SD CV-C_XY", "{:.4f}"),
         ("mean SE corr", "{:.4f}"), ("mean SE naive", "{:.4f}"),
         ("corr C(n_train)", "{:.3f}"), ("corr C_XY", "{:.3f}"), ("corr C_XY(n_train)", "{:.3f}"),
         ("naive C(n_train)", "{:.3f}"), ("naive C_XY", "{:.3f}"), ("folds without C", "{:d}"),
         ("seconds", "{:.0f}")]


def _print_row(row: dict, header: bool) -> None:
    if header:
        print(" | ".join(name for name, _ in _COLS))
    print(" | ".join(fmt.format(row[name]) for name, fmt in _COLS), flush=True)


def details(path: str, level: float = 0.95) -> None:
    """More of each setting, from the data sets saved by :func:`run`: coverage at 90%, a
    logit-scale version of the corrected t (``expit(logit(mean) ± t · SE / (mean (1 - mean)))``),
    the misses on each side, the spread of ``C_XY`` and its correlation with the CV estimate,
    and the ``n_test/n_train`` the variance of the CV estimate calls for:
    ``Var(mean - C(n_train)) / mean(S²) - 1/J`` (the corrected t uses 1/4)."""
    from scipy import stats

    d = np.load(path)
    keys = sorted({k.split("_", 1)[1] for k in d.files if k.startswith("values_")},
                  key=lambda k: (float(k.split("_")[0]), int(k.split("_")[1])))
    print("censored | n | corr 90% C(n_train) | corr 90% C_XY | logit 95% C(n_train) | "
          "logit 95% C_XY | misses below / above C(n_train) | SD C_XY | corr(CV, C_XY) | "
          "ratio called for")
    for key in keys:
        v, c_xy, c_folds = d[f"values_{key}"], d[f"c_xy_{key}"], d[f"c_folds_{key}"]
        sizes = d[f"sizes_{key}"]
        J = np.sum(np.isfinite(v), axis=1)
        m, s2 = np.nanmean(v, axis=1), np.nanvar(v, axis=1, ddof=1)
        se = np.sqrt((1 / J + sizes[0, 0, 1] / sizes[0, 0, 0]) * s2)
        truth = c_folds.mean()
        out = []
        for lev in (0.9, level):
            q = stats.t.ppf((1 + lev) / 2, J - 1)
            out.append((m - q * se, m + q * se))
        logit, lse = np.log(m / (1 - m)), se / (m * (1 - m))
        q = stats.t.ppf((1 + level) / 2, J - 1)
        llo, lhi = (1 / (1 + np.exp(-(logit + sign * q * lse))) for sign in (-1, 1))
        lo, hi = out[1]
        called = np.var(m - truth, ddof=1) / s2.mean() - np.mean(1 / J)
        share, n = key.split("_")
        print(f"{float(share):.0%} | {n} | {_covers(*out[0], truth):.3f} | "
              f"{_covers(*out[0], c_xy):.3f} | {_covers(llo, lhi, truth):.3f} | "
              f"{_covers(llo, lhi, c_xy):.3f} | {np.mean(hi < truth):.3f} / "
              f"{np.mean(lo > truth):.3f} | {c_xy.std(ddof=1):.4f} | "
              f"{np.corrcoef(m, c_xy)[0, 1]:+.2f} | {called:.3f}")


if __name__ == "__main__" and len(sys.argv) > 2 and sys.argv[1] == "details":
    details(sys.argv[2])
elif __name__ == "__main__":
    run(int(sys.argv[1]) if len(sys.argv) > 1 else 1000,
        int(sys.argv[2]) if len(sys.argv) > 2 else 2,
        save=sys.argv[3] if len(sys.argv) > 3 else None)
