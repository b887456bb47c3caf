"""Section 3: replication of a reported performance (Vijayakumar & Cheung (2021)).

The analysis is :func:`replikit.replicate.audit` (the first study as the original, every other
study as a replication of a linear model's and the audited models' R²), or, from reported
estimates, :func:`replikit.replicate.analyze_reported` (several effects per study: its
multilevel model); this section only formats its result.
"""

from __future__ import annotations

from ..._format import interval, number, pvalue
from ..._plotting import svg_later
from ...errors import ParameterError
from ..blocks import Callout, Figure, KeyValues, Paragraph, SectionOutput, Table
from ..context import AuditContext
from ..registry import Section

KEY, TITLE = "replicate", "Replication of the reported R²"

#: Column headers of the influence table, in words.
_INFLUENCE = {"label": "study", "rstudent": "studentized residual", "dffits": "DFFITS",
              "cook_d": "Cook's distance", "cov_r": "covariance ratio",
              "tau2_del": "τ² without it", "qe_del": "Q without it", "hat": "hat value",
              "weight": "weight (%)", "flagged_by": "flagged by"}


def _design(res) -> dict:
    """The audit's design in the current vocabulary (``tolerance``, ``n_folds``,
    ``audited_n_folds``, ``interval``), whichever names the result uses."""
    d = dict(res.design)
    for new, old in (("tolerance", "margin"), ("n_folds", "n_splits"),
                     ("audited_n_folds", "audited_n_splits"), ("interval", "meta_interval")):
        if new not in d and old in d:
            d[new] = d[old]
    return d


def _columns(frame, wanted):
    """The columns of ``wanted`` that ``frame`` has, in that order."""
    return frame[[c for c in wanted if c in frame.columns]]


def _facts(res) -> dict:
    design = _design(res)
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
                  + (f"; {', '.join(audited)} (the audited models, fitted on every row, "
                     f"{design['audited_n_folds']}-fold CV on the same training parts; a "
                     "constant baseline has no R² to replicate)" if audited else ""),
        "design per study": f"2:1 train/test split, {design['n_folds']}-fold CV on the "
                            f"training part (fewer folds in studies where a fold would hold "
                            f"fewer than {design['min_fold_rows']} rows, at least 2)",
        "standard error of the R²": "test R²: " + ", ".join(sorted(
            set(res.estimates.loc[res.estimates["source"] == "test", "se_source"].astype(str))))
            + "; CV R²: folds pooled within each study",
        "interval of a difference": "simple asymptotic (Vijayakumar & Cheung (2021), eq. 2); "
                                    "replication − original",
        "pooled test R²": (f"fixed effect {number(fe.estimate, 4)} "
                           f"{interval(fe_ci.low, fe_ci.high, 4)}; random effects ({tau2}, "
                           f"{_ci_name(design)}) {number(re_.estimate, 4)} "
                           f"{interval(re_ci.low, re_ci.high, 4)}, τ² = {number(re_.tau2)}, "
                           f"I² = {number(re_.i2_q, 3)}%"),
        "interval method": _ci_why(design, len(res.studies)),
    }
    for model, bad in res.studies_outside.items():
        if model not in res.models_left_out:
            facts[f"{model}: studies left out of an estimate"] = "; ".join(
                f"{s} ({why})" for s, why in bad[:15]) + (" ..." if len(bad) > 15 else "")
    if res.studies_left_out:
        shown = ", ".join(f"{s} ({why})" for s, why in res.studies_left_out[:15])
        facts["studies left out"] = (f"{len(res.studies_left_out)}: {shown}"
                                     + (" ..." if len(res.studies_left_out) > 15 else ""))
    if res.models_left_out:
        facts["left out"] = "; ".join(f"{m}: {why}" for m, why in res.models_left_out.items())
    return facts


def _ci_name(design) -> str:
    return "Knapp–Hartung t" if design.get("interval") == "knha" else "normal (Wald)"


def _ci_why(design, k: int) -> str:
    from ...replicate.audit import KNHA_BELOW

    if design.get("interval") == "knha":
        return (f"Knapp–Hartung t with k − 1 degrees of freedom for the pooled intervals and "
                f"prediction intervals: only {k} studies (fewer than {KNHA_BELOW}), where "
                "normal intervals are too narrow (IntHout et al. (2014))")
    return f"normal (Wald) intervals ({k} studies, at least {KNHA_BELOW})"


def _moderator_blocks(res) -> tuple[list, dict]:
    """The meta-regression on the study-level columns, when there are any."""
    fit = res.metareg
    facts = {"moderators": ", ".join(res.moderators), "test of moderators": str(fit.qm_test),
             "residual heterogeneity": f"QE({fit.qe_df}) = {number(fit.qe, 4)}, p = "
                                       f"{pvalue(fit.qe_pvalue)}; τ² = {number(fit.tau2)}",
             "R² (share of τ² explained)": "–" if fit.r2 is None else f"{number(fit.r2)}%"}
    blocks: list = [KeyValues(facts),
                    Table(fit.to_frame(), "Meta-regression of the test R² (linear model)")]
    numeric = [t for t, idx in fit.terms.items() if len(idx) == 1 and fit.names[idx[0]] == t]
    if numeric:
        ax = fit.plot(numeric[0], ylabel="test R², linear model")
        blocks.append(Figure(svg_later(ax.figure),
                             f"Test R² of each study against {numeric[0]} (area: weight), with "
                             "the predicted average, its confidence interval and the "
                             "prediction interval."))
    return blocks, {"meta_regression": fit.to_frame(),
                    "meta_regression_summary": fit.summary_frame()}


def _why_blocks(res) -> tuple[list, dict]:
    """Why the studies differ: heterogeneity, meta-regression, influence and the funnel."""
    blocks: list = []
    data: dict = {"moderators": list(res.moderators), "moderator_source": res.moderator_source}
    pooled = res.meta()
    if res.small_study is None:
        return blocks, data
    het = pooled.heterogeneity()
    intro = ("Why do the studies differ? The between-study variance of the linear model's "
             "test R² with Q-profile intervals (Viechtbauer (2007)); ")
    if res.metareg is not None:
        how = ("given" if res.moderator_source == "given"
               else "found in the data (constant within every study)")
        intro += (f"a meta-regression on the study-level column(s) {', '.join(res.moderators)} "
                  f"({how}); ")
    else:
        intro += ("no meta-regression (no study-level column: one that is constant within every "
                  "study; give them with --moderator); ")
    intro += ("which study drives the pooled result (leave-one-out influence, Viechtbauer & "
              "Cheung (2010)) and whether small studies tell a different story (funnel plot, "
              "Egger's regression test, Begg's rank test, trim-and-fill).")
    blocks.append(Paragraph(intro))
    blocks.append(Table(het.to_frame().drop(columns="confidence_level"),
                        f"Heterogeneity of the test R² ({pooled.model_label}), 95% Q-profile "
                        "intervals"))
    data["heterogeneity"] = het.to_frame()
    if res.metareg is not None:
        more, more_data = _moderator_blocks(res)
        blocks += more
        data.update(more_data)
    inf = res.influence
    flagged = inf.table[inf.table["influential"]]
    blocks.append(Callout(
        ("Influential studies: " + "; ".join(f"{r.label} ({r.flagged_by})"
                                              for r in flagged.itertuples())
         if len(flagged) else "No study is influential by the criteria of Viechtbauer & "
                             "Cheung (2010) (DFFITS, Cook's distance, hat value, DFBETAS)."),
        "warn" if len(flagged) else "info"))
    show = _columns(inf.table, list(_INFLUENCE)).rename(columns=_INFLUENCE)
    blocks.append(Table(show, "Leave-one-out influence diagnostics of the pooled test R²"))
    sse = res.small_study
    ax = res.plot(kind="funnel")
    blocks.append(Figure(svg_later(ax.figure),
                         "Contour-enhanced funnel plot of the test R² on the z scale of R² "
                         "(atanh of its square root: on the raw scale the standard error of an "
                         "R² shrinks as the R² grows, which alone would look like asymmetry); "
                         "shaded: p > 0.10, 0.05, 0.01 against R² = 0; open dots: trim-and-fill "
                         "studies; line: Egger's regression. "
                         + " ".join(f"Caveat: {c}." for c in sse.caveats)))
    tests = _columns(sse.to_frame(), ["test", "model", "predictor", "estimator", "statistic",
                                      "pvalue", "k0", "estimate"])
    blocks.append(Table(tests, "Small-study effects on the z scale of R²: regression tests, "
                               "rank test, trim-and-fill (estimate: atanh of the square root "
                               "of R²)"))
    data["influence"] = inf.to_frame()
    data["small_study"] = sse.to_frame()
    return blocks, data


def build(ctx: AuditContext) -> SectionOutput:
    from ...replicate import audit

    study_run = None
    if ctx.dataset.task == "regression" and ctx.models and ctx.dataset.study is not None:
        from ..fits import study_cv

        study_run = study_cv(ctx, ctx.models)[0]  # shared with the sections across studies
    given = ctx.tolerance("replicate")
    with ctx.stage("Replication: per-study CV and test R²", total=1) as advance:
        res = audit(ctx.dataset, models=ctx.models, quick=ctx.quick,
                    tolerance=None if given is None else given.of(1.0),
                    moderators=getattr(ctx, "moderators", None),
                    random_state=ctx.random_state, n_jobs=ctx.n_jobs, study_run=study_run,
                    engine=ctx.engine)
        advance(1)
    design = _design(res)
    tolerance, tau2 = design["tolerance"], design["tau2_method"]
    diff = res.plot(kind="differences", title="Test R²: replication − original, 95% CI")
    forest = res.plot(title="Test R² by study, pooled by random effects")
    try:  # the linear model's CV R2 is left out when the original's fold R2 is outside [0, 1)
        cv_meta = res.meta(source="cv")
        forest_cv = res.plot(source="cv", title="CV R² by study, pooled by random effects")
    except ParameterError:
        cv_meta = forest_cv = None
    test_meta = res.meta()
    show = _columns(res.table, ["model", "source", "replication", "estimate", "difference",
                                "ci_low", "ci_high", "inconsistency", "tost_ci_low",
                                "tost_ci_high", "pvalue_tost", "consistency"])
    pooled = _columns(res.pooled, ["model", "source", "pooling", "method", "tau2_method",
                                   "ci_method", "interval", "k", "estimate", "se", "ci_low",
                                   "ci_high", "tau2", "q", "q_pvalue", "i2_q"])
    blocks = [
        Paragraph("Does a later study reproduce the R² reported by the first? Following "
                  "Vijayakumar & Cheung (2021), the first study is the original and each later "
                  "study a replication. A replication is inconsistent when the 95% confidence "
                  "interval of (replication − original) excludes 0; failing that is not "
                  "evidence of consistency, which needs the 90% interval to lie inside a region "
                  f"of equivalence (here ±{number(tolerance)}, two one-sided tests, Schuirmann "
                  "(1987)). The light rests on the replications pooled: green when the 90% "
                  "interval of (pooled replications − original) lies inside "
                  f"±{number(tolerance)}, or every replication is shown consistent (an "
                  "intersection–union test, Berger (1982), which needs no multiplicity "
                  "adjustment); red when that interval lies entirely outside; amber otherwise. "
                  "The third aim pools all studies by fixed- and random-effects "
                  f"meta-analysis (τ² by {tau2}, {_ci_name(design)} intervals). CV R² is first "
                  "pooled over folds within each study (random or fixed effects)."),
        Callout(res.verdict.sentence, res.verdict.level),
        KeyValues(_facts(res)),
        Table(res.summary, "Verdicts per model and kind of estimate"),
        Figure(svg_later(diff.figure),
               "Test of inconsistency for the test R²: each replication's difference from the "
               "original with its 95% confidence interval; an interval that misses 0 marks an "
               "inconsistent replication."),
        Figure(svg_later(forest.figure),
               f"Forest plot of the test R², {test_meta.model_label}, {_ci_name(design)} "
               f"confidence intervals; dotted line: 95% prediction interval "
               f"({test_meta.pi_dist})."),
        *([] if forest_cv is None else [Figure(
            svg_later(forest_cv.figure),
            f"Forest plot of the CV R² (folds pooled by random effects), "
            f"{cv_meta.model_label}.")]),
        Table(show.reset_index(drop=True), "Inconsistency (95%) and consistency (90%, "
              f"±{number(tolerance)}) per replication"),
        Table(pooled.reset_index(drop=True), "Pooled estimates (original and replications)"),
    ]
    why, why_data = _why_blocks(res)
    blocks += why
    return SectionOutput(
        key=KEY, title=TITLE, summary=res.verdict.sentence, blocks=blocks,
        data={"original": res.original, "models": list(res.models),
              "models_left_out": dict(res.models_left_out),
              "studies_left_out": [s for s, _ in res.studies_left_out],
              "tolerance": tolerance, "tau2_method": tau2, "n_folds": design["n_folds"],
              "n_features": design["n_features"],
              "verdict": res.verdict.to_dict(), "notes": list(res.notes),
              "estimates": res.estimates, "replications": res.table, "pooled": res.pooled,
              "summary": res.summary, "interval": design.get("interval"), **why_data},
    )


#: What this section reads besides a data table.
NEEDS = ("reported study-level estimates (--estimates) or a data table with a study column "
         "(--data ... --study)")


def _reported_facts(res, tolerance_given: bool) -> dict:
    from ...replicate import METRIC_MEASURES

    raw, pooled_measure, _ = METRIC_MEASURES[res.metric]
    m = res.pooled.meta
    ci, pi = res.pooled.confidence_interval(), res.pooled.prediction_interval()
    facts = {"original study": res.original or "none marked (meta-analysis only)",
             "studies": str(len(res.studies)),
             "sampling variances": ", ".join(sorted(set(res.studies["variance_from"]))) + (
                 " (a C-index has no closed form from n: its SE, or its interval read on the "
                 "logit scale; pooled as logit C, Debray et al. (2017))"
                 if res.metric == "c_index" else
                 f" (as metafor's escalc: {raw} on the metric's scale, {pooled_measure} for "
                 "pooling)" if raw else ""),
             "pooled (all studies)": f"{number(res.pooled.estimate, 4)} "
                                     f"{interval(ci.low, ci.high, 4)}; 95% prediction interval "
                                     f"{interval(pi.low, pi.high, 4)}; τ² = {number(m.tau2, 4)}, "
                                     f"I² = {number(m.i2_tau, 3)}%, Q({m.q_df}) = "
                                     f"{number(m.q, 4)}, p = {pvalue(m.q_pvalue)}",
             "how it was pooled": res.notes[1]}
    if res.original is not None:
        facts["tolerance"] = (f"±{number(res.tolerance)} in {res.verdict.metric} ("
                              + ("given" if tolerance_given else "the default") + ")")
        facts["interval of a difference"] = ("simple asymptotic (Vijayakumar & Cheung (2021), "
                                             "eq. 2) on the metric's scale; replication − "
                                             "original")
    return facts


def build_estimates(ctx: AuditContext) -> SectionOutput:
    """Reported study-level estimates: the three aims of Vijayakumar & Cheung (2021) when one
    study is the original, else the random-effects meta-analysis of all studies
    (:func:`replikit.replicate.analyze_reported`)."""
    from ...replicate import DEFAULT_REPORTED_TOLERANCE, analyze_reported

    given = ctx.tolerance("replicate")
    src = ctx.source
    with ctx.stage("Replication: reported estimates", total=1) as advance:
        res = analyze_reported(src.estimates, metric=src.metric, original=src.original,
                               tolerance=DEFAULT_REPORTED_TOLERANCE if given is None
                               else given.of(1.0))
        advance(1)
    if res.multilevel is not None:
        return _build_multilevel(res, given is not None)
    what = res.verdict.metric
    title = f"Replication of the reported {what}"
    on = ("" if res.scale == "identity" else
          f" The pooled estimate is computed on the {_SCALE_WORDS.get(res.scale, res.scale)} scale and back-transformed to the "
          f"{what} (a monotone transform: the intervals keep their coverage; the estimate is "
          "the median effect).")
    forest = res.plot(title=f"Reported {what} by study, pooled by random effects")
    blocks: list = []
    if res.original is not None:
        tol = number(res.tolerance)
        blocks.append(Paragraph(
            f"Does a later study reproduce the {what} reported by the original "
            f"({res.original})? Following Vijayakumar & Cheung (2021), each other study is a "
            "replication. A replication is inconsistent when the 95% confidence interval of "
            "(replication − original) excludes 0; failing that is not evidence of consistency, "
            f"which needs the 90% interval to lie inside ±{tol} (two one-sided tests, "
            "Schuirmann (1987)). The light rests on the replications pooled by random effects: "
            f"green when the 90% interval of (pooled replications − original) lies inside ±{tol}"
            ", or every replication is shown consistent (an intersection–union test, Berger "
            f"(1982)); red when that interval lies entirely outside ±{tol}; amber otherwise. "
            f"The differences are on the {what}'s own scale, where the tolerance is stated; the "
            "third aim pools all studies." + on))
    else:
        blocks.append(Paragraph(
            f"The table marks no original study, so there is no reported result to replicate: "
            f"the section pools the {what} of all studies by random-effects meta-analysis "
            "(Viechtbauer (2010)), with the 95% prediction interval for a new study's true "
            "value (Higgins, Thompson & Spiegelhalter (2009)). Mark the original in a `role` "
            "column (original / replication) to judge a replication." + on))
    blocks += [Callout(res.verdict.sentence, res.verdict.level),
               KeyValues(_reported_facts(res, given is not None)),
               Figure(svg_later(forest.figure),
                      f"Forest plot of the reported {what}, {res.pooled.meta.model_label}, "
                      "95% confidence intervals (back-transformed where pooled on another "
                      "scale); dotted line: 95% prediction interval."),
               Table(_columns(res.studies, ["study", "estimate", "se", "ci_low", "ci_high",
                                            "variance_from", "yi", "vi"]),
                     f"Studies: the {what} with its standard error and 95% Wald interval, and "
                     "the effect yi with its sampling variance vi on the pooling scale")]
    data = {"original": res.original, "metric": res.metric, "scale": res.scale,
            "tolerance": res.tolerance, "verdict": res.verdict.to_dict(),
            "studies": res.studies, "pooled_all": res.pooled.to_frame(),
            "notes": list(res.notes)}
    if res.replication is not None:
        rep = res.replication
        diff = res.plot(kind="differences",
                        title=f"{what}: replication − original, 90% CI")
        blocks += [
            Figure(svg_later(diff.figure),
                   f"Test of consistency: each replication's difference from the original with "
                   f"its 90% confidence interval and the region ±{number(res.tolerance)}; an "
                   "interval inside it is a consistent replication."),
            Table(_columns(rep.table, ["replication", "estimate", "difference", "ci_low",
                                       "ci_high", "inconsistency", "tost_ci_low",
                                       "tost_ci_high", "pvalue_tost", "consistency"]),
                  f"Inconsistency (95%) and consistency (90%, ±{number(res.tolerance)}) per "
                  "replication"),
            Table(_columns(rep.pooled, ["pooling", "tau2_method", "interval", "k", "estimate",
                                        "se", "ci_low", "ci_high", "tau2", "q", "q_pvalue",
                                        "i2_q"]),
                  f"Fixed- and random-effects combination of the {what} on its own scale "
                  "(Vijayakumar & Cheung (2021), third aim)")]
        data.update(replications=rep.table, pooled=rep.pooled,
                    light={k: v for k, v in (res.light or {}).items()})
    return SectionOutput(key=KEY, title=title, summary=res.verdict.sentence, blocks=blocks,
                         data=data)


def _multilevel_facts(res, tolerance_given: bool) -> dict:
    fit, studies = res.multilevel, res.studies
    rows = res.pooled_frame()
    used = rows.query("used").iloc[0]
    per = studies.groupby("study", sort=False).size()
    scale = "" if res.scale == "identity" else \
        f" (pooled on the {_SCALE_WORDS.get(res.scale, res.scale)} scale, back-transformed)"
    facts = {"original study": res.original or "none marked (meta-analysis only)",
             "studies and effects": f"{fit.n_clusters[0]} studies, {fit.k} effects "
                                    f"({per.min()}–{per.max()} per study; "
                                    f"{int((per > 1).sum())} studies with several)",
             "effects told apart by": (f"column `{fit.levels[1]}`"
                                       if fit.levels[1] != "effect" else
                                       "their order within the study (no effect_id, outcome, "
                                       "sample, fold or model column)"),
             "sampling variances": ", ".join(sorted(set(studies["variance_from"]))),
             "pooled (multilevel model)": f"{number(used['estimate'], 4)} "
                                          f"{interval(used['ci_low'], used['ci_high'], 4)}, "
                                          f"{used['interval']}{scale}",
             "other intervals": "; ".join(
                 f"{r.interval} {interval(r.ci_low, r.ci_high, 4)}"
                 for r in rows.itertuples() if not r.used)}
    words = {"study": "σ² between studies"}
    for name, s2, ci, n in zip(fit.levels, fit.sigma2, fit.sigma2_ci, fit.n_clusters,
                               strict=True):
        key = words.get(name, f"σ² between effects within a study ({name})")
        facts[key] = (f"{number(s2, 4)}, 95% profile-likelihood CI "
                      f"{interval(ci.low, ci.high, 4)} ({n} clusters)")
    p = pvalue(fit.qe_pvalue)
    facts["residual heterogeneity"] = (f"QE({fit.qe_df}) = {number(fit.qe, 4)}, p "
                                       + (p if p.startswith("<") else f"= {p}"))
    facts["how it was pooled"] = res.notes[1]
    if res.original is not None:
        facts["tolerance"] = (f"±{number(res.tolerance)} in {res.verdict.metric} ("
                              + ("given" if tolerance_given else "the default") + ")")
        facts["per-study tests"] = ("each study's effects as their mean, with the mean of their "
                                    "SEs as its SE (the SE of a mean at within-study "
                                    "correlation 1: never too small); replication − original, "
                                    "simple asymptotic (Vijayakumar & Cheung (2021), eq. 2)")
        facts["the light's pooled difference"] = res.light["how"]
    return facts


def _build_multilevel(res, tolerance_given: bool) -> SectionOutput:
    """The estimates section when some study reports several effects."""
    from ...replicate.reported import ROBUST_FROM, _use_robust

    fit, what = res.multilevel, res.verdict.metric
    J, k = fit.n_clusters[0], fit.k
    rule = (f"Its 95% interval is the cluster-robust CR2 interval by study with Satterthwaite "
            f"degrees of freedom (Tipton (2015); {J} studies, at least {ROBUST_FROM}: with 20 "
            "studies it covered 0.95 where the model-based interval covered 0.93, "
            "docs/meta.md)" if _use_robust(fit) else
            f"Its 95% interval is the model-based one with t({J - 1}) ({J} studies, fewer than "
            f"{ROBUST_FROM}: the CR2 interval's degrees of freedom are too few to trust)")
    pooled_how = (f"Some studies report several effects ({k} effects in {J} studies). Effects "
                  "of one study share its data and population, so they are pooled with a "
                  "multilevel model instead of being averaged within each study or treated as "
                  "independent studies: random intercepts for studies and for effects within "
                  "studies (Konstantopoulos (2011); metafor's rma.mv, REML), with a variance "
                  f"per level and its profile-likelihood interval. {rule}.")
    if res.original is not None:
        tol = number(res.tolerance)
        lead = (f"Does a later study reproduce the {what} reported by the original "
                f"({res.original})? Following Vijayakumar & Cheung (2021), each other study is "
                "a replication. Per study, its effects are compared as their mean, with the "
                "mean of their standard errors (the SE of a mean when the effects are perfectly "
                "correlated, so never too small): a replication is inconsistent when the 95% "
                "interval of (replication − original) excludes 0, consistent when its 90% "
                f"interval lies inside ±{tol} (TOST, Schuirmann (1987)). The light rests on the "
                "replications' effects pooled by the same multilevel model: green when the 90% "
                f"interval of (pooled replications − original) lies inside ±{tol}, or every "
                "replication is shown consistent (an intersection–union test, Berger (1982)); "
                f"red when that interval lies entirely outside ±{tol}; amber otherwise. ")
    else:
        lead = ("The table marks no original study, so there is no reported result to "
                f"replicate: the section pools the {what} of all studies. Mark the original in "
                "a `role` column (original / replication) to judge a replication. ")
    blocks: list = [Paragraph(lead + pooled_how),
                    Callout(res.verdict.sentence, res.verdict.level),
                    KeyValues(_multilevel_facts(res, tolerance_given))]
    forest = res.plot()  # untitled: the caption says what it shows
    which = "the CR2 interval" if _use_robust(fit) else f"the model-based t({J - 1}) interval"
    variances = fit.to_frame()
    variances = variances[variances["quantity"].str.startswith("sigma2.")]
    blocks += [
        Figure(svg_later(forest.figure),
               f"Forest plot of the reported {what}: one row per effect (study / effect), with "
               f"its 95% Wald interval; diamond: the multilevel estimate with {which}"
               + ("" if res.scale == "identity" else ", back-transformed") + "."),
        Table(_columns(res.pooled_frame(), ["interval", "estimate", "ci_low", "ci_high", "se",
                                            "df", "used"]),
              f"The pooled {what} (multilevel model) with three 95% intervals; `used`: the one "
              "the verdict rests on (se and df on the pooling scale)"),
        Table(_columns(variances, ["quantity", "estimate", "ci_low", "ci_high",
                                   "n_clusters"]).reset_index(drop=True),
              "Variance of each level (σ²) with its 95% profile-likelihood interval"),
        Table(_columns(res.studies, ["study", "effect", "estimate", "se", "ci_low", "ci_high",
                                     "variance_from", "yi", "vi"]),
              f"Effects: the {what} with its standard error and 95% Wald interval, and the "
              "effect yi with its sampling variance vi on the pooling scale")]
    data = {"original": res.original, "metric": res.metric, "scale": res.scale,
            "tolerance": res.tolerance, "verdict": res.verdict.to_dict(),
            "studies": res.studies, "several_effects": True, "n_studies": J, "n_effects": k,
            "pooled_all": res.pooled_frame(), "multilevel": fit.to_frame(),
            "interval": "CR2" if _use_robust(fit) else "model t(J-1)",
            "notes": list(res.notes)}
    if res.replication is not None:
        rep = res.replication
        diff = res.plot(kind="differences",
                        title=f"{what}: replication − original (study means), 90% CI")
        blocks += [
            Figure(svg_later(diff.figure),
                   "Test of consistency: each replication's difference from the original (the "
                   "mean of each study's effects) with its 90% confidence interval and the "
                   f"region ±{number(res.tolerance)}; an interval inside it is a consistent "
                   "replication."),
            Table(_columns(rep.table, ["replication", "estimate", "difference", "ci_low",
                                       "ci_high", "inconsistency", "tost_ci_low",
                                       "tost_ci_high", "pvalue_tost", "consistency"]),
                  f"Inconsistency (95%) and consistency (90%, ±{number(res.tolerance)}) per "
                  "replication study (the mean of its effects)")]
        data.update(replications=rep.table, light=dict(res.light))
    return SectionOutput(key=KEY, title=f"Replication of the reported {what}",
                         summary=res.verdict.sentence, blocks=blocks, data=data)


#: How the section names each pooling scale.
_SCALE_WORDS = {"fisher_z": "Fisher z (atanh r)", "r2_z": "z of the multiple correlation "
                "(atanh √R²)", "logit": "logit"}


def build_survival(ctx: AuditContext) -> SectionOutput:
    """A survival outcome: the C-index of the Cox model (or the first model) in every study,
    from its out-of-fold risks of the within-study CV (:func:`replikit.report.fits.survival_cv`),
    with the infinitesimal-jackknife SE (:func:`replikit.replicate.from_predictions`); the first
    study is the original, and the estimates are read as reported C-indices are."""
    import dataclasses

    import pandas as pd

    from ...replicate import from_predictions
    from ..fits import survival_cv
    from ..inputs import AuditInput
    from ._shared import EntryView, left_out_words

    res, d, left_out = survival_cv(ctx)
    f = res.predictions.frame
    models = list(dict.fromkeys(f["model"]))
    model = "cox" if "cox" in models else models[0]
    f = f[(f["model"] == model) & (f["repeat"] == 0)]
    studies = list(dict.fromkeys(f["study"].astype(str)))
    if len(studies) < 2:
        return SectionOutput(key=KEY, title=TITLE, skipped=(
            "one study with enough events: a replication compares a study with another."),
            advice="name the column of studies, sites or trials with --study.")
    rows = []
    for s in studies:
        g = f[f["study"].astype(str) == s]
        est = from_predictions((g["y_true"].to_numpy(float), g["event"].to_numpy(bool)),
                               g["y_pred"].to_numpy(float), metric="c_index")
        rows.append({"study": s, "c_index": est.estimate, "se": est.se, "n": len(g),
                     "events": int(g["event"].sum())})
    table = pd.DataFrame(rows)
    source = AuditInput("estimates", ctx.dataset.name, estimates=table, metric="c_index",
                        original=studies[0], task="survival")
    out = build_estimates(EntryView(ctx, source))
    opening = Paragraph(
        f"Each study's C-index of {model} comes from 5-fold cross-validation within that study "
        "(stratified by the event; the out-of-fold risks of the first repeat pooled), with "
        "the infinitesimal-jackknife standard error of R's survival::concordance, which holds "
        "the fitted models fixed. The first study, "
        f"{studies[0]}, is read as the original result and every other as its replication; "
        "the C-indices are then compared and pooled as reported ones are (on the logit scale; "
        "Debray et al. (2017))."
        + left_out_words(left_out))
    if out.skipped:
        return out
    return dataclasses.replace(_estimated(out), title="Replication of the C-index across "
                               "studies", blocks=[opening, *_estimated(out).blocks])


def _estimated(out: SectionOutput) -> SectionOutput:
    """The section of reported estimates reworded for estimates made here: "the reported
    C-index" is the C-index each study's cross-validation gave."""
    import dataclasses

    def plain(text):
        return (text.replace("The reported C-index", "The C-index")
                .replace("the reported C-index", "the C-index")
                .replace("Reported C-index", "C-index")) if isinstance(text, str) else text

    blocks = []
    for b in out.blocks:
        changes = {f: plain(getattr(b, f)) for f in ("text", "caption") if hasattr(b, f)}
        blocks.append(dataclasses.replace(b, **changes) if changes else b)
    data = dict(out.data)
    if isinstance(data.get("verdict"), dict):
        data["verdict"] = {**data["verdict"], "sentence": plain(data["verdict"]["sentence"])}
    return dataclasses.replace(out, summary=plain(out.summary), blocks=blocks, data=data)


SECTION = Section(key=KEY, title=TITLE, order=30, build=build,
                  description="First study as original, the others as replications of a "
                              "linear model's R²: inconsistency, consistency, meta-analysis "
                              "(Vijayakumar & Cheung (2021)); or reported study-level "
                              "estimates.",
                  entries={"estimates": build_estimates, "survival": build_survival},
                  needs=NEEDS)
