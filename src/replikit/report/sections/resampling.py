"""Section 2: honest error estimates of each audited model (seed 003) — resubstitution beside
K-fold, the bootstrap (eqs. 6 and 7) and .632+, so the optimism of the apparent error shows."""

from __future__ import annotations

import time

import pandas as pd

from ...errors import DataError, ReplikitError
from ..blocks import Callout, Figure, Paragraph, SectionOutput, Table
from ..context import AuditContext
from ..figures import svg_from_figure
from ..registry import Section
from ._shared import subsample_rows

METHODS = ["resubstitution", "kfold", "bootstrap", "loo_bootstrap", ".632+"]
LABELS = {"resubstitution": "resubstitution (eq. 3)", "kfold": "10-fold CV (eq. 5)",
          "bootstrap": "bootstrap (eq. 6)", "loo_bootstrap": "LOO bootstrap (eq. 7)",
          ".632+": ".632+ bootstrap"}


def _plan(fast: bool, n: int, quick: bool) -> dict:
    """Rows and resamples per model: batched models use all rows; the others a subsample."""
    if fast:
        return {"rows": n, "n_resamples": 50 if quick else 200, "n_splits": 10}
    return {"rows": min(n, 400 if quick else 1500), "n_resamples": 8 if quick else 25,
            "n_splits": 5 if quick else 10}


def build(ctx: AuditContext) -> SectionOutput:
    from ...experiment.models import default_models
    from ...resampling._fast import fast_predictor
    from ...resampling.error import estimate_errors
    from ...resampling.plots import plot_error_estimates

    d = ctx.dataset
    task = d.task
    models = ctx.models if ctx.models is not None else default_models(task)
    if task == "classification":
        # .632+ needs a per-row loss: the log loss (a proper score) when every model gives
        # probabilities, else the misclassification rate — AUC is not a per-row loss
        proba = all(hasattr(m, "predict_proba") for m in models.values())
        loss = "log" if proba else "zero_one"
    else:
        loss = "squared"
    loss_text = {"log": "log loss", "zero_one": "misclassification rate",
                 "squared": "mean squared error"}[loss]
    X, y = d.X.reset_index(drop=True), d.y.reset_index(drop=True)
    n = len(y)
    rows, notes, plans, failed = [], [], {}, {}
    with ctx.stage("Error estimates (resampling)", total=len(models)) as advance:
        for name, model in models.items():
            fast = fast_predictor(model, task) is not None
            plan = _plan(fast, n, ctx.quick)
            Xs, ys = X, y
            if plan["rows"] < n:
                keep = subsample_rows(ctx, ("resampling-rows", name), plan["rows"],
                                      stratify=task == "classification")
                Xs, ys = X.iloc[keep].reset_index(drop=True), y.iloc[keep].reset_index(drop=True)
                notes.append(f"{name}: a random subsample of {len(keep):,} of {n:,} rows, "
                             f"B = {plan['n_resamples']}, K = {plan['n_splits']}")
            start = time.perf_counter()
            try:
                res = estimate_errors(model, Xs, ys, methods=METHODS, loss=loss, task=task,
                                      n_resamples=plan["n_resamples"],
                                      n_splits=plan["n_splits"],
                                      random_state=ctx.random_state, n_jobs=ctx.n_jobs)
            except (ReplikitError, ValueError) as exc:  # one model failing keeps the others
                failed[name] = " ".join(str(exc).split())
                advance(1)
                continue
            seconds = time.perf_counter() - start
            frame = res.to_frame()
            frame.insert(0, "model", name)
            frame["rows_used"] = plan["rows"]
            frame["seconds"] = seconds
            rows.append(frame)
            plans[name] = {**plan, "path": res["kfold"].path, "seconds": seconds}
            advance(1)
    if not rows:
        raise DataError("no model's error could be estimated: " + "; ".join(
            f"{m}: {why}" for m, why in failed.items()))
    models = {m: est for m, est in models.items() if m not in failed}
    long = pd.concat(rows, ignore_index=True)
    wide = long.pivot(index="model", columns="method", values="estimate").reindex(
        index=list(models), columns=METHODS)
    wide.columns = [LABELS[m] for m in METHODS]
    table = wide.reset_index()
    table["optimism (CV − resub.)"] = (wide[LABELS["kfold"]]
                                       - wide[LABELS["resubstitution"]]).to_numpy()
    table["rows used"] = [plans[m]["rows"] for m in models]
    table["fit path"] = [plans[m]["path"] for m in models]
    plot_frame = long.assign(method=long["method"].map(LABELS))
    ax = plot_error_estimates(plot_frame[["model", "method", "estimate", "se"]])
    ax.set_ylabel(f"estimated {loss_text}")
    best = table.loc[table[LABELS[".632+"]].idxmin(), "model"]
    worst_opt = table.loc[table["optimism (CV − resub.)"].idxmax()]
    blocks = [
        Paragraph(
            f"Prediction error ({loss_text}) of each model on the pooled data, estimated by "
            "resampling as in Etherington & Lieske's replication of Verbyla & Litvaitis (seed "
            "003): the resubstitution (apparent) error of the model fitted to all rows, 10-fold "
            "cross-validation, the bootstrap with pooled out-of-bag errors (eq. 6, B = 200), "
            "Efron's leave-one-out bootstrap (eq. 7) and the .632+ bootstrap (Efron & "
            "Tibshirani 1997, overfitting rate clipped to [0, 1]). The gap between "
            "resubstitution and the resampling estimates is the optimism of judging a model "
            "on the rows it was fitted to."),
        Paragraph(
            "Linear models and baselines are refitted for all resamples at once by the batched "
            "fast path, on all rows. Models without a batched fit are refitted per resample "
            "on a random subsample with fewer resamples to keep the audit within its time "
            "budget" + (" (quick mode: fewer resamples everywhere)" if ctx.quick else "") + ": "
            + ("; ".join(notes) if notes else "none needed here") + ". A subsample's estimates "
            "describe a model trained on fewer rows, so they lean pessimistic beside the "
            "full-data ones. Studies are pooled; "
            "the SE shown for K-fold is the naive one (SD of fold errors / sqrt(K)), which "
            "ignores the overlap between training sets."),
        *([Paragraph(f"The {loss_text} is used because .632+ and the bootstrap need a "
                     "loss per row; it is a proper score (it rewards honest probabilities), "
                     "unlike the misclassification rate, which a model that always predicts "
                     "the majority class can make look small when classes are imbalanced.")]
          if loss == "log" else []),
        *([Callout("Not estimated: " + "; ".join(f"{m} ({why})" for m, why in failed.items()),
                   "warn")] if failed else []),
        Callout(f"Lowest .632+ {loss_text}: {best}. Largest optimism of the apparent error: "
                f"{worst_opt['model']} (resubstitution understates the cross-validated error "
                f"by {worst_opt['optimism (CV − resub.)']:.4g}).", "info"),
        Figure(svg_from_figure(ax.figure), f"Estimated {loss_text} by model and method "
               "(bars: ±1 naive SE where defined)."),
        Table(table, f"Estimated {loss_text} by model and method"),
    ]
    detail = long[["model", "method", "estimate", "se", "n_resamples", "rows_used", "path",
                   "seconds"]]
    return SectionOutput(
        key="resampling", title="Prediction error by resampling",
        summary=(f".632+ {loss_text}: " + ", ".join(
            f"{m} {v:.4g}" for m, v in zip(table["model"], table[LABELS['.632+']],
                                            strict=True)) + "."),
        blocks=blocks,
        data={"loss": loss, "methods": METHODS, "plans": plans, "models_failed": failed,
              "estimates": detail.to_dict("records")},
    )


SECTION = Section(key="resampling", title="Prediction error by resampling", order=10,
                  build=build, description="Resubstitution vs K-fold, bootstrap (eqs. 6, 7) "
                  "and .632+ error estimates of each model (seed 003).")
