"""Reproduce the two case studies of Matteucci et al. (2024) with replikit: tables and figures
for docs/generalize.md.

    .venv/bin/python tools/reproduce_generalize.py [--n-resamples 1000] [--out docs/figures/generalize]

Case study 1 (categorical encoders, sec. 5.1): 48 (model, tuning, scoring) combinations,
missing evaluations ranked worst, goals Borda (one-hot encoder), Jaccard k=1 and Mallows,
alpha* in {.9, .95, .99} x delta* in {.05, .1, .2}. Case study 2 (BIG-bench, sec. 5.2):
(task, shots) combinations after the 80 % coverage filters, Jaccard k=1 and Mallows.
Writes markdown tables (``tables.md``) and SVG figures: the log-log quantile fit of
"DTC, full, ACC" (Fig. 2), n* boxes over alpha* and delta* per kernel for each study
(Figs. 3-4), and the n-Gen curves of the two anchor configurations of each study.
Uses Algorithm 1 (estimator="loglog") throughout, as the paper does; replikit's default n*
estimator is the asymptotic-quantile one (docs/generalize.md). Prints the runtime of each study.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from replikit._outputs import write_text_atomic
from replikit._plotting import save_svg
from replikit.generalize import Kernel, StudySpec, analyze, plots

ROOT = Path(__file__).resolve().parents[1]
REF = ROOT / "tests" / "reference" / "generalize"
LEVELS = [0.9, 0.95, 0.99]  # alpha*
DELTAS = [0.05, 0.1, 0.2]


def _save(ax, path: Path) -> None:
    save_svg(ax.figure, path)  # standalone, valid SVG; replikit figures use a constrained layout
    print(f"  wrote {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")


def _anchor(res, design: dict, kernel: str, paper: float, label: str) -> dict:
    t = res.table
    m = np.ones(len(t), bool)
    for c, v in design.items():
        m &= t[c].astype(str).to_numpy() == str(v)
    row = t[m & (t["kernel"] == kernel) & np.isclose(t["confidence_level"], 0.95)
            & np.isclose(t["tolerance"], 0.05)].iloc[0]
    return {"configuration": label, "N": int(row["N"]), "paper n*": paper,
            "replikit n*": round(float(row["nstar"]), 1),
            "n observed": row["nstar_observed"], "sufficient": bool(row["sufficient"])}


def _markdown(t: pd.DataFrame, index: bool = False) -> str:
    """A GitHub table (no tabulate dependency)."""
    if index:
        t = t.reset_index()
    cells = [[f"{v:g}" if isinstance(v, float) else str(v) for v in row]
             for row in t.itertuples(index=False)]
    lines = ["| " + " | ".join(map(str, t.columns)) + " |",
             "|" + "---|" * len(t.columns)]
    lines += ["| " + " | ".join(r) + " |" for r in cells]
    return "\n".join(lines)


def _medians(table: pd.DataFrame) -> pd.DataFrame:
    t = table.copy()
    t["alpha*/delta*"] = [f"{a:g} / {d:g}"
                          for a, d in zip(t["confidence_level"], t["tolerance"], strict=True)]
    return t.pivot_table(index="kernel", columns="alpha*/delta*", values="nstar",
                         aggfunc="median").round(1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n-resamples", type=int, default=1000,
                    help="pairs of disjoint subsamples per subsample size")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "figures" / "generalize")
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    md = []

    # case study 1: encoders
    enc = pd.read_csv(REF / "encoders_results.csv.gz")
    t0 = time.perf_counter()
    spec = StudySpec("encoder", "cv_score", "dataset", design=["model", "tuning", "scoring"])
    kernels = [Kernel("borda", alternative="OHE"), Kernel("jaccard", k=1), Kernel("mallows")]
    res_enc = analyze(enc, spec, kernels=kernels, confidence_level=LEVELS, tolerance=DELTAS,
                      n_resamples=a.n_resamples, estimator="loglog", random_state=0)
    res_enc_even = analyze(enc, spec, kernels=[Kernel("jaccard", k=1)], confidence_level=0.95,
                           tolerance=0.05, n_resamples=a.n_resamples, n="even",
                           estimator="loglog", random_state=0)
    print(f"encoders: {len(res_enc.table)} + {len(res_enc_even.table)} n* values in "
          f"{time.perf_counter() - t0:.1f} s")
    anchors = pd.DataFrame([
        {**_anchor(res_enc, {"model": "DTC", "tuning": "full", "scoring": "ACC"},
                   "jaccard(k=1)", 28, "DTC, full tuning, ACC"),
         "replikit n*, authors' grid": round(float(_anchor(
             res_enc_even, {"model": "DTC", "tuning": "full", "scoring": "ACC"},
             "jaccard(k=1)", 28, "")["replikit n*"]), 1)},
        {**_anchor(res_enc, {"model": "SVC", "tuning": "full", "scoring": "BACC"},
                   "jaccard(k=1)", 34, "SVC, full tuning, BACC"),
         "replikit n*, authors' grid": round(float(_anchor(
             res_enc_even, {"model": "SVC", "tuning": "full", "scoring": "BACC"},
             "jaccard(k=1)", 34, "")["replikit n*"]), 1)},
    ])
    md += ["## Encoders: anchor configurations (Jaccard k=1, alpha*=.95, delta*=.05)", "",
           _markdown(anchors), "",
           "## Encoders: median n* over the 48 combinations", "",
           _markdown(_medians(res_enc.table), index=True), ""]
    dtc = res_enc.details[("DTC, full, ACC", "jaccard(k=1)")]
    _save(plots.plot_quantile_fit(dtc, confidence_level=0.95, tolerance=0.05),
          a.out / "encoders_fit_dtc_full_acc.svg")
    _save(plots.plot_nstar(res_enc.table, by="confidence_level", fixed=0.05),
          a.out / "encoders_nstar_alpha.svg")
    _save(plots.plot_nstar(res_enc.table, by="tolerance", fixed=0.95),
          a.out / "encoders_nstar_delta.svg")
    _save(plots.plot_generalizability(dtc, tolerance=[0.05, 0.1, 0.2]),
          a.out / "encoders_ngen_dtc_full_acc.svg")

    # case study 2: BIG-bench
    bb = pd.read_csv(REF / "bigbench_results.csv.gz")
    t0 = time.perf_counter()
    spec_bb = StudySpec("model_family_model_name", "score_value", "subtask_description",
                        design=["task_name", "number_of_shots"], missing="drop")
    res_bb = analyze(bb, spec_bb, kernels=[Kernel("jaccard", k=1), Kernel("mallows")],
                     confidence_level=LEVELS, tolerance=DELTAS, n_resamples=a.n_resamples,
                     estimator="loglog", random_state=0)
    print(f"BIG-bench: {len(res_bb.table)} n* values in {time.perf_counter() - t0:.1f} s")
    big = res_bb.table[res_bb.table["N"] >= 10]
    anchors_bb = pd.DataFrame([
        _anchor(res_bb, {"task_name": "conlang_translation", "number_of_shots": 0},
                "jaccard(k=1)", 44, "conlang_translation, 0 shots"),
        _anchor(res_bb, {"task_name": "arithmetic", "number_of_shots": 2},
                "jaccard(k=1)", 1, "arithmetic, 2 shots"),
    ])
    md += ["## BIG-bench: anchor configurations (Jaccard k=1, alpha*=.95, delta*=.05)", "",
           _markdown(anchors_bb), "",
           f"## BIG-bench: median n* over the {big.groupby(['task_name', 'number_of_shots']).ngroups}"
           " combinations with N >= 10 subtasks (smaller ones fit one or two points)", "",
           _markdown(_medians(big), index=True), ""]
    _save(plots.plot_nstar(big, by="confidence_level", fixed=0.05),
          a.out / "bigbench_nstar_alpha.svg")
    _save(plots.plot_nstar(big, by="tolerance", fixed=0.95), a.out / "bigbench_nstar_delta.svg")
    conlang = res_bb.details[("conlang_translation, 0", "jaccard(k=1)")]
    _save(plots.plot_quantile_fit(conlang, confidence_level=0.95, tolerance=0.05),
          a.out / "bigbench_fit_conlang_0shots.svg")
    write_text_atomic(a.out / "tables.md", "\n".join(md))
    print("\n".join(md))


if __name__ == "__main__":
    main()
