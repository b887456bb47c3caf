"""``replikit multistudy`` (replicability of a fixed rule across studies, for its users) and
``replikit crossstudy`` (cross-study validation of training techniques) — seed 001."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import typer

from ._common import (
    DataOpt,
    ModelsOpt,
    NJobsOpt,
    RandomStateOpt,
    TableOpt,
    TargetOpt,
    emit,
    frame_table,
    info,
    progress,
)

# how assess() names its parameters on this command line
_OPTIONS = {"utility": "--utility", "model": "--model", "study": "--study",
            "bootstrap": "--bootstrap", "bag_size": "--bag-size", "min_units": "--min-units",
            "epsilon": "--epsilon"}


@contextlib.contextmanager
def _warning_lines() -> Iterator[None]:
    """Warnings raised inside the block, printed afterwards as one ``warning:`` line each."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    seen = set()
    for w in caught:
        text = " ".join(str(w.message).split())
        if text not in seen:
            seen.add(text)
            info(f"warning: {text}")


def multistudy(
    predictions: Annotated[Path, typer.Argument(help="Predictions table (CSV, Parquet, DuckDB) "
                                                "with y_true, y_pred, a study column and "
                                                "optionally model, proba_*.")],
    study: Annotated[str, typer.Option("--study", help="Column holding study labels.")] = "study",
    utility: Annotated[str | None, typer.Option(
        "--utility", help="accuracy, cost:u01,u10 (two non-positive numbers), squared, absolute "
                          "or log (default: accuracy for labels, squared for a continuous "
                          "outcome).")] = None,
    threshold: Annotated[str | None, typer.Option("--threshold", help="Cost utility on risk "
                                                  "scores: bayes, empirical or a number in "
                                                  "[0, 1] (default: use y_pred).")] = None,
    epsilon: Annotated[float | None, typer.Option("--epsilon", min=0.0, help="Tolerance of "
                                                  "epsilon-replicability on the utility "
                                                  "scale, tested by an intersection-union "
                                                  "test of pairwise TOSTs.")] = None,
    permutation_resamples: Annotated[int, typer.Option(
        "--permutation-resamples", min=1, help="Random permutations of the study labels in "
                                               "the permutation tests.")] = 999,
    n_resamples: Annotated[int, typer.Option("--resamples", min=2, help="Bootstrap "
                                             "resamples.")] = 1000,
    bootstrap: Annotated[str, typer.Option("--bootstrap", help="within, cluster or "
                                           "studystrap.")] = "within",
    bag_size: Annotated[int | None, typer.Option("--bag-size", min=1, help="Study strap bag "
                                                 "size (default: number of studies).")] = None,
    bins: Annotated[int, typer.Option("--bins", min=2, help="Quantile bins for continuous "
                                      "predictions in the distance.")] = 10,
    min_units: Annotated[int, typer.Option("--min-units", min=1, help="Leave out studies with "
                                           "fewer units (those under 10 are flagged).")] = 1,
    model: Annotated[str | None, typer.Option("--model", help="Which model is the rule (when "
                                              "the table holds several).")] = None,
    table: TableOpt = None,
    random_state: RandomStateOpt = 0,
) -> None:
    """Is a fixed prediction rule replicable across studies for a user? (seed 001)"""
    from ..errors import ParameterError
    from ..multistudy import PermutationMethod, assess, load_predictions, parse_utility

    # options first: nothing is read before they are all valid
    thr: object = threshold
    if threshold is not None and threshold not in ("bayes", "empirical"):
        try:
            thr = float(threshold)
        except ValueError:
            thr = None
        if thr is None or not 0.0 <= thr <= 1.0:
            raise ParameterError(f"`--threshold` must be bayes, empirical or a number in "
                                 f"[0, 1]; got {threshold!r}.")
    u = None if utility is None else parse_utility(utility, threshold=thr, name="--utility")
    if thr is not None and (u is None or u.kind != "cost"):
        raise ParameterError("`--threshold` applies to the cost utility only "
                             "(--utility cost:u01,u10).")
    if bootstrap not in ("within", "cluster", "studystrap"):
        raise ParameterError(f"`--bootstrap` must be within, cluster or studystrap; got "
                             f"{bootstrap!r}.")
    if bag_size is not None and bootstrap != "studystrap":
        raise ParameterError("`--bag-size` is the bag size of the study strap; it applies to "
                             "--bootstrap studystrap only.")
    with _warning_lines():
        table_ = load_predictions(predictions, study=study, table=table, study_option="--study",
                                  min_studies=2)
        with progress("bootstrap and permutation tests"):
            res = assess(table_, u, epsilon=epsilon, n_resamples=n_resamples,
                         permutation=PermutationMethod(permutation_resamples),
                         bootstrap=bootstrap, bag_size=bag_size,
                         bins=bins, random_state=random_state, model=model,
                         min_units=min_units, options=_OPTIONS)
    su = res.utilities
    info(f"Assessed {int(su.n.sum()):,} predictions in {su.K} studies ({su.utility_name}).")
    for note in res.notes:
        info(f"warning: {note}")
    summary = res.to_frame()
    human = [str(res), "", frame_table(su.matrix(), index=True,
                                       title="Utility differences U_k - U_k':"),
             "", frame_table(summary, title="Summary:", formats={"pvalue": "p"})]
    eps_tests = _epsilon_tests(res, epsilon)
    human += ["", "Epsilon-replicability (intersection-union test of pairwise TOSTs, level "
              "0.05; seed 001 Defs. 3.1, 3.2, 5.1):", *(f"  {t.sentence()}" for t in eps_tests)]
    data = {"utility": su.utility_name, "epsilon": epsilon, "studies": su.to_frame(),
            "utility_matrix": su.matrix().reset_index(names="study"),
            "distance_matrix": res.distance.to_frame().reset_index(names="study"),
            "bootstrap": res.bootstrap.to_frame(),
            "permutation": [res.permutation_utility.to_frame(),
                            res.permutation_distance.to_frame()],
            "summary": summary, "notes": list(res.notes),
            "epsilon_test": [t.to_frame() for t in eps_tests],
            "epsilon_pairs": eps_tests[0].pairs}
    if res.bootstrap.utility_draws is not None:
        data["bootstrap_studies"] = res.bootstrap.study_frame()
    emit(human, data)


def crossstudy(
    data: DataOpt,
    target: TargetOpt,
    study: Annotated[str, typer.Option("--study", help="Column holding study labels.")],
    models: ModelsOpt = None,
    metric: Annotated[str | None, typer.Option("--metric", help="accuracy, error_rate, r2, mse, "
                                               "rmse, mae, roc_auc, log_loss or a utility "
                                               "(default: accuracy / r2).")] = None,
    cv: Annotated[int, typer.Option("--cv", min=2, help="Folds of the within-study CV on the "
                                    "diagonal.")] = 5,
    stacking: Annotated[bool, typer.Option("--stacking/--no-stacking", help="Also fit "
                                           "multi-study stacking (evaluated by leaving one "
                                           "study out).")] = False,
    table: TableOpt = None,
    random_state: RandomStateOpt = 0,
    n_jobs: NJobsOpt = 1,
) -> None:
    """Cross-study validation matrix, leave-one-study-out and multi-study stacking (seed 001,
    secs. 7.4 and 7.6)."""
    from ..data.userdata import load_dataset
    from ..errors import DataError, ParameterError
    from ..experiment.models import make_models
    from ..multistudy import (
        cross_study_matrix,
        get_metric,
        leave_one_study_out,
        multistudy_stacking,
    )

    dataset = load_dataset(data, target=target, study=study, table=table, min_studies=2,
                           data_option="--data", target_option="--target", study_option="--study")
    classification = dataset.task == "classification"
    n_classes = int(dataset.y.nunique()) if classification else None
    # every choice checked against the data before anything is fitted
    get_metric(metric or ("accuracy" if classification else "r2"), task=dataset.task,
               n_classes=n_classes, option="--metric")
    if stacking and classification and n_classes != 2:
        raise ParameterError(f"`--stacking`: multi-study stacking of classifiers needs a binary "
                             f"outcome; {target!r} has {n_classes} classes.")
    chosen = make_models(models or ("lr" if dataset.task == "regression" else "lr,rf"),
                         dataset.task, option="--models")
    sizes = dataset.study.value_counts()
    if int((sizes >= 2).sum()) < 2:
        raise DataError(f"`--study`: column {study!r} has {len(sizes)} studies but fewer than 2 "
                        "with 2 rows or more; cross-study validation trains on one study and "
                        "scores another.")
    n_studies = dataset.n_studies
    info(f"Cross-study validation of {', '.join(chosen)} on {dataset.name}: "
         f"{len(dataset.y):,} rows, {n_studies} {'study' if n_studies == 1 else 'studies'}.")
    for note in getattr(dataset, "notes", ()):
        info(f"note: {note}")
    human, out, notes = [], {"models": {}}, []
    steps = len(chosen) * (3 if stacking else 2)
    with _warning_lines(), progress("cross-study validation", total=steps) as advance:
        for name, est in chosen.items():
            advance.step(f"{name}: cross-study matrix")
            csv = cross_study_matrix(est, dataset.X, dataset.y, dataset.study, metric=metric,
                                     cv=cv, task=dataset.task, random_state=random_state,
                                     n_jobs=n_jobs)
            advance()
            advance.step(f"{name}: leave one study out")
            loso = leave_one_study_out(est, dataset.X, dataset.y, dataset.study, metric=metric,
                                       task=dataset.task, model_name=name,
                                       random_state=random_state, n_jobs=n_jobs)
            advance()
            entry = {"cross_study_matrix": csv.matrix.reset_index(names="train"),
                     "summary": csv.summary(), "overall": csv.overall(),
                     "leave_one_study_out": loso.scores,
                     "notes": [*csv.notes, *loso.notes]}
            human += [f"== {name} ==", *_heading(csv),
                      frame_table(csv.matrix, index=True, formats=dict.fromkeys(
                          csv.matrix.columns, "{:.3f}")), str(loso)]
            if stacking:
                advance.step(f"{name}: multi-study stacking")
                st = multistudy_stacking(est, dataset.X, dataset.y, dataset.study,
                                         metric=metric, task=dataset.task,
                                         random_state=random_state, n_jobs=n_jobs)
                advance()
                entry["stacking_weights"] = st.to_frame()
                entry["stacking_intercept"] = st.intercept
                entry["stacking_evaluation"] = st.summary()
                entry["notes"] += list(st.notes)
                human += _stacking_human(st)
            notes += [n for n in dict.fromkeys(entry["notes"]) if n not in notes]
            out["models"][name] = entry
    for note in notes:
        info(f"warning: {note}")
    emit(human, out)


def _heading(result) -> list[str]:
    """The text lines of a result above its plain-text table (which ``frame_table`` shows)."""
    lines = str(result).split("\n")
    return lines[:len(lines) - len(result.matrix) - 1]


def _stacking_human(st) -> list:
    """Multi-study stacking for the terminal: its text with the weights as a table."""
    lines = str(st).split("\n")
    n_table = len(st.weights) + 1  # header and one line per learner
    return [lines[0], frame_table(st.weights, index=True,
                                  formats=dict.fromkeys(st.weights.columns, "{:.3f}")),
            *lines[1 + n_table:]]


def _epsilon_tests(res, epsilon):
    """The intersection-union test of ε-replicability: ``--epsilon`` is tested on the utility
    scale (Def. 3.1); the relative (Def. 3.2) and total-variation (Def. 5.1) forms, on their
    own scales, report the smallest ε shown and the bias-aware spread."""
    from ..multistudy import epsilon_test

    kinds = ["absolute", "relative"] + (["tv"] if res.distance.frequencies is not None else [])
    return [epsilon_test(res, epsilon=epsilon if k == "absolute" else None, kind=k)
            for k in kinds]


def register(app: typer.Typer) -> None:
    app.command("multistudy")(multistudy)
    app.command("crossstudy")(crossstudy)
