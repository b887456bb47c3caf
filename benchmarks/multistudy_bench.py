"""Benchmark: replikit.multistudy against the hand-written pandas / scikit-learn loops a
researcher would write today, on the ANES example (a linear rule trained on half of every
survey year, applied to the other half: 6,720 units in 10 studies).

Run: .venv/bin/python benchmarks/multistudy_bench.py [--n-resamples 200]  (1000 for the docs)
Prints both times and the ratio for (1) the within-study bootstrap of U_k and of
max|U_k - U_k'|, (2) the permutation test of study labels, (3) the cross-study validation matrix.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from _timing import bench_row  # benchmarks/_timing.py
from sklearn.base import clone
from sklearn.metrics import r2_score
from sklearn.model_selection import KFold

from replikit.data.examples import anes
from replikit.experiment.models import default_models
from replikit.multistudy import (
    cross_study_matrix,
    from_estimator,
    permutation_test,
    resample_replicability,
)


def hand_bootstrap(frame: pd.DataFrame, n_resamples: int,
                   random_state: int) -> tuple[np.ndarray, np.ndarray]:
    """The usual loop: resample rows within each study with groupby().sample, then groupby."""
    rng = np.random.default_rng(random_state)
    U, spread = [], []
    for _ in range(n_resamples):
        boot = frame.groupby("study", group_keys=False).sample(frac=1.0, replace=True,
                                                               random_state=rng)
        u = boot.groupby("study")["u"].mean()
        U.append(u.to_numpy())
        spread.append(u.max() - u.min())
    return np.array(U), np.array(spread)


def hand_permutation(frame: pd.DataFrame, n_resamples: int, random_state: int) -> float:
    rng = np.random.default_rng(random_state)
    u_obs = frame.groupby("study")["u"].mean()
    t_obs = u_obs.max() - u_obs.min()
    count = 0
    for _ in range(n_resamples):
        perm = frame.assign(study=rng.permutation(frame["study"].to_numpy()))
        m = perm.groupby("study")["u"].mean()
        count += (m.max() - m.min()) >= t_obs
    return (1 + count) / (n_resamples + 1)


def hand_cross_study(est, X, y, s, n_folds=5, random_state=0) -> pd.DataFrame:
    labels = sorted(pd.unique(s))
    M = pd.DataFrame(index=labels, columns=labels, dtype=float)
    for a in labels:
        fit = clone(est).fit(X[s == a], y[s == a])
        for b in labels:
            if a != b:
                M.loc[a, b] = r2_score(y[s == b], fit.predict(X[s == b]))
        Xa, ya = X[s == a], y[s == a]
        oof = np.empty(len(ya))
        for tr, te in KFold(n_folds, shuffle=True, random_state=random_state).split(Xa):
            oof[te] = clone(est).fit(Xa[tr], ya[tr]).predict(Xa[te])
        M.loc[a, a] = r2_score(ya, oof)
    return M


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n-resamples", "--resamples", dest="n_resamples", type=int, default=200,
                    help="bootstrap resamples and permutations (--resamples: its old name)")
    args = ap.parse_args()
    n_resamples = args.n_resamples
    ex = anes()
    rng = np.random.default_rng(0)
    train = rng.random(len(ex.y)) < 0.5
    rule = clone(default_models("regression")["lr"]).fit(ex.X[train], ex.y[train])
    data = from_estimator(rule, ex.X[~train], ex.y[~train], ex.study[~train])
    frame = pd.DataFrame({"study": ex.study[~train].to_numpy(),
                          "u": -(ex.y[~train].to_numpy() - rule.predict(ex.X[~train])) ** 2})
    print(f"ANES: {data.n:,} units in {data.K} studies; utility -(y - phi)^2; "
          f"{n_resamples} resamples")
    rows = []

    t = time.perf_counter()
    U_hand, spread_hand = hand_bootstrap(frame, n_resamples, 0)
    t_hand = time.perf_counter() - t
    t = time.perf_counter()
    r = resample_replicability(data, "squared", n_resamples=n_resamples, distance=False,
                               random_state=0)
    t_rk = time.perf_counter() - t
    rows.append(("within-study bootstrap", t_hand, t_rk))
    print(f"  bootstrap SE of U_k, hand vs replikit (first 3 studies): "
          f"{np.round(U_hand.std(0, ddof=1)[:3], 2)} vs {np.round(r.utility_se()[:3], 2)}")
    print(f"  mean resampled max|U_k - U_k'|: hand {spread_hand.mean():.2f}, "
          f"replikit {r.draws['absolute'].mean():.2f}")

    t = time.perf_counter()
    p_hand = hand_permutation(frame, n_resamples, 1)
    t_hand = time.perf_counter() - t
    t = time.perf_counter()
    p_rk = permutation_test(data, "squared", n_resamples=n_resamples, random_state=1).pvalue
    t_rk = time.perf_counter() - t
    rows.append(("permutation test", t_hand, t_rk))
    print(f"  permutation p-value: hand {p_hand:.3f}, replikit {p_rk:.3f}")

    est = default_models("regression")["lr"]
    Xa = ex.X.to_numpy()
    ya = ex.y.to_numpy()
    sa = ex.study.to_numpy()
    t = time.perf_counter()
    M_hand = hand_cross_study(est, Xa, ya, sa)
    t_hand = time.perf_counter() - t
    t = time.perf_counter()
    M_rk = cross_study_matrix(est, Xa, ya, sa, metric="r2").matrix
    t_rk = time.perf_counter() - t
    rows.append(("cross-study matrix (lr)", t_hand, t_rk))
    off = ~np.eye(len(M_hand), dtype=bool)
    print(f"  cross-study off-diagonal max |hand - replikit|: "
          f"{np.abs(M_hand.to_numpy()[off] - M_rk.to_numpy()[off]).max():.2e}")

    print(f"\n{'task':<28}{'hand loop (s)':>14}{'replikit (s)':>14}{'ratio':>10}")
    for name, th, tr in rows:
        print(f"{name:<28}{th:>14.3f}{tr:>14.3f}{th / tr:>9.1f}x")
        bench_row(f"ANES {name}" + ("" if name.startswith("cross") else
                                     f", {n_resamples} resamples"),
                  "hand-written pandas/scikit-learn loop", th, tr)


if __name__ == "__main__":
    main()
