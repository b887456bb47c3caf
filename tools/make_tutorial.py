"""Write docs/tutorial.ipynb: the audit from each of its five entry levels, in a notebook.

The notebook is stored without outputs (the suite executes it: tests/test_tutorial.py); run
``python tools/make_tutorial.py`` after changing the cells below.
"""

from __future__ import annotations

import pathlib

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = pathlib.Path(__file__).resolve().parents[1]

CELLS = [
    ("md", """# Will it hold up? The replikit audit from what you already have

This notebook audits results at each of the five levels people bring them: reported estimates,
a benchmark table, per-fold scores, out-of-fold predictions, and a data table with models fitted
by replikit. Every input here is a sample file shipped with replikit, made from real results
(`replikit.data.examples.entry_sample`; where each comes from is in its docstring).

Each audit shows one card per question. The light is earned: green (*holds up*) only when the
data show the result holds within the stated tolerance, red (*does not hold up*) only when they
show it does not, amber (*uncertain*) when they cannot tell, and *not answered* when the input
does not hold what the question needs — the card then says what to supply."""),
    ("code", """import pandas as pd

import replikit
from replikit.data.examples import entry_sample"""),
    ("md", """## 1. Reported estimates: did the replications reproduce the original?

One row per study: a test R² and its test-set size, the original marked by `role`. The audit
compares each replication with the original (difference intervals, equivalence within ±0.05 R²)
and pools them by meta-analysis."""),
    ("code", """estimates = pd.read_csv(entry_sample("estimates"))
estimates"""),
    ("code", """replikit.audit(estimates=estimates)"""),
    ("md", """## 2. A benchmark table: one score per model and dataset

The ROC AUC of a logistic regression with 14 categorical encoders on 50 OpenML datasets
(Matteucci, Arzamasov & Böhm, 2023). Datasets are the units: are the encoders' differences real
across datasets, and would their ranking hold on new datasets?"""),
    ("code", """benchmark = replikit.audit(benchmark=entry_sample("benchmark"), metric="roc_auc", quick=True)
benchmark"""),
    ("md", """`to_frame()` has the same cards as a table, one row per question:"""),
    ("code", """benchmark.to_frame()[["section", "state", "label", "estimate", "ci_low", "ci_high"]]"""),
    ("md", """## 3. Per-fold scores from another framework

An mlr3 `as.data.table(bmr$score())` export is recognised from its columns (as is a Weka
Experimenter CSV). mlr3's `cv` resampling is k-fold, so the corrected tests know the ratio of
test to training set sizes; for scores that do not say, pass `scheme="kfold"` or a
`test_fraction`, or those tests are skipped rather than run on a guess."""),
    ("code", """scores = replikit.audit(scores=entry_sample("mlr3"), quick=True)
scores"""),
    ("md", """## 4. Out-of-fold predictions

Predictions of three models for the Wilms' tumour patients of two trials, each row predicted by
a model that did not see it. The audit scores them fold by fold and asks whether one prediction
rule serves both trials alike."""),
    ("code", """predictions = replikit.audit(predictions=entry_sample("predictions"), quick=True)
predictions"""),
    ("md", """## 5. A data table: replikit fits the models

With a data table, replikit fits its default models itself under one resampling design and
answers every question. `quick=True` is a preview with fewer resamples.

Here the outcome is a time to relapse, with the patients still free of relapse at the end of
follow-up censored: `time=` and `event=` name the two columns, and the models are survival
models scored by the C-index (`target=` names the outcome of any other table)."""),
    ("code", """from replikit.data.examples import nwtco

example = nwtco()  # days to relapse in two trials, censored at the end of follow-up
frame = example.X.assign(days=example.y, relapse=example.event, trial=example.study)
data = replikit.audit(data=frame, time="days", event="relapse", study="trial", quick=True,
                      sections=["overview", "compare"])
data"""),
    ("md", """## The report

`save` writes the self-contained HTML report, its JSON twin (`to_dict()` holds the same) and
the BibTeX of the methods used; it never replaces a report unless asked to."""),
    ("code", """saved = benchmark.save("tutorial-audit", overwrite=True)
saved.html_path.name, sorted(benchmark.to_dict())"""),
    ("md", """## Any result shows itself

Every result replikit returns shows its table (and its figure, where it has one) in a notebook.
Here, the comparisons of the mlr3 scores with the corrected tests:"""),
    ("code", """from replikit.compare import compare_scores
from replikit.data.foreign import read_scores

compare_scores(read_scores(entry_sample("mlr3")), metrics=["roc_auc"])"""),
]


def build() -> nbformat.NotebookNode:
    nb = new_notebook()
    nb.cells = [new_markdown_cell(text) if kind == "md" else new_code_cell(text)
                for kind, text in CELLS]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    return nb


if __name__ == "__main__":
    out = ROOT / "docs" / "tutorial.ipynb"
    nbformat.write(build(), out)
    print(f"wrote {out.relative_to(ROOT)}")
