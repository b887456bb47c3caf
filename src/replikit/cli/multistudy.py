"""``replikit multistudy`` (replicability of a fixed rule across studies, for its users) and
``replikit crossstudy`` (cross-study validation of training techniques) — seed 001."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._common import DataOpt, ModelsOpt, NJobsOpt, RandomStateOpt, TableOpt, TargetOpt, emit, info


def multistudy(
    predictions: Annotated[Path, typer.Argument(help="Predictions table (CSV, Parquet, DuckDB) "
                                                "with y_true, y_pred, a study column and "
                                                "optionally model, proba_*.")],
    study: Annotated[str, typer.Option("--study", help="Column holding study labels.")] = "study",
    utility: Annotated[str, typer.Option("--utility", help="accuracy, cost:u01,u10 (two "
                                         "non-positive numbers), squared, absolute or log.")]
    = "accuracy",
    threshold: Annotated[str | None, typer.Option("--threshold", help="Cost utility on risk "
                                                  "scores: bayes, empirical or a number in "
                                                  "[0, 1] (default: use y_pred).")] = None,
    epsilon: Annotated[float | None, typer.Option("--epsilon", min=0.0, help="Tolerance of "
                                                  "epsilon-replicability.")] = None,
    n_permutations: Annotated[int, typer.Option("--permutations", min=1, help="Permutations of "
                                                "study labels.")] = 999,
    n_resamples: Annotated[int, typer.Option("--resamples", "-B", min=2, help="Bootstrap "
                                             "resamples.")] = 1000,
    bootstrap: Annotated[str, typer.Option("--bootstrap", help="within, cluster or "
                                           "studystrap.")] = "within",
    bag_size: Annotated[int | None, typer.Option("--bag-size", min=1, help="Study strap bag "
                                                 "size (default: number of studies).")] = None,
    bins: Annotated[int, typer.Option("--bins", min=2, help="Quantile bins for continuous "
                                      "predictions in the distance.")] = 10,
    model: Annotated[str | None, typer.Option("--model", help="Which model is the rule (when "
                                              "the table holds several).")] = None,
    table: TableOpt = None,
    random_state: RandomStateOpt = 0,
) -> None:
    """Is a fixed prediction rule replicable across studies for a user? (seed 001)"""
    from ..multistudy import assess, load_predictions, parse_utility

    thr: object = threshold
    if threshold is not None and threshold not in ("bayes", "empirical"):
        try:
            thr = float(threshold)
        except ValueError:
            from ..errors import ParameterError

            raise ParameterError(f"`--threshold` must be bayes, empirical or a number in "
                                 f"[0, 1]; got {threshold!r}.") from None
    u = parse_utility(utility, threshold=thr)
    if thr is not None and u.kind != "cost":
        from ..errors import ParameterError

        raise ParameterError("`--threshold` applies to the cost utility only "
                             "(--utility cost:u01,u10).")
    table_ = load_predictions(predictions, study=study, table=table, study_option="--study")
    info(f"Assessing {len(table_):,} predictions in {len(table_.studies)} studies "
         f"({u.name}).")
    res = assess(table_, u, epsilon=epsilon, n_resamples=n_resamples,
                 n_permutations=n_permutations, bootstrap=bootstrap, bag_size=bag_size,
                 bins=bins, random_state=random_state, model=model)
    summary = res.to_frame()
    human = (str(res) + "\n\nUtility differences U_k - U_k':\n"
             + res.utilities.matrix().to_string(float_format=lambda v: f"{v:.4f}")
             + "\n\nSummary:\n" + summary.to_string(index=False))
    data = {"utility": u.name, "epsilon": epsilon, "studies": res.utilities.to_frame(),
            "utility_matrix": res.utilities.matrix().reset_index(names="study"),
            "distance_matrix": res.distance.to_frame().reset_index(names="study"),
            "bootstrap": res.bootstrap.to_frame(),
            "permutation": [res.permutation_utility.to_frame(),
                            res.permutation_distance.to_frame()],
            "summary": summary}
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
    from .._models import make_models
    from ..data.userdata import load_dataset
    from ..multistudy import cross_study_matrix, leave_one_study_out, multistudy_stacking

    dataset = load_dataset(data, target=target, study=study, table=table, min_studies=2,
                           data_option="--data", target_option="--target", study_option="--study")
    chosen = make_models(models or ("lr" if dataset.task == "regression" else "lr,rf"),
                         dataset.task)
    info(f"Cross-study validation of {', '.join(chosen)} on {dataset.name}: "
         f"{len(dataset.y):,} rows, {dataset.n_studies} studies.")
    human, out = [], {"models": {}}
    for name, est in chosen.items():
        csv = cross_study_matrix(est, dataset.X, dataset.y, dataset.study, metric=metric, cv=cv,
                                 task=dataset.task, random_state=random_state, n_jobs=n_jobs)
        loso = leave_one_study_out(est, dataset.X, dataset.y, dataset.study, metric=metric,
                                   task=dataset.task, model_name=name,
                                   random_state=random_state, n_jobs=n_jobs)
        entry = {"cross_study_matrix": csv.matrix.reset_index(names="train"),
                 "summary": csv.summary(), "overall": csv.overall(),
                 "leave_one_study_out": loso.scores}
        human += [f"== {name} ==", str(csv), str(loso)]
        if stacking:
            st = multistudy_stacking(est, dataset.X, dataset.y, dataset.study, metric=metric,
                                     task=dataset.task, random_state=random_state,
                                     n_jobs=n_jobs)
            entry["stacking_weights"] = st.to_frame()
            entry["stacking_intercept"] = st.intercept
            entry["stacking_evaluation"] = st.summary()
            human.append(str(st))
        out["models"][name] = entry
    emit("\n".join(human), out)


def register(app: typer.Typer) -> None:
    app.command("multistudy")(multistudy)
    app.command("crossstudy")(crossstudy)
