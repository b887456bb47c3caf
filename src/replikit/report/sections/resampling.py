"""Section 2: honest error estimates of each audited model (Etherington & Lieske (2019),
replicating Verbyla & Litvaitis (1989)) — resubstitution beside K-fold, the bootstrap (eqs. 6
and 7) and .632+, so the optimism of the apparent error shows.

From per-fold scores or out-of-fold predictions (no data to refit on), the cross-validation
estimate of each metric with the corrected repeated-CV t interval (Nadeau & Bengio (2003)) and,
from predictions, the pooled per-row loss with its naive interval.

The analyses are :func:`replikit.resampling.audit`, :func:`~replikit.resampling.summarize_scores`
and :func:`~replikit.resampling.summarize_predictions`; this module only formats their results."""

from __future__ import annotations

from ..._format import interval, number
from ..._plotting import svg_later
from ..blocks import Callout, Figure, Paragraph, SectionOutput, Table
from ..context import AuditContext
from ..fits import shared_cv
from ..registry import Section

_OPTIMISM = "optimism (CV − resub.)"
_CI = "K-fold 95% interval"
_KIND = {"nested": "nested CV", "wald": "naive"}


def build(ctx: AuditContext) -> SectionOutput:
    from ...experiment.models import default_models
    from ...resampling import METHOD_LABELS, audit

    models = (ctx.models if ctx.models is not None
              else default_models(ctx.dataset.task, quick=ctx.quick))
    cv = shared_cv(ctx, models)
    with ctx.stage("Error estimates (resampling)", total=len(models)) as advance:
        res = audit(ctx.dataset, models=models, quick=ctx.quick, random_state=ctx.random_state,
                    progress=advance, cv=cv, engine=ctx.engine)
    label = res.loss_label
    wide = res.table()
    kfold_at = list(wide.columns).index("kfold") + 1
    wide.insert(kfold_at, _CI, [
        f"{interval(lo, hi, 4)} ({_KIND.get(kind, kind)})" for lo, hi, kind in
        zip(wide["kfold_ci_low"], wide["kfold_ci_high"], wide["kfold_interval"], strict=True)])
    wide = wide.drop(columns=["kfold_ci_low", "kfold_ci_high", "kfold_interval"])
    table = wide.rename(columns={**METHOD_LABELS, "optimism": _OPTIMISM,
                                 "rows_used": "rows used", "path": "fit path"})
    nested = [m for m, p in res.plans.items() if p.get("interval") == "nested"]
    naive = [m for m, p in res.plans.items() if p.get("interval") == "wald"]
    blocks = [
        Paragraph(
            f"Prediction error ({label}) of each model on the pooled data, estimated by "
            "resampling as in Etherington & Lieske (2019), who replicated Verbyla & Litvaitis "
            "(1989): the resubstitution (apparent) error of the model fitted to all rows, K-fold "
            "cross-validation, the bootstrap with pooled out-of-bag errors (eq. 6), Efron's "
            "leave-one-out bootstrap (eq. 7) and the .632+ bootstrap (Efron & Tibshirani "
            "(1997), overfitting rate clipped to [0, 1]). The gap between resubstitution and "
            "the resampling estimates is the optimism of judging a model on the rows it was "
            "fitted to."),
        Paragraph(
            "Every model is estimated on all rows. Linear models and baselines are refitted "
            "for all 200 resamples at once by the batched fast path; models without a batched "
            "fit are refitted once per resample, with as many resamples as the audit's budget "
            "of row-fits allows (fewer on larger data: more Monte-Carlo noise, no bias)"
            + (" (quick mode: fewer resamples everywhere)" if res.quick else "") + ". K-fold "
            "CV is the first repeat of the cross-validation the model comparison also uses "
            "(one set of fits for both sections). What was done: " + "; ".join(res.notes)
            + "."),
        Paragraph(
            "Intervals. The K-fold estimate carries a 95% confidence interval for the error "
            "of the model on new rows like these. "
            + (f"For {', '.join(nested)} (batched fits) it is nested cross-validation (Bates, "
               "Hastie & Tibshirani (2024)), centred on their bias-corrected nested estimate; "
               "its coverage is measured in docs/resampling.md. " if nested else "")
            + (f"For {', '.join(naive)}, refitted once per resample, nested cross-validation "
               "(K(K+1)/2 refits per repetition) is beyond the audit's time budget, so the "
               "interval is the naive Wald one (rows treated as independent), which can cover "
               "below its level (Bates, Hastie & Tibshirani (2024)). " if naive else "")
            + "The bootstrap estimates (.632+ among them) have no interval: none has had its "
            "coverage measured here, so the summary's key number is the best model's K-fold "
            "estimate with its interval."),
        *([Paragraph(f"The {label} is used because .632+ and the bootstrap need a loss per "
                     "row; it is a proper score (it rewards honest probabilities), unlike the "
                     "misclassification rate, which a model that always predicts the majority "
                     "class can make look small when classes are imbalanced.")]
          if res.loss == "log" else []),
        *([Callout("Not estimated: " + "; ".join(f"{m} ({why})" for m, why in res.failed.items()),
                   "warn")] if res.failed else []),
        Callout(res.verdict.sentence, res.verdict.level),
        Figure(svg_later(res.plot().figure), f"Estimated {label} by model and method "
               "(bars: the 95% interval of the K-fold estimate)."),
        Table(table, f"Estimated {label} by model and method"),
    ]
    detail = res.to_frame()[["model", "method", "estimate", "se", "ci_low", "ci_high",
                             "interval", "n_resamples", "rows_used", "path"]]
    best = table[METHOD_LABELS[".632+"]]
    return SectionOutput(
        key="resampling", title="Prediction error by resampling",
        summary=(f".632+ {label}: " + ", ".join(
            f"{m} {number(v, 4)}" for m, v in zip(table["model"], best, strict=True))
            + "; K-fold with its 95% interval: " + ", ".join(
            f"{m} {number(v, 4)} {ci}" for m, v, ci in zip(
                table["model"], table[METHOD_LABELS["kfold"]], table[_CI], strict=True)) + "."),
        blocks=blocks,
        data={"loss": res.loss, "methods": list(res.methods), "plans": res.plans,
              "models_failed": res.failed, "estimates": detail.to_dict("records"),
              "verdict": res.verdict.to_dict(), "notes": list(res.notes),
              "model_seconds": res.seconds},
    )


#: What to supply when the scores do not say how their folds were made.
_SCHEME_ADVICE = ("give how the scores were made: --scheme kfold for k-fold cross-validation "
                  "or --test-fraction F for repeated hold-out with a test share F "
                  "(scheme='kfold' or test_fraction=F in Python), or n_train and n_test "
                  "columns in the file")


def build_from_scores(ctx: AuditContext) -> SectionOutput:
    """The section from per-fold scores: :func:`replikit.resampling.summarize_scores`."""
    from ...resampling import summarize_scores

    src = ctx.source
    with ctx.stage("Error estimates (from per-fold scores)", total=1) as advance:
        res = summarize_scores(src.scores, metric=src.metric, scheme=src.scheme,
                               test_fraction=src.test_fraction)
        advance(1)
    return _from_results(res, src.name)


def build_from_predictions(ctx: AuditContext) -> SectionOutput:
    """The section from out-of-fold predictions: the per-fold scores (shared with the other
    sections) and :func:`replikit.resampling.summarize_predictions`."""
    from ...errors import ReplikitError
    from ...experiment.scoring import scores_from_predictions
    from ...resampling import summarize_predictions

    src = ctx.source
    if src.task == "survival":  # a C-index per fold: no per-row loss to pool
        from ...resampling import summarize_scores

        with ctx.stage("Error estimates (from out-of-fold predictions)", total=1) as advance:
            fold = ctx.shared("predictions-scores",
                              lambda: scores_from_predictions(src.predictions))
            res = summarize_scores(fold, metric="c_index", scheme=src.scheme,
                                   test_fraction=src.test_fraction)
            advance(1)
        return _from_results(res, src.name)
    with ctx.stage("Error estimates (from out-of-fold predictions)", total=1) as advance:
        try:
            fold = ctx.shared("predictions-scores",
                              lambda: scores_from_predictions(ctx.source.predictions))
        except ReplikitError:  # the pooled per-row losses need no fold scores
            fold = None
        res = summarize_predictions(src.predictions, fold_scores=fold, metric=src.metric,
                                    task=src.task, scheme=src.scheme,
                                    test_fraction=src.test_fraction)
        advance(1)
    return _from_results(res, src.name)


def _interval_text(row) -> str:
    if row["interval"] == "none":
        return "– (none)"
    return f"{interval(row['ci_low'], row['ci_high'], 4)} ({_RESULT_KIND[row['interval']]})"


_RESULT_KIND = {"corrected_t": "corrected t", "wald": "naive"}


def _how(row) -> str:
    from ...resampling import describe_splits

    if row["basis"] == "rows":
        return f"pooled rows ({row['n_rows']:,.0f})"
    return "mean of " + describe_splits(int(row["n_repeats"]), float(row["n_folds"]),
                                        int(row["n_resamples"]))


def _from_results(res, entry_label: str) -> SectionOutput:
    import dataclasses

    from ...experiment.metrics import metric_label

    f = res.to_frame()
    metric_words = metric_label(res.metric)
    unknown = bool((f["interval"] == "none").any() & ~(f["interval"] != "none").any()) \
        if res.source == "scores" else False
    some_none = res.source == "scores" and bool((f["interval"] == "none").any())
    verdict = res.verdict
    if some_none:
        verdict = dataclasses.replace(verdict, caveats=(*verdict.caveats, _SCHEME_ADVICE))
    table = f.assign(
        how=[_how(r) for _, r in f.iterrows()],
        ci=[_interval_text(r) for _, r in f.iterrows()],
        metric=[metric_label(str(m)) for m in f["metric"]],
    )
    extra = [c for c in f.columns if c not in ("study", "model") and c in
             res.estimates.columns and c not in _RESULT_COLUMNS]
    table = table[["study", "model", *extra, "metric", "how", "estimate", "ci", "target"]]
    table = table.rename(columns={"how": "estimate of", "ci": "95% interval",
                                  "target": "the interval is for"})
    primary = res.primary()
    from_scores = res.source == "scores"
    blocks = [
        Paragraph(
            ("From per-fold scores (" if from_scores else "From out-of-fold predictions (")
            + entry_label + "), with no data to refit the models on, the prediction error is "
            "estimated from what the resampling already gave: "
            + ("the cross-validation estimate of each metric is the mean of its split scores "
               "(over repeats and folds). " if from_scores else
               "the pooled estimate of each per-row loss (squared and absolute error; log "
               "loss and misclassification) is the mean loss over the out-of-fold rows, each "
               "row's loss first averaged over the repeats, and the cross-validation "
               "estimate of each loss and metric is the mean of its fold scores. ")
            + "What was done: " + "; ".join(res.notes) + "."),
        Paragraph(
            "Intervals. The corrected repeated-CV t interval (Nadeau & Bengio (2003); "
            "Bouckaert & Frank (2004) for r x k cross-validation) is mean ± t(J − 1) · "
            "sqrt((1/J + n_test/n_train) S²), J the number of split scores and S² their "
            "variance. It is an interval for the expected performance of the learner trained "
            "on n_train rows (averaged over training sets of that size), not for the one "
            "model fitted on all rows (Bates, Hastie & Tibshirani (2024)). Its coverage, "
            "measured where the target is exact (docs/validity.md, 'Intervals from per-fold "
            "scores'), was conservative for a single 10-fold CV (96–99% at 95%) and "
            "anti-conservative for 10x10-fold CV and 20 hold-out splits of least squares "
            "(90–93% at 95%), nominal there for a nearest-centroid classifier."
            + ("" if from_scores else
               " The pooled per-row interval is the naive Wald one (rows treated as "
               "independent), as the data path's naive interval, which can cover below its "
               "level (Bates, Hastie & Tibshirani (2024)); the key number uses the corrected "
               "t interval where the folds partition the rows.")),
    ]
    if some_none:
        why = "; ".join(sorted(set(f.loc[f["interval"] == "none", "note"].astype(str))))
        blocks.append(Callout(
            f"No interval for {'any' if unknown else 'some'} of the estimates: {why}. To get "
            f"them, {_SCHEME_ADVICE}.", "warn"))
    blocks += [
        Callout(verdict.sentence, verdict.level),
        Figure(svg_later(res.plot().figure),
               f"Estimated {metric_words} of each model, by study (whiskers: the 95% "
               "interval where there is one, hollow markers where there is none; " + (
                   "corrected repeated-CV t)." if (primary["interval"] == "corrected_t").all()
                   else "the interval of each bar is named in the table).")),
        Table(table, "Estimates by study, model and metric, with what each interval is for"),
    ]
    summary = (f"Mean {metric_words} by model with its 95% interval: " + "; ".join(
        f"{r['study']} {r['model']} {number(r['estimate'], 4)} {_interval_text(r)}"
        for _, r in primary.iterrows()) + ".")
    return SectionOutput(
        key="resampling", title="Prediction error by resampling", summary=summary,
        blocks=blocks,
        data={"source": res.source, "metric": res.metric, "scheme": res.scheme,
              "best": res.best, "estimates": f.to_dict("records"),
              "verdict": verdict.to_dict(), "notes": list(res.notes)},
    )


_RESULT_COLUMNS = frozenset({"metric", "basis", "estimate", "se", "ci_low", "ci_high", "df",
                             "interval", "target", "n_repeats", "n_folds", "n_resamples",
                             "n_rows", "n_train", "ratio", "ratio_source", "higher_is_better",
                             "note"})


def build_survival(ctx: AuditContext) -> SectionOutput:
    """A survival outcome: the per-fold C-index of the within-study CV
    (:func:`replikit.report.fits.survival_cv`), summarized as per-fold scores are."""
    from ._shared import left_out_words, survival_scores_context

    view, left_out = survival_scores_context(ctx)
    out = build_from_scores(view)
    return _survival_opening(out, "The C-index of each model is the mean over the folds of "
                             "5-fold cross-validation within every study (stratified by the "
                             "event; Harrell's C of the predicted risk on each test fold)."
                             + left_out_words(left_out))


def _survival_opening(out: SectionOutput, text: str) -> SectionOutput:
    import dataclasses

    return dataclasses.replace(out, blocks=[Paragraph(text), *out.blocks])


SECTION = Section(key="resampling", title="Prediction error by resampling", order=10,
                  build=build, description="Resubstitution vs K-fold, bootstrap (eqs. 6, 7) "
                  "and .632+ error estimates of each model (Etherington & Lieske (2019)); "
                  "from scores or predictions, the cross-validation estimate with the "
                  "corrected repeated-CV t interval (Nadeau & Bengio (2003)).",
                  entries={"scores": build_from_scores, "predictions": build_from_predictions,
                           "survival": build_survival},
                  needs="per-fold scores (--scores), out-of-fold predictions (--predictions) "
                        "or a data table (--data)")
