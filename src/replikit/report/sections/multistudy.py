"""Section 4: cross-study replicability of a prediction rule for its users (Parmigiani (2023)).

Calls :func:`replikit.multistudy.audit` (the recipe: studies left out, the half split, the
utility, the best rule, the assessment, dominance, cross-study validation and
leave-one-study-out all live there) and formats its result.
"""

from __future__ import annotations

from ..._format import interval, number, pvalue
from ..._plotting import svg_later
from ...errors import NotApplicableError
from ..blocks import Callout, Figure, KeyValues, Paragraph, SectionOutput, Table
from ..context import AuditContext
from ..registry import Section

KEY, TITLE = "multistudy", "Cross-study replicability of a prediction rule"


def _svg(ax):
    return svg_later(ax.figure)


def _relative_test(a):
    """The relative test (Def. 3.2) of the audit's utilities (level 0.05)."""
    from ...multistudy.equivalence import epsilon_test

    return epsilon_test(a.utilities, kind="relative", alpha=0.05)


def build(ctx: AuditContext) -> SectionOutput:
    from ...multistudy import audit

    try:
        with ctx.stage("Cross-study replicability: rules, resampling, cross-study validation "
                       "(fits)") as advance:
            a = audit(ctx.dataset, models=ctx.models, metric=ctx.metric,
                      tolerance=ctx.tolerance(KEY), quick=ctx.quick,
                      random_state=ctx.random_state, n_jobs=ctx.n_jobs, engine=ctx.engine,
                      progress=advance)
    except NotApplicableError as exc:
        return SectionOutput(key=KEY, title=TITLE, skipped=str(exc), advice=exc.advice)
    opening = (f"Each model is trained once on a random half of every study's units "
               f"({a.n_train:,} rows) and then applied, unchanged, to the other half of every "
               f"study — the fixed prediction rule φ of Parmigiani (2023), which must not be "
               f"trained on the studies used to assess it. ")
    return format_audit(ctx, a, opening, classification=ctx.dataset.task == "classification")


def format_audit(ctx: AuditContext, a, opening: str, *, classification: bool) -> SectionOutput:
    """The section from a :class:`~replikit.multistudy.MultiStudyAudit`, whatever the entry:
    ``opening`` starts the first paragraph (how the rules were trained and applied); the
    training technique's blocks (cross-study validation, leave-one-study-out) only when the
    audit has them (the data entry)."""
    from ...experiment.metrics import metric_label
    from ...multistudy.audit import MIN_PER_CLASS, MIN_STUDY_ROWS, MIN_UNITS
    from ...multistudy.plots import plot_dominance, plot_epsilon_test, plot_matrix

    loss_word = {"squared": "mean squared error", "brier": "Brier score",
                 "accuracy": "error rate"}[a.utility]
    res, su, boot, csv = a.assessment, a.utilities, a.assessment.bootstrap, a.cross_study
    best, eps, p_u = a.rule, a.statistic, a.pvalue
    eq = a.equivalence
    eps_boot = a.assessment.confidence_interval(0.95)
    eq_rel = _relative_test(a)
    perms = a.permutation.n_resamples
    studies_tab = a.to_frame().rename(columns={
        "utility": "average utility", "se": "bootstrap SE", "ci_low": "CI low",
        "ci_high": "CI high"})
    model_tab = a.rules.rename(columns={
        "mean_utility": "mean utility", "smallest_tolerance": "spread (smallest tolerance)",
        "dominated": f"{best} dominates", "dominates": f"dominates {best}",
        "region": "region (Fig. 1)"})
    blocks: list = [
        Paragraph(
            opening + f"The user's utility is {a.utility_description}. The rule assessed "
            f"is the one with the highest average "
            f"utility: {best}. It is ε-replicable when the average utilities U_k of any two "
            f"studies differ by at most a tolerance ε. "
            "The light is earned against the tolerance ε = "
            + (f"{number(a.tolerance)}, {number(100 * a.tolerance_share)}% of the pooled "
               f"{loss_word} ({number(a.pooled_loss)})" if a.tolerance_share is not None
               else f"{number(a.tolerance)} in units of the {loss_word}")
            + (" — the default: a rule whose loss differs between two studies by less than a "
               "tenth of its typical loss serves the users of both about equally, and a share "
               "means the same on any scale; --tolerance changes it"
               if ctx.tolerance(KEY) is None else ", the tolerance given")
            + ". Green when the 95% upper confidence bound of the largest difference between "
            "two studies (the largest pairwise upper bound: the intersection–union test of "
            "pairwise equivalence tests) is within ε — the data show every pair within ε; "
            "red when its 95% lower confidence bound (the largest pairwise lower bound, "
            "Bonferroni over the pairs) exceeds ε — the data show some pair farther apart; "
            "amber when the two bounds straddle ε. A permutation test that does not reject "
            "exact replicability is not read as replicability. The rule's false-green rate at "
            "the boundary and its power are measured in replikit's validity study "
            "(docs/multistudy.md)."),
        KeyValues({
            "rule assessed": best,
            "utility": a.utility_description,
            "tolerance judged against (ε)": a.verdict.tolerance,
            "95% lower confidence bound of the largest difference": (
                f"{number(a.lower_bound, 4)} (largest pairwise lower bound, Bonferroni over "
                "the pairs of studies)"),
            "smallest tolerance ε shown at level 0.05 (Def. 3.1)": (
                f"{number(eq.smallest_tolerance, 4)} (95% upper confidence bound of the "
                "largest difference between studies, intersection–union test of pairwise "
                "equivalence tests)"),
            "largest difference between studies, bias-aware": (
                f"{number(eq.estimate, 4)} (empirical Bayes; observed maximum "
                f"{number(eps, 4)}, biased upward; its bootstrap 95% interval "
                f"{interval(eps_boot.low, eps_boot.high, 4)})"),
            "smallest relative tolerance shown at level 0.05 (Def. 3.2)": (
                f"{number(eq_rel.smallest_tolerance, 4)} (observed "
                f"{number(su.smallest_tolerance('relative'), 4)})"
                if eq_rel is not None else
                f"{number(su.smallest_tolerance('relative'), 4)} (observed)"),
            "largest total variation distance between studies (Def. 5.1)": (
                f"{number(res.distance.max, 4)} ({res.distance.cells})"),
            "permutation p-value, largest utility difference": (
                f"{pvalue(p_u)} ({number(perms)} permutations)"),
            "permutation p-value, largest distance": pvalue(res.permutation_distance.pvalue),
        }),
    ]
    if a.studies_left_out:
        n_out = len(a.studies_left_out)
        blocks.append(Paragraph(
            f"{n_out} studies are too small for this section (fewer than {MIN_STUDY_ROWS} rows"
            + (f", or fewer than {MIN_PER_CLASS} rows of a class" if classification else "")
            + ") and are left out: "
            + "; ".join(f"{st} ({why})" for st, why in a.studies_left_out[:15])
            + (" ..." if n_out > 15 else "") + "."))
    if a.studies_dropped:
        dropped = a.studies_dropped
        blocks.append(Paragraph(
            f"{len(dropped)} studies with fewer than {MIN_UNITS} held-out units are left out "
            f"of the rule's assessment (a study of one or two units has a point-mass F_k, at "
            f"total variation near 1 from every other study): "
            f"{', '.join(map(str, dropped[:20]))}{' ...' if len(dropped) > 20 else ''}."))
    blocks.append(Callout(a.verdict.sentence, a.verdict.level))
    blocks += [
        Figure(_svg(a.plot()),
               f"Average utility per study for {best} with 95% bootstrap percentile intervals "
               f"({number(a.n_resamples)} resamples within each study); dotted line: mean."),
        Table(studies_tab, f"Average utility per study ({best})"),
        Figure(_svg(plot_matrix(su.matrix(), title="Utility difference (row − column)",
                                xlabel="study", ylabel="study")),
               "Differences of average utility between every two studies (Parmigiani (2023), "
               "sec. 3.2)."),
        Figure(_svg(plot_matrix(res.distance.to_frame(), title="Total variation distance",
                                symmetric=False, xlabel="study", ylabel="study")),
               f"Total variation distance between the studies' joint distributions of the "
               f"prediction and the outcome ({res.distance.cells})."),
        Figure(_svg(plot_epsilon_test(eq)),
               "ε-replicability as a test: each pair's observed difference of average utility "
               "and its upper 95% bound; the largest bound is the smallest tolerance ε shown at "
               "level 0.05 (intersection–union test of pairwise equivalence tests); dashed: the "
               "empirical-Bayes estimate of the largest difference."),
        Table(eq.pairs.rename(columns={"difference": "utility difference",
                                       "upper_bound": "upper 95% bound of |difference|"}),
              "Pairs of studies: difference, delta-method SE, Welch df and the upper bound of "
              "the absolute difference (the largest is the smallest tolerance shown)"),
        Table(res.to_frame().drop(columns="statistic"),
              "Replicability measures: observed value, permutation p-value"),
        Table(boot.to_frame().drop(columns=["bootstrap"]),
              f"Within-study bootstrap of the replicability statistics "
              f"({number(a.n_resamples)} resamples)"),
        Table(model_tab, "Rules compared with the assessed rule (dominance, Def. 3.3)"),
    ]
    if a.conjunction is not None:
        blocks.append(Table(
            a.conjunction.table,
            f"In how many studies does {best} beat each other rule? Per study a one-sided "
            f"paired t-test of the unit utilities; Fisher partial-conjunction p-values for "
            f"'in at least u of {su.K} studies' (Benjamini & Heller (2008)), adjusted across "
            f"the rules (Benjamini–Hochberg); replicated_in is the largest u shown at a false "
            f"discovery rate of 0.05"))
    if su.K == 2 and len(a.rule_utilities) > 1:
        others = [n for n in a.rule_utilities if n != best]
        ax = plot_dominance(su, [a.rule_utilities[n] for n in others], names=[best, *others])
        blocks.append(Figure(_svg(ax), "Average utility of each rule in the two studies "
                                       "(as in Fig. 1 of Parmigiani (2023))."))
    o = csv.overall() if csv is not None else {}
    csv_metric = metric_label(csv.metric) if csv is not None else ""
    blocks += [] if csv is None else [
        Paragraph(
            f"Training technique ({best}): the cross-study validation matrix (Bernau et al. "
            f"(2014)) trains on one study (rows) and scores {csv_metric} on another (columns); "
            f"the diagonal is {a.n_folds}-fold cross-validation within the study. Mean "
            f"within-study {csv_metric} {number(o['within_mean'])} against "
            f"{number(o['cross_study_mean'])} across studies."),
        Figure(_svg(plot_matrix(csv.matrix, title=f"Cross-study {csv_metric}",
                                symmetric=False, xlabel="test study",
                                ylabel="training study")),
               f"Cross-study validation: {csv_metric} of {best} trained on the study of the row "
               "and tested on the study of the column."),
        Table(csv.summary(), "Cross-study validation: within-study vs external performance"),
        Table(a.loso.scores, f"Leave-one-study-out {metric_label(a.loso.metric)} ({a.loso_model}"
              + ("" if a.loso_model == best else f"; {best} would need "
                 f"{a.loso_row_fits:,} row-fits, over the section's budget") + ")"),
    ]
    if ctx.quick:
        blocks.append(Paragraph(f"Quick mode: {number(a.n_resamples)} bootstrap resamples, "
                                f"{number(perms)} permutations"
                                + (f", {a.n_folds}-fold within-study CV." if csv is not None
                                   else ".")))
    data = {
        "rule": best, "utility": a.utility, "mean_utility": a.mean_utility,
        "studies": a.to_frame(), "utility_matrix": su.matrix().reset_index(names="study"),
        "smallest_epsilon_absolute": eps,
        "smallest_epsilon_absolute_ci": [eps_boot.low, eps_boot.high],
        "smallest_epsilon_shown": eq.smallest_tolerance,
        "spread_lower_bound": eq.lower_bound, "tolerance": a.tolerance,
        "tolerance_share": a.tolerance_share, "pooled_loss": a.pooled_loss,
        "spread_estimate": eq.estimate, "spread_method": eq.spread_method,
        "spread_estimates": dict(eq.spreads),
        "epsilon_pairs": eq.pairs,
        "rules_replicated_in": (None if a.conjunction is None else a.conjunction.table),
        "smallest_epsilon_relative": su.smallest_tolerance("relative"),
        "smallest_relative_epsilon_shown": (None if eq_rel is None
                                            else eq_rel.smallest_tolerance),
        "distance_matrix": res.distance.to_frame().reset_index(names="study"),
        "max_distance": res.distance.max,
        "pvalue_utility": p_u,
        "pvalue_distance": res.permutation_distance.pvalue,
        "n_resamples": a.n_resamples, "permutation_n_resamples": perms,
        "seconds": a.seconds, "tv_bins": a.tv_bins,
        "studies_left_out": [str(x) for x in a.studies_dropped]
                            + [str(st) for st, _ in a.studies_left_out],
        "verdict": a.verdict.to_dict(), "notes": list(a.notes), "design": a.design,
    }
    if csv is not None:
        data.update({"cross_study_matrix": csv.matrix.reset_index(names="train"),
                     "cross_study_overall": o, "loso_model": a.loso_model,
                     "loso": a.loso.scores})
    return SectionOutput(
        key=KEY, title=TITLE, blocks=blocks, data=data,
        summary=(f"{best}: utilities ({a.utility_label}) differ across {su.K} studies by an "
                 f"estimated {number(eq.estimate)} (observed {number(eps)}; 95% bounds "
                 f"{number(eq.lower_bound)} to {number(eq.smallest_tolerance)}, judged against "
                 f"ε = {number(a.tolerance)}: "
                 + {"good": "shown within it", "bad": "shown beyond it"}.get(
                     a.verdict.level, "cannot tell")
                 + f"; permutation p = {pvalue(p_u)}); largest total variation distance "
                 f"{number(res.distance.max)}"
                 + ("." if csv is None else
                    f"; cross-study {csv_metric} {number(o['cross_study_mean'])} against "
                    f"{number(o['within_mean'])} within studies.")),
    )


NEEDS = ("out-of-fold predictions with a study column (--predictions) or a data table with a "
         "study column (--data ... --study)")


def build_from_predictions(ctx: AuditContext) -> SectionOutput:
    """Each model of the predictions is a rule; its predictions in each study (a value of the
    ``study`` column) give the users' utilities there.

    Parmigiani (2023) asks about a *fixed* rule, trained on none of the studies and applied
    unchanged to each. Out-of-fold predictions refitted per fold (within each study, or on the
    pooled studies) are several rules: their utilities measure how the *training procedure*
    serves each study — the replicability of a training technique, which Parmigiani (2023,
    sec. 7.4) says "can and should also be asked". That question is meaningful, so the section
    runs and says on its card which was read (:func:`replikit.multistudy.audit_predictions`:
    one fit per model in the table, read as a fixed rule; several folds, read as a training
    procedure) rather than refusing. One study is refused (skipped, naming what to supply).
    """
    from ...multistudy import audit_predictions

    if ctx.source.task == "survival":
        return SectionOutput(key=KEY, title=TITLE, skipped=(
            "the users' utilities of Parmigiani (2023) are losses of single predictions, and a "
            "survival outcome's C-index ranks pairs of patients; cross-study validation of "
            "survival models (Bernau et al. (2014)) trains on one study and tests on another, "
            "which needs the data."),
            advice="give the data with --data ... --time T --event E --study S.")
    try:
        with ctx.stage("Cross-study replicability: resampling of the predictions",
                       total=1) as advance:
            a = audit_predictions(ctx.source.predictions, tolerance=ctx.tolerance(KEY),
                                  task=ctx.source.task, quick=ctx.quick,
                                  random_state=ctx.random_state)
            advance(1)
    except NotApplicableError as exc:
        return SectionOutput(key=KEY, title=TITLE, skipped=str(exc),
                             advice="supply predictions whose study column holds two or more "
                                    "studies (--predictions; --study names the column).")
    if a.fits_per_rule == 1:
        opening = ("Each model of the predictions is read as one prediction rule φ of "
                   "Parmigiani (2023) applied to the units of every study (a study is a value "
                   "of the predictions' study column): the table shows one fit per model. The "
                   "rule of Parmigiani (2023) is fixed — trained on none of the units that "
                   "assess it; the table cannot show how it was trained, and if it was fitted "
                   "within each study, what is assessed is the training procedure (sec. 7.4), "
                   "not one rule. ")
    else:
        opening = (f"The predictions are out-of-fold: the table shows {a.fits_per_rule} folds "
                   "per model, each predicted by the model refitted without it — within each "
                   "study or on the pooled studies, which the table does not show. "
                   "They are not one fixed rule φ of Parmigiani (2023) applied to every study "
                   "but a training procedure refitted per fold, so the section assesses that "
                   "procedure (the replicability of a training technique, Parmigiani (2023), "
                   "sec. 7.4): whether each model, as trained, serves the users of every study "
                   "alike. A study is a value of the predictions' study column. ")
    return format_audit(ctx, a, opening, classification=a.utility != "squared")


def build_survival(ctx: AuditContext) -> SectionOutput:
    """A survival outcome: the cross-study validation matrices of the C-index
    (:func:`replikit.multistudy.audit_survival`; Bernau et al. (2014))."""
    import pandas as pd

    from ...experiment.models import default_models
    from ...multistudy import audit_survival

    d = ctx.dataset
    if d.study is None or d.n_studies < 2:
        return SectionOutput(key=KEY, title=TITLE, skipped=(
            "one study: cross-study validation trains on one study and tests on another."),
            advice="name the column of studies, sites or trials with --study.")
    models = ctx.models or default_models("survival", quick=ctx.quick)
    given = ctx.tolerance(KEY)
    try:
        with ctx.stage("Cross-study validation of the C-index (fits)") as advance:
            a = audit_survival(d.X, d.outcome, d.study.astype(str), models=models,
                               tolerance=None if given is None else given.of(1.0),
                               random_state=ctx.random_state, n_jobs=ctx.n_jobs,
                               engine=ctx.engine, progress=advance)
    except NotApplicableError as exc:
        return SectionOutput(key=KEY, title=TITLE, skipped=str(exc), advice=exc.advice)
    v, level = a.verdict, f"{a.confidence_level:.0%}"
    summary = a.summary.rename(columns={
        "within": "mean C within studies (CV)", "across": "mean C across studies (CSV)",
        "drop": "drop (CV − CSV)", "ensemble": "ensemble of per-study models",
        "rank_within": "rank by CV", "rank_across": "rank by CSV"})
    summary["drop interval"] = [interval(lo, hi) for lo, hi in
                                zip(a.summary["drop_low"], a.summary["drop_high"], strict=True)]
    summary["CSV interval"] = [interval(lo, hi) for lo, hi in
                               zip(a.summary["across_low"], a.summary["across_high"],
                                   strict=True)]
    summary = summary.drop(columns=["drop_se", "drop_low", "drop_high", "across_low",
                                    "across_high"])
    cells = a.cells.copy()
    cells["interval"] = [interval(lo, hi) if pd.notna(lo) else "–"
                         for lo, hi in zip(cells["ci_low"], cells["ci_high"], strict=True)]
    cells = cells.drop(columns=["ci_low", "ci_high"])
    reordered = (a.summary["rank_within"] != a.summary["rank_across"]).any()
    blocks = [
        Paragraph(
            "Cross-study validation (Bernau et al. (2014)): every model is trained on all of "
            "one study and its Harrell's C-index measured on every other study (the "
            "off-diagonal cells); the diagonal is 5-fold cross-validation within the study "
            "(stratified by the event, out-of-fold risks pooled). A C-index is the share of "
            "comparable pairs of patients whose predicted risks are ordered as their event "
            "times (0.5: chance). Bernau et al. found that cross-validation within a study "
            "over-states what a model achieves in a new study and can rank the models "
            "differently; the table compares both. Each cell's interval is the "
            "infinitesimal-jackknife one of R's survival::concordance (the cell's model held "
            "fixed). The ensemble averages the risks of the models trained on the other "
            "studies (equal weights; Patil & Parmigiani (2018) weigh them). The light judges "
            f"the best model's drop from within- to cross-study C against a tolerance of "
            f"{number(a.tolerance)}: green when the upper {level} bound is within it, red when "
            "the lower bound exceeds it, amber otherwise; amber too when the cross-study C is "
            "not clearly above chance."),
        Callout(v.sentence, v.level),
        KeyValues({"studies": len(a.matrices[a.best]), "models": len(a.matrices),
                   "best model (by cross-study C)": a.best,
                   "judged against": v.tolerance,
                   "ranks by CV and by CSV": "differ" if reordered else "agree"}),
        Figure(svg_later(a.plot().figure),
               f"Cross-study C-index matrix of {a.best}: rows are the training study, columns "
               "the test study; the diagonal is cross-validation within the study."),
        Table(summary, "Per model: the mean C-index within studies (CV) and across them "
                       "(CSV; Bernau et al.'s summaries), the drop with its interval, the "
                       "ensemble, and the ranks by each."),
        Table(cells, "Every cell: C-index, its standard error and interval, the test rows and "
                     "their events."),
    ]
    if a.notes:
        blocks.append(Paragraph("Notes: " + "; ".join(a.notes) + "."))
    if v.caveats:
        blocks.insert(2, Paragraph("Caveats: " + "; ".join(v.caveats) + "."))
    return SectionOutput(key=KEY, title=TITLE, summary=v.sentence, blocks=blocks,
                         data={**a.to_dict(), "verdict": v.to_dict()})


SECTION = Section(key=KEY, title=TITLE, order=40, build=build,
                  description="A rule trained once and applied to every study: utilities, "
                              "ε-replicability, distances, tests, cross-study validation "
                              "(Parmigiani (2023)).",
                  entries={"predictions": build_from_predictions,
                           "survival": build_survival}, needs=NEEDS)
