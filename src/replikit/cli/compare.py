"""``replikit compare``: valid statistical comparison of models (Gardner & Brooks 2017).

Either from a Scores table (``replikit compare SCORES``) or by fitting models first
(``replikit compare --data FILE --target COL --models lr,rf``). Prints one table of tests, valid
ones first and invalid ones marked ``!``.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Annotated

import typer
from typer.core import TyperCommand

from ._common import (
    RandomStateOpt,
    TableOpt,
    emit,
    epilog,
    info,
    parameter_flags,
    progress,
    renamed_flags,
    state,
)

ScoresArg = Annotated[Path | None, typer.Argument(
    help="Scores table (CSV, Parquet or DuckDB): study, model, [repeat,] fold, metric, value, "
         "n_train, n_test; or an mlr3 benchmark export or a Weka Experimenter CSV (recognised "
         "from their columns); --columns maps any other layout. Omit it and give "
         "--data/--target/--models to fit the models first.",
    show_default=False, metavar="SCORES")]


def _split_list(values: list[str] | None) -> list[str] | None:
    """Repeatable options that may also hold comma-separated lists."""
    if not values:
        return None
    out = [v.strip() for item in values for v in item.split(",") if v.strip()]
    return out or None


def _resolve_models(models: str | None, model: list[str] | None, param: list[str] | None,
                    task: str) -> dict:
    """Estimators from ``--models`` aliases and ``--model NAME=module:Class`` (as ``replikit
    run`` reads them)."""
    from ..errors import ParameterError
    from ..experiment.models import models_from_options

    chosen = models_from_options(models, model, param, task)
    if len(chosen) < 2:
        raise ParameterError("`--models`: give at least two models to compare (e.g. "
                             f"--models lr,rf); got {len(chosen)}.")
    return chosen


def compare(
    scores: ScoresArg = None,
    a: Annotated[str | None, typer.Option("--a", help="First model (default: every pair).")]
    = None,
    b: Annotated[str | None, typer.Option("--b", help="Second model.")] = None,
    metric: Annotated[list[str] | None, typer.Option(
        "--metric", help="Metric(s) to compare (repeatable or comma-separated; default: all in "
        "SCORES, or accuracy / r2 when fitting).")] = None,
    test: Annotated[list[str] | None, typer.Option(
        "--test", help="Test(s) to run (repeatable or comma-separated): "
        "corrected_repeated_kfold_ttest, corrected_resampled_ttest, paired_ttest_5x2cv, "
        "combined_ftest_5x2cv, sorted_runs_ttest, equivalence_ttest, bayesian_correlated_ttest, "
        "naive_paired_ttest, proportions_ztest; or unpaired (models scored on different "
        "splits or samples: the Welch-type corrected t, alone). Default: the recommended "
        "ones.")] = None,
    all_tests: Annotated[bool, typer.Option(
        "--all-tests", help="Every test the design allows, including the invalid naive t and "
        "proportions z (marked !).")] = False,
    study: Annotated[str | None, typer.Option(
        "--study", help="With SCORES: compare within this study only. With --data: the column "
        "of study labels (the scheme then runs within each study).")] = None,
    alternative: Annotated[str, typer.Option(
        "--alternative", help="two-sided, less or greater (for the mean of a - b).")]
    = "two-sided",
    correction: Annotated[str, typer.Option(
        "--correction", help="P-value adjustment within each test: holm, bonferroni, "
        "hochberg, none.")] = "holm",
    alpha: Annotated[float, typer.Option("--alpha", help="Significance level after "
                                         "adjustment.")] = 0.05,
    simultaneous: Annotated[bool, typer.Option(
        "--simultaneous", help="Bonferroni-simultaneous intervals over each test's comparisons "
        "(jointly 95%); default: each 95% interval on its own, unadjusted.")] = False,
    tolerance: Annotated[float | None, typer.Option(
        "--tolerance", min=0.0, help="The practical tolerance, in metric units: the "
        "half-width of the Bayesian test's region of practical equivalence (default 0.01) and, "
        "when given, the margin of the TOST equivalence test, which it adds.")] = None,
    control: Annotated[str | None, typer.Option(
        "--control", help="Across studies (5 or more): compare every model with this one "
        "(Bonferroni-Dunn test on mean ranks, with Cohen's d and Cliff's delta; Demšar "
        "2006).")] = None,
    dataset: Annotated[str | None, typer.Option(
        "--dataset", help="Benchmark table (one score per model and dataset): the column of "
        "dataset labels, where it is not recognised (dataset, task, task_id, ...).")] = None,
    model_column: Annotated[str | None, typer.Option(
        "--model-column", help="Long benchmark table: the column of model names, where it is "
        "not recognised (model, learner, classifier, algorithm, ...).")] = None,
    score: Annotated[str | None, typer.Option(
        "--score", help="Long benchmark table: the score column, where there are several "
        "numeric columns.")] = None,
    lower_is_better: Annotated[bool, typer.Option(
        "--lower-is-better", help="Benchmark table: lower scores are better (errors, "
        "losses).")] = False,
    data: Annotated[Path | None, typer.Option(
        "--data", help="Fit the models on this table first (CSV, Parquet or DuckDB).")] = None,
    target: Annotated[str | None, typer.Option("--target", help="Outcome column (with "
                                               "--data).")] = None,
    task: Annotated[str | None, typer.Option(
        "--task", help="With --data: regression or classification (default: inferred from the "
        "target).")] = None,
    models: Annotated[str | None, typer.Option(
        "--models", help="Comma-separated aliases (with --data): lr, ridge, lasso, enet, lda, "
        "rf, gb, svm, mlp, knn, tree, dummy.")] = None,
    model: Annotated[list[str] | None, typer.Option(
        "--model", help="Any estimator: NAME=module:Class (repeatable, with --data).")] = None,
    param: Annotated[list[str] | None, typer.Option(
        "--param", help="NAME.key=value for a --model (Python literals; repeatable).")] = None,
    scheme: Annotated[str, typer.Option(
        "--scheme", help="With --data: 10x10 | 5x2 | holdout:0.33x100 | 10 | bootstrap:200.")]
    = "10x10",
    stratify: Annotated[bool, typer.Option("--stratify", help="Stratified splits (with "
                                           "--data).")] = False,
    columns: Annotated[str | None, typer.Option(
        "--columns", help="With SCORES in another layout: which of its columns are the Scores "
        "columns, e.g. study=dataset,model=learner,fold=split,metric=measure,value=score "
        "(repeat, n_train, n_test too).")] = None,
    n_folds: Annotated[int | None, typer.Option(
        "--n-folds", min=2, help="With an mlr3 export of repeated_cv: the folds per repeat "
        "(its iteration numbers run over repeats and folds).")] = None,
    predictions: Annotated[Path | None, typer.Option(
        "--predictions", help="Two fitted models on one test set: a Predictions table (study, "
        "model, repeat, fold, row, y_true, y_pred) compared with --test paired-bootstrap "
        "(default) or randomization, on --scoring.")] = None,
    scoring: Annotated[str, typer.Option(
        "--scoring", help="With --predictions: the metric (accuracy, balanced_accuracy, f1, "
        "precision, recall, matthews_corrcoef, error_rate, mse, rmse, mae, r2, "
        "r2_corr).")] = "accuracy",
    n_resamples: Annotated[int, typer.Option(
        "--n-resamples", help="With --predictions: resamples of the test rows.")] = 10_000,
    table: TableOpt = None,
    out: Annotated[Path | None, typer.Option(
        "--out", help="Directory for comparisons.csv, a forest plot per metric "
        "(comparisons_<metric>.svg), across_studies.csv with 5+ studies and, when fitting, "
        "scores.csv.")] = None,
    overwrite: Annotated[bool, typer.Option(
        "--overwrite", help="Replace comparisons.csv, comparisons_*.svg, across_studies.csv "
        "and scores.csv in --out.")] = False,
    n_jobs: Annotated[int, typer.Option("--n-jobs", "-j", min=1, help="Worker processes "
                                        "(with --data).")] = 1,
    random_state: RandomStateOpt = 0,
) -> None:
    """Compare models with tests valid on resampled scores (Gardner & Brooks 2017).

    Prints one row per pair, metric and test: the mean difference a - b with its interval,
    the statistic, the raw and adjusted p-values and a conclusion; invalid tests (--all-tests)
    are marked ! and listed last.
    """
    from .._outputs import check_output_dir
    from ..compare import compare_scores
    from ..errors import ParameterError

    if predictions is not None:
        _testset(predictions, a, b, test=_split_list(test), study=study, repeat_table=table,
                 scoring=scoring, n_resamples=n_resamples, alternative=alternative,
                 random_state=random_state)
        return
    tests = "all" if all_tests else (_split_list(test) or "recommended")
    if all_tests and test:
        raise ParameterError("`--all-tests` and `--test` exclude each other; give one.")
    if out is not None:  # every output before any input is read or model fitted
        check_output_dir(out, _output_names(fitting=data is not None), option="--out",
                         overwrite=overwrite)
    metrics = _split_list(metric)
    options = dict(tests=tests, alternative=alternative, correction=correction, alpha=alpha,
                   tolerance=tolerance, simultaneous=simultaneous)
    fitted = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # repeated in table.notes, printed once below
        if data is not None:
            if scores is not None:
                raise ParameterError("give either SCORES or --data (to fit the models), not "
                                     "both.")
            if target is None:
                raise ParameterError("`--target`: required with --data (the outcome column).")
            fitted = _fit(data, target, task, study, table, models, model, param, scheme,
                          stratify, metrics, n_jobs, random_state)
            res = compare_scores(fitted, a, b, **options)
        else:
            if scores is None:
                raise ParameterError("give a SCORES table, or --data/--target/--models to fit "
                                     "models first (see `replikit compare --help`).")
            for name, given in (("--target", target), ("--task", task), ("--models", models),
                                ("--model", model)):
                if given:
                    raise ParameterError(f"`{name}` needs --data (fitting models first); with "
                                         "a SCORES table leave it out.")
            from ..data.io import check_duckdb_file, file_format, read_frame
            from ..errors import InputFileError

            if file_format(scores) == "duckdb" and scores.exists():
                check_duckdb_file(scores, error=InputFileError)  # not SQLite
            frame = read_frame(scores, table=table)
            bench = dict(dataset=dataset, model_column=model_column, score=score)
            given = [f for f, v in (("--dataset", dataset), ("--model-column", model_column),
                                    ("--score", score), ("--lower-is-better", lower_is_better))
                     if v]
            if given and columns is None and not _looks_like_benchmark(frame):
                raise ParameterError(
                    f"{' and '.join(f'`{g}`' for g in given)} "
                    f"{'is' if len(given) == 1 else 'are'} for a benchmark table (one score "
                    f"per model and dataset); {scores.name} is a table of per-fold scores (its "
                    "columns include fold or metric/value) — leave the flag out: the direction "
                    "of each score follows from its metric's name.")
            if given or (columns is None and _looks_like_benchmark(frame)):
                _benchmark(frame, a, b, bench, study=study, test=test, all_tests=all_tests,
                           control=control, alpha=alpha, tolerance=tolerance,
                           lower_is_better=lower_is_better, out=out,
                           random_state=random_state)
                return
            frame = _read_scores(frame, columns, n_folds)
            if tests != "all" and "unpaired" in tests:
                if len(tests) > 1:
                    raise ParameterError("`--test unpaired` runs alone (its scores are not "
                                         "paired); give it without the paired tests.")
                _unpaired(frame, a, b, metrics, study=study, alternative=alternative,
                          correction=correction, alpha=alpha)
                return
            with progress("comparing models"):
                res = compare_scores(frame, a, b, metrics=metrics, study=study, **options)
    across = _across(fitted if fitted is not None else frame, a, b, metrics, tolerance, control,
                     alpha, study if fitted is None else None,  # with --data: the column
                     random_state)
    for note in res.notes:
        info(f"warning: {note}")
    if out is not None:
        _write(res, out, fitted)
        if across is not None:
            _write_across(across, out)
    if across is None:
        emit(_human(res), res.frame)
    else:
        emit([*_human(res), *_human_across(across)],
             {"comparisons": res.frame, "across_studies": across.frame,
              "control": across.control_frame()})


TESTSET_TESTS = ("paired-bootstrap", "randomization")


def _testset(path, a, b, *, test, study, repeat_table, scoring, n_resamples, alternative,
             random_state) -> None:
    """``replikit compare --predictions FILE --a A --b B``: two fitted models on one test set,
    by the paired bootstrap or the approximate randomization test, on any metric."""
    from ..compare import (
        paired_bootstrap_test_from_predictions,
        randomization_test_from_predictions,
    )
    from ..data.io import read_frame
    from ..errors import ParameterError

    chosen = test or ["paired-bootstrap"]
    bad = [t for t in chosen if t.replace("_", "-") not in TESTSET_TESTS]
    if bad:
        raise ParameterError(f"`--test` with --predictions must be one of "
                             f"{', '.join(TESTSET_TESTS)}; got {', '.join(bad)}.")
    if a is None or b is None:
        raise ParameterError("`--a` and `--b`: name the two models to compare with "
                             "--predictions.")
    frame = read_frame(path, table=repeat_table)
    results = []
    with progress("resampling the test rows"):
        for t in dict.fromkeys(x.replace("_", "-") for x in chosen):
            fn = (paired_bootstrap_test_from_predictions if t == "paired-bootstrap"
                  else randomization_test_from_predictions)
            results.append(fn(frame, [a, b], study=study, scoring=scoring,
                              n_resamples=n_resamples, alternative=alternative,
                              random_state=random_state))
    import pandas as pd

    emit(["\n\n".join(str(r) for r in results)],
         pd.concat([r.to_frame() for r in results], ignore_index=True))


def _unpaired(frame, a, b, metrics, *, study, alternative, correction, alpha) -> None:
    """``replikit compare SCORES --test unpaired``: two models scored on different splits or
    samples, by the Welch-type corrected resampled t of each pair in each study and metric
    (each side's variance corrected for its own splits' overlap), adjusted over the family."""
    import numpy as np
    import pandas as pd

    from ..compare import adjust_pvalues, unpaired_corrected_ttest
    from ..errors import DataError, ParameterError
    from ._common import frame_table

    f = getattr(frame, "frame", frame)
    sizes = {"n_train", "n_test"} <= set(f.columns) and f[["n_train", "n_test"]].notna().all(
        axis=None)
    if not sizes:
        raise ParameterError("`--test unpaired` needs each split's training and test set sizes "
                             "(n_train and n_test columns) for the resampling correction; the "
                             "scores do not record them.")
    if "study" not in f.columns:
        f = f.assign(study="all")
    if study is not None:
        if study not in set(f["study"].astype(str)):
            raise ParameterError(f"`--study`: no study {study!r} in the scores.")
        f = f[f["study"].astype(str) == study]
    models = list(pd.unique(f["model"]))
    for flag, name in (("--a", a), ("--b", b)):
        if name is not None and name not in models:
            raise ParameterError(f"`{flag}`: no model {name!r} in the scores; models are "
                                 f"{models}.")
    chosen = [m for m in models if m in (a, b)] if a is not None and b is not None else models
    wanted = metrics or list(pd.unique(f["metric"]))
    rows = []
    for (s, metric), g in f[f["metric"].isin(wanted)].groupby(["study", "metric"], sort=False):
        by = {m: part for m, part in g.groupby("model", sort=False) if m in chosen}
        for i, x in enumerate(chosen):
            for y in chosen[i + 1:]:
                if x not in by or y not in by or min(len(by[x]), len(by[y])) < 2:
                    continue
                res = unpaired_corrected_ttest(
                    by[x]["value"].to_numpy(float), by[y]["value"].to_numpy(float),
                    n_train=(by[x]["n_train"].mean(), by[y]["n_train"].mean()),
                    n_test=(by[x]["n_test"].mean(), by[y]["n_test"].mean()),
                    alternative=alternative, a=str(x), b=str(y), metric=str(metric))
                rows.append({"study": s, **res.to_frame().iloc[0].to_dict()})
    if not rows:
        raise DataError("`--test unpaired`: no pair of models has two or more scores each in "
                        "one study and metric.")
    out = pd.DataFrame(rows)
    out["pvalue_adjusted"] = (out["pvalue"] if correction == "none" else
                              adjust_pvalues(out["pvalue"].to_numpy(float),
                                             correction=correction))
    out["reject"] = out["pvalue_adjusted"] <= alpha
    show = out[["study", "metric", "a", "b", "estimate", "ci_low", "ci_high", "statistic", "df",
                "pvalue", "pvalue_adjusted", "reject"]]
    title = ("Unpaired corrected resampled t-test (Nadeau & Bengio 2003 variance on each side, "
             f"Welch df), p-values adjusted ({correction}) over {len(out)} comparison(s); "
             "95% intervals:")
    emit([frame_table(show, title=title, formats={c: "{:.4g}" for c in (
        "estimate", "ci_low", "ci_high", "statistic", "df", "pvalue", "pvalue_adjusted")})],
        out.replace({np.nan: None}))


def _looks_like_benchmark(frame) -> bool:
    """One value per model and dataset: no fold, repeat or run column (those are per-fold
    scores, read as Scores) and not the Scores layout's metric/value pair."""
    from ..compare.benchmark import FOLD_NAMES

    cols = {str(c).lower() for c in frame.columns}
    return not (cols & set(FOLD_NAMES)) and not {"metric", "value"} <= cols


def _benchmark(frame, a, b, bench, *, study, test, all_tests, control, alpha, tolerance,
               lower_is_better, out, random_state) -> None:
    """``replikit compare BENCHMARK``: Friedman, Nemenyi, Wilcoxon-Holm and the Bayesian
    signed-rank test across datasets; the corrected resampled tests are skipped, said once."""
    from .._outputs import write_csv_atomic
    from ..compare import DEFAULT_TOLERANCE
    from ..compare.benchmark import compare_benchmark
    from ..errors import ParameterError
    from ._common import frame_table

    for flag, given in (("--study", study), ("--test", test), ("--all-tests", all_tests),
                        ("--control", control)):
        if given:
            raise ParameterError(f"`{flag}` applies to per-fold scores; this file is a "
                                 "benchmark table (one score per model and dataset), compared "
                                 "across datasets: leave it out.")
    with warnings.catch_warnings(), progress("comparing across datasets"):
        warnings.simplefilter("ignore")
        res = compare_benchmark(frame, a, b, dataset_column=bench["dataset"],
                                model_column=bench["model_column"],
                                score_column=bench["score"],
                                higher_is_better=not lower_is_better, alpha=alpha,
                                tolerance=DEFAULT_TOLERANCE if tolerance is None else tolerance,
                                random_state=random_state)
    f = res.friedman
    info("Benchmark table: one score per model and dataset; compared across datasets. "
         f"Skipped: {', '.join(f'{k} ({v})' for k, v in res.skipped.items())}.")
    missing = res.missing
    if missing:
        shown = ", ".join(f"{d}/{m}" for d, m in missing[:10])
        more = f" (and {len(missing) - 10} more)" if len(missing) > 10 else ""
        info(f"Missing cells ({len(missing)}, dataset/model): {shown}{more}. Skillings-Mack "
             "test in place of Friedman's; Nemenyi-type test on its adjusted rank sums; "
             "Wilcoxon and Bayesian tests and effect sizes on each pair's complete datasets.")
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        write_csv_atomic(out / "comparisons.csv", res.to_frame())
        info(f"Wrote comparisons.csv to {out}/")
    pairs = res.to_frame()
    show = pairs[["a", "b", "n", "rank_difference", "nemenyi_differs", "holm_pvalue",
                  "mean_difference", "rank_biserial", "p_worse", "p_rope", "p_better",
                  "decision"]].copy()
    show["nemenyi_differs"] = ["yes" if v else "no" for v in show["nemenyi_differs"]]
    show["mean_difference"] = [
        f"{m:.3g} [{lo:.3g}, {hi:.3g}]" for m, lo, hi in zip(
            pairs["mean_difference"], pairs["mean_difference_ci_low"],
            pairs["mean_difference_ci_high"], strict=True)]
    show["rank_biserial"] = [
        f"{r:.2f} [{lo:.2f}, {hi:.2f}] {mag}" for r, lo, hi, mag in zip(
            pairs["rank_biserial"], pairs["rank_biserial_ci_low"],
            pairs["rank_biserial_ci_high"], pairs["rank_biserial_magnitude"], strict=True)]
    show.columns = ["a", "b", "n", "rank a - b", "Nemenyi differs", "p (Wilcoxon-Holm)",
                    "a - b (95% CI)", "rank-biserial (95% CI)", "P(<)", "P(=)", "P(>)",
                    "Bayesian decision"]
    tol = res.tolerance
    ranks_text = ", ".join(f"{m} {v:.3f}" for m, v in f.mean_ranks.sort_values().items())
    if missing:
        head = (f"{res.title}. Skillings-Mack T = {f.statistic:.4g} on {f.df} df, p = "
                f"{f.pvalue:.3g} ({len(missing)} missing cell(s)). Adjusted mean ranks "
                f"(1 = best): {ranks_text}. Largest Nemenyi-type critical difference "
                f"{res.nemenyi.critical_distance:.4g} at alpha = {res.alpha:g}.")
    else:
        head = (f"{res.title}. Friedman chi2 = {f.statistic:.4g} on {f.df} df, p = "
                f"{f.pvalue:.3g} (Iman-Davenport F = {f.f_statistic:.4g}, p = "
                f"{f.f_pvalue:.3g}). Mean ranks (1 = best): {ranks_text}. Nemenyi critical "
                f"difference {res.nemenyi.critical_distance:.4g} at alpha = {res.alpha:g}.")
    table_ = frame_table(show, title=(
        f"Every pair (n: datasets scoring both; a - b: mean score difference, t interval; "
        f"rank-biserial: matched-pairs rank-biserial correlation of a - b with its magnitude; "
        f"P(<), P(=), P(>): Bayesian signed-rank posterior that a is practically worse than, "
        f"within ±{tol:g} of, better than b):"),
        formats={"p (Wilcoxon-Holm)": "p", "P(<)": "{:.3f}", "P(=)": "{:.3f}",
                 "P(>)": "{:.3f}"})
    pl_lines, pl_json = _plackett_luce_lines(res, random_state=random_state)
    emit([head, table_, *pl_lines], {"entry": "benchmark", "friedman": f.to_dict(),
                                     "critical_difference": res.nemenyi.critical_distance,
                                     "pairs": pairs, "skipped": res.skipped,
                                     "missing": [[str(d), str(m)] for d, m in missing],
                                     **pl_json})


def _plackett_luce_lines(res, *, random_state) -> tuple[list, dict]:
    """With three or more models: the Bayesian Plackett–Luce posterior of the benchmark's
    rankings (Calvo et al. 2018) as a table for the terminal and ``{"plackett_luce": ...}``
    for JSON; nothing with two models (the pairwise tests say it all)."""
    import pandas as pd

    from ..compare import plackett_luce
    from ._common import fmt_interval, frame_table

    if res.table.shape[1] < 3:
        return [], {}
    pl = res.plackett_luce
    if pl is None:
        with progress("ranking models (Plackett-Luce)"):
            pl = plackett_luce(res.table, higher_is_better=res.higher_is_better,
                               random_state=random_state)
    f = pl.to_frame()
    level = f"{pl.confidence_level * 100:.4g}%"
    show = pd.DataFrame({
        "model": f["model"], "P(best)": f["prob_best"], "weight": f["estimate"],
        f"{level} CrI": [fmt_interval(lo, hi, 3) for lo, hi in zip(f["ci_low"], f["ci_high"],
                                                                 strict=True)],
        "expected rank": f["expected_rank"],
        f"{level} CrI ": [fmt_interval(lo, hi, 3) for lo, hi in zip(
            f["rank_ci_low"], f["rank_ci_high"], strict=True)]})
    title = (f"Bayesian Plackett-Luce model of the rankings (Calvo et al. 2018; flat Dirichlet "
             f"prior, {pl.n_draws:,} posterior draws): P(best) = posterior probability that the "
             "model has the largest weight; weight = probability it ranks first on a new "
             "dataset; expected rank = its mean place there (1 = best):")
    lines = [frame_table(show, title=title, formats={"P(best)": "{:.3f}", "weight": "{:.3f}",
                                                     "expected rank": "{:.2f}"},
                         no_wrap=(f"{level} CrI", f"{level} CrI "))]
    if pl.n_tied:
        lines.append(f"note: {pl.n_tied} dataset(s) with tied scores; {pl.ties}.")
    return lines, {"plackett_luce": pl.to_dict()}


def _read_scores(raw, columns: str | None, n_folds: int | None):
    """The SCORES file in the Scores layout: an mlr3 or Weka export is recognised from its
    columns and announced in one line; ``--columns`` maps any other layout."""
    from ..data.foreign import recognise_layout, scores_from_frame

    mapping = _parse_columns(columns)
    if mapping is None and recognise_layout(raw) == "scores":
        return raw  # validated as Scores by compare_scores (no repeat column: one repeat)
    scores, layout = scores_from_frame(raw, columns=mapping, n_folds=n_folds)
    if layout.description:
        info(layout.description)
    return scores.frame


def _parse_columns(text: str | None) -> dict | None:
    """``--columns study=dataset,model=learner`` as ``{"study": "dataset", ...}``."""
    from ..errors import ParameterError

    if not text:
        return None
    out = {}
    for item in text.split(","):
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ParameterError(f"`--columns` takes SCORES_COLUMN=FILE_COLUMN pairs separated "
                                 f"by commas (study=dataset,model=learner); got {item!r}.")
        out[key.strip()] = value.strip()
    return out


def _human_across(across) -> list:
    """Across studies for the terminal: one table of posteriors (hierarchical model and
    signed-rank test) and one table per metric of the comparisons with the control."""
    import pandas as pd

    from .._format import number
    from ._common import fmt_interval, frame_table

    out = []
    f = across.frame
    if len(f):
        show = pd.DataFrame({
            "metric": f["metric"].astype(str),
            "a - b": f["a"].astype(str) + " - " + f["b"].astype(str),
            "test": f["test"].astype(str).replace({"bayesian_signed_rank": "signed-rank"}),
            "estimate": f["estimate"].astype(float),
            "95% CrI": [fmt_interval(lo, hi) for lo, hi in zip(f["ci_low"], f["ci_high"],
                                                               strict=True)],
            "P(<)": f["p_left"], "P(=)": f["p_rope"], "P(>)": f["p_right"],
            "decision": f["decision"].astype(str)})
        if show["metric"].nunique() == 1:
            show = show.drop(columns="metric")
        fmt = "{:.3f}"
        tol = number(f["tolerance"].iloc[0])
        out.append(frame_table(
            show, title=f"Across {number(across.n_studies)} studies (each study one unit; "
            f"practical tolerance ±{tol}; P(<), P(=), P(>): posterior probabilities that a - b "
            f"on a new study lies below -{tol}, within ±{tol}, above {tol}; hierarchical model "
            "of the fold scores, signed-rank test of the study means):",
            formats={"P(<)": fmt, "P(=)": fmt, "P(>)": fmt},
            no_wrap=("95% CrI", "a - b", "test")))
    for metric, res in across.control.items():
        c = res.comparisons
        show = pd.DataFrame({
            "model": c["model"].astype(str), "mean rank": c["mean_rank"],
            "rank diff": c["rank_difference"], "p (Bonf.)": c["pvalue_adjusted"],
            "differs": ["yes" if v else "no" for v in c["significant"]],
            "Cohen's d": c["cohen_d"], "size": c["cohen_d_magnitude"],
            "Cliff's delta": c["cliffs_delta"], "size ": c["cliffs_delta_magnitude"]})
        out.append(frame_table(
            show, title=f"{metric}: every model against the control {res.control} (mean rank "
            f"{res.mean_ranks[res.control]:.3f}; Bonferroni-Dunn, CD = "
            f"{number(res.critical_distance)} at alpha = {number(res.alpha)}, "
            f"{number(res.n_datasets)} studies; effect sizes model vs control over the "
            "studies):",
            formats={"p (Bonf.)": "p"}, no_wrap=("size", "size ")))
    out += [f"note: {n}" for n in across.notes]
    return out


def _across(source, a, b, metrics, tolerance, control, alpha, study, random_state):
    """Across studies: with 5 or more studies in the scores (and no --study), the
    hierarchical and signed-rank posteriors of every pair and, with --control, the
    Bonferroni-Dunn test; None otherwise."""
    from ..compare import DEFAULT_TOLERANCE
    from ..compare.across import MIN_STUDIES, compare_across_studies
    from ..errors import ParameterError

    frame = source.scores.frame if hasattr(source, "scores") else source
    n = int(frame["study"].nunique()) if "study" in frame.columns else 1
    if study is not None or n < MIN_STUDIES:
        if control is not None:
            raise ParameterError(f"`--control` compares models across studies: it needs at "
                                 f"least {MIN_STUDIES} studies in the scores and no --study; "
                                 f"found {n} stud{'y' if n == 1 else 'ies'}"
                                 + (" and --study" if study is not None else "") + ".")
        return None
    with warnings.catch_warnings(), progress("comparing across studies"):
        warnings.simplefilter("ignore")
        return compare_across_studies(
            frame, a, b, metrics=metrics,
            tolerance=DEFAULT_TOLERANCE if tolerance is None else tolerance,
            control=control, alpha=alpha, random_state=random_state)


def _write_across(across, out: Path) -> None:
    from .._outputs import write_csv_atomic

    write_csv_atomic(out / "across_studies.csv", across.frame)
    info(f"Wrote across_studies.csv to {out}/")


def _human(res) -> list:
    """The comparisons for the terminal: the result's heading and notes around one table of
    tests per study and metric (numbers to 4 significant digits; text cells wrap to the
    width, test names and model pairs kept whole where they fit)."""
    import numpy as np
    import pandas as pd

    from ._common import fmt_interval, fmt_pvalue, frame_table

    f = res.frame
    text = str(res).split("\n")
    if f.empty or len(text) < len(f) + 2:
        return [str(res)]
    level = f"{res.confidence_level * 100:.4g}"
    ci_head = f"{level}% simult. CI" if res.simultaneous else f"{level}% CI"
    bayes = (f["test"].astype(str) == "bayesian_correlated_t").to_numpy()

    def df(d1, d2) -> str:
        if not np.isfinite(d1):
            return "–"
        return f"{d1:g}, {d2:g}" if np.isfinite(d2) else f"{d1:.4g}"

    show = pd.DataFrame({
        " ": np.where(f["valid"], "", "!"),
        "a - b": f["a"].astype(str) + " - " + f["b"].astype(str),
        "test": f["test"].astype(str),
        "estimate": f["estimate"].astype(float),
        ci_head: [fmt_interval(lo, hi) for lo, hi in zip(f["ci_low"], f["ci_high"],
                                                          strict=True)],
        "stat": f["statistic"].astype(float),
        "df": [df(float(d1), float(d2)) for d1, d2 in zip(f["df"], f["df2"], strict=True)],
        "p": f["pvalue"].astype(float),
        "p adj": f["pvalue_adjusted"].astype(float),
        "conclusion": [c if not b else f"{c}; P(<,=,>) = {pl:.2f} / {pr:.2f} / {pg:.2f}"
                       for c, b, pl, pr, pg in zip(f["conclusion"], bayes, f["p_left"],
                                                   f["p_rope"], f["p_right"], strict=True)],
    }, index=f.index)
    if f["valid"].all():
        show = show.drop(columns=" ")
    keys = pd.DataFrame({"study": f["study"].astype(str), "metric": f["metric"].astype(str)})
    groups = list(dict.fromkeys(zip(keys["study"], keys["metric"], strict=True)))
    several_studies = keys["study"].nunique() > 1
    formats = {"p": fmt_pvalue, "p adj": fmt_pvalue}
    tables = []
    for study, metric in groups:
        rows = ((keys["study"] == study) & (keys["metric"] == metric)).to_numpy()
        title = (f"study {study}, {metric}:" if several_studies else f"{metric}:")
        tables.append(frame_table(show[rows], title=title if len(groups) > 1 else None,
                                  formats=formats, no_wrap=(ci_head, "df"),
                                  keep=("a - b", "test")))
    # str(res): the heading, the plain table (a header and one line per row), then the notes
    return [text[0], *tables, *text[len(f) + 2:]]


#: Library parameter -> flag, where the flag is not the parameter's name with dashes.
COMPARE_FLAGS = {"metrics": "--metric", "tests": "--test", "scores": "SCORES", "path": "SCORES",
                 "dataset_column": "--dataset", "model_column": "--model-column",
                 "score_column": "--score", "frame": "SCORES",
                 "redraw_single_class": "--stratify", "models": "--a/--b"}


def _output_names(*, fitting: bool) -> list[str]:
    return (["comparisons.csv", "comparisons_*.svg", "across_studies.csv"]
            + (["scores.csv"] if fitting else []))


def _fit(data, target, task, study, table, models, model, param, scheme, stratify, metrics,
         n_jobs, random_state):
    from ..data.userdata import load_dataset
    from ..errors import ReplikitError
    from ..experiment.metrics import check_metrics
    from ..experiment.runner import run
    from ..experiment.schemes import parse_scheme
    from .run import RUN_FLAGS, as_flags

    sch = parse_scheme(scheme, stratify=stratify)
    ds = load_dataset(data, target=target, study=study, table=table, task=task)
    chosen = _resolve_models(models, model, param, ds.task)
    if metrics is None:
        metrics = ["accuracy"] if ds.task == "classification" else ["r2"]
    check_metrics(metrics, ds.task, classes=ds.classes)  # not mse of text labels' codes
    info(f"Fitting {', '.join(chosen)} under {scheme} (every split drawn from --random-state "
         f"{random_state}) on {len(ds.y):,} rows"
         + (f" in {ds.n_studies} studies" if ds.study is not None else "") + ".")
    try:
        return run(chosen, ds.X, ds.y, scheme=sch, metrics=metrics, study=ds.study,
                   backend="joblib" if n_jobs > 1 else "serial", n_jobs=n_jobs,
                   random_state=random_state, return_predictions=False,
                   progress=state.progress)
    except ReplikitError as exc:
        raise as_flags(exc, {**RUN_FLAGS, "metrics": "--metric"}) from None


def _write(res, out: Path, fitted) -> None:
    from .._outputs import write_csv_atomic
    from .._plotting import save_svg

    out.mkdir(parents=True, exist_ok=True)
    write_csv_atomic(out / "comparisons.csv", res.frame)
    written = ["comparisons.csv"]
    for metric in dict.fromkeys(res.frame["metric"]):
        name = "comparisons_" + "".join(c if c.isalnum() or c in "-_." else "_"
                                        for c in str(metric)) + ".svg"
        save_svg(res.plot(metric=metric).figure, out / name)
        written.append(name)
    if fitted is not None:
        write_csv_atomic(out / "scores.csv", fitted.scores.frame)
        written.append("scores.csv")
    info(f"Wrote {', '.join(written)} to {out}/")


# ---------------------------------------------------------------------------------------------
# the old `--interval marginal|simultaneous`: a flag with a value, now the flag --simultaneous

_OLD_INTERVAL = "--interval"


def _old_interval(args: list[str]) -> list[str]:
    """``--interval simultaneous`` -> ``--simultaneous``, ``--interval marginal`` -> nothing
    (the default), with one warning line; any other value is an error naming the flag."""
    from ..errors import ParameterError

    out: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            out.extend(args[i:])
            break
        if a == _OLD_INTERVAL or a.startswith(_OLD_INTERVAL + "="):
            if "=" in a:
                value = a.split("=", 1)[1]
            elif i + 1 < len(args):
                i += 1
                value = args[i]
            else:
                raise ParameterError("`--interval` needs a value (marginal or simultaneous); it "
                                     "is now the flag `--simultaneous`.")
            if value not in ("marginal", "simultaneous"):
                raise ParameterError(f"`--interval` must be marginal or simultaneous; got "
                                     f"{value!r} (it is now the flag `--simultaneous`).")
            if not state.quiet:
                typer.echo(f"replikit: warning: `--interval {value}` is now "
                           + ("`--simultaneous`" if value == "simultaneous"
                              else "the default (leave it out)")
                           + "; the old flag will stop working in replikit 0.3.", err=True)
            if value == "simultaneous":
                out.append("--simultaneous")
        else:
            out.append(a)
        i += 1
    return out


class _CompareCommand(TyperCommand):
    """``replikit compare``, reading the old ``--interval`` before the options are parsed."""

    def parse_args(self, ctx, args):
        return super().parse_args(ctx, _old_interval(list(args)))


REFERENCES = ("gardner2017", "nadeau2003", "bouckaert2004", "dietterich1998", "alpaydin1999",
              "corani2015", "schuirmann1987", "holm1979", "demsar2006", "benavoli2014",
              "corani2017", "calvo2018", "caron2012")


def register(app: typer.Typer) -> None:
    app.command("compare", cls=_CompareCommand, epilog=epilog(
        examples=["replikit compare scores.csv --a rf --b lr --tolerance 0.01",
                  "replikit compare --data d.csv --target y --models lr,rf --scheme 10x10"],
        note=("SCORES holds one row per study, model, repeat, fold and metric (as replikit "
              "run writes it). With 5 or more studies the comparison across studies follows "
              "(--control MODEL adds the Bonferroni-Dunn test)."),
        references=REFERENCES))(compare)
    renamed_flags("compare", {"--rope": "--tolerance", "--margin": "--tolerance"})
    parameter_flags("compare", COMPARE_FLAGS)
