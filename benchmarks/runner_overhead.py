"""Runner overhead: replikit.experiment.run vs sklearn.model_selection.cross_validate.

10x10 cross-validation of a scaled LogisticRegression and a DecisionTree on scikit-learn's
breast_cancer data, on the same splits and with the same n_jobs, in one process; prints both
times and the overhead. Each timing is the best of ``--repeats`` alternating runs (the machine
may be shared).

    python benchmarks/runner_overhead.py [--repeats 3] [--n-jobs 1 2]

The default (``make bench``) is ``--repeats 3 --n-jobs 1``; pass ``--n-jobs 1 2`` for the
joblib rows. Prints a ``bench_row`` per row (anchor: scikit-learn ``cross_validate``).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _timing import bench_row  # benchmarks/_timing.py
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier

from replikit._random import task_seed_sequence
from replikit.experiment import RepeatedKFold, run


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--n-jobs", type=int, nargs="+", default=[1])
    args = ap.parse_args()
    X, y = load_breast_cancer(return_X_y=True)
    models = {"logreg": make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)),
              "tree": DecisionTreeClassifier(random_state=0)}
    scheme = RepeatedKFold(10, 10)
    # the exact splits run() draws for random_state=0 (study "all")
    rng = np.random.default_rng(task_seed_sequence(np.random.SeedSequence(0), ("split", "all")))
    splits = [(s.train, s.test) for s in scheme.iter_splits(X, y, random_state=rng)]
    print(f"breast_cancer {X.shape}, 10x10 CV, 2 models (200 fits), accuracy; best of "
          f"{args.repeats}")
    print(f"{'n_jobs':>6} {'predictions':>12} {'cross_validate (s)':>19} {'replikit (s)':>13} "
          f"{'ratio':>7}")
    for n_jobs in args.n_jobs:
        backend = "serial" if n_jobs == 1 else "joblib"
        for keep in (False, True):
            t_sk, t_rk = [], []
            for _ in range(args.repeats):
                t0 = time.perf_counter()
                ref = {name: cross_validate(m, X, y, cv=splits, scoring="accuracy",
                                            n_jobs=n_jobs)["test_score"]
                       for name, m in models.items()}
                t_sk.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                res = run(models, X, y, scheme=scheme, metrics="accuracy", backend=backend,
                          n_jobs=n_jobs, random_state=0, return_predictions=keep)
                t_rk.append(time.perf_counter() - t0)
            ours = res.scores.frame
            for name in models:  # same splits, same numbers
                np.testing.assert_allclose(ours.loc[ours.model == name, "value"], ref[name],
                                           rtol=1e-12)
            a, b = min(t_sk), min(t_rk)
            print(f"{n_jobs:>6} {'kept' if keep else 'no':>12} {a:>19.3f} {b:>13.3f} "
                  f"{b / a:>7.3f}")
            bench_row(f"10x10 CV, 2 models, breast_cancer (n_jobs={n_jobs}, predictions "
                      f"{'kept' if keep else 'not kept'})",
                      "scikit-learn cross_validate", a, b, f"best of {args.repeats}")


if __name__ == "__main__":
    main()
