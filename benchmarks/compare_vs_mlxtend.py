"""Benchmark: comparing two classifiers with replikit vs mlxtend / scikit-learn, in one run.

Data: scikit-learn's breast cancer data (569 x 30), logistic regression (scaled) vs a decision
tree, accuracy.

1. 5x2 CV. mlxtend's ``paired_ttest_5x2cv`` and ``combined_ftest_5x2cv`` each refit both models
   on their own 5x2 splits (20 fits per call, 40 for both tests); replikit's
   ``compare_models(scheme='5x2', tests=[both])`` fits once (20 fits) and runs both tests on the
   same scores. Timed: mlxtend t-test alone (20 fits, the same number as replikit), mlxtend
   both tests (40 fits), replikit both tests (+ the Bayesian correlated t when asked).
2. 10x10 CV. scikit-learn's ``cross_validate`` on ``RepeatedStratifiedKFold(10, 10)`` for each
   model plus a hand-written corrected repeated k-fold t-test (Nadeau & Bengio's variance,
   Gardner & Brooks 2017, Table 1 row 3), vs ``compare_models`` on the *same splitter* (so the fits, the
   accuracies and the t statistic must agree exactly; printed) with the recommended tests.
3. All pairs of four classifiers (lr, tree, Gaussian naive Bayes, 5-NN) by 5x2 CV t and F:
   mlxtend needs one call per pair and test (6 pairs x 2 tests x 20 fits = 240 fits);
   ``compare_models`` fits each model once on shared splits (40 fits) and tests every pair,
   with Holm's adjustment.

Prints the times (best of several runs), the ratios and the statistics of each tool, and one
``BENCH`` line per part for ``make bench`` (about 16 s on a quiet 2-core machine). Under the
load of 2026-11-23's shared session (load ~7) the same run took 3 min 20 s and gave 8.9x (part
1), 6.8x (part 2) and 43x (part 3); the quiet figures are in docs/compare.md ("Benchmark").

Run: ``.venv/bin/python benchmarks/compare_vs_mlxtend.py [--quick] [--jobs N]``
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
from _timing import bench_row, best_time  # benchmarks/_timing.py
from mlxtend.evaluate import combined_ftest_5x2cv, paired_ttest_5x2cv
from scipy import stats
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import RepeatedStratifiedKFold, cross_validate
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier

from replikit.compare import compare_models
from replikit.experiment import FiveByTwo


def corrected_t_by_hand(acc_a: np.ndarray, acc_b: np.ndarray, n_train: float, n_test: float):
    """The corrected repeated k-fold t-test written out, as a user would without replikit
    (ratio n_test / n_train from the mean split sizes, as replikit records them)."""
    d = acc_a - acc_b
    n = d.size
    var = (1 / n + n_test / n_train) * d.var(ddof=1)
    t = d.mean() / np.sqrt(var)
    return t, 2 * stats.t.sf(abs(t), n - 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer timing repeats")
    parser.add_argument("--jobs", type=int, default=1, help="workers for both tools (10x10)")
    args = parser.parse_args()
    repeats = 1 if args.quick else 3
    X, y = load_breast_cancer(return_X_y=True)
    lr = make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))
    tree = DecisionTreeClassifier(min_samples_leaf=5, random_state=0)
    models = {"lr": lr, "tree": tree}
    print(f"Data: breast cancer, n = {len(y)}, p = {X.shape[1]}; lr (scaled logistic) vs "
          "tree (min_samples_leaf=5); accuracy; best of "
          f"{repeats} run(s); {args.jobs} worker(s) in part 2.\n")

    # ---- 1. 5x2 CV --------------------------------------------------------------------------
    compare_models(models, X, y, scheme="5x2", tests=["paired_ttest_5x2cv"], random_state=0)
    t_rk, ours = best_time(lambda: compare_models(
        models, X, y, scheme=FiveByTwo(stratify=True),
        tests=["paired_ttest_5x2cv", "combined_ftest_5x2cv"], random_state=0), repeats)
    t_rk_b, _ = best_time(lambda: compare_models(
        models, X, y, scheme=FiveByTwo(stratify=True),
        tests=["paired_ttest_5x2cv", "combined_ftest_5x2cv", "bayesian_correlated_ttest"],
        random_state=0), repeats)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_mx_t, (mx_t, mx_tp) = best_time(lambda: paired_ttest_5x2cv(
            lr, tree, X, y, scoring="accuracy", random_seed=0), repeats)
        t_mx_f, (mx_f, mx_fp) = best_time(lambda: combined_ftest_5x2cv(
            lr, tree, X, y, scoring="accuracy", random_seed=0), repeats)
    f = ours.frame.set_index("test")
    print("1. 5x2 CV paired t-test (Dietterich) and combined F-test (Alpaydin)")
    print(f"   mlxtend t-test only (20 fits)        {t_mx_t * 1e3:9.1f} ms   t = {mx_t:.3f}, "
          f"p = {mx_tp:.4f}")
    print(f"   mlxtend t + F (40 fits)              {(t_mx_t + t_mx_f) * 1e3:9.1f} ms   F = "
          f"{mx_f:.3f}, p = {mx_fp:.4f}")
    print(f"   replikit t + F (20 fits)             {t_rk * 1e3:9.1f} ms   t = "
          f"{f.loc['paired_t_5x2cv', 'statistic']:.3f}, p = "
          f"{f.loc['paired_t_5x2cv', 'pvalue']:.4f}; F = "
          f"{f.loc['combined_f_5x2cv', 'statistic']:.3f}, p = "
          f"{f.loc['combined_f_5x2cv', 'pvalue']:.4f}")
    print(f"   replikit t + F + Bayesian (20 fits)  {t_rk_b * 1e3:9.1f} ms")
    print("   (different random splits in the two tools: statistics agree in kind, not value)")
    print(f"   ratio mlxtend t-test / replikit t + F (same fits): {t_mx_t / t_rk:.2f}x")
    print(f"   ratio mlxtend t + F / replikit t + F:             {(t_mx_t + t_mx_f) / t_rk:.2f}x\n")
    bench_row("5x2cv t + combined F, breast cancer, lr vs tree", "mlxtend t + F (40 fits)",
              t_mx_t + t_mx_f, t_rk, "replikit 20 fits")

    # ---- 2. 10x10 CV ------------------------------------------------------------------------
    cv = RepeatedStratifiedKFold(n_splits=10, n_repeats=10, random_state=0)

    def by_hand():
        res = {name: cross_validate(m, X, y, cv=cv, scoring="accuracy", n_jobs=args.jobs,
                                    return_indices=True)
               for name, m in models.items()}
        n_test = np.mean([len(t) for t in res["lr"]["indices"]["test"]])
        n_train = np.mean([len(t) for t in res["lr"]["indices"]["train"]])
        return res, corrected_t_by_hand(res["lr"]["test_score"], res["tree"]["test_score"],
                                        n_train, n_test)

    def with_replikit(tests="recommended"):
        return compare_models(models, X, y, scheme=cv, tests=tests, random_state=0,
                              n_jobs=args.jobs)

    t_sk, (cvres, (t_hand, p_hand)) = best_time(by_hand, repeats)
    t_rk2, table = best_time(with_replikit, repeats)
    t_rk2_c, _ = best_time(lambda: with_replikit(["corrected_repeated_kfold_ttest"]), repeats)
    g = table.frame.set_index("test")
    ours_acc = (table.scores.frame.query("model == 'lr'").sort_values(["repeat", "fold"])
                ["value"].to_numpy())
    same = np.array_equal(ours_acc, cvres["lr"]["test_score"])
    print("2. 10x10 CV, corrected repeated k-fold t-test (Nadeau & Bengio variance)")
    print(f"   cross_validate x2 + t by hand        {t_sk * 1e3:9.1f} ms   t = {t_hand:.4f}, "
          f"p = {p_hand:.4f}")
    print(f"   replikit corrected t only            {t_rk2_c * 1e3:9.1f} ms")
    print(f"   replikit recommended (t + Bayesian)  {t_rk2 * 1e3:9.1f} ms   t = "
          f"{g.loc['corrected_repeated_kfold_t', 'statistic']:.4f}, p = "
          f"{g.loc['corrected_repeated_kfold_t', 'pvalue']:.4f}; P(equivalent) = "
          f"{g.loc['bayesian_correlated_t', 'p_rope']:.3f}")
    print(f"   same fold accuracies as cross_validate: {same}; |t difference| = "
          f"{abs(t_hand - g.loc['corrected_repeated_kfold_t', 'statistic']):.1e}")
    print(f"   ratio cross_validate / replikit (corrected t):   {t_sk / t_rk2_c:.2f}x")
    print(f"   ratio cross_validate / replikit (recommended):   {t_sk / t_rk2:.2f}x\n")
    bench_row("10x10 CV corrected t, breast cancer, lr vs tree",
              "scikit-learn cross_validate x2 + t by hand", t_sk, t_rk2_c,
              "same splitter; identical fold accuracies")

    # ---- 3. all pairs of four models, 5x2 CV ------------------------------------------------
    four = {"lr": lr, "tree": tree, "nb": GaussianNB(),
            "knn": make_pipeline(StandardScaler(), KNeighborsClassifier(5))}
    names = list(four)
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]

    def mlxtend_all_pairs():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return [(paired_ttest_5x2cv(four[a], four[b], X, y, scoring="accuracy",
                                        random_seed=0),
                     combined_ftest_5x2cv(four[a], four[b], X, y, scoring="accuracy",
                                          random_seed=0)) for a, b in pairs]

    t_mx3, _ = best_time(mlxtend_all_pairs, repeats)
    t_rk3, all_pairs = best_time(lambda: compare_models(
        four, X, y, scheme=FiveByTwo(stratify=True),
        tests=["paired_ttest_5x2cv", "combined_ftest_5x2cv"], random_state=0), repeats)
    n_rows = len(all_pairs.frame)
    print(f"3. All {len(pairs)} pairs of {len(four)} classifiers, 5x2 CV t and F")
    print(f"   mlxtend, one call per pair and test ({len(pairs) * 40} fits)  "
          f"{t_mx3 * 1e3:9.1f} ms")
    print(f"   replikit compare_models ({len(four) * 10} fits, {n_rows} tests, Holm)  "
          f"{t_rk3 * 1e3:9.1f} ms")
    print(f"   ratio mlxtend / replikit: {t_mx3 / t_rk3:.2f}x")
    bench_row(f"5x2cv t + F, all {len(pairs)} pairs of {len(four)} classifiers",
              "mlxtend one call per pair and test", t_mx3, t_rk3,
              f"replikit {len(four) * 10} fits vs {len(pairs) * 40}")


if __name__ == "__main__":
    main()
