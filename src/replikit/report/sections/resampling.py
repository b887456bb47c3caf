"""Section 2: honest error estimates of each audited model (Etherington & Lieske (2019),
replicating Verbyla & Litvaitis (1989)) — resubstitution beside K-fold, the bootstrap (eqs. 6
and 7) and .632+, so the optimism of the apparent error shows.

The analysis is :func:`replikit.resampling.audit`; this module only formats its result."""

from __future__ import annotations

from ..._format import interval, number
from ..._plotting import svg_inline
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
                    n_jobs=ctx.n_jobs, progress=advance, cv=cv)
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
        Figure(svg_inline(res.plot().figure), f"Estimated {label} by model and method "
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


SECTION = Section(key="resampling", title="Prediction error by resampling", order=10,
                  build=build, description="Resubstitution vs K-fold, bootstrap (eqs. 6, 7) "
                  "and .632+ error estimates of each model (Etherington & Lieske (2019)).")
