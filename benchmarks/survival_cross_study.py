"""Cross-study validation of survival models (Bernau et al. 2014) on four real multi-study data
sets shipped with replikit, and replikit's time against the hand-written scikit-survival loop
people write today.

The data (``replikit.data.examples``): ``nwtco`` (two Wilms tumour trials, NWTS-3 and -4),
``breast`` (the Rotterdam tumour bank and the GBSG trial; Royston & Altman 2013), ``uis``
(two drug-treatment sites) and ``lung`` (seven NCCTG institutions). For each: every model of
the survival line-up (Cox, lasso-penalised Cox, random survival forest, gradient boosting,
the Kaplan–Meier baseline) trained on each study and scored by Harrell's C-index on every other
(:func:`replikit.multistudy.audit_survival`); the diagonal is 5-fold CV within the study,
stratified by the event. Printed per data set: Bernau et al.'s summaries (mean C within
studies, CV; across them, CSV; the drop with its 95% interval; the ranks by each) and the
verdict.

The timing: the Cox model's matrix by replikit (``cross_study_matrix``, one process) against a
plain loop over scikit-survival's ``CoxPHSurvivalAnalysis`` and ``concordance_index_censored``
(train on each study, score every other; ``StratifiedKFold`` on the event within each); their
off-diagonal cells must agree to 1e-12 (same model, same data).

Writes ``docs/figures/survival/cross_study.svg`` (the best model's matrix per data set) and
``docs/figures/survival/cross_study.csv`` (every summary row).

Run: .venv/bin/python benchmarks/survival_cross_study.py   (about 5 minutes on 2 cores; most
of it the forests and boosting on the 3,668 breast cancer patients).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

OUT = Path(__file__).resolve().parents[1] / "docs" / "figures" / "survival"
DATASETS = ("nwtco", "breast", "uis", "lung")


def hand_written(X, y, study, n_folds=5, seed=0):
    """The loop people write: scikit-survival's Cox on each study, C on every other."""
    from sklearn.base import clone
    from sklearn.model_selection import StratifiedKFold
    from sksurv.metrics import concordance_index_censored

    from replikit.experiment.models import make_model

    est = make_model("cox", "survival")
    labels = sorted(pd.unique(study))
    M = np.full((len(labels), len(labels)), np.nan)
    for i, a in enumerate(labels):
        tr = study == a
        fit = clone(est).fit(X[tr], y[tr])
        for j, b in enumerate(labels):
            if i == j:
                risk = np.empty(tr.sum())
                rows = np.flatnonzero(tr)
                for t, s in StratifiedKFold(n_folds, shuffle=True, random_state=seed).split(
                        rows, y["event"][rows]):
                    m = clone(est).fit(X[rows[t]], y[rows[t]])
                    risk[s] = m.predict(X[rows[s]])
                yy = y[rows]
            else:
                te = study == b
                risk, yy = fit.predict(X[te]), y[te]
            M[i, j] = concordance_index_censored(yy["event"], yy["time"], risk)[0]
    return pd.DataFrame(M, index=labels, columns=labels)


def main() -> int:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from threadpoolctl import threadpool_limits

    from replikit.data.examples import load_example
    from replikit.experiment.models import default_models, make_model
    from replikit.multistudy import audit_survival, cross_study_matrix

    OUT.mkdir(parents=True, exist_ok=True)
    rows, results = [], {}
    with threadpool_limits(1):
        for name in DATASETS:
            ex = load_example(name)
            X, y, s = ex.X.to_numpy(float), ex.outcome, ex.study.astype(str).to_numpy()
            t0 = time.perf_counter()
            a = audit_survival(X, y, s, models=default_models("survival"), random_state=0,
                               n_jobs=2)
            seconds = time.perf_counter() - t0
            results[name] = a
            print(f"\n{name}: {len(y):,} patients, {int(y['event'].sum()):,} events, "
                  f"{len(set(s))} studies ({seconds:.0f} s)")
            print(a.summary.drop(columns=["drop_se"]).to_string(
                index=False, float_format=lambda v: f"{v:.3f}"))
            print(f"verdict [{a.verdict.level}]: {a.verdict.sentence}")
            for r in a.summary.to_dict("records"):
                rows.append({"data": name, **r})
            # replikit vs the hand-written loop, the Cox model alone
            t0 = time.perf_counter()
            ours = cross_study_matrix(make_model("cox", "survival"), X, y, s,
                                      random_state=0).matrix
            t_ours = time.perf_counter() - t0
            t0 = time.perf_counter()
            theirs = hand_written(X, y, s)
            t_theirs = time.perf_counter() - t0
            off = ~np.eye(len(ours), dtype=bool)
            diff = float(np.max(np.abs(ours.to_numpy()[off] - theirs.to_numpy()[off])))
            print(f"Cox matrix: replikit {t_ours:.2f} s (with the IJ SE of no cell), "
                  f"hand-written scikit-survival loop {t_theirs:.2f} s, ratio "
                  f"{t_theirs / t_ours:.2f}; off-diagonal cells differ by at most {diff:.1e}")
            assert diff < 1e-12
    pd.DataFrame(rows).to_csv(OUT / "cross_study.csv", index=False)
    fig, axes = plt.subplots(1, len(DATASETS), figsize=(4.2 * len(DATASETS), 4.2),
                             layout="constrained")
    for ax, name in zip(axes, DATASETS, strict=True):
        a = results[name]
        a.plot(ax=ax)
        ax.set_title(f"{name}: {a.best}, C-index\n(mean CV {a.summary.iloc[0]['within']:.3f}, "
                     f"CSV {a.summary.iloc[0]['across']:.3f})", fontsize=9)
    fig.savefig(OUT / "cross_study.svg")
    print(f"\nwrote {OUT / 'cross_study.svg'} and {OUT / 'cross_study.csv'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
