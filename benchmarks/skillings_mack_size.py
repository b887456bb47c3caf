"""Size at alpha = 0.05 of the Skillings-Mack test and of the incomplete post-hoc tests.

Null tables: N datasets x k models of i.i.d. normal scores, each cell missing at random with
probability 10% or 30%. For each setting, the share of tables where

* the Skillings-Mack test rejects (chi-square p <= 0.05);
* the Nemenyi-type test on the adjusted rank sums rejects any pair (family-wise error);
* the Bonferroni-Dunn test against model 0 rejects any comparison (family-wise error).

Run: ``PYTHONPATH=src python benchmarks/skillings_mack_size.py [reps]`` (about a minute for
1000 replicates). The numbers are recorded in docs/compare.md.
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
from scipy import stats

from replikit.compare.multiple import _nemenyi, _pair_se, _skillings_mack


def one(k: int, n: int, share: float, reps: int, rng) -> tuple[float, float, float]:
    sm = nem = bd = 0
    q = stats.norm.isf(0.05 / (2 * (k - 1)))
    cols = [f"m{j}" for j in range(k)]
    for _ in range(reps):
        t = rng.normal(size=(n, k))
        t[rng.random((n, k)) < share] = np.nan
        fr = _skillings_mack(pd.DataFrame(t, columns=cols), True, True)
        sm += fr.pvalue <= 0.05
        nem += bool(_nemenyi(fr, 0.05).significant.to_numpy().any())
        r = fr.mean_ranks.to_numpy()
        se = _pair_se(fr)[:, 0]
        z = np.abs(r[1:] - r[0]) / se[1:]
        bd += bool((np.nan_to_num(z) > q).any())
    return sm / reps, nem / reps, bd / reps


def main(reps: int = 1000) -> None:
    rng = np.random.default_rng(20240530)
    print(f"{reps} null tables per row; binomial SE at 0.05: {np.sqrt(0.0475 / reps):.4f}")
    print("k   N  missing  Skillings-Mack  Nemenyi FWER  Bonferroni-Dunn FWER")
    for k in (3, 5, 8):
        for n in (10, 20, 40):
            for share in (0.1, 0.3):
                s, m, b = one(k, n, share, reps, rng)
                print(f"{k:<3d}{n:>3d}  {share:>6.0%}  {s:>14.3f}  {m:>12.3f}  {b:>20.3f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
