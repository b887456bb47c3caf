"""Write the sample score exports shipped in ``src/replikit/data/_files/``.

R with mlr3 and Weka were not available where these files were made, so the per-fold numbers
are computed here with scikit-learn on the built-in ``nwtco`` data (relapse of Wilms tumour in
the NWTS-3 and NWTS-4 trials, one task/dataset per trial) and written in the exact column
layouts the two tools produce:

- ``mlr3_nwtco_scores.csv``: ``data.table::fwrite(as.data.table(bmr$score(msrs(c("classif.ce",
  "classif.auc")))))`` without its list columns, for ``benchmark_grid(tasks, learners,
  rsmp("cv", folds = 10))``: columns uhash, nr, task_id, learner_id, resampling_id, iteration,
  classif.ce, classif.auc;
- ``weka_nwtco_scores.csv``: the Weka Experimenter's CSV result listener for 10 runs of 10-fold
  cross-validation (Key_Run and Key_Fold from 1), with its usual key and measure columns.

Learners: unpenalised logistic regression (the counterpart of mlr3's ``classif.log_reg`` /
Weka's ``Logistic``) and a CART tree with rpart's defaults (``classif.rpart`` / ``J48``-like).

Run: ``.venv/bin/python tools/make_score_exports.py`` (about a minute).
"""

from __future__ import annotations

import uuid
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import mean_absolute_error, roc_auc_score
from sklearn.model_selection import StratifiedKFold
from sklearn.tree import DecisionTreeClassifier

from replikit.data.examples import nwtco

OUT = Path(__file__).resolve().parents[1] / "src" / "replikit" / "data" / "_files"
LEARNERS = {
    "classif.log_reg": ("weka.classifiers.functions.Logistic", "'-R 0.0 -M -1'",
                        lambda: LogisticRegression(C=np.inf, max_iter=2000)),
    "classif.rpart": ("weka.classifiers.trees.SimpleCart", "'-M 7 -N 10 -C 1.0 -S 1'",
                      lambda: DecisionTreeClassifier(min_samples_split=20, min_samples_leaf=7,
                                                     ccp_alpha=0.001, random_state=1)),
}


def _folds(y, n_folds, seed):
    return list(StratifiedKFold(n_folds, shuffle=True, random_state=seed).split(np.zeros(len(y)), y))


def main() -> None:
    ex = nwtco()
    mlr3_rows, weka_rows = [], []
    nr = 0
    for study in sorted(ex.study.unique()):
        keep = (ex.study == study).to_numpy()
        X, y = ex.X[keep].to_numpy(), ex.y[keep].to_numpy()
        task = f"nwtco_{study}"
        for learner, (scheme, options, make) in LEARNERS.items():
            nr += 1
            uhash = str(uuid.uuid5(uuid.NAMESPACE_URL, f"replikit/{task}/{learner}"))
            # mlr3: one repeat of 10-fold CV (the same splits for both learners of a task)
            for i, (tr, te) in enumerate(_folds(y, 10, 2024), start=1):
                model = make().fit(X[tr], y[tr])
                p = model.predict_proba(X[te])[:, 1]
                ce = float(np.mean((p >= 0.5).astype(int) != y[te]))
                mlr3_rows.append({"uhash": uhash, "nr": nr, "task_id": task,
                                  "learner_id": learner, "resampling_id": "cv", "iteration": i,
                                  "classif.ce": ce, "classif.auc": roc_auc_score(y[te], p)})
            # Weka Experimenter: 10 runs x 10 folds, run r seeded r
            for run in range(1, 11):
                for fold, (tr, te) in enumerate(_folds(y, 10, run), start=1):
                    model = make().fit(X[tr], y[tr])
                    p = model.predict_proba(X[te])[:, 1]
                    pred = (p >= 0.5).astype(int)
                    correct = int((pred == y[te]).sum())
                    n = len(te)
                    weka_rows.append({
                        "Key_Dataset": f"nwtco-{study}", "Key_Run": run, "Key_Fold": fold,
                        "Key_Scheme": scheme, "Key_Scheme_options": options,
                        "Key_Scheme_version_ID": -1, "Date_time": 2.0261127E7,
                        "Number_of_training_instances": len(tr),
                        "Number_of_testing_instances": n,
                        "Number_correct": correct, "Number_incorrect": n - correct,
                        "Number_unclassified": 0,
                        "Percent_correct": 100.0 * correct / n,
                        "Percent_incorrect": 100.0 * (n - correct) / n,
                        "Percent_unclassified": 0.0,
                        "Mean_absolute_error": mean_absolute_error(y[te], p),
                        "Root_mean_squared_error": float(np.sqrt(np.mean((y[te] - p) ** 2))),
                        "Area_under_ROC": roc_auc_score(y[te], p),
                    })
    mlr3 = pd.DataFrame(mlr3_rows)
    weka = pd.DataFrame(weka_rows)
    mlr3.to_csv(OUT / "mlr3_nwtco_scores.csv", index=False, float_format="%.10g")
    weka.to_csv(OUT / "weka_nwtco_scores.csv", index=False, float_format="%.10g")
    print(len(mlr3), len(weka))


if __name__ == "__main__":
    main()
