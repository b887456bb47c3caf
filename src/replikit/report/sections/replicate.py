"""Section 3: replication of a reported performance (seed 000, Vijayakumar & Cheung).

The first study (e.g. the earliest survey year) is the original; every other study is a
replication of the R2 of a linear model. Per study: a 2:1 train/test split and 10-fold CV on the
training part (batched least squares); the CV R2 is the fold meta-analysis (fixed and random
effects), the test R2 gets the Olkin-Finn SE. Then the three aims: inconsistency (95% CI of the
difference excludes 0), consistency (90% CI inside +-0.05) and the FE/RE combination.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..._random import task_rng
from ...errors import DataError
from ..blocks import Callout, Figure, KeyValues, Paragraph, SectionOutput, Table
from ..context import AuditContext
from ..figures import svg_from_figure
from ..registry import Section

MARGIN = 0.05
TAU2 = "REML"


def _order(labels):
    labels = list(labels)
    try:
        return sorted(labels, key=float)
    except (TypeError, ValueError):
        return labels  # keep the order of appearance


_MIN_FOLD_ROWS = 20  # an R2 on fewer held-out rows is mostly noise (and often negative)


def _folds(n_rows: int, n_splits: int) -> int:
    """Folds for a study of ``n_rows`` rows: ``n_splits``, fewer when the training part (2/3)
    would give folds of fewer than 20 rows, at least 2."""
    n_train = int(round(n_rows * 2 / 3))
    return int(np.clip(n_train // _MIN_FOLD_ROWS, 2, n_splits))


def _study_fits(ctx: AuditContext, d, order, n_splits: int, max_rows: int | None):
    from ...replicate._fits import ols_cv_test

    X = d.X.to_numpy(float)
    y = d.y.to_numpy(float)
    study = d.study.astype(str).to_numpy()
    out = {}
    for s in order:
        idx = np.flatnonzero(study == str(s))
        rng = task_rng(ctx.random_state, ("replicate", str(s)))
        if max_rows is not None and idx.size > max_rows:
            idx = np.sort(rng.choice(idx, max_rows, replace=False))
        perm = rng.permutation(idx.size)[None, :]
        k = _folds(idx.size, n_splits)
        out[str(s)] = ols_cv_test(X[idx][None], y[idx][None], perm, n_splits=k)
    return out


def _sklearn_fits(ctx: AuditContext, d, models: dict, order, n_splits: int, max_rows: int):
    """CV fold R2 and test R2 of the user's models on the same kind of split, per study."""
    from sklearn.base import clone
    from sklearn.metrics import r2_score

    from ..._random import task_int_seed
    from ...experiment.fit import seed_estimator

    X = d.X.to_numpy(float)
    y = d.y.to_numpy(float)
    study = d.study.astype(str).to_numpy()
    out: dict[str, dict[str, dict]] = {}
    for name, est in models.items():
        per = {}
        for s in order:
            idx = np.flatnonzero(study == str(s))
            rng = task_rng(ctx.random_state, ("replicate-sk", str(s)))
            if idx.size > max_rows:
                idx = np.sort(rng.choice(idx, max_rows, replace=False))
            perm = idx[rng.permutation(idx.size)]
            n_train = int(round(idx.size * 2 / 3))
            tr_rows, te_rows = perm[:n_train], perm[n_train:]
            k = _folds(idx.size, n_splits)
            bounds = np.linspace(0, n_train, k + 1).round().astype(int)
            seed = task_int_seed(ctx.random_state, ("replicate-sk", name, str(s)))
            base = seed_estimator(clone(est), seed)
            folds = np.empty(k)
            for f in range(k):
                hold = tr_rows[bounds[f]:bounds[f + 1]]
                fit_rows = np.concatenate([tr_rows[:bounds[f]], tr_rows[bounds[f + 1]:]])
                m = clone(base).fit(X[fit_rows], y[fit_rows])
                folds[f] = r2_score(y[hold], m.predict(X[hold]))
            m = clone(base).fit(X[tr_rows], y[tr_rows])
            per[str(s)] = {"fold_r2": folds[None], "fold_n": np.diff(bounds),
                           "test_y": y[te_rows][None], "test_pred": m.predict(X[te_rows])[None]}
        out[str(name)] = per
    return out


def build(ctx: AuditContext) -> SectionOutput:
    from ...replicate import analyse_replications, forest_plot, from_folds, from_predictions
    from ...replicate.plots import plot_differences

    d = ctx.dataset
    key, title = "replicate", "Replication of the reported R2"
    if d.study is None or d.study.nunique() < 2:
        return SectionOutput(key, title, skipped="needs at least two studies (an original and "
                             "a replication).",
                             advice="name the column of studies, sites or years with --study.")
    if d.task != "regression":
        return SectionOutput(key, title, skipped="this section replicates the R2 of a linear "
                             "model, which needs a continuous outcome; the target is "
                             f"{d.task}.",
                             advice="to check a reported AUC or accuracy against a replication, "
                                    "use `replikit replicate` with the reported values and "
                                    "their SEs.")
    p = d.X.shape[1]
    min_rows = max(30, 3 * (p + 2))  # a test third of at least 10 rows and > p + 1
    d, left_out_studies = ctx.study_subset(min_rows, all_classes=False)
    if d.study.nunique() < 2:
        return SectionOutput(key, title, skipped=(
            f"fewer than two studies have the {min_rows} rows a 2:1 train/test split with "
            f"{p} predictors needs ({len(left_out_studies)} smaller "
            f"stud{'y' if len(left_out_studies) == 1 else 'ies'})."),
            advice="pool small studies into larger units, or use fewer predictors.")
    order = [str(s) for s in _order(pd.unique(d.study.astype(str)))]
    n_splits = 5 if ctx.quick else 10
    max_rows = 400 if ctx.quick else None
    # the audited models: scikit-learn fits on a subsample of each study, 5-fold CV so that
    # folds stay large enough for a positive R2 (Olkin-Finn needs R2 in [0, 1))
    sk_rows, sk_splits = (400, 5) if ctx.quick else (1000, 5)
    from ...experiment.models import default_models

    user_models = ctx.models if ctx.models is not None else default_models(d.task)
    user_models = {k: v for k, v in user_models.items()
                   if type(v).__name__ not in ("DummyRegressor", "DummyClassifier")}
    with ctx.stage("Replication: per-study CV and test R2", total=2) as advance:
        all_fits = {"linear model": _study_fits(ctx, d, order, n_splits, max_rows)}
        advance(1)
        all_fits.update(_sklearn_fits(ctx, d, user_models, order, sk_splits, sk_rows))
        advance(1)
    groups: dict = {}
    left_out: dict = {}
    bad_studies: dict = {}  # model -> [(study, reason)]: R2 outside [0, 1) there
    per_model: dict = {}
    for model, fits in all_fits.items():
        mg: dict = {}
        for s_label, f in fits.items():
            try:
                items = {}
                for pooling, name in (("random", f"CV, folds RE ({TAU2})"),
                                      ("fixed", "CV, folds FE")):
                    items[name] = from_folds(f["fold_r2"][0], f["fold_n"], pooling=pooling,
                                             tau2_method=TAU2, k=p, label=s_label)
                items["test"] = from_predictions(f["test_y"][0], f["test_pred"][0], k=p,
                                                 label=s_label)
            except DataError as exc:  # e.g. R2 <= 0 in a study: Olkin-Finn does not apply
                bad_studies.setdefault(model, []).append((s_label, str(exc)))
                continue
            for name, est in items.items():
                mg.setdefault((model, name), []).append(est)
        per_model[model] = mg
    usable = [st for st in order if st not in {b for b, _ in bad_studies.get("linear model", [])}]
    if len(usable) < 2:
        return SectionOutput(key, title, skipped=(
            "the linear model's R2 is outside [0, 1) in all but "
            f"{len(usable)} of {len(order)} studies, where the Olkin-Finn SE does not apply."),
            advice="this happens when the predictors explain almost nothing within studies; "
                   "the replication of a near-zero R2 is not informative.")
    original = usable[0]
    for model, mg in per_model.items():
        labels = [e.label for e in next(iter(mg.values()), [])]
        if original not in labels or len(labels) < 2:
            left_out[model] = ("R2 outside [0, 1) in the original study or in all but one "
                               "study")
            continue
        groups.update(mg)
    res = analyse_replications(groups, original, margin=MARGIN, method="sa", tau2_method=TAU2)
    tab = res.table
    summary_rows = []
    for (model, source), sub in tab.groupby(["model", "source"], sort=False):
        summary_rows.append({"model": model, "estimate": source, "replications": len(sub),
                             "inconsistent (95% CI excludes 0)":
                                 int((sub["inconsistency"] == "inconsistent").sum()),
                             f"consistent (90% CI inside +-{MARGIN})":
                                 int((sub["consistency"] == "consistent").sum())})
    summary = pd.DataFrame(summary_rows)
    test_tab = tab[(tab["source"] == "test") & (tab["model"] == "linear model")]
    n_inc = int((test_tab["inconsistency"] == "inconsistent").sum())
    n_con = int((test_tab["consistency"] == "consistent").sum())
    level = "bad" if n_inc > len(test_tab) / 2 else ("good" if n_con > 0 else "warn")
    verdict = (f"Test R2 of the linear model: {n_inc} of {len(test_tab)} replications are "
               f"inconsistent with the original ({original}); {n_con} are shown consistent "
               f"within +-{MARGIN}.")
    test_meta = res.meta[("linear model", "test", "random")]
    test_fe = res.meta[("linear model", "test", "fixed")]
    forest = forest_plot(test_meta, xlabel="test R2 (linear model)", refline=None,
                         title="Test R2 by study, pooled by random effects")
    diff = plot_differences(test_tab, title="Test R2: replication - original, 95% CI")
    cv_name = f"CV, folds RE ({TAU2})"
    cv_meta = res.meta[("linear model", cv_name, "random")]
    forest_cv = forest_plot(cv_meta, xlabel="CV R2 (linear model, folds pooled by RE)",
                            refline=None, title="CV R2 by study, pooled by random effects")
    show = tab[["model", "source", "replication", "value", "difference", "ci_low", "ci_high",
                "inconsistency", "tost_ci_low", "tost_ci_high", "p_tost", "consistency"]]
    pooled = res.pooled[["model", "source", "pooling", "method", "ci_method", "k", "estimate", "se",
                         "ci_low", "ci_high", "tau2", "q", "q_pvalue", "i2_q"]]
    facts = {
        "original study": original,
        "replications": f"{len(usable) - 1}",
        "models": f"linear regression (least squares, {p} features, all rows)"
                  + (f"; {', '.join(m for m in all_fits if m != 'linear model')} (the audited "
                     f"models, scikit-learn, at most {sk_rows} rows per study and {sk_splits}-fold CV "
                     "to keep the audit within its time budget; a constant baseline has no R2 "
                     "to replicate)" if len(all_fits) > 1 else ""),
        "design per study": f"2:1 train/test split, {n_splits}-fold CV on the training part "
                            f"(fewer folds in studies where a fold would hold fewer than "
                            f"{_MIN_FOLD_ROWS} rows, at least 2)"
                            + (f"; at most {max_rows} rows per study (quick mode)"
                               if max_rows else ""),
        "SE of R2": "Olkin-Finn, SE^2 = 4 R2 (1-R2)^2 / N (seed eq. 1)",
        "difference CI": "simple asymptotic (seed eq. 2); replication - original",
        "pooled (test R2)": (f"FE {test_fe.estimate:.4f} [{test_fe.confidence_interval().low:.4f}"
                             f", {test_fe.confidence_interval().high:.4f}]; RE ({TAU2}, z) "
                             f"{test_meta.estimate:.4f} "
                             f"[{test_meta.confidence_interval().low:.4f}, "
                             f"{test_meta.confidence_interval().high:.4f}], "
                             f"tau2 = {test_meta.tau2:.3g}, I2 = {test_meta.i2_q:.1f}%"),
    }
    for model, bad in bad_studies.items():
        if model not in left_out:
            facts[f"{model}: studies without an R2 in [0, 1)"] = ", ".join(
                str(st) for st, _ in bad[:15]) + (" ..." if len(bad) > 15 else "")
    if left_out_studies:
        facts["studies left out"] = (
            f"{len(left_out_studies)} with fewer than {min_rows} rows: "
            + ", ".join(str(st) for st, _ in left_out_studies[:15])
            + (" ..." if len(left_out_studies) > 15 else ""))
    if left_out:
        facts["left out"] = "; ".join(
            f"{m}: R2 outside [0, 1) in a study, so the Olkin-Finn SE does not apply"
            for m in left_out)
    blocks = [
        Paragraph("Does a later study reproduce the R2 reported by the first? Following "
                  "Vijayakumar & Cheung (2021), the first study is the original and each later "
                  "study a replication. A replication is inconsistent when the 95% CI of "
                  "(replication - original) excludes 0; failing that is not evidence of "
                  "consistency, which needs the 90% CI to lie inside a region of equivalence "
                  f"(here +-{MARGIN}, two one-sided tests). The third aim pools all studies by "
                  f"fixed- and random-effects meta-analysis (tau2 by {TAU2}, z intervals). CV R2 "
                  "is first pooled over folds within each study (random or fixed effects)."),
        Callout(verdict, level),
        KeyValues(facts),
        Table(summary, "Verdicts per model and kind of estimate"),
        Figure(svg_from_figure(diff.figure),
               "Test of inconsistency for the test R2: differences with 95% CIs; a CI that "
               "misses 0 marks an inconsistent replication."),
        Figure(svg_from_figure(forest.figure),
               f"Forest plot (metafor layout) of the test R2, {test_meta.model_label}, z CI, "
               "dotted line: 95% prediction interval."),
        Figure(svg_from_figure(forest_cv.figure),
               f"Forest plot of the CV R2 (folds pooled by random effects), "
               f"{cv_meta.model_label}."),
        Table(show.reset_index(drop=True), "Inconsistency (95%) and consistency (90%, "
              f"+-{MARGIN}) per replication"),
        Table(pooled.reset_index(drop=True), "Pooled estimates (original + replications)"),
    ]
    return SectionOutput(
        key=key, title=title, summary=verdict, blocks=blocks,
        data={"original": original, "models": [m for m in all_fits if m not in left_out],
              "models_left_out": left_out,
              "studies_left_out": [str(st) for st, _ in left_out_studies], "max_rows_per_study_audited_models": sk_rows,
              "margin": MARGIN, "tau2_method": TAU2,
              "n_splits": n_splits, "max_rows_per_study": max_rows, "n_features": p,
              "estimates": res.estimates, "replications": tab, "pooled": res.pooled,
              "summary": summary},
    )


SECTION = Section(key="replicate", title="Replication of the reported R2", order=30, build=build,
                  description="First study as original, the others as replications of a "
                              "linear model's R2: inconsistency, consistency, meta-analysis.")
