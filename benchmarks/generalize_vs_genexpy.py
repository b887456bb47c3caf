"""Benchmark: n* for the encoders case study of seed 004 in genexpy and in replikit.

The same work in both: for each (model, tuning, scoring) configuration of the categorical-encoders
benchmark and each of the three kernels (Borda for the one-hot encoder, Jaccard k=1, Mallows),
the MMD distribution at n = 2, 4, ... < N/2 (the authors' grid) with the same number of
repetitions, the alpha*=0.95 quantile, the log-log fit and n* at delta*=0.05. genexpy runs in its
own Python >= 3.13 virtualenv (.venv-genexpy) as a subprocess; replikit in this interpreter.

    .venv/bin/python benchmarks/generalize_vs_genexpy.py [--configs K] [--reps R]

Both times exclude reading the CSV. Prints both times, the ratio and how close the n* agree
(they differ by Monte-Carlo error: the subsamples are random in both).
"""

from __future__ import annotations

import argparse
import glob
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "reference" / "generalize" / "encoders_results.csv.gz"
DESIGN = ["model", "tuning", "scoring"]


def genexpy_worker(configs: int, reps: int) -> None:
    """Runs under the genexpy interpreter: prints JSON with the time and n* per config/kernel."""
    import numpy as np
    import pandas as pd
    from genexpy.kernels import rankings as gk
    from genexpy.utils import rankings as ru
    from sklearn.linear_model import LinearRegression

    df = pd.read_csv(DATA)
    t0 = time.perf_counter()
    # as genexpy's ProjectManager.generalizability_analysis: one pivot over all factors, missing
    # values imputed with 0 (then ranked), tolerance 0.2 on both axes
    rv = ru.get_matrix_from_df(df, factors=DESIGN + ["dataset"], alternatives="encoder",
                               target="cv_score", lower_is_better=False, impute_missing=True)
    alternatives = rv.index.to_numpy()
    keys = sorted({c[:3] for c in rv.columns})[:configs]
    out = []
    for key in keys:
        mask = np.all([rv.columns.get_level_values(i) == key[i] for i in range(3)], axis=0)
        sample = ru.SampleAM.from_rank_vector_matrix(rv.loc[:, mask].to_numpy())
        N, na = len(sample), len(alternatives)
        kernels = {
            "borda(OHE)": gk.BordaKernel(alternative="OHE", na=na,
                                         ordered_alternatives=alternatives),
            "jaccard(k=1)": gk.JaccardKernel(k=1),
            "mallows": gk.MallowsKernel(nu="auto", na=na),
        }
        for name, k in kernels.items():
            k.set_support(sample.get_support_pmf()[0])
            dfmmd = k.mmd_distribution_many_n(sample=sample, nmin=2, nmax=N // 2, step=2, rep=reps,
                                              disjoint=True, replace=False, method="embedding",
                                              N=N, use_cached_support_matrix=True)
            q = dfmmd.groupby("n")["mmd"].quantile(0.95, interpolation="higher").reset_index()
            if (q["mmd"] == 0).any():
                nstar = 1.0
            else:
                lr = LinearRegression().fit(np.log(q[["mmd"]].to_numpy()), np.log(q["n"]))
                nstar = float(np.exp(lr.coef_[0] * np.log(k.get_eps(0.05, na=na))
                                     + lr.intercept_))
            out.append({"config": list(key), "kernel": name, "N": int(N), "nstar": nstar})
    print(json.dumps({"seconds": time.perf_counter() - t0, "rows": out}))


def replikit_run(configs: int, reps: int):
    import pandas as pd

    from replikit.generalize import Kernel, PreparedStudy, StudySpec, analyze, prepare

    df = pd.read_csv(DATA)
    t0 = time.perf_counter()
    spec = StudySpec("encoder", "cv_score", "dataset", design=DESIGN)
    prep = prepare(df, spec)
    prep = PreparedStudy(spec=prep.spec, samples=prep.samples[:configs],
                         dropped_conditions=prep.dropped_conditions,
                         dropped_alternatives=prep.dropped_alternatives,
                         n_imputed=prep.n_imputed)
    res = analyze(prep, kernels=[Kernel("borda", alternative="OHE"), Kernel("jaccard"),
                                 Kernel("mallows")], confidence_level=0.95, delta=0.05,
                  n_resamples=reps, estimator="loglog",  # genexpy's n* is Algorithm 1's
                  n="even", random_state=0)
    return time.perf_counter() - t0, res.table


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--configs", type=int, default=48, help="configurations to time (max 48)")
    ap.add_argument("--reps", type=int, default=1000, help="repetitions per subsample size")
    ap.add_argument("--genexpy-python", default=None, help="interpreter with genexpy installed")
    ap.add_argument("--genexpy-worker", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.genexpy_worker:
        genexpy_worker(a.configs, a.reps)
        return
    py = a.genexpy_python or str(ROOT / ".venv-genexpy" / "bin" / "python")
    if not Path(py).exists():
        found = glob.glob(str(ROOT / ".venv-genexpy*" / "bin" / "python"))
        if not found:
            sys.exit("genexpy interpreter not found: create .venv-genexpy with Python >= 3.13 "
                     "and `pip install genexpy` (see docs/generalize.md)")
        py = found[0]
    t_rk, table = replikit_run(a.configs, a.reps)
    proc = subprocess.run([py, __file__, "--genexpy-worker", "--configs", str(a.configs),
                           "--reps", str(a.reps)], capture_output=True, text=True, check=True)
    g = json.loads(proc.stdout.strip().splitlines()[-1])
    import numpy as np
    import pandas as pd

    gx = pd.DataFrame(g["rows"])
    gx[DESIGN] = pd.DataFrame(gx["config"].tolist(), index=gx.index)
    m = table.merge(gx.drop(columns="config"), on=[*DESIGN, "kernel"], suffixes=("", "_genexpy"))
    rel = np.abs(np.log(m["nstar"] / m["nstar_genexpy"]))
    print(f"encoders case study: {a.configs} configurations x 3 kernels, n_resamples = {a.reps}, "
          f"n = 2, 4, ... < N/2")
    print(f"  genexpy : {g['seconds']:9.2f} s")
    print(f"  replikit: {t_rk:9.2f} s")
    print(f"  ratio   : {g['seconds'] / t_rk:9.1f} x faster")
    print(f"  n* agreement: median |log ratio| = {np.median(rel):.3f}, max = {rel.max():.3f} "
          f"over {len(m)} (configuration, kernel) pairs")
    show = m[(m["tuning"] == "full") & (m["kernel"] == "jaccard(k=1)")]
    if len(show):
        print(show[[*DESIGN, "N", "nstar", "nstar_genexpy"]].to_string(index=False,
                                                                      float_format="%.1f"))


if __name__ == "__main__":
    main()
