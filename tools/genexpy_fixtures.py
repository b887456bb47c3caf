"""Generate reference fixtures from genexpy (the package of Matteucci et al. 2024) for replikit's
tests.

Run with the Python >= 3.13 virtualenv that has genexpy installed (not replikit's .venv):

    ~/.pyenv/versions/3.13*/bin/python -m venv .venv-genexpy
    .venv-genexpy/bin/pip install genexpy
    .venv-genexpy/bin/python tools/genexpy_fixtures.py

Writes tests/reference/generalize/genexpy_fixtures.json.gz: for a few configurations, genexpy's
rank vectors, Gram matrices (Borda, Jaccard, Mallows, RBF) and MMD values of sampled subsample
pairs (with the pairs themselves, so the tests recompute them without genexpy).
"""

from __future__ import annotations

import gzip
import json
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pandas as pd
from genexpy.kernels import rankings as gk
from genexpy.kernels import vectors as gv
from genexpy.utils import rankings as ru

ROOT = Path(__file__).resolve().parents[1]
REF = ROOT / "tests" / "reference" / "generalize"


def configurations():
    rng = np.random.default_rng(2024)
    out = {}
    # random scores with many ties
    for name, (N, na, levels) in {"random_5x20": (20, 5, 3), "random_12x16": (16, 12, 4),
                                   "random_3x10": (10, 3, 2)}.items():
        out[name] = rng.integers(0, levels, (N, na)).astype(float)
    enc = pd.read_csv(REF / "encoders_results.csv.gz")
    sub = enc.query("model == 'DTC' and tuning == 'full' and scoring == 'ACC'")
    wide = sub.pivot(index="dataset", columns="encoder", values="cv_score")
    out["encoders_DTC_full_ACC"] = wide.to_numpy()
    return out


def main():
    fixtures = {"genexpy_version": version("genexpy"), "configurations": {}}
    for name, scores in configurations().items():
        N, na = scores.shape
        df = pd.DataFrame({"cond": np.repeat(np.arange(N), na), "alt": np.tile(np.arange(na), N),
                           "score": scores.ravel()})
        rv = ru.get_matrix_from_df(df, factors=["cond"], alternatives="alt", target="score",
                                   lower_is_better=False, as_numpy=True)   # (na, N)
        sample = ru.SampleAM.from_rank_vector_matrix(rv)
        kernels = {
            "borda_0": gk.BordaKernel(idx=0, nu="auto", na=na),
            f"borda_{na - 1}": gk.BordaKernel(idx=na - 1, nu="auto", na=na),
            "jaccard_1": gk.JaccardKernel(k=1),
            "jaccard_2": gk.JaccardKernel(k=2),
            "mallows": gk.MallowsKernel(nu="auto", na=na),
        }
        conf = {"scores": scores.tolist(), "ranks": rv.T.tolist(), "gram": {}, "mmd": {}}
        for kname, k in kernels.items():
            x = k._convert_sample_to_input_format(sample)
            conf["gram"][kname] = k.gram_matrix(x, x).tolist()
            n = max(1, N // 4)
            ms1, ms2 = sample.get_multisample_pair(subsample_size=n, rep=8, seed=7,
                                                   disjoint=True, replace=False)
            xs = ru.MultiSampleAM(ms1).to_rank_vectors().transpose(0, 2, 1)
            ys = ru.MultiSampleAM(ms2).to_rank_vectors().transpose(0, 2, 1)
            vals = k._mmd_distribution_vectorized(sample, n=n, rep=8, seed=7)
            k.set_support(sample.get_support_pmf()[0])
            emb = k._mmd_distribution_embedding(sample, n=n, rep=8, seed=7)
            conf["mmd"][kname] = {"x": xs.tolist(), "y": ys.tolist(), "vectorized": vals.tolist(),
                                  "embedding": emb.tolist()}
        rbf = gv.RBFKernel(gamma="auto", na=na)
        conf["gram"]["rbf"] = rbf.gram_matrix(scores.T, scores.T).tolist()
        conf["eps"] = {kname: [float(k.get_eps(d, na=na)) for d in (0.05, 0.1, 0.3)]
                       for kname, k in dict(kernels, rbf=rbf).items()}
        fixtures["configurations"][name] = conf
    REF.mkdir(parents=True, exist_ok=True)
    with gzip.open(REF / "genexpy_fixtures.json.gz", "wt") as fh:
        json.dump(fixtures, fh)
    print(f"wrote {REF / 'genexpy_fixtures.json.gz'} ({len(fixtures['configurations'])} configurations)")


if __name__ == "__main__":
    main()
