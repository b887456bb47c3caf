"""``replikit simulate tests``: type I error, power and replicability of the model-comparison
tests on simulated data where the truth is known (Gardner & Brooks 2017; Bouckaert & Frank
2004)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..errors import ParameterError
from ._common import (
    NJobsOpt,
    RandomStateOpt,
    emit,
    epilog,
    frame_table,
    info,
    progress,
    renamed_flags,
    simulate_app,
)

__all__ = ["simulate_tests_cmd", "register"]


def _floats(text: str, name: str) -> list[float]:
    try:
        return [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ParameterError(f"`{name}` must be comma-separated numbers, e.g. 0,0.05,0.1; got "
                             f"{text!r}.") from None


CALIBRATION_FILES = ("calibration.csv", "population.csv", "rejection_rate.svg",
                     "replicability.svg")


def simulate_tests_cmd(
    n_datasets: Annotated[int, typer.Option("--n-datasets", min=2, help="Datasets per setting "
                                            "(Monte-Carlo sample size).")] = 1000,
    n_rows: Annotated[int, typer.Option("--n-rows", min=20, help="Rows per dataset.")] = 300,
    differences: Annotated[str, typer.Option("--differences", help="Comma-separated true "
                                             "differences in (Bayes) error of the two "
                                             "learners; 0, the null, is always added.")]
    = "0,0.025,0.05,0.075,0.1,0.15",
    n_repeats: Annotated[int, typer.Option("--n-repeats", min=1, help="Runs of each test per "
                                           "dataset with new partitions (replicability needs "
                                           ">= 2).")] = 10,
    tests: Annotated[str, typer.Option("--tests", help="'all' or comma-separated names: "
                                       "corrected_resampled_t, naive_paired_t_holdout, "
                                       "corrected_repeated_kfold_t, naive_paired_t_kfold, "
                                       "sorted_runs_t_learner, sorted_runs_t_difference, "
                                       "bayesian_correlated_t, paired_t_5x2cv, "
                                       "combined_f_5x2cv, mcnemar_edwards, mcnemar_uncorrected, "
                                       "mcnemar_exact, proportions_z.")]
    = "all",
    base_error: Annotated[float, typer.Option("--base-error", help="Bayes error of learner "
                                              "B's feature.")] = 0.3,
    correlation: Annotated[float, typer.Option("--correlation", help="Within-class "
                                               "correlation of the two features.")] = 0.5,
    alpha: Annotated[float, typer.Option("--alpha", help="Significance level of every "
                                         "test.")] = 0.05,
    tolerance: Annotated[float, typer.Option("--tolerance", min=0.0, help="Half-width of the "
                                             "Bayesian correlated t's region of practical "
                                             "equivalence (error rate).")] = 0.01,
    random_state: RandomStateOpt = 0,
    n_jobs: NJobsOpt = 1,
    out: Annotated[Path | None, typer.Option("--out", help="Directory for the tables (CSV) and "
                                             "figures (SVG).")] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace calibration.csv, "
                                            "population.csv and the SVGs in --out.")] = False,
) -> None:
    """Calibrate the comparison tests: type I error, power and replicability.

    Two nearest-centroid learners on two Gaussian features whose population errors are equal
    (difference 0) or differ by a known amount; every test is run --n-repeats times per
    dataset with new partitions (Bouckaert & Frank 2004). The global --format json (before or
    after the command) prints the tables as JSON.
    """
    from .._format import number
    from .._outputs import check_output_dir
    from ..compare.calibration import simulate_tests

    if out is not None:  # before any work
        check_output_dir(out, CALIBRATION_FILES, option="--out", overwrite=overwrite)
    diffs = _floats(differences, "differences")
    names = "all" if tests.strip() == "all" else [t.strip() for t in tests.split(",")
                                                  if t.strip()]
    info(f"Simulating {number(n_datasets)} datasets x {number(n_rows)} rows per setting, "
         f"{number(n_repeats)} run(s) per dataset, differences "
         f"{', '.join(number(d) for d in sorted({0.0, *diffs}))}.")
    with progress("datasets simulated", total=n_datasets) as advance:
        res = simulate_tests(
            n_datasets=n_datasets, n_rows=n_rows, differences=diffs, tests=names,
            n_repeats=n_repeats, base_error=base_error, correlation=correlation, alpha=alpha,
            tolerance=tolerance, random_state=random_state, n_jobs=n_jobs, progress=advance)
    if out is not None:
        from .._outputs import write_csv_atomic
        from .._plotting import save_svg
        from ..compare.calibration import plot_calibration

        write_csv_atomic(out / "calibration.csv", res.table)
        write_csv_atomic(out / "population.csv", res.population)
        for measure in ("rejection_rate", "replicability"):
            save_svg(plot_calibration(res, measure=measure).figure, out / f"{measure}.svg")
        info(f"Wrote calibration.csv, population.csv, rejection_rate.svg and replicability.svg "
             f"to {out}/")
    emit(_human(res), {"runtime_seconds": res.runtime_seconds, "settings": res.settings,
                    "table": res.table, "population": res.population})


def _human(res) -> list:
    """The calibration for the terminal: the result's text lines, its tables as tables
    (rates to three decimals)."""
    text = str(res).split("\n")
    parts: list = [text[0]]
    parts += [line for line in text[1:] if line.startswith(("Population errors", "  n_train="))]
    three = "{:.3f}"
    t1 = res.type_one_error()
    if not t1.empty:
        show = t1[["test", "valid", "rejection_rate", "mc_se", "replicability",
                   "replicability_se"]]
        parts.append(frame_table(show, formats=dict.fromkeys(show.columns[2:], three),
                                 title="Type I error (rejection rate at equal population "
                                       "errors) and replicability:"))
    if len(res.differences) > 1:
        heading = next((line for line in text if line.startswith("Rejection rate")), None)
        for title, measure in ((heading, "rejection_rate"),
                               ("Replicability by nominal difference:", "replicability")):
            wide = res.power_table(measure)
            wide.columns = [f"{c:g}" for c in wide.columns]
            wide.index.name = "test \\ nominal difference"
            parts.append(frame_table(wide, index=True, title=title,
                                     formats=dict.fromkeys(wide.columns, three)))
    return parts


REFERENCES = ("gardner2017", "dietterich1998", "nadeau2003", "bouckaert2004", "bouckaert2003",
              "bouckaert2004b", "alpaydin1999", "corani2015", "mcnemar1947", "edwards1948")


def register(app: typer.Typer) -> None:
    simulate_app.command("tests", epilog=epilog(
        examples=["replikit simulate tests --n-datasets 200 --n-repeats 5",
                  "replikit simulate tests -j 2 --out figures/ --overwrite"],
        references=REFERENCES))(simulate_tests_cmd)
    renamed_flags("simulate tests", {"--datasets": "--n-datasets", "--rows": "--n-rows",
                                     "--replications": "--n-repeats", "-m": "--n-repeats",
                                     "--rope": "--tolerance"})
