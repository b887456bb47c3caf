"""Write the sample files of the audit's entries shipped in ``src/replikit/data/_files/``.

Every number is a real result: fits of scikit-learn models on the built-in examples made here
through :func:`replikit.experiment.run`, or rows of a published benchmark. Nothing is invented.

- ``predictions_nwtco.csv.gz`` and ``scores_nwtco.csv`` (the ``predictions`` and ``scores``
  entries): logistic regression (``lr``), a random forest (``rf``) and the majority-class
  baseline (``dummy``), replikit's model aliases, on :func:`replikit.data.examples.nwtco`
  (relapse in the NWTS-3 and NWTS-4 trials, each trial a study), under 2 repeats of stratified
  5-fold cross-validation within each trial, ``random_state=2027``. The predictions keep the
  class probabilities at full precision; ``row`` is the row of ``nwtco().X``. The scores are
  the same run's per-fold ROC AUC and accuracy with the training and test set sizes.
- ``estimates_anes_r2.csv`` (the ``estimates`` entry): per survey year of
  :func:`replikit.data.examples.anes`, the test-set R² of an ordinary least-squares model fitted
  on a random 70% of that year's respondents and scored on the other 30% (``HoldOut(0.3)``,
  ``random_state=2027``), with ``n`` the test rows; the first year, 1978, is the original and
  the nine later years its replications — the design of Vijayakumar & Cheung (2021), whose
  paper reports its per-study R² in figures only. R² is rounded to 4 decimals, as a paper would
  print it.
- ``benchmark_encoders_lr_auc.csv`` (the ``benchmark`` entry): from the categorical-encoders
  benchmark of Matteucci, Arzamasov & Böhm (2023; MIT licence), the cross-validated ROC AUC of a
  tuned logistic regression (``model='LR'``, ``tuning='model'``, ``scoring='AUC'``) on the 50
  OpenML datasets (rows, by OpenML id) with each of the 14 encoders (columns) that were evaluated
  on every one of them, as published (``tests/reference/generalize/encoders_results.csv.gz``).

Run: ``.venv/bin/python tools/make_entry_samples.py`` (about half a minute). The outputs are
bit-identical from run to run.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "src" / "replikit" / "data" / "_files"
ENCODERS = ROOT / "tests" / "reference" / "generalize" / "encoders_results.csv.gz"
RANDOM_STATE = 2027


def predictions_and_scores() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Out-of-fold predictions and per-fold scores of lr, rf and dummy on nwtco."""
    from replikit.data.examples import nwtco
    from replikit.experiment import RepeatedKFold, make_models, run

    ex = nwtco()
    res = run(make_models("lr,rf,dummy", "classification"), ex.X, ex.y,
              scheme=RepeatedKFold(5, 2, stratify=True), metrics=["roc_auc", "accuracy"],
              study=ex.study, random_state=RANDOM_STATE)
    return res.predictions.frame, res.scores.frame


def estimates() -> pd.DataFrame:
    """The test R² of OLS in each ANES survey year (70/30 hold-out), 1978 the original."""
    from sklearn.linear_model import LinearRegression

    from replikit.data.examples import anes
    from replikit.experiment import HoldOut, run

    ex = anes()
    res = run({"ols": LinearRegression()}, ex.X, ex.y, scheme=HoldOut(0.3), metrics="r2",
              study=ex.study, random_state=RANDOM_STATE, return_predictions=False)
    f = res.scores.frame.sort_values("study")
    out = pd.DataFrame({"study": f["study"].astype(str).to_numpy(),
                        "r2": f["value"].round(4).to_numpy(),
                        "n": f["n_test"].astype(int).to_numpy()})
    out["role"] = ["original"] + ["replication"] * (len(out) - 1)
    return out


def benchmark() -> pd.DataFrame:
    """Tuned logistic regression's ROC AUC, 50 OpenML datasets x the 14 encoders run on all."""
    d = pd.read_csv(ENCODERS)
    d = d[(d["model"] == "LR") & (d["tuning"] == "model") & (d["scoring"] == "AUC")]
    wide = d.pivot_table(index="dataset", columns="encoder", values="cv_score", aggfunc="first")
    wide = wide.loc[:, wide.notna().all()].sort_index()
    wide.index = wide.index.map(lambda i: f"openml-{i}")
    wide.index.name = "dataset"
    wide.columns.name = None
    return wide.reset_index()


def main() -> None:
    preds, scores = predictions_and_scores()
    preds.to_csv(OUT / "predictions_nwtco.csv.gz", index=False,
                 compression={"method": "gzip", "mtime": 0})
    scores.to_csv(OUT / "scores_nwtco.csv", index=False)
    estimates().to_csv(OUT / "estimates_anes_r2.csv", index=False, float_format="%.4f")
    benchmark().to_csv(OUT / "benchmark_encoders_lr_auc.csv", index=False)
    for name in ("predictions_nwtco.csv.gz", "scores_nwtco.csv", "estimates_anes_r2.csv",
                 "benchmark_encoders_lr_auc.csv"):
        print(f"{name}: {(OUT / name).stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
