"""Section 2: are the audited models' differences real? (seed 002, Gardner & Brooks 2017)

Every pair of audited models is compared on the default scheme (10 repeats of 10-fold CV on a
row subsample of the pooled data, all models on the same splits) with the recommended tests —
the corrected repeated k-fold t-test (Nadeau & Bengio's variance; Bouckaert & Frank 2004) and the
Bayesian correlated t-test with a region of practical equivalence — Holm-adjusted across pairs
and metrics. Across studies, the models' mean scores per study (3-fold CV within each study,
shared with the generalizability section) give a Friedman test and a Nemenyi critical-difference
diagram (Demšar 2006).
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import pandas as pd

from ..blocks import Callout, Figure, KeyValues, Paragraph, SectionOutput, Table
from ..context import AuditContext
from ..figures import svg_from_figure
from ..registry import Section
from ._shared import subsample_rows

KEY, TITLE = "compare", "Are the differences between models real?"
ALPHA = 0.05


def _plan(ctx: AuditContext, n: int, min_class: int | None) -> dict:
    """Rows and scheme: the default 10x10 on a subsample that keeps the section within ~20 s
    with a random forest among the models; quick mode uses 5x2 CV on fewer rows.

    For classification the subsample and the folds are stratified; when the rarest class has
    fewer rows than folds, the number of folds drops to its count (at least 2).
    """
    rows = min(n, 300 if ctx.quick else 400)
    if min_class is not None:
        expected = int(min_class * rows / n)  # rarest class in a stratified subsample
        if expected < 10:
            rows = n if n <= 2000 else rows  # small data: keep every row of a rare class
            expected = int(min_class * rows / n)
        if ctx.quick and expected >= 2:
            return {"rows": rows, "scheme": "5x2", "stratify": True}
        folds = int(min(10, expected))
        if folds < 2:
            return {"rows": rows, "scheme": None, "stratify": True}
        return {"rows": rows, "scheme": f"{folds}x10", "stratify": True}
    return {"rows": rows, "scheme": "5x2" if ctx.quick else "10x10", "stratify": False}


def _metrics(models: dict, task: str, primary: str) -> list[str]:
    """The primary metric first (the one the verdict is about), then one secondary."""
    if task == "regression":
        return ["r2", "mae"]
    return [primary] + (["accuracy"] if primary != "accuracy" else [])


def _per_study_table(ctx: AuditContext, models: dict) -> pd.DataFrame | None:
    """Study x model mean scores (3-fold CV within each study), computed once per audit and
    shared with the generalizability section."""
    d = ctx.dataset
    if d.study is None or d.n_studies < 3:
        return None
    from ._shared import per_study_scores

    scores = per_study_scores(ctx, models)
    table = scores.pivot(index="study", columns="model", values="score")
    table = table.reindex(columns=[m for m in models if m in table.columns]).dropna()
    return table if len(table) >= 3 and table.shape[1] >= 2 else None


def _verdict(frame: pd.DataFrame, metric: str, label: str) -> tuple[str, str]:
    """The headline: which pairs differ on the primary ``metric`` (Holm-adjusted)."""
    main = frame[(frame["test"] != "bayesian_correlated_t") & frame["valid"]
                 & (frame["metric"] == metric)]
    if main.empty or main["pvalue_adjusted"].isna().all():
        return (f"No test could be computed on {label} (every score was missing or constant).",
                "warn")
    rejected = main["reject"].fillna(False).astype(bool).to_numpy()
    found = [f"{r.conclusion} ({r.a} vs {r.b}, Holm p = {r.pvalue_adjusted:.2g})"
             for r, rej in zip(main.itertuples(), rejected, strict=True) if rej]
    none = [f"{r.a} vs {r.b}" for r, rej in zip(main.itertuples(), rejected, strict=True)
            if not rej]
    parts = []
    if found:
        parts.append(f"On {label}, " + "; ".join(found) + ".")
    if none:
        parts.append(f"No difference shown on {label} (Holm-adjusted, alpha = {ALPHA:g}): "
                     + ", ".join(none) + ".")
    level = "good" if found and not none else ("info" if found else "warn")
    return " ".join(parts), level


def build(ctx: AuditContext) -> SectionOutput:
    from ...compare.api import compare_scores
    from ...experiment.models import default_models
    from ...experiment.runner import run
    from ...experiment.schemes import parse_scheme

    d = ctx.dataset
    models = ctx.models or default_models(d.task)
    if len(models) < 2:
        return SectionOutput(KEY, TITLE, skipped="one model only: nothing to compare.",
                             advice="give two or more models with --models.")
    t0 = time.perf_counter()
    n = len(d.y)
    classification = d.task == "classification"
    min_class = int(d.y.value_counts().min()) if classification else None
    plan = _plan(ctx, n, min_class)
    if plan["scheme"] is None:
        return SectionOutput(KEY, TITLE, skipped=(
            f"the rarest class has {min_class} rows: too few for two stratified folds."),
            advice="collect more rows of the rare class or merge classes.")
    rows = subsample_rows(ctx, ("compare-rows",), plan["rows"], stratify=plan["stratify"])
    X, y = d.X.iloc[rows].reset_index(drop=True), d.y.iloc[rows].reset_index(drop=True)
    metric_label = ctx.plan.metric_label
    metrics = _metrics(models, d.task, ctx.metric)
    scheme = parse_scheme(plan["scheme"], stratify=plan["stratify"])
    with ctx.stage(f"Model comparisons: {plan['scheme']} CV", total=1) as advance:
        res = run(models, X, y, scheme=scheme, metrics=metrics, random_state=ctx.random_state,
                  backend="joblib" if ctx.n_jobs > 1 else "serial", n_jobs=ctx.n_jobs,
                  return_predictions=False)
        advance(1)
    fit_seconds = time.perf_counter() - t0
    rope = {m: 0.01 for m in metrics}
    if "mae" in rope:
        rope["mae"] = 0.01 * float(y.std())  # 1% of the outcome's SD, in outcome units
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the naive t's ValidityWarning: it is shown as such
        table = compare_scores(res, tests="recommended", rope=rope, alpha=ALPHA)
        naive = compare_scores(res, metrics=metrics[:1], tests=["naive_paired_ttest"],
                               alpha=ALPHA)
    frame = table.frame
    pairs = len(set(zip(frame["a"], frame["b"], strict=True)))
    rejects = frame["reject"].fillna(False).astype(bool)
    n_naive = int(naive.frame["reject"].fillna(False).astype(bool).sum())
    n_main = int((rejects & (frame["metric"] == metrics[0])).sum())
    verdict, level = _verdict(frame, ctx.metric, metric_label)
    blocks = [
        Paragraph(
            "A table of mean scores does not say whether one model is better than another: the "
            "differences may be noise of the resampling. Following Gardner & Brooks (2017, seed "
            "002), every pair of models is compared on the same splits of "
            + ("5x2 cross-validation (quick mode)" if plan["scheme"] == "5x2" else
               f"10 repeats of {plan['scheme'].split('x')[0]}-fold cross-validation")
            + (" (stratified by class)" if plan["stratify"] else "")
            + f" on {len(y):,} rows drawn at random from the pooled data, with the recommended "
            "tests: "
            + ("Dietterich's 5x2cv paired t-test and Alpaydin's combined F-test"
               if plan["scheme"] == "5x2" else "the corrected repeated k-fold CV t-test, whose variance "
               "(1/n + n_test/n_train)·S² accounts for the overlap of training sets (Nadeau & "
               "Bengio 2003; Bouckaert & Frank 2004)")
            + ", and the Bayesian correlated t-test (Corani & Benavoli 2015), which gives the "
            "posterior probability that the difference is practically null (inside a region of "
            f"practical equivalence, ROPE, of ±{rope[metrics[0]]:g} {metrics[0]}). P-values "
            f"are Holm-adjusted within each test across the {pairs} pair(s) and "
            f"{len(metrics)} metric(s); a difference counts at alpha = {ALPHA:g} after the "
            "adjustment."),
        Callout(verdict, level),
        KeyValues(facts := {
            "primary metric": f"{metric_label} ({ctx.plan.primary_metric_rule})",
            "scheme": f"{plan['scheme']} CV" + (" (stratified)" if scheme.stratify else ""),
            "rows used": f"{len(y):,} of {n:,}",
            "metrics": ", ".join(metrics),
            "recommended tests": ", ".join(dict.fromkeys(frame["method"])),
            "naive paired t (invalid)": f"{n_naive} significant difference(s) on {metrics[0]}, "
                                        f"against {n_main} with the valid test",
        }),
        *[Figure(svg_from_figure(table.plot(metric=m).figure),
                 f"{m}: mean difference a − b per pair with its interval (95% CI of the test; "
                 "95% credible interval of the Bayesian test).") for m in metrics],
        Table(_display(frame), "Pairwise comparisons. p (Holm) is adjusted across pairs and "
              "metrics; the 95% CI beside it is not adjusted (a CI that misses 0 with Holm p > "
              f"{ALPHA:g} is not a shown difference). Bayesian rows: posterior probabilities "
              "a − b below / inside / above the ROPE."),
    ]
    data = {"scheme": plan["scheme"], "rows_used": int(len(y)), "metrics": metrics,
            "primary_metric": ctx.metric, "quick": ctx.quick,
            "rope": rope, "alpha": ALPHA, "comparisons": frame, "naive_rejections": n_naive,
            "valid_rejections": n_main}
    t1 = time.perf_counter()
    per_study = _per_study_table(ctx, models)
    if per_study is not None:
        blocks += _cd_blocks(per_study, metric_label, data)
    else:
        blocks.append(Paragraph("Across studies: fewer than three studies with scores for "
                                "every model, so no Friedman test or critical-difference "
                                "diagram (Demšar 2006 compares models over many datasets)."))
    data["seconds"] = time.perf_counter() - t0
    data["seconds_fits"] = fit_seconds
    data["seconds_across_studies"] = time.perf_counter() - t1
    facts["time"] = (f"{data['seconds']:.1f} s ({fit_seconds:.1f} s fitting the models on the "
                     "splits)")
    return SectionOutput(key=KEY, title=TITLE, summary=verdict, blocks=blocks, data=data)


def _display(frame: pd.DataFrame) -> pd.DataFrame:
    show = frame[["a", "b", "metric", "test", "estimate", "ci_low", "ci_high", "statistic",
                  "df", "pvalue", "pvalue_adjusted", "conclusion"]].copy()
    show["test"] = frame["method"]
    return show.rename(columns={"pvalue_adjusted": "p (Holm)", "statistic": "t / F",
                                "pvalue": "p (unadjusted)", "ci_low": "95% CI low (unadj.)",
                                "ci_high": "95% CI high (unadj.)"})


def _cd_blocks(table: pd.DataFrame, metric: str, data: dict) -> list:
    from ...compare.multiple import nemenyi_test
    from ...compare.plots import plot_cd_diagram

    nem = nemenyi_test(table, alpha=ALPHA)
    fried = nem.friedman
    ax = plot_cd_diagram(nem)
    ranks = pd.DataFrame({"model": nem.mean_ranks.index.astype(str),
                          "mean rank (1 = best)": nem.mean_ranks.to_numpy(),
                          f"mean {metric}": table.mean().reindex(nem.mean_ranks.index)
                          .to_numpy()})
    data["across_studies"] = {
        "n_studies": int(len(table)), "friedman_chi2": fried.statistic,
        "friedman_pvalue": fried.pvalue, "iman_davenport_f": fried.f_statistic,
        "iman_davenport_pvalue": fried.f_pvalue, "critical_distance": nem.critical_distance,
        "mean_ranks": nem.mean_ranks.to_dict(), "table": table.reset_index(),
    }
    sig = "rejects" if fried.f_pvalue <= ALPHA else "does not reject"
    f_text = (f"F = {fried.f_statistic:.3g}, p = {fried.f_pvalue:.3g}"
              if np.isfinite(fried.f_statistic) else
              f"F infinite: every study ranks the models in the same order; chi2 = "
              f"{fried.statistic:.3g}, p = {fried.pvalue:.3g}")
    return [
        Paragraph(
            f"Across the {len(table)} studies, each model's {metric} (3-fold CV within each "
            "study on a row subsample, the scores of the generalizability section) is ranked "
            "within each study. The Friedman test with the Iman–Davenport F "
            f"({f_text}) {sig} equal mean ranks; "
            "in the critical-difference diagram (Nemenyi, alpha = "
            f"{ALPHA:g}, CD = {nem.critical_distance:.3g}) models joined by a bar do not differ "
            "significantly (Demšar 2006). Studies, not folds, are the units here."),
        Figure(svg_from_figure(ax.figure), f"Critical-difference diagram of the mean ranks of "
               f"{metric} over {len(table)} studies."),
        Table(ranks, "Mean ranks across studies"),
    ]


SECTION = Section(key=KEY, title=TITLE, order=20, build=build,
                  description="All pairs of models: corrected repeated k-fold t and Bayesian "
                              "correlated t on 10x10 CV, Holm-adjusted; Friedman/Nemenyi CD "
                              "diagram across studies (seed 002).")
