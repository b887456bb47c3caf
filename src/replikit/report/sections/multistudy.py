"""Section 4: cross-study replicability of a prediction rule for its users (seed 001).

A rule is trained once (on half of every study's units) and applied to the held-out half of
every study: utilities per study with bootstrap intervals, the K×K difference matrix, the
smallest ε, the distance matrix, permutation tests, then the training technique's cross-study
validation matrix and leave-one-study-out scores.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from ..blocks import Callout, Figure, KeyValues, Paragraph, SectionOutput, Table
from ..context import AuditContext
from ..figures import svg_from_figure
from ..registry import Section

_MIN_UNITS = 10  # held-out units a study needs to enter the rule's assessment
_MIN_STUDY_ROWS = 20  # rows a study needs to be halved and cross-validated within itself
_LOSO_BUDGET = 8.0  # seconds: above this estimate, leave-one-study-out uses the linear model


def _svg(ax) -> str:
    return svg_from_figure(ax.figure)


def build(ctx: AuditContext) -> SectionOutput:
    from sklearn.base import clone

    from ..._random import root_seed_sequence, task_int_seed, task_rng
    from ...experiment.fit import seed_estimator
    from ...experiment.models import default_models, make_model
    from ...multistudy import (
        assess,
        cross_study_matrix,
        dominance,
        from_estimator,
        leave_one_study_out,
        study_utilities,
    )
    from ...multistudy.plots import plot_dominance, plot_matrix, plot_study_utilities

    d = ctx.dataset
    key, title = "multistudy", "Cross-study replicability of a prediction rule"
    if d.study is None or d.n_studies < 2:
        return SectionOutput(key=key, title=title, skipped=(
            "one study only: replicability across studies needs at least two (seed 001)."),
            advice="name the column of studies, sites or years with --study.")
    # every study is halved (rule training / assessment) and cross-validated within itself:
    # it needs rows enough, and for classification a few rows of every class
    d, studies_left_out = ctx.study_subset(_MIN_STUDY_ROWS, all_classes=True, min_per_class=4)
    if d.study.nunique() < 2:
        return SectionOutput(key=key, title=title, skipped=(
            f"fewer than two studies have {_MIN_STUDY_ROWS} rows"
            + (" and 4 rows of every class" if d.task == "classification" else "")
            + f" ({len(studies_left_out)} stud"
            + ("y" if len(studies_left_out) == 1 else "ies") + " too small)."),
            advice="pool small studies into larger units.")
    t0 = time.perf_counter()
    classification = d.task == "classification"
    models = ctx.models or default_models(d.task)
    # the per-unit utility of seed 001: for classifiers with probabilities the (halved) Brier
    # score, a proper score that accuracy is not (with 14% cases, always predicting "no case"
    # is 86% accurate in every study — a replicable but useless rule)
    if classification:
        proba = all(hasattr(m, "predict_proba") for m in models.values())
        utility = "brier" if proba else "accuracy"
    else:
        utility = "squared"
    n_boot = 200 if ctx.quick else 1000
    n_perm = 199 if ctx.quick else 999
    cv = 3 if ctx.quick else 5
    root = root_seed_sequence(ctx.random_state)
    rng = task_rng(root, "multistudy-split")
    study = d.study.to_numpy()
    # half of each study trains the rule, the other half is where users meet it
    train = np.zeros(len(study), bool)
    for s in pd.unique(study):
        idx = np.flatnonzero(study == s)
        train[rng.choice(idx, size=idx.size // 2, replace=False)] = True
    test = ~train
    X_te, y_te, s_te = d.X[test], d.y[test], d.study[test]
    results, fit_time = {}, {}
    with ctx.stage("Cross-study replicability: fitting rules", total=len(models)) as advance:
        for name, est in models.items():
            e = seed_estimator(clone(est), task_int_seed(root, ("multistudy-rule", name)))
            t = time.perf_counter()
            e.fit(d.X[train], d.y[train])
            fit_time[name] = time.perf_counter() - t
            data = from_estimator(e, X_te, y_te, s_te)
            results[name] = (data, study_utilities(data, utility))
            advance(1)
    means = {n: float(np.average(r[1].utility, weights=r[1].n)) for n, r in results.items()}
    best = max(means, key=means.get)
    data_best, su = results[best]
    small = data_best.sizes < _MIN_UNITS
    dropped: list = []
    if small.any() and (~small).sum() >= 2:
        dropped = [data_best.studies[k] for k in np.flatnonzero(small)]
        data_best = data_best.subset(~small[data_best.codes])
        su = study_utilities(data_best, utility)
    with ctx.stage("Cross-study replicability: resampling and permutations", total=1) as advance:
        # continuous (φ, y): fewer quantile bins when studies are small, so that the cells of
        # the TV distance hold a few units each (about 5 per cell pair in the smallest study)
        bins = int(np.clip(np.sqrt(data_best.sizes.min() / 5.0), 2, 10))
        res = assess(data_best, utility, n_resamples=n_boot, n_permutations=n_perm, bins=bins,
                     random_state=task_rng(root, "multistudy-assess"))
        advance(1)
    boot = res.bootstrap
    ci = boot.utility_interval()
    studies_tab = pd.DataFrame({"study": list(su.studies), "n": su.n, "U_k": su.utility,
                                "bootstrap SE": boot.utility_se(), "CI low": ci[:, 0],
                                "CI high": ci[:, 1]})
    if classification:
        for c in ("sensitivity", "specificity", "prevalence"):
            if c in su.table:
                studies_tab[c] = su.table[c].to_numpy()
    eps_abs = su.smallest_epsilon("absolute")
    eps_draws = boot.draws["absolute"]
    eps_ci = np.quantile(eps_draws, [0.025, 0.975])
    # training technique: cross-study validation and leave-one-study-out
    est_best = models[best]
    with ctx.stage("Cross-study replicability: cross-study validation", total=2) as advance:
        csv = cross_study_matrix(est_best, d.X, d.y, d.study, cv=cv, task=d.task,
                                 metric=ctx.metric,
                                 random_state=task_int_seed(root, "multistudy-csv"),
                                 n_jobs=ctx.n_jobs)
        advance(1)
        n_train = int(train.sum())
        loso_estimate = fit_time[best] * d.n_studies * (len(study) * (1 - 1 / d.n_studies)) \
            / max(n_train, 1)
        loso_name = best
        loso_est = est_best
        if loso_estimate > _LOSO_BUDGET and best != "lr":
            loso_name, loso_est = "lr", make_model("lr", d.task)
        loso = leave_one_study_out(loso_est, d.X, d.y, d.study, task=d.task, model_name=loso_name,
                                   metric=ctx.metric,
                                   random_state=task_int_seed(root, "multistudy-loso"),
                                   n_jobs=ctx.n_jobs)
        advance(1)
    # other rules against the best: Def. 3.3
    dom_rows = []
    for name, (dat, s) in results.items():
        if name == best:
            continue
        if dropped:
            s = study_utilities(dat.subset(~small[dat.codes]), utility)
        dres = dominance(su, s, names=(best, name))
        dom_rows.append({"rule": name, "mean U": means[name], "spread (smallest eps)":
                         s.smallest_epsilon(), f"{best} dominates": dres.a_dominates_b,
                         f"dominates {best}": dres.b_dominates_a, "region (Fig. 1)": dres.region})
    model_tab = pd.DataFrame([{"rule": best, "mean U": means[best],
                               "spread (smallest eps)": eps_abs}] + dom_rows)
    utility_label = {"brier": "minus the Brier score", "accuracy": "accuracy",
                     "squared": "minus the squared error"}[utility]
    util_desc = ("minus the Brier score, U = −½ Σ_c (p(c) − I{y = c})² (0 is perfect; a "
                 "proper score)" if utility == "brier" else
                 "accuracy I{φ = y}" if classification else
                 "U = −(y − φ)², so U_k = −MSE_k")
    summary_tab = res.to_frame().drop(columns="statistic")
    blocks: list = [
        Paragraph(
            f"Each model is trained once on a random half of every study's units ({n_train:,} "
            f"rows) and then applied, unchanged, to the other half of every study — the fixed "
            f"rule φ of seed 001 (Parmigiani), which must not be trained on the studies used to "
            f"assess it. The user's utility is {util_desc}. The rule assessed is the one with "
            f"the highest average utility: {best}."),
        KeyValues({
            "rule assessed": best,
            "utility": util_desc,
            "smallest ε (Def. 3.1, max |U_k − U_k'|)": f"{eps_abs:.4g} (bootstrap 95% "
                                                        f"interval {eps_ci[0]:.4g} – {eps_ci[1]:.4g})",
            "smallest relative ε (Def. 3.2)": f"{su.smallest_epsilon('relative'):.4g}",
            "max distance TV(F_k, F_k') (Def. 5.1)": f"{res.distance.max:.4g} ({res.distance.cells})",
            "permutation p, max |U_k − U_k'|": f"{res.permutation_utility.pvalue:.4g} "
                                               f"({n_perm} permutations)",
            "permutation p, max TV": f"{res.permutation_distance.pvalue:.4g}",
        }),
    ]
    if studies_left_out:
        blocks.append(Paragraph(
            f"{len(studies_left_out)} studies are too small for this section (fewer than "
            f"{_MIN_STUDY_ROWS} rows"
            + (", or fewer than 4 rows of a class" if classification else "") + ") and are "
            "left out: " + "; ".join(f"{st} ({why})" for st, why in studies_left_out[:15])
            + (" ..." if len(studies_left_out) > 15 else "") + "."))
    if dropped:
        blocks.append(Paragraph(
            f"{len(dropped)} studies with fewer than {_MIN_UNITS} held-out units are left out "
            f"of the rule's assessment (a study of one or two units has a point-mass F_k, at "
            f"total variation near 1 from every other study): "
            f"{', '.join(map(str, dropped[:20]))}{' ...' if len(dropped) > 20 else ''}."))
    p_u = res.permutation_utility.pvalue
    blocks.append(Callout(
        (f"The studies' utilities ({utility_label}) differ by up to {eps_abs:.3g}; a "
         "permutation test of study "
         f"labels {'rejects' if p_u < 0.05 else 'does not reject'} exact replicability "
         f"(p = {p_u:.3g}). A user who can tolerate a difference of ε is served replicably if "
         f"ε ≥ {eps_abs:.3g}."),
        "warn" if p_u < 0.05 else "good"))
    blocks += [
        Figure(_svg(plot_study_utilities(su, ci)),
               f"U_k per study for {best} with 95% bootstrap percentile intervals "
               f"({n_boot} resamples within each study); dotted line: mean."),
        Table(studies_tab, f"Average utility per study ({best})"),
        Figure(_svg(plot_matrix(su.matrix(), title="U_k − U_k'", xlabel="k'", ylabel="k")),
               "The K×K matrix of utility differences (seed 001, sec. 3.2)."),
        Figure(_svg(plot_matrix(res.distance.to_frame(), title="TV(F_k, F_k')",
                                symmetric=False)),
               f"Total variation between the studies' joint distributions of (φ(x), y) "
               f"({res.distance.cells})."),
        Table(summary_tab, "Replicability measures: observed value, permutation p-value"),
        Table(boot.to_frame().drop(columns=["method"]),
              f"Within-study bootstrap of the replicability statistics ({n_boot} resamples)"),
        Table(model_tab, "Rules compared with the assessed rule (dominance, Def. 3.3)"),
    ]
    if d.n_studies == 2 and len(results) > 1:
        others = [results[n][1] for n in results if n != best]  # K = 2: nothing dropped
        ax = plot_dominance(su, others, names=[best] + [n for n in results if n != best])
        blocks.append(Figure(_svg(ax), "Average utility in the two studies (seed 001, Fig. 1)."))
    o = csv.overall()
    blocks += [
        Paragraph(
            f"Training technique ({best}): the cross-study validation matrix (Bernau et al. "
            f"2014) trains on study k (rows) and scores {csv.metric} on study k' (columns); the "
            f"diagonal is {cv}-fold cross-validation within the study. Mean within-study "
            f"{csv.metric} {o['within_mean']:.3g} against {o['cross_study_mean']:.3g} across "
            f"studies."),
        Figure(_svg(plot_matrix(csv.matrix, title=f"cross-study {csv.metric}", symmetric=False,
                                xlabel="test study", ylabel="training study")),
               "Cross-study validation matrix."),
        Table(csv.summary(), "Cross-study validation: within-study vs external performance"),
        Table(loso.scores, f"Leave-one-study-out {loso.metric} ({loso_name}"
              + ("" if loso_name == best else f"; {best} would take about "
                 f"{loso_estimate:.0f} s, over the section's budget") + ")"),
    ]
    if ctx.quick:
        blocks.append(Paragraph(f"Quick mode: {n_boot} bootstrap resamples, {n_perm} "
                                f"permutations, {cv}-fold within-study CV."))
    elapsed = time.perf_counter() - t0
    data = {
        "rule": best, "utility": utility, "mean_utility": means,
        "studies": studies_tab, "utility_matrix": su.matrix().reset_index(names="study"),
        "smallest_epsilon_absolute": eps_abs,
        "smallest_epsilon_absolute_ci": eps_ci.tolist(),
        "smallest_epsilon_relative": su.smallest_epsilon("relative"),
        "distance_matrix": res.distance.to_frame().reset_index(names="study"),
        "max_distance": res.distance.max,
        "pvalue_utility": res.permutation_utility.pvalue,
        "pvalue_distance": res.permutation_distance.pvalue,
        "n_resamples": n_boot, "n_permutations": n_perm,
        "cross_study_matrix": csv.matrix.reset_index(names="train"),
        "cross_study_overall": o, "loso_model": loso_name, "loso": loso.scores,
        "seconds": elapsed, "tv_bins": bins,
        "studies_left_out": [str(x) for x in dropped] + [str(st) for st, _ in studies_left_out],
    }
    return SectionOutput(
        key=key, title=title, blocks=blocks, data=data,
        summary=(f"{best}: utilities ({utility_label}) differ across {data_best.K} studies by "
                 f"up to {eps_abs:.3g} (permutation p = {p_u:.3g}); max TV distance "
                 f"{res.distance.max:.3g}; cross-study {csv.metric} {o['cross_study_mean']:.3g} "
                 f"vs within {o['within_mean']:.3g}."),
    )


SECTION = Section(key="multistudy", title="Cross-study replicability of a prediction rule",
                  order=40, build=build,
                  description="A rule trained once and applied to every study: utilities, "
                              "epsilon-replicability, distances, tests, cross-study validation.")
