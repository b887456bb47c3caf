"""Section 2: are the audited models' differences real? (Gardner & Brooks (2017))

The analysis is :func:`replikit.compare.audit` (every pair of models on the same splits of
repeated 10-fold CV on every row, the recommended tests Holm-adjusted across pairs and metrics with
simultaneous intervals, the naive t as contrast, Friedman/Nemenyi across studies); this section
hands it the report's primary metric and the shared per-study scores, and formats its result.

The other entries:

* ``scores`` — :func:`replikit.compare.audit_scores`, the same recipe after the fits, on the
  per-fold scores (with the scheme the input states, so the tests that need the
  test-to-training size ratio run on it or are skipped, never guessed);
* ``predictions`` — the per-fold scores of the out-of-fold predictions
  (:func:`replikit.experiment.scores_from_predictions`, shared with the other sections under
  ``ctx.shared("predictions-scores", ...)``), then as ``scores``;
* ``benchmark`` — :func:`replikit.compare.compare_benchmark` across datasets (Friedman /
  Iman–Davenport, Nemenyi critical-difference diagram, Wilcoxon–Holm, Bayesian signed-rank),
  its light from :attr:`~replikit.compare.BenchmarkComparison.verdict`.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from ..._format import number, pvalue
from ..._plotting import svg_later
from ..blocks import Callout, Figure, KeyValues, Paragraph, SectionOutput, Table
from ..context import AuditContext
from ..fits import shared_cv
from ..registry import Section

KEY, TITLE = "compare", "Are the differences between models real?"


def _study_scores(ctx: AuditContext, models: dict) -> pd.DataFrame | None:
    """The per-study scores shared with the generalizability section (one experiment.run of
    3-fold CV within each study), when the data have three or more studies."""
    d = ctx.dataset
    if d.study is None or d.n_studies < 3:
        return None
    from ._shared import per_study_scores

    return per_study_scores(ctx, models)


def build(ctx: AuditContext) -> SectionOutput:
    from ...compare import audit
    from ...experiment.models import default_models

    models = ctx.models or default_models(ctx.dataset.task, quick=ctx.quick)
    t0 = time.perf_counter()
    study_scores = _study_scores(ctx, models)  # cached: the generalize section reuses it
    seconds_studies = time.perf_counter() - t0
    given = ctx.tolerance("compare")
    with ctx.stage("Model comparisons: resampled CV of every model", total=1) as advance:
        res = audit(ctx.dataset, models=models, metric=ctx.metric, study_scores=study_scores,
                    tolerance=None if given is None else given.of(1.0),
                    quick=ctx.quick, random_state=ctx.random_state, n_jobs=ctx.n_jobs,
                    run=shared_cv(ctx, models), engine=ctx.engine)
        advance(1)
    blocks, facts = _blocks(res, ctx, with_studies=study_scores is not None)
    data = {"scheme": res.scheme, "rows_used": res.rows_used, "metrics": list(res.metrics),
            "primary_metric": res.primary_metric, "quick": res.quick,
            "tolerance": res.tolerance, "alpha": res.alpha,
            "confidence_level": res.confidence_level, "simultaneous": res.simultaneous,
            "headline_test": res.headline_test,
            "comparisons": res.comparisons, "naive_rejections": res.naive_rejections,
            "valid_rejections": res.valid_rejections, "verdict": res.verdict.to_dict(),
            "notes": list(res.notes)}
    if res.nemenyi is not None:
        data["across_studies"] = _across_data(res)
    data["seconds"] = time.perf_counter() - t0
    data["seconds_fits"] = res.seconds_fits
    data["seconds_across_studies"] = seconds_studies
    facts["time"] = (f"{number(data['seconds'], 2)} s ({number(res.seconds_fits, 2)} s fitting "
                     "the models on the splits)")
    return SectionOutput(key=KEY, title=TITLE, summary=res.verdict.sentence, blocks=blocks,
                         data=data)


def _across_data(res) -> dict:
    """The comparison across studies in the JSON twin: Friedman, Iman–Davenport, Nemenyi, the
    study table and, with five or more studies, the Bayesian rows."""
    fried = res.nemenyi.friedman
    out = {"n_studies": int(len(res.study_table)), "friedman_chi2": fried.statistic,
           "friedman_pvalue": fried.pvalue, "iman_davenport_f": fried.f_statistic,
           "iman_davenport_pvalue": fried.f_pvalue,
           "critical_distance": res.nemenyi.critical_distance,
           "mean_ranks": res.nemenyi.mean_ranks.to_dict(),
           "table": res.study_table.reset_index(),
           "studies_left_out": [s for s, _ in res.studies_left_out]}
    if res.across_studies:
        out["bayesian"] = res.across_frame()
    if res.plackett_luce is not None:
        out["plackett_luce"] = res.plackett_luce.to_frame()
    return out


def _design_text(res) -> str:
    if res.scheme == "5x2":
        return "5x2 cross-validation (quick mode)"
    return f"{res.n_repeats} repeats of {res.n_folds}-fold cross-validation"


def _blocks(res, ctx: AuditContext, *, with_studies: bool) -> tuple[list, dict]:
    """The section's blocks, and the facts dict (the caller adds the time to it)."""
    from ...experiment.metrics import metric_label

    label = res.metric_label
    quick_tests = res.scheme == "5x2"
    facts = {
        "primary metric": f"{label} ({ctx.plan.primary_metric_rule})",
        "design": _design_text(res) + (" (stratified)" if res.stratified else ""),
        "rows used": f"{res.rows_used:,} of {res.n_rows:,}",
        "metrics": ", ".join(metric_label(m) for m in res.metrics),
        "recommended tests": ", ".join(dict.fromkeys(res.comparisons["method"])),
        "headline test": res.headline_method,
        "naive paired t-test (invalid)": f"{res.naive_rejections} significant difference(s) "
                                         f"on {label}, against {res.valid_rejections} with the "
                                         "headline test",
    }
    level = f"{res.confidence_level:.0%}"
    blocks = [
        Paragraph(
            "A table of mean scores does not say whether one model is better than another: the "
            "differences may be noise of the resampling. Following Gardner & Brooks (2017), "
            f"every pair of models is compared on the same splits of {_design_text(res)}"
            + (" (stratified by class)" if res.stratified else "")
            + f" on all {res.rows_used:,} rows of the pooled data, with the "
            "recommended tests: "
            + ("the combined 5x2cv F-test of Alpaydın (1999) (the headline: it uses all ten "
               "differences) and the 5x2cv paired t-test of Dietterich (1998)" if quick_tests
               else "the corrected repeated k-fold CV t-test, whose variance "
               "(1/n + n_test/n_train)·S² accounts for the overlap of training sets (Nadeau & "
               "Bengio (2003); Bouckaert & Frank (2004))")
            + ", the Bayesian correlated t-test (Corani & Benavoli (2015)), which gives the "
            "posterior probability that the difference is practically null (inside a region of "
            f"practical equivalence of ±{number(res.tolerance[res.primary_metric])} in "
            f"{label}), and the TOST equivalence test with the same corrected variance and "
            "tolerance (Schuirmann (1987)): a difference that is not shown is not equivalence; "
            "a pair is decided when a difference or equivalence is shown, and the light is "
            "green only when every pair is decided. P-values are Holm-adjusted (Holm (1979)) within each test across the "
            f"{len(res.pairs)} pair(s) and {len(res.metrics)} metric(s); a difference counts at "
            f"alpha = {number(res.alpha)} after the adjustment. The intervals are simultaneous: "
            f"all the intervals of one test cover their differences together with probability "
            f"at least {level} (Bonferroni)."),
        Callout(res.verdict.sentence, res.verdict.level),
        KeyValues(facts),
        *_headline_figure(res, level),
        *[Figure(svg_later(res.plot(metric=m).figure),
                 f"{metric_label(m)}: mean difference a − b per pair with its interval "
                 f"(simultaneous {level} confidence interval of each test; {level} credible "
                 "interval of the Bayesian test) and the Holm-adjusted p-value.")
          for m in res.metrics],
        Table(_display(res.comparisons), "Pairwise comparisons. p (Holm) is adjusted across "
              f"pairs and metrics; the CI beside it is simultaneous over the same comparisons "
              f"(jointly {level}, each at the level in 'CI level'). Bayesian rows: a "
              f"{level} credible interval and the posterior probabilities that a − b is below, "
              "inside or above the region of practical equivalence. ★ marks the headline "
              "test's rows." + _not_computed_note(res.comparisons)),
    ]
    if res.verdict.caveats:
        blocks.insert(2, Paragraph("Caveats: " + "; ".join(res.verdict.caveats) + "."))
    if res.nemenyi is not None:
        blocks += _cd_blocks(res)
    elif with_studies:  # per-study scores, but too few complete studies: the entry says why
        blocks.append(Paragraph("Across studies: " + res.notes_about("Friedman")))
    else:
        blocks.append(Paragraph("Across studies: fewer than three studies, so no Friedman test "
                                "or critical-difference diagram (Demšar (2006) compares models "
                                "over many datasets)."))
    return blocks, facts


def _not_computed_note(frame: pd.DataFrame) -> str:
    """Why some cells of the comparisons table are empty (" Not computed: ..."), or ""."""
    from ...compare.api import not_computed

    reasons = not_computed(frame)
    return (" Not computed (empty cells): " + "; ".join(reasons) + ".") if reasons else ""


def _headline_figure(res, level: str) -> list:
    """The primary metric's pairs by the headline test alone (one row per pair), the figure
    in view; the all-tests figures per metric follow under "Details"."""
    from ...compare.plots import plot_comparisons
    from ...experiment.metrics import metric_label

    f = res.comparisons
    rows = f[f["headline"] & (f["metric"] == res.primary_metric)]
    if rows.empty or len(rows) == len(f[f["metric"] == res.primary_metric]):
        return []
    ax = plot_comparisons(rows, p_column="pvalue_adjusted",
                          xlabel=f"mean difference a − b ({metric_label(res.primary_metric)})")
    return [Figure(svg_later(ax.figure),
                   f"{metric_label(res.primary_metric)}, {res.headline_method}: mean "
                   "difference a − b per "
                   f"pair with its simultaneous {level} confidence interval and the "
                   "Holm-adjusted p-value.")]


def _display(frame: pd.DataFrame) -> pd.DataFrame:
    show = frame[["a", "b", "metric", "test", "estimate", "ci_low", "ci_high", "ci_level",
                  "statistic", "df", "pvalue", "pvalue_adjusted", "conclusion"]].copy()
    show["test"] = frame["method"] + np.where(frame["headline"], " ★", "")
    if "study" in frame.columns and frame["study"].nunique() > 1:
        show.insert(0, "study", frame["study"].astype(str))
    return show.rename(columns={"pvalue_adjusted": "p (Holm)", "statistic": "t / F",
                                "pvalue": "p (unadjusted)", "ci_low": "CI low (simult.)",
                                "ci_high": "CI high (simult.)", "ci_level": "CI level"})


def _cd_blocks(res, how: str = "cross-validation within each study on every row, the scores "
               "of the generalizability section") -> list:
    nem, label = res.nemenyi, res.metric_label
    fried = nem.friedman
    n_studies = len(res.study_table)
    ranks = res.ranks_frame().rename(columns={"mean_rank": "mean rank (1 = best)",
                                              "mean_score": f"mean {label}"})
    sig = "rejects" if res.friedman_rejects else "does not reject"
    f_text = (f"F = {number(fried.f_statistic)}, p = {pvalue(fried.f_pvalue)}"
              if np.isfinite(fried.f_statistic) else
              f"F infinite: every study ranks the models in the same order; χ² = "
              f"{number(fried.statistic)}, p = {pvalue(fried.pvalue)}")
    left = ("" if not res.studies_left_out else
            f" {len(res.studies_left_out)} stud{'y' if len(res.studies_left_out) == 1 else 'ies'}"
            " with fewer than two models scored are left out.")
    missing = list(getattr(fried, "missing", ()) or ())
    if missing:
        test = (f"{len(missing)} model-study cells have no score ({_cells_words(missing, 4)}), "
                "so the Skillings–Mack test (Skillings & Mack (1981); T = "
                f"{number(fried.statistic)}, p = {pvalue(fried.pvalue)}) takes the place of "
                f"Friedman's and {sig} equal adjusted mean ranks; in the critical-difference "
                "diagram (Nemenyi-type comparisons of the adjusted rank sums, each pair with "
                f"its own standard error, alpha = {number(res.alpha)}; the bar shows the "
                f"largest pair's critical difference, {number(nem.critical_distance)})")
    else:
        test = (f"The Friedman test with the Iman–Davenport F ({f_text}) {sig} equal mean "
                "ranks; in the critical-difference diagram (Nemenyi test, alpha = "
                f"{number(res.alpha)}, critical difference {number(nem.critical_distance)})")
    return [
        Paragraph(
            f"Across the {n_studies} studies, each model's {label} ({how}) is ranked "
            f"within each study. {test} models "
            "joined by a bar do not differ significantly (Demšar (2006)). Studies, not folds, "
            "are the units here."
            + left),
        Figure(svg_later(res.plot_cd().figure), f"Critical-difference diagram of the "
               f"mean ranks of {label} over {n_studies} studies."),
        Table(ranks, "Mean ranks across studies"),
        *_bayes_blocks(res),
        *_plackett_luce_blocks(res.plackett_luce, label, "studies"),
    ]


def _bayes_blocks(res) -> list:
    """The posteriors across studies of the best model against the runner-up (five or more
    studies), as the verdict reads them."""
    if not res.across_studies:
        return []
    from ...experiment.metrics import higher_is_better

    f = res.across_frame()
    worse, better = ((f["p_left"], f["p_right"]) if higher_is_better(res.primary_metric)
                     else (f["p_right"], f["p_left"]))  # an error: a − b < −rope is better
    show = pd.DataFrame({
        "test": f["method"], "studies": f["n_datasets"], "tolerance": f["tolerance"],
        "mean difference": f["estimate"],
        f"P({res.best} worse)": worse, "P(equivalent)": f["p_rope"],
        f"P({res.best} better)": better, "MC SE (max)": f[["mc_se_left", "mc_se_rope",
                                                                  "mc_se_right"]].max(axis=1)})
    return [
        Paragraph(
            f"Is {res.best} practically better than {res.runner_up} on a new study? The "
            "Bayesian signed-rank test (Benavoli et al. (2014); Benavoli et al. (2017)) reads "
            "the studies' mean "
            f"scores; the hierarchical model (Corani et al. (2017)), when the fold scores of each "
            "study are at hand, also weighs each study's own noise and shrinks the study "
            "differences towards their common mean. Each gives the posterior probability that "
            f"the difference {res.best} − {res.runner_up} lies below, inside or above the "
            f"region of practical equivalence (±{number(res.tolerance[res.primary_metric])}); "
            "a region "
            "reached with probability 0.95 decides. The posterior samples are kept small for "
            "the audit's time budget (Monte-Carlo SE in the table)."),
        Table(show, f"{res.metric_label}: {res.best} − {res.runner_up} across studies"),
    ]


# -- the other entries -------------------------------------------------------------------------

def _scheme_options(source) -> dict:
    """What the input states about its resampling, as :func:`replikit.compare.audit_scores`
    reads it (nothing when unknown: the tests that need the ratio are then skipped)."""
    if source.scheme == "holdout" and source.test_ratio is not None:
        return {"scheme": "holdout", "ratio": source.test_ratio}
    if source.scheme in ("kfold", "recorded"):
        return {"scheme": source.scheme}
    return {}


def build_from_scores(ctx: AuditContext) -> SectionOutput:
    """Per-fold scores: :func:`replikit.compare.audit_scores` with the scheme the input states."""
    src = ctx.source
    return _from_scores(ctx, src.scores, src.metric, "per-fold scores", _scheme_options(src))


def build_from_predictions(ctx: AuditContext) -> SectionOutput:
    """Out-of-fold predictions: their per-fold scores (shared with the other sections), then as
    :func:`build_from_scores`. The sizes are known where the folds partition the rows."""
    from ...compare import is_single_split
    from ...experiment.scoring import primary_metric_of, scores_from_predictions

    preds = ctx.source.predictions
    if is_single_split(preds):
        return _from_test_set(ctx, preds)
    scores = ctx.shared("predictions-scores", lambda: scores_from_predictions(preds))
    metric = ctx.source.metric
    if metric is None or metric not in set(scores.frame["metric"]):
        metric = primary_metric_of(preds)
    return _from_scores(ctx, scores, metric, "out-of-fold predictions (each fold scored from "
                        "its predictions)", _scheme_options(ctx.source))


def _from_test_set(ctx: AuditContext, preds) -> SectionOutput:
    """Predictions from one split (one fold of one repeat per study and model): every pair's
    paired bootstrap and randomization tests on that test set
    (:func:`replikit.compare.audit_test_set`)."""
    from ...compare import audit_test_set

    given = ctx.tolerance("compare")
    metric = ctx.source.metric
    t0 = time.perf_counter()
    with ctx.stage("Model comparisons: tests on the one test set", total=1) as advance:
        res = audit_test_set(preds, metric=metric, random_state=ctx.random_state,
                             tolerance=None if given is None else given.of(1.0),
                             n_resamples=1000 if ctx.quick else 2000)
        advance(1)
    f = res.comparisons
    multi = f["study"].nunique() > 1
    show = pd.DataFrame({
        **({"study": f["study"]} if multi else {}), "a": f["a"], "b": f["b"],
        "test rows": f["n"], f"{res.metric_label} a": f["metric_a"],
        f"{res.metric_label} b": f["metric_b"],
        f"a − b (simultaneous {number(100 * (1 - res.alpha))}% CI)": [
            _with_ci(e, lo, hi) for e, lo, hi in zip(f["estimate"], f["ci_low"], f["ci_high"],
                                                     strict=True)],
        "bootstrap p (Holm)": f["pvalue_adjusted"], "randomization p": f["randomization_pvalue"],
        "conclusion": f["conclusion"]})
    tol = (f"±{number(res.tolerance)} ({res.tolerance_why})" if res.tolerance
           else f"none ({res.tolerance_why})")
    blocks = [
        Paragraph(
            "The predictions come from one train/test split (one fold of one repeat"
            + (" per study" if multi else "") + "), so there is one score per model and "
            "nothing for the corrected resampled tests to resample. What the rows do support "
            "is a comparison of the fitted models on them: for every pair, the paired "
            f"bootstrap test of the difference in {res.metric_label} over the test rows "
            "(shifted p-value, percentile interval; Berg-Kirkpatrick et al. (2012)) and the "
            "approximate randomization test (each row's two predictions swapped at random; "
            f"Noreen (1989), Dror et al. (2018)), {res.n_resamples:,} resamples each. A pair is "
            f"decided when a difference is shown (bootstrap p Holm-adjusted, alpha = "
            f"{number(res.alpha)}) or equivalence within the tolerance ({tol}: the "
            "Bonferroni-simultaneous 90% interval inside it); the light is green only when "
            "every pair is decided. These tests are about the two fitted models: a second "
            "training run is not in them (Dietterich (1998))."),
        Callout(res.verdict.sentence, res.verdict.level),
        Figure(svg_later(res.plot().figure),
               f"Every pair's difference in {res.metric_label} on the test set with its "
               "simultaneous bootstrap interval; the shaded band is the tolerance."),
        Table(show, "Every pair on the test set: the paired bootstrap test (Holm-adjusted) "
              "and the randomization test."),
        Paragraph("What was done: " + " ".join(res.notes)),
    ]
    data = {"entry": ctx.entry, "scheme": "one test set", "primary_metric": res.metric,
            "tolerance": res.tolerance, "alpha": res.alpha, "n_resamples": res.n_resamples,
            "comparisons": f, "verdict": res.verdict.to_dict(), "notes": list(res.notes),
            "seconds": time.perf_counter() - t0}
    return SectionOutput(key=KEY, title=TITLE, summary=res.verdict.sentence, blocks=blocks,
                         data=data)


def _from_scores(ctx: AuditContext, scores, metric, what: str, options: dict) -> SectionOutput:
    from ...compare import audit_scores

    given = ctx.tolerance("compare")
    t0 = time.perf_counter()
    with ctx.stage("Model comparisons: tests on the per-fold scores", total=1) as advance:
        res = audit_scores(scores, metric=metric, random_state=ctx.random_state,
                           tolerance=None if given is None else given.of(1.0), **options)
        advance(1)
    blocks = _scores_blocks(res, what)
    data = {"entry": ctx.entry, "scheme": res.scheme, "metrics": list(res.metrics),
            "primary_metric": res.primary_metric, "tolerance": res.tolerance,
            "alpha": res.alpha, "confidence_level": res.confidence_level,
            "simultaneous": res.simultaneous, "headline_test": res.headline_test,
            "ratio": res.ratio, "ratio_source": res.ratio_source,
            "skipped": dict(res.skipped), "comparisons": res.comparisons,
            "naive_rejections": res.naive_rejections,
            "valid_rejections": res.valid_rejections, "verdict": res.verdict.to_dict(),
            "notes": list(res.notes)}
    if res.nemenyi is not None:
        data["across_studies"] = _across_data(res)
    data["seconds"] = time.perf_counter() - t0
    return SectionOutput(key=KEY, title=TITLE, summary=res.verdict.sentence, blocks=blocks,
                         data=data)


def _scores_blocks(res, what: str) -> list:
    from ...experiment.metrics import metric_label

    label = res.metric_label
    level = f"{res.confidence_level:.0%}"
    n_studies = int(res.scores.frame["study"].nunique())
    tol = res.tolerance[res.primary_metric]
    tol_words = (f"±{number(tol)} in {label}" if tol > 0 else
                 f"none in {label} (an error in the outcome's units has no default without the "
                 "outcome's SD: equivalence not tested)")
    blocks = [
        Paragraph(
            "A table of mean scores does not say whether one model is better than another: the "
            "differences may be noise of the resampling. From the "
            f"{what}, every pair of models is compared within each study on the splits both "
            "were scored on, with the tests Gardner & Brooks (2017) recommend for the design — "
            "the corrected repeated k-fold CV t-test for r x k CV (variance "
            "(1/n + n_test/n_train)·S², Nadeau & Bengio (2003); Bouckaert & Frank (2004)), "
            "the corrected resampled t-test for repeated hold-out, the 5x2cv tests for 5x2 "
            "CV — the TOST equivalence test with the same corrected variance (Schuirmann "
            "(1987)) and the Bayesian correlated t-test (Corani & Benavoli (2015)). The "
            f"test-to-training size ratio n_test/n_train comes from {res.ratio_source}"
            + (" — unknown, so the tests that need it are skipped rather than run on a guess"
               if res.skipped else "")
            + ". P-values are Holm-adjusted (Holm (1979)) within each test across pairs, "
            "metrics" + (" and studies" if n_studies > 1 else "") + f"; a difference counts "
            f"at alpha = {number(res.alpha)} after the adjustment; the intervals are "
            f"Bonferroni-simultaneous (jointly {level}). A pair is decided when a difference "
            f"or equivalence within the tolerance ({tol_words}) is shown; the light is green "
            "only when every pair in every study is decided."),
        Callout(res.verdict.sentence, res.verdict.level),
    ]
    if res.verdict.caveats:
        blocks.append(Paragraph("Caveats: " + "; ".join(res.verdict.caveats) + "."))
    for test, why in res.skipped.items():
        blocks.append(Callout(f"Skipped: {test}: {why}.", "warn"))
    facts = {
        "primary metric": label,
        "entry": what,
        "studies": str(n_studies),
        "design": (f"{res.n_repeats} repeat(s) of {res.n_folds}-fold resampling"
                   if res.scheme != "5x2" else "5x2 cross-validation"),
        "test/train size ratio": res.ratio_source
        + ("" if res.ratio is None else f" ({number(res.ratio)})"),
        "metrics": ", ".join(metric_label(m) for m in res.metrics),
        "tolerance": tol_words,
    }
    if res.table is not None:
        facts["tests"] = ", ".join(dict.fromkeys(res.comparisons["method"]))
        facts["headline test"] = res.headline_method
        facts["naive paired t-test (invalid)"] = (
            f"{res.naive_rejections} significant difference(s) on {label}, against "
            f"{res.valid_rejections} with the headline test")
    blocks.append(KeyValues(facts))
    if res.table is not None:
        blocks += [
            *_headline_figure(res, level),
            *[Figure(svg_later(res.plot(metric=m).figure),
                     f"{metric_label(m)}: mean difference a − b per study and pair with its "
                     f"interval (simultaneous {level} confidence interval of each test; "
                     f"{level} credible interval of the Bayesian test) and the Holm-adjusted "
                     "p-value.")
              for m in res.metrics],
            Table(_display(res.comparisons), "Pairwise comparisons within each study. p (Holm) "
                  "is adjusted across pairs, metrics and studies; the CI beside it is "
                  f"simultaneous over the same comparisons (jointly {level}). ★ marks the "
                  "headline test's rows." + _not_computed_note(res.comparisons)),
        ]
    if res.nemenyi is not None:
        blocks += _cd_blocks(res, "its mean over the folds and repeats of that study")
    else:
        blocks.append(Paragraph("Across studies: " + (res.notes_about("Friedman") or
                                                      "fewer than three studies.")))
    blocks.append(Paragraph("What was done: " + " ".join(res.notes)))
    return blocks


def _plackett_luce_blocks(pl, label: str, units: str) -> list:
    """The Bayesian Plackett–Luce posterior of the units' rankings: a sentence, the figure and
    the table of P(best), weights and expected ranks with their credible intervals."""
    if pl is None:
        return []
    f = pl.to_frame().sort_values("expected_rank", kind="stable")
    level = f"{number(pl.confidence_level * 100)}%"
    top = f.iloc[0]
    table = pd.DataFrame({
        "model": f["model"].astype(str), "P(best)": f["prob_best"],
        f"weight ({level} CrI)": [_with_ci(e, lo, hi) for e, lo, hi in zip(
            f["estimate"], f["ci_low"], f["ci_high"], strict=True)],
        f"expected rank ({level} CrI)": [_with_ci(e, lo, hi) for e, lo, hi in zip(
            f["expected_rank"], f["rank_ci_low"], f["rank_ci_high"], strict=True)],
        "ESS": f["ess"]})
    holes = (f" {len(pl.missing)} missing cells: those {units} rank only the models they score."
             if len(pl.missing) else "")
    ties = f" {pl.n_tied} of the {units} have tied scores ({pl.ties})." if pl.n_tied else ""
    others = "; ".join(f"{m} {number(float(pb))}" for m, pb in
                       zip(f["model"].iloc[1:4], f["prob_best"].iloc[1:4], strict=True))
    return [
        Callout(f"Plackett–Luce ranking over the {pl.n_datasets} {units}: "
                f"{top['model']} is the best of the {len(f)} models with posterior probability "
                f"{number(float(top['prob_best']))} (expected rank "
                f"{number(float(top['expected_rank']))}, {level} credible interval "
                f"[{number(float(top['rank_ci_low']))}, {number(float(top['rank_ci_high']))}]"
                f"); next: {others}.", "info"),
        Paragraph(
            f"Which of the {len(f)} models is best, and how sure is that? The Bayesian "
            f"Plackett–Luce model of the {units}' rankings of {label} (Calvo, Ceberio & Lozano "
            "(2018); a flat Dirichlet prior, sampled exactly by the Gibbs sampler of Caron & "
            f"Doucet (2012), {pl.n_draws:,} posterior draws) gives each model a weight — the "
            f"probability that it ranks first on a new one of the {units} — and the posterior "
            f"probability that its weight is the largest: {top['model']} has P(best) = "
            f"{number(float(top['prob_best']))} and an expected rank of "
            f"{number(float(top['expected_rank']))} ({level} credible interval "
            f"[{number(float(top['rank_ci_low']))}, {number(float(top['rank_ci_high']))}]). "
            "This describes the rankings; it does not change the light, which rests on the "
            "pairwise tests." + holes + ties),
        Figure(svg_later(pl.plot().figure),
               f"Plackett–Luce weights with {level} credible intervals (probability of ranking "
               f"first on a new one of the {units}), with P(best) and the expected rank."),
        Table(table, f"The Plackett–Luce posterior over the {units} (ESS: effective sample "
                     "size of the weight's draws)."),
    ]


def _with_ci(estimate, low, high) -> str:
    return f"{number(estimate)} [{number(low)}, {number(high)}]"


def _cells_words(cells, limit: int = 8) -> str:
    shown = ", ".join(f"{d} / {m}" for d, m in cells[:limit])
    return shown + (f" and {len(cells) - limit} more" if len(cells) > limit else "")


def _holes_words(missing, size: int) -> str:
    return (f"{len(missing)} of the table's {size} cells have no score ("
            f"{_cells_words(missing, 4)}): the Skillings–Mack test (Skillings & Mack (1981)) "
            "takes the place of Friedman's, ranking each dataset's models among those it "
            "scores; the Nemenyi-type comparisons use its adjusted rank sums with each pair's "
            "own standard error (the diagram draws the largest pair's critical difference, "
            "which is conservative for the others), and each pair's Wilcoxon and Bayesian "
            "tests use the datasets scoring both. ")


def build_from_benchmark(ctx: AuditContext) -> SectionOutput:
    """A benchmark table: :func:`replikit.compare.compare_benchmark` across datasets, its light
    from the result's verdict, the critical-difference diagram as the key figure."""
    from ...compare import compare_benchmark
    from ...compare.plots import plot_cd_diagram

    src = ctx.source
    given = ctx.tolerance("compare")
    t0 = time.perf_counter()
    with ctx.stage("Model comparisons across the benchmark's datasets", total=1) as advance:
        res = compare_benchmark(src.benchmark, higher_is_better=bool(src.higher_is_better),
                                tolerance=None if given is None else given.of(1.0),
                                random_state=ctx.random_state, metric=str(src.metric))
        advance(1)
    verdict = res.verdict
    from ...experiment.metrics import METRIC_LABELS

    label = METRIC_LABELS.get(res.metric, res.metric)
    fried, nem = res.friedman, res.nemenyi
    n, k = res.table.shape
    dec = res.decisions()
    pairs = res.to_frame()
    missing = list(res.missing)
    show = pd.DataFrame({
        "a": pairs["a"], "b": pairs["b"], "mean rank a": pairs["mean_rank_a"],
        "mean rank b": pairs["mean_rank_b"], "Nemenyi: differ": pairs["nemenyi_differs"],
        "datasets": pairs["n"],
        "a − b (95% CI)": [_with_ci(e, lo, hi) for e, lo, hi in zip(
            pairs["mean_difference"], pairs["mean_difference_ci_low"],
            pairs["mean_difference_ci_high"], strict=True)],
        "rank-biserial (95% CI)": [f"{_with_ci(e, lo, hi)} {m}" for e, lo, hi, m in zip(
            pairs["rank_biserial"], pairs["rank_biserial_ci_low"],
            pairs["rank_biserial_ci_high"], pairs["rank_biserial_magnitude"], strict=True)],
        "Wilcoxon p": pairs["wilcoxon_pvalue"], "p (Holm)": pairs["holm_pvalue"],
        "P(a worse)": pairs["p_worse"], "P(equivalent)": pairs["p_rope"],
        "P(a better)": pairs["p_better"], "conclusion": dec["conclusion"]})
    ranks = fried.mean_ranks.sort_values(kind="stable")
    rank_word = "adjusted mean rank" if missing else "mean rank"
    rank_table = pd.DataFrame({"model": ranks.index.astype(str), f"{rank_word} (1 = best)":
                               ranks.to_numpy(), f"mean {label}":
                               res.table.mean().reindex(ranks.index).to_numpy()})
    tol_words = (f"±{number(res.tolerance)} ({res.tolerance_why})" if res.tolerance > 0
                 else f"none ({res.tolerance_why})")
    direction = "higher" if res.higher_is_better else "lower"
    blocks = [
        Paragraph(
            f"The benchmark table gives one {label} per model and dataset ({k} models, "
            f"{n} datasets; {direction} is better). The datasets are the units: each "
            "model is ranked within each dataset; the Friedman test with the Iman–Davenport F "
            "asks whether the mean ranks differ, the Nemenyi critical difference which pairs "
            "do, and pairwise Wilcoxon signed-rank tests with Holm's adjustment test each "
            "pair on the score differences (Demšar (2006)); the Bayesian signed-rank test "
            "gives the posterior probability that one model is practically better, "
            f"equivalent within the tolerance ({tol_words}) or worse (Benavoli et al. "
            "(2014)). Each pair shows the mean score difference over the datasets with its "
            "t interval and the matched-pairs rank-biserial correlation (Kerby (2014)) with "
            "its interval and size (Romano et al. (2006)). "
            + (_holes_words(missing, res.table.size) if missing else "")
            + "A pair is decided when the Wilcoxon–Holm test shows a difference "
            f"(alpha = {number(res.alpha)}) or one Bayesian probability reaches 0.95; the "
            "light is green only when every pair is decided. The corrected resampled tests "
            f"are skipped: {res.skipped.get('corrected resampled tests', '')}."),
        Callout(verdict.sentence, verdict.level),
        Figure(svg_later(plot_cd_diagram(nem).figure),
               f"Critical-difference diagram of the {rank_word}s of {label} over {n} "
               f"datasets (Nemenyi{'-type' if missing else ''}, alpha = {number(res.alpha)}, "
               f"{'largest pair' + chr(39) + 's ' if missing else ''}critical difference "
               f"{number(nem.critical_distance)}): models joined by a bar do not differ "
               "significantly."),
        KeyValues({
            "datasets x models": f"{n} x {k}", "direction": f"{direction} is better",
            **({"missing cells": f"{len(missing)} of {res.table.size}: "
                + _cells_words(missing),
                "Skillings–Mack": f"T = {number(fried.statistic)}, df = {fried.df}, p = "
                                  f"{pvalue(fried.pvalue)}",
                "largest Nemenyi-type critical difference": number(nem.critical_distance)}
               if missing else {
                "Friedman": f"χ² = {number(fried.statistic)}, p = {pvalue(fried.pvalue)}",
                "Iman–Davenport": (f"F = {number(fried.f_statistic)}, p = "
                                   f"{pvalue(fried.f_pvalue)}"
                                   if np.isfinite(fried.f_statistic)
                                   else "F infinite: every dataset ranks the models alike"),
                "Nemenyi critical difference": number(nem.critical_distance)}),
            "tolerance": tol_words,
            "pairs decided": f"{int(dec['decided'].sum())} of {len(dec)}"}),
        Table(rank_table, ("Adjusted mean ranks (Skillings–Mack)" if missing else "Mean ranks")
              + " across datasets"),
        Table(show, "Every pair across datasets: Nemenyi, the effect sizes, Wilcoxon "
              "signed-rank (Holm-adjusted) and the Bayesian signed-rank posterior (P(a "
              "worse/equivalent/better)), with the decision the light reads."),
    ]
    blocks += _plackett_luce_blocks(res.plackett_luce, label, "datasets")
    if verdict.caveats:
        blocks.insert(2, Paragraph("Caveats: " + "; ".join(verdict.caveats) + "."))
    data = {"entry": "benchmark", "metric": res.metric, "higher_is_better": res.higher_is_better,
            "n_datasets": n, "n_models": k, "alpha": res.alpha, "tolerance": res.tolerance,
            "friedman_chi2": fried.statistic, "friedman_pvalue": fried.pvalue,
            "iman_davenport_f": fried.f_statistic, "iman_davenport_pvalue": fried.f_pvalue,
            "critical_distance": nem.critical_distance, "rank_test": fried.method,
            "missing_cells": [[str(d), str(m)] for d, m in missing],
            "mean_ranks": fried.mean_ranks.to_dict(), "pairs": pairs, "decisions": dec,
            "skipped": dict(res.skipped), "verdict": verdict.to_dict(),
            "plackett_luce": (None if res.plackett_luce is None
                              else res.plackett_luce.to_frame()),
            "seconds": time.perf_counter() - t0}
    return SectionOutput(key=KEY, title=TITLE, summary=verdict.sentence, blocks=blocks,
                         data=data)


def build_survival(ctx: AuditContext) -> SectionOutput:
    """A survival outcome: the models' per-fold C-index of the within-study CV
    (:func:`replikit.report.fits.survival_cv`), compared as per-fold scores are."""
    import dataclasses

    from ._shared import survival_scores_context

    view, left_out = survival_scores_context(ctx)
    out = _from_scores(view, view.source.scores, "c_index", "5-fold cross-validation within "
                       "every study (Harrell's C-index per test fold)", {"scheme": "kfold"})
    if not left_out or out.skipped:
        return out
    words = "; ".join(f"{s} ({r})" for s, r in left_out)
    return dataclasses.replace(out, blocks=[*out.blocks, Paragraph(f"Studies left out of the "
                                                                   f"within-study fits: {words}.")])


SECTION = Section(key=KEY, title=TITLE, order=20, build=build,
                  description="All pairs of models: corrected repeated k-fold t and Bayesian "
                              "correlated t on 10x10 CV, Holm-adjusted with simultaneous "
                              "intervals; Friedman/Nemenyi CD diagram across studies "
                              "(Gardner & Brooks (2017)).",
                  entries={"scores": build_from_scores, "predictions": build_from_predictions,
                           "survival": build_survival,
                           "benchmark": build_from_benchmark},
                  needs="per-fold scores (--scores), out-of-fold predictions (--predictions), "
                        "a benchmark table (--benchmark) or a data table (--data)")
