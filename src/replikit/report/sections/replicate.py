"""Section 3: replication of a reported performance (seed 000, Vijayakumar & Cheung).

The analysis is :func:`replikit.replicate.audit` (the first study as the original, every other
study as a replication of a linear model's and the audited models' R²); this section only
formats its result.
"""

from __future__ import annotations

from ..._plotting import svg_inline
from ..blocks import Callout, Figure, KeyValues, Paragraph, SectionOutput, Table
from ..context import AuditContext
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
                  "all rows)"
                  + (f"; {', '.join(audited)} (the audited models, fitted by the runner on "
                     f"every row, {design['audited_n_splits']}-fold CV on the same training "
                     "parts; a constant baseline has no R2 to replicate)" if audited else ""),
        "design per study": f"2:1 train/test split, {design['n_splits']}-fold CV on the "
                            f"training part (fewer folds in studies where a fold would hold "
                            f"fewer than {design['min_fold_rows']} rows, at least 2)",
        "SE of R2": "test R2: " + ", ".join(sorted(
            set(res.estimates.loc[res.estimates["source"] == "test", "se_source"].astype(str))))
            + "; CV R2: folds pooled within each study",
        "difference CI": "simple asymptotic (seed eq. 2); replication - original",
        "pooled (test R2)": (f"FE {fe.estimate:.4f} [{fe_ci.low:.4f}, {fe_ci.high:.4f}]; "
                             f"RE ({tau2}, {_ci_name(design)}) {re_.estimate:.4f} "
                             f"[{re_ci.low:.4f}, {re_ci.high:.4f}], tau2 = {re_.tau2:.3g}, "
                             f"I2 = {re_.i2_q:.1f}%"),
        "interval method": _ci_why(design, len(res.studies)),
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


def _ci_name(design) -> str:
    return "Knapp-Hartung t" if design.get("ci") == "knha" else "z"


def _ci_why(design, k: int) -> str:
    from ...replicate.audit import KNHA_BELOW

    if design.get("ci") == "knha":
        return (f"Knapp-Hartung t(k-1) for the pooled intervals and prediction intervals: only "
                f"{k} studies (fewer than {KNHA_BELOW}), where z intervals are too narrow "
                "(IntHout et al. 2014)")
    return f"z intervals ({k} studies, at least {KNHA_BELOW})"


def _why_blocks(res) -> tuple[list, dict]:
    """Meta-regression, heterogeneity intervals, influence and the funnel (issue 17)."""
    blocks: list = []
    data: dict = {"moderators": list(res.moderators), "moderator_source": res.moderator_source}
    pooled = res.meta()
    if res.small_study is None:
        return blocks, data
    het = pooled.heterogeneity()
    intro = ("Why do the studies differ? The between-study variance of the linear model's "
             "test R2 with Q-profile intervals; ")
    if res.metareg is not None:
        fit = res.metareg
        how = ("given" if res.moderator_source == "given"
               else "found in the data (constant within every study)")
        intro += (f"a meta-regression on the study-level column(s) {', '.join(res.moderators)} "
                  f"({how}); ")
    else:
        intro += ("no meta-regression (no study-level column: one that is constant within every "
                  "study; give them with --moderator); ")
    intro += ("which study drives the pooled result (leave-one-out influence, Viechtbauer & "
              "Cheung 2010) and whether small studies tell a different story (funnel plot, "
              "Egger's regression test, Begg's rank test, trim-and-fill).")
    blocks.append(Paragraph(intro))
    blocks.append(Table(het.to_frame().drop(columns="confidence_level"),
                        f"Heterogeneity of the test R2 ({pooled.model_label}), 95% Q-profile "
                        "intervals"))
    data["heterogeneity"] = het.to_frame()
    if res.metareg is not None:
        fit = res.metareg
        facts = {"moderators": ", ".join(res.moderators), "test of moderators": str(fit.qm_test),
                 "residual heterogeneity": f"QE({fit.qe_df}) = {fit.qe:.4f}, p = "
                                           f"{fit.qe_pvalue:.4g}; tau2 = {fit.tau2:.4g}",
                 "R2 (share of tau2 explained)": "-" if fit.r2 is None else f"{fit.r2:.1f}%"}
        blocks.append(KeyValues(facts))
        blocks.append(Table(fit.to_frame(), "Meta-regression of the test R2 (linear model)"))
        numeric = [t for t, idx in fit.terms.items() if len(idx) == 1 and fit.names[idx[0]] == t]
        if numeric:
            ax = fit.plot(numeric[0], ylabel="test R2, linear model")
            blocks.append(Figure(svg_inline(ax.figure),
                                 f"Bubble plot: test R2 against {numeric[0]} (area = weight), "
                                 "predicted average with its CI and prediction interval."))
        data["meta_regression"] = fit.to_frame()
        data["meta_regression_summary"] = fit.summary_frame()
    inf = res.influence
    flagged = inf.table[inf.table["influential"]]
    blocks.append(Callout(
        ("Influential studies: " + "; ".join(f"{r.label} ({r.flagged_by})"
                                              for r in flagged.itertuples())
         if len(flagged) else "No study is influential by metafor's criteria (DFFITS, Cook's "
                             "distance, hat value, DFBETAS)."),
        "warn" if len(flagged) else "info"))
    show = inf.table[["label", "rstudent", "dffits", "cook_d", "cov_r", "tau2_del", "qe_del",
                      "hat", "weight", "flagged_by"]]
    blocks.append(Table(show, "Leave-one-out influence diagnostics of the pooled test R2"))
    sse = res.small_study
    ax = res.plot(kind="funnel")
    blocks.append(Figure(svg_inline(ax.figure),
                         "Contour-enhanced funnel plot of the test R2 on the r2_z scale "
                         "(atanh(sqrt(R2)); on the raw scale the SE of an R2 shrinks as the R2 "
                         "grows, which alone would look like asymmetry); shaded: p > .10, .05, "
                         ".01 against R2 = 0; open dots: trim-and-fill studies; line: Egger's "
                         "regression. " + " ".join(f"Caveat: {c}." for c in sse.caveats)))
    tests = sse.to_frame()[["test", "model", "predictor", "estimator", "statistic", "pvalue",
                            "k0", "estimate"]]
    blocks.append(Table(tests, "Small-study effects on the r2_z scale: regression tests, rank "
                               "test, trim-and-fill (estimate: atanh(sqrt(R2)))"))
    data["influence"] = inf.to_frame()
    data["small_study"] = sse.to_frame()
    return blocks, data


def build(ctx: AuditContext) -> SectionOutput:
    from ...replicate import audit

    study_run = None
    if ctx.dataset.task == "regression" and ctx.models and ctx.dataset.study is not None:
        from ..fits import study_cv

        study_run = study_cv(ctx, ctx.models)[0]  # shared with the sections across studies
    with ctx.stage("Replication: per-study CV and test R2", total=1) as advance:
        res = audit(ctx.dataset, models=ctx.models, quick=ctx.quick,
                    moderators=getattr(ctx, "moderators", None),
                    random_state=ctx.random_state, n_jobs=ctx.n_jobs, study_run=study_run)
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
                  f"fixed- and random-effects meta-analysis (tau2 by {tau2}, "
                  f"{_ci_name(design)} intervals). CV R2 "
                  "is first pooled over folds within each study (random or fixed effects)."),
        Callout(res.verdict.sentence, res.verdict.level),
        KeyValues(_facts(res)),
        Table(res.summary, "Verdicts per model and kind of estimate"),
        Figure(svg_inline(diff.figure),
               "Test of inconsistency for the test R2: differences with 95% CIs; a CI that "
               "misses 0 marks an inconsistent replication."),
        Figure(svg_inline(forest.figure),
               f"Forest plot (metafor layout) of the test R2, {test_meta.model_label}, "
               f"{_ci_name(design)} CI, dotted line: 95% prediction interval "
               f"({test_meta.pi_dist})."),
        Figure(svg_inline(forest_cv.figure),
               f"Forest plot of the CV R2 (folds pooled by random effects), "
               f"{cv_meta.model_label}."),
        Table(show.reset_index(drop=True), "Inconsistency (95%) and consistency (90%, "
              f"+-{margin:g}) per replication"),
        Table(pooled.reset_index(drop=True), "Pooled estimates (original + replications)"),
    ]
    why, why_data = _why_blocks(res)
    blocks += why
    return SectionOutput(
        key=KEY, title=TITLE, summary=res.verdict.sentence, blocks=blocks,
        data={"original": res.original, "models": list(res.models),
              "models_left_out": dict(res.models_left_out),
              "studies_left_out": [s for s, _ in res.studies_left_out],
              "margin": margin, "tau2_method": tau2, "n_splits": design["n_splits"],
              "n_features": design["n_features"],
              "verdict": res.verdict.to_dict(), "notes": list(res.notes),
              "estimates": res.estimates, "replications": res.table, "pooled": res.pooled,
              "summary": res.summary, "ci": design.get("ci"), **why_data},
    )


SECTION = Section(key=KEY, title=TITLE, order=30, build=build,
                  description="First study as original, the others as replications of a "
                              "linear model's R2: inconsistency, consistency, meta-analysis.")
