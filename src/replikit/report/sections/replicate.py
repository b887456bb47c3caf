"""Section 3: replication of a reported performance (seed 000, Vijayakumar & Cheung).

The analysis is :func:`replikit.replicate.audit` (the first study as the original, every other
study as a replication of a linear model's and the audited models' R²); this section only
formats its result.
"""

from __future__ import annotations

from ..blocks import Callout, Figure, KeyValues, Paragraph, SectionOutput, Table
from ..context import AuditContext
from ..figures import svg_from_figure
from ..registry import Section

KEY, TITLE = "replicate", "Replication of the reported R2"


def _facts(res) -> dict:
    design = res.design
    tau2 = design["tau2_method"]
    fe, re_ = res.meta(pooling="fixed"), res.meta(pooling="random")
    fe_ci, re_ci = fe.confidence_interval(), re_.confidence_interval()
    from ...replicate import LINEAR_MODEL

    audited = [m for m in (*res.models, *res.models_left_out) if m != LINEAR_MODEL]
    facts = {
        "original study": res.original,
        "replications": f"{len(res.studies) - 1}",
        "models": f"linear regression (least squares, {design['n_features']} features, "
                  f"{'at most ' + str(design['max_rows']) if design['max_rows'] else 'all'} rows)"
                  + (f"; {', '.join(audited)} (the audited models, fitted by the runner on at "
                     f"most {design['audited_max_rows']} rows per study and "
                     f"{design['audited_n_splits']}-fold CV to keep the audit within its time "
                     "budget; a constant baseline has no R2 to replicate)" if audited else ""),
        "design per study": f"2:1 train/test split, {design['n_splits']}-fold CV on the "
                            f"training part (fewer folds in studies where a fold would hold "
                            f"fewer than {design['min_fold_rows']} rows, at least 2)"
                            + (f"; at most {design['max_rows']} rows per study (quick mode)"
                               if design["max_rows"] else ""),
        "SE of R2": "Olkin-Finn, SE^2 = 4 R2 (1-R2)^2 / N (seed eq. 1)",
        "difference CI": "simple asymptotic (seed eq. 2); replication - original",
        "pooled (test R2)": (f"FE {fe.estimate:.4f} [{fe_ci.low:.4f}, {fe_ci.high:.4f}]; "
                             f"RE ({tau2}, z) {re_.estimate:.4f} [{re_ci.low:.4f}, "
                             f"{re_ci.high:.4f}], tau2 = {re_.tau2:.3g}, I2 = {re_.i2_q:.1f}%"),
    }
    for model, bad in res.studies_outside.items():
        if model not in res.models_left_out:
            facts[f"{model}: studies without an R2 in [0, 1)"] = ", ".join(
                str(s) for s, _ in bad[:15]) + (" ..." if len(bad) > 15 else "")
    if res.studies_left_out:
        shown = ", ".join(f"{s} ({why})" for s, why in res.studies_left_out[:15])
        facts["studies left out"] = (f"{len(res.studies_left_out)}: {shown}"
                                     + (" ..." if len(res.studies_left_out) > 15 else ""))
    if res.models_left_out:
        facts["left out"] = "; ".join(f"{m}: {why}" for m, why in res.models_left_out.items())
    return facts


def build(ctx: AuditContext) -> SectionOutput:
    from ...replicate import audit

    with ctx.stage("Replication: per-study CV and test R2", total=1) as advance:
        res = audit(ctx.dataset, models=ctx.models, quick=ctx.quick,
                    random_state=ctx.random_state, n_jobs=ctx.n_jobs)
        advance(1)
    design = res.design
    margin, tau2 = design["margin"], design["tau2_method"]
    diff = res.plot(kind="differences", title="Test R2: replication - original, 95% CI")
    forest = res.plot(title="Test R2 by study, pooled by random effects")
    forest_cv = res.plot(source="cv", title="CV R2 by study, pooled by random effects")
    test_meta, cv_meta = res.meta(), res.meta(source="cv")
    show = res.table[["model", "source", "replication", "estimate", "difference", "ci_low",
                      "ci_high", "inconsistency", "tost_ci_low", "tost_ci_high", "pvalue_tost",
                      "consistency"]]
    pooled = res.pooled[["model", "source", "pooling", "method", "ci_method", "k", "estimate",
                         "se", "ci_low", "ci_high", "tau2", "q", "q_pvalue", "i2_q"]]
    blocks = [
        Paragraph("Does a later study reproduce the R2 reported by the first? Following "
                  "Vijayakumar & Cheung (2021), the first study is the original and each later "
                  "study a replication. A replication is inconsistent when the 95% CI of "
                  "(replication - original) excludes 0; failing that is not evidence of "
                  "consistency, which needs the 90% CI to lie inside a region of equivalence "
                  f"(here +-{margin:g}, two one-sided tests). The third aim pools all studies by "
                  f"fixed- and random-effects meta-analysis (tau2 by {tau2}, z intervals). CV R2 "
                  "is first pooled over folds within each study (random or fixed effects)."),
        Callout(res.verdict.sentence, res.verdict.level),
        KeyValues(_facts(res)),
        Table(res.summary, "Verdicts per model and kind of estimate"),
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
              f"+-{margin:g}) per replication"),
        Table(pooled.reset_index(drop=True), "Pooled estimates (original + replications)"),
    ]
    return SectionOutput(
        key=KEY, title=TITLE, summary=res.verdict.sentence, blocks=blocks,
        data={"original": res.original, "models": list(res.models),
              "models_left_out": dict(res.models_left_out),
              "studies_left_out": [s for s, _ in res.studies_left_out],
              "max_rows_per_study_audited_models": design["audited_max_rows"],
              "margin": margin, "tau2_method": tau2, "n_splits": design["n_splits"],
              "max_rows_per_study": design["max_rows"], "n_features": design["n_features"],
              "verdict": res.verdict.to_dict(), "notes": list(res.notes),
              "estimates": res.estimates, "replications": res.table, "pooled": res.pooled,
              "summary": res.summary},
    )


SECTION = Section(key=KEY, title=TITLE, order=30, build=build,
                  description="First study as original, the others as replications of a "
                              "linear model's R2: inconsistency, consistency, meta-analysis.")
