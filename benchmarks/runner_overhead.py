"""Runner overhead: replikit.resampling.run vs the hand-written scikit-learn loop people write.

Both fit the same models on the same 10x10 cross-validation splits and compute the same metrics
(R², MSE) and keep out-of-sample predictions. Prints both times and the overhead ratio.

    python benchmarks/runner_overhead.py [--rows 3000] [--features 20]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.base import clone
from sklearn.ensemble import RandomForestRegressor
from sklearn.linear_model import Ridge
from sklearn.metrics import mean_squared_error, r2_score

from replikit.resampling import RepeatedKFold, run


def hand_loop(model, X, y, splits):
    rows = []
    preds = []
    for repeat, fold, train, test in splits:
        est = clone(model).fit(X[train], y[train])
        p = est.predict(X[test])
        rows.append((repeat, fold, r2_score(y[test], p), mean_squared_error(y[test], p)))
        preds.append((repeat, fold, test, p))
    return rows, preds


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--features", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=5, help="timings per tool; the best is kept")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    X = rng.normal(size=(args.rows, args.features))
    y = X @ rng.normal(size=args.features) + rng.normal(size=args.rows)
    scheme = RepeatedKFold(10, 10)
    root = np.random.SeedSequence(0)
    from replikit._random import task_seed_sequence

    split_rng = np.random.default_rng(task_seed_sequence(root, ("split", "all")))
    splits = [(s.repeat, s.fold, s.train, s.test)
              for s in scheme.iter_splits(X, y, random_state=split_rng)]
    print(f"{args.rows} rows x {args.features} features, 10x10 CV (100 fits per model)")
    print(f"{'model':<28}{'hand loop (s)':>15}{'replikit (s)':>15}{'overhead':>10}")
    for name, model in [("Ridge", Ridge()),
                        ("RandomForest(20 trees)", RandomForestRegressor(20, max_depth=6,
                                                                         random_state=0))]:
        t_hand, t_rk = [], []
        for _ in range(args.repeats):  # alternate and keep the best: the machine may be shared
            t0 = time.perf_counter()
            hand_loop(model, X, y, splits)
            t_hand.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            res = run({name: model}, X, y, scheme=scheme, metrics=["r2", "mse"], random_state=0)
            t_rk.append(time.perf_counter() - t0)
            assert len(res.scores) == 200 and len(res.predictions) == 10 * len(y)
        t_hand, t_rk = min(t_hand), min(t_rk)
        print(f"{name:<28}{t_hand:>15.3f}{t_rk:>15.3f}{(t_rk / t_hand - 1) * 100:>9.1f}%")


if __name__ == "__main__":
    main()
