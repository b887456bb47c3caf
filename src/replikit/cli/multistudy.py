"""``replikit multistudy`` (replicability of a fixed rule across studies, for its users) and
``replikit crossstudy`` (cross-study validation of training techniques), after Parmigiani
(2023) and Bernau et al. (2014)."""

from __future__ import annotations

import contextlib
import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import typer

from ._common import (
    DataOpt,
    EventOpt,
    ModelsOpt,
    NJobsOpt,
    RandomStateOpt,
    TableOpt,
    TaskOpt,
    TimeOpt,
    check_outcome_flags,
    emit,
    epilog,
    frame_table,
    info,
    parameter_flags,
    progress,
    renamed_flags,
)

_BOOTSTRAPS = ("within", "cluster", "studystrap")
#: library parameters named otherwise on these command lines (the rest map by name)
_MULTISTUDY_FLAGS = {"path": "predictions", "data": "predictions"}


@contextlib.contextmanager
def _warning_lines(flags: dict[str, str] | None = None) -> Iterator[None]:
    """replikit's warnings raised inside the block, printed afterwards as one ``warning:``
    line each (once each), with the parameters they name (`` `study` ``) shown as this
    command's flags; the other libraries' warnings go on to the command line's policy (quiet
    unless --debug, ``cli/_warnings.py``)."""
    from ..errors import ReplikitWarning
    from ._warnings import active_policy

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    policy = active_policy()
    seen = set()
    for w in caught:
        if not issubclass(w.category, ReplikitWarning):
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
            continue
        if policy is not None:
            policy.say(str(w.message), prefix="warning: ", flags=flags)
            continue
        text = " ".join(str(w.message).split())
        for param, flag in (flags or {}).items():
            text = re.sub(rf"`{re.escape(param)}`", f"`{flag}`", text)
        if text not in seen:
            seen.add(text)
            info(f"warning: {text}")


def multistudy(
    predictions: Annotated[Path, typer.Argument(help="Predictions table (CSV, Parquet, DuckDB) "
                                                "with y_true, y_pred, a study column and "
                                                "optionally model, proba_*.")],
    study: Annotated[str, typer.Option("--study", help="Column holding study labels.")] = "study",
    utility: Annotated[str | None, typer.Option(
        "--utility", help="accuracy, cost:u01,u10 (two non-positive numbers), squared, "
                          "absolute, log or brier (default: accuracy for labels, squared for a "
                          "continuous outcome).")] = None,
    threshold: Annotated[str | None, typer.Option("--threshold", help="Cost utility on risk "
                                                  "scores: bayes, empirical or a number in "
                                                  "[0, 1] (default: use y_pred).")] = None,
    tolerance: Annotated[float | None, typer.Option(
        "--tolerance", min=0.0, help="Practical tolerance ε of ε-replicability on the "
                                     "utility's scale, tested by an intersection-union test of "
                                     "pairwise TOSTs.")] = None,
    permutation_resamples: Annotated[int, typer.Option(
        "--permutation-resamples", min=1, help="Random permutations of the study labels in "
                                               "the permutation tests.")] = 999,
    n_resamples: Annotated[int, typer.Option("--n-resamples", min=2, help="Bootstrap "
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
    """Is a fixed prediction rule replicable across studies for its users? Utilities per
    study, ε-replicability, distances, bootstrap and permutation tests (Parmigiani 2023)."""
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
    u = None if utility is None else parse_utility(utility, threshold=thr)
    if thr is not None and (u is None or u.kind != "cost"):
        raise ParameterError("`--threshold` applies to the cost utility only "
                             "(--utility cost:u01,u10).")
    if bootstrap not in _BOOTSTRAPS:
        raise ParameterError(f"`--bootstrap` must be within, cluster or studystrap; got "
                             f"{bootstrap!r}.")
    if bag_size is not None and bootstrap != "studystrap":
        raise ParameterError("`--bag-size` is the bag size of the study strap; it applies to "
                             "--bootstrap studystrap only.")
    with _warning_lines({"study": "--study"}):
        table_ = load_predictions(predictions, study=study, table=table, min_studies=2)
        with progress("bootstrap and permutation tests"):
            res = assess(table_, u, tolerance=tolerance, n_resamples=n_resamples,
                         permutation=PermutationMethod(permutation_resamples),
                         bootstrap=bootstrap, bag_size=bag_size,
                         bins=bins, random_state=random_state, model=model,
                         min_units=min_units)
    su = res.utilities
    info(f"Assessed {int(su.n.sum()):,} predictions in {su.K} studies ({su.utility_name}).")
    flag_of = {"utility": "--utility", "min_units": "--min-units", "tolerance": "--tolerance"}
    for note in res.notes:
        for param, flag in flag_of.items():
            note = note.replace(f"`{param}`", f"`{flag}`")
        info(f"warning: {note}")
    summary = res.to_frame()
    human = [str(res), "", frame_table(su.matrix(), index=True,
                                       title="Utility differences U_k - U_k':"),
             "", frame_table(summary, title="Summary:", formats={"pvalue": "p"})]
    eps_tests = _epsilon_tests(res, tolerance)
    human += ["", "ε-replicability (intersection-union test of pairwise TOSTs, level 0.05; "
              "Parmigiani (2023), Defs. 3.1, 3.2, 5.1):",
              *(f"  {t.sentence()}" for t in eps_tests)]
    data = {"utility": su.utility_name, "tolerance": tolerance, "studies": su.to_frame(),
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
    study: Annotated[str, typer.Option("--study", help="Column holding study labels.")],
    target: Annotated[str | None, typer.Option("--target", help="Column holding the "
                                               "outcome.")] = None,
    time: TimeOpt = None,
    event: EventOpt = None,
    models: ModelsOpt = None,
    task: TaskOpt = None,
    metric: Annotated[str | None, typer.Option("--metric", help="accuracy, balanced_accuracy, "
                                               "error_rate, r2, mse, rmse, mae, roc_auc, "
                                               "log_loss or a utility (default: accuracy / "
                                               "r2; c_index for a survival outcome).")] = None,
    n_folds: Annotated[int, typer.Option("--n-folds", min=2, help="Folds of the within-study "
                                         "cross-validation on the diagonal.")] = 5,
    stacking: Annotated[bool, typer.Option("--stacking/--no-stacking", help="Also fit "
                                           "multi-study stacking (evaluated by leaving one "
                                           "study out).")] = False,
    table: TableOpt = None,
    random_state: RandomStateOpt = 0,
    n_jobs: NJobsOpt = 1,
) -> None:
    """Cross-study validation matrix, leave-one-study-out and multi-study stacking of training
    techniques (Bernau et al. 2014; Patil & Parmigiani 2018)."""
    from ..data.userdata import load_dataset
    from ..errors import DataError, ParameterError
    from ..experiment.models import make_models
    from ..multistudy import (
        cross_study_matrix,
        get_metric,
        leave_one_study_out,
        multistudy_stacking,
    )

    check_outcome_flags(target, time, event)
    dataset = load_dataset(data, target=target, study=study, table=table, min_studies=2,
                           task=task, time=time, event=event)
    classification = dataset.task == "classification"
    survival = dataset.task == "survival"
    n_classes = int(dataset.y.nunique()) if classification else None
    # every choice checked against the data before anything is fitted
    get_metric(metric or ("c_index" if survival else "accuracy" if classification else "r2"),
               task=dataset.task, n_classes=n_classes, classes=dataset.classes)
    if stacking and survival:
        raise ParameterError("`--stacking`: multi-study stacking weighs the per-study learners "
                             "by least squares on the outcome, which a censored time is not; "
                             "the cross-study matrix and leave-one-study-out run without it "
                             "(the audit adds an equal-weight ensemble).")
    if stacking and classification and n_classes != 2:
        raise ParameterError(f"`--stacking`: multi-study stacking of classifiers needs a binary "
                             f"outcome; {target!r} has {n_classes} classes.")
    chosen = make_models(models or {"regression": "lr", "survival": "cox,rf"}.get(
        dataset.task, "lr,rf"), dataset.task)
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
            csv = cross_study_matrix(est, dataset.X, dataset.outcome, dataset.study, metric=metric,
                                     n_folds=n_folds, task=dataset.task,
                                     random_state=random_state, n_jobs=n_jobs)
            advance()
            advance.step(f"{name}: leave one study out")
            loso = leave_one_study_out(est, dataset.X, dataset.outcome, dataset.study,
                                       metric=metric,
                                       task=dataset.task, model_name=name,
                                       random_state=random_state, n_jobs=n_jobs)
            advance()
            entry = {"cross_study_matrix": csv.matrix.reset_index(names="train"),
                     "summary": csv.summary(), "overall": csv.overall(),
                     "leave_one_study_out": loso.scores,
                     "notes": [*csv.notes, *loso.notes]}
            human += [f"== {name} ==", csv.title, f"  {csv.headline()}",
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
                human += [st.title, frame_table(st.weights, index=True, formats=dict.fromkeys(
                    st.weights.columns, "{:.3f}")), *st.evaluation_lines()]
            notes += [n for n in dict.fromkeys(entry["notes"]) if n not in notes]
            out["models"][name] = entry
    for note in notes:
        info(f"warning: {note}")
    emit(human, out)


def _epsilon_tests(res, tolerance):
    """The intersection-union test of ε-replicability: ``--tolerance`` is tested on the
    utility's scale (Def. 3.1); the relative (Def. 3.2) and total-variation (Def. 5.1) forms,
    on their own scales, report the smallest ε shown and the bias-aware spread."""
    from ..multistudy import epsilon_test

    kinds = ["absolute", "relative"] + (["tv"] if res.distance.frequencies is not None else [])
    return [epsilon_test(res, tolerance=tolerance if k == "absolute" else None, kind=k)
            for k in kinds]


_MULTISTUDY_EPILOG = epilog(
    examples=["replikit multistudy preds.csv --study site",
              "replikit multistudy preds.csv --utility cost:-5,-1 --tolerance 0.05"],
    references=["parmigiani2023", "berger1982", "schuirmann1987", "davison1997",
                "loewinger2022", "brier1950"],
    note="The smallest ε shown is an upper confidence bound of the largest difference in "
         "average utility between studies: the rule is replicable within any tolerance above "
         "it.")

_CROSSSTUDY_EPILOG = epilog(
    examples=["replikit crossstudy --data d.csv --target y --study site",
              "replikit crossstudy --data d.csv --target y --study site --stacking"],
    references=["bernau2014", "parmigiani2023", "patil2018"])


def register(app: typer.Typer) -> None:
    app.command("multistudy", epilog=_MULTISTUDY_EPILOG)(multistudy)
    app.command("crossstudy", epilog=_CROSSSTUDY_EPILOG)(crossstudy)
    renamed_flags("multistudy", {"--epsilon": "--tolerance", "--resamples": "--n-resamples"})
    renamed_flags("crossstudy", {"--cv": "--n-folds"})
    parameter_flags("multistudy", _MULTISTUDY_FLAGS)
