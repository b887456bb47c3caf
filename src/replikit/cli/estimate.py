"""``replikit estimate`` (prediction error of one model by resampling) and
``replikit simulate resampling`` (the seed-003 experiment)."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Annotated

import typer

from ._common import (
    DataOpt,
    NJobsOpt,
    RandomStateOpt,
    TableOpt,
    TargetOpt,
    emit,
    frame_table,
    info,
    progress,
    simulate_app,
)

ESTIMATE_FLAGS = {"method": "--method", "methods": "--method", "loss": "--loss",
                  "n_splits": "--folds", "test_size": "--test-size", "rounding": "--rounding",
                  "n_resamples": "--resamples", "n_repeats": "--repeats", "models": "--model",
                  "fast": "--generic", "n_jobs": "--n-jobs"}
ESTIMATE_FILES = ("estimates.csv", "estimates.svg")
SIMULATION_FILES = ("resampling_table.csv", "resampling_errors.csv", "resampling_densities.svg")


def estimate(
    data: DataOpt,
    target: TargetOpt,
    model: Annotated[str, typer.Option("--model", help="Model alias: lr, ridge, lda, rf, gb, "
                                       "knn, tree, dummy.")] = "lr",
    method: Annotated[str, typer.Option("--method", help="Comma-separated methods: "
                                        "resubstitution, holdout, kfold, loo, bootstrap, "
                                        "loo_bootstrap, .632, .632+.")] = "resubstitution,kfold,"
                                        "bootstrap,loo_bootstrap,.632+",
    loss: Annotated[str | None, typer.Option("--loss", help="zero_one, absolute, squared or log "
                                             "(default: zero_one / squared).")] = None,
    n_resamples: Annotated[int, typer.Option("--resamples", min=1,
                                             help="Number of bootstrap resamples.")] = 200,
    n_splits: Annotated[int, typer.Option("--folds", "-K", min=2, help="Folds K.")] = 10,
    n_repeats: Annotated[int | None, typer.Option("--repeats", min=1, help="Hold-out splits H "
                                                  "(default 200) or K-fold repeats (1).")] = None,
    test_size: Annotated[float, typer.Option("--test-size", help="Hold-out test share p.")] = 0.368,
    rounding: Annotated[str, typer.Option("--rounding", help="Hold-out test rows: ceil (default, "
                                          "scikit-learn's rule) or floor (seed 003's int(n*p)) "
                                          "of n*p.")] = "ceil",
    slow: Annotated[bool, typer.Option("--generic", help="Force the generic path (one cloned "
                                       "estimator per resample).")] = False,
    table: TableOpt = None,
    random_state: RandomStateOpt = 0,
    n_jobs: NJobsOpt = 1,
    out: Annotated[Path | None, typer.Option(
        "--out", help="Directory for estimates.csv and estimates.svg (a bar chart of the "
        "estimates).")] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace estimates.csv and "
                                            "estimates.svg in --out.")] = False,
) -> None:
    """Estimate a model's prediction error by resampling (seed 003, eqs. 3-7, .632, .632+)."""
    from .._outputs import check_output_dir
    from ..data.userdata import load_dataset
    from ..errors import ReplikitError
    from ..experiment.models import make_model
    from ..resampling.error import estimate_errors
    from .run import as_flags

    if out is not None:
        check_output_dir(out, ESTIMATE_FILES, option="--out", overwrite=overwrite)
    dataset = load_dataset(data, target=target, table=table, data_option="--data",
                           target_option="--target")
    methods = [m.strip() for m in method.split(",") if m.strip()]
    try:
        est = make_model(model, dataset.task)
        info(f"Estimating the error of {model} on {dataset.name}: {len(dataset.y):,} rows, "
             f"{dataset.task}.")
        with progress(f"{model}: fits") as advance:
            res = estimate_errors(est, dataset.X, dataset.y, methods=methods, loss=loss,
                                  n_resamples=n_resamples, n_splits=n_splits,
                                  n_repeats=n_repeats, test_size=test_size, rounding=rounding,
                                  task=dataset.task, fast=False if slow else None,
                                  random_state=random_state, n_jobs=n_jobs, progress=advance)
    except ReplikitError as exc:
        raise as_flags(exc, ESTIMATE_FLAGS) from None
    frame = res.to_frame()
    if out is not None:
        from .._outputs import write_csv_atomic
        from .._plotting import save_svg
        from ..resampling.plots import plot_error_estimates

        write_csv_atomic(out / "estimates.csv", frame)
        ax = plot_error_estimates(frame.assign(model=model))
        ax.set_title(f"{model} on {dataset.name} ({res[methods[0]].loss} loss)", fontsize=9)
        save_svg(ax.figure, out / "estimates.svg")
        info(f"Wrote estimates.csv and estimates.svg to {out}/")
    first = res[methods[0]]
    title = (f"Prediction error of {model} on {dataset.name}: {first.loss} loss, "
             f"{first.n:,} rows, {first.path} path")
    emit(frame_table(frame[["method", "estimate", "se", "n_resamples", "path"]], title=title),
         {"model": model, "data": str(data), "estimates": frame})


def simulate_resampling_cmd(
    n_experiments: Annotated[int, typer.Option("--experiments", min=1,
                                               help="Number of random datasets.")] = 1000,
    exact: Annotated[bool, typer.Option("--exact", help="Replay the original script's random "
                                        "stream (legacy RandomState) to reproduce the published "
                                        "figures.")] = False,
    random_state: Annotated[int, typer.Option("--random-state", "--seed", min=0,
                                              help="Root random seed (the paper used 1).")] = 1,
    out: Annotated[Path | None, typer.Option("--out", help="Directory for the table (CSV), the "
                                             "per-dataset errors and the figure (SVG).")] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace the files in "
                                            "--out.")] = False,
    n_jobs: Annotated[int | None, typer.Option(
        "--n-jobs", "-j", min=1, help="Threads (default: one per CPU core, at most 8; the "
        "numbers do not depend on it).")] = None,
) -> None:
    """Seed 003's experiment: 8 resampling estimators of LDA's error on 1000 null datasets."""
    from .._outputs import check_output_dir
    from .._threads import usable_cores
    from ..resampling.simulation import simulate_resampling

    if out is not None:
        check_output_dir(out, SIMULATION_FILES, option="--out", overwrite=overwrite)
    _preload(plotting=out is not None)  # imported by a thread while the experiment computes
    with _retained_freed_memory(), \
            progress(f"Seed-003 experiment ({n_experiments} datasets)") as advance:
        res = simulate_resampling(n_experiments=n_experiments, exact=exact,
                                  random_state=random_state, progress=advance,
                                  n_jobs=n_jobs if n_jobs is not None else usable_cores())
    if out is not None:
        from .._outputs import write_csv_atomic
        from .._plotting import save_svg
        from ..resampling.plots import plot_experiment_densities

        write_csv_atomic(out / "resampling_table.csv", res.table)
        write_csv_atomic(out / "resampling_errors.csv", res.errors)
        save_svg(plot_experiment_densities(res).figure, out / "resampling_densities.svg")
        info(f"Wrote {out}/resampling_table.csv, resampling_errors.csv, resampling_densities.svg")
    mode = "exact replay of the original stream" if res.exact else "numpy Generator stream"
    human = frame_table(res.table, formats={c: "{:.3f}" for c in ("mean", "sd", "paper_mean",
                                                            "paper_sd")},
                  title=f"Seed-003 experiment: {res.n_experiments} datasets (n = 30, 10 N(0,1) "
                        f"predictors, Binomial(1, .5) response), LDA; {mode}, random_state "
                        f"{res.random_state}; {res.runtime_seconds:.2f} s")
    emit(human, {"n_experiments": res.n_experiments, "random_state": res.random_state,
                    "exact": res.exact,
                    "runtime_seconds": res.runtime_seconds, "table": res.table})


def _preload(*, plotting: bool) -> None:
    """Import pandas and the figure's modules (~0.7 s) in a daemon thread, overlapping the
    experiment's numpy work, which releases the GIL; the import lock makes a later import in
    the main thread wait for it rather than import twice."""
    import threading

    def load() -> None:
        try:
            import pandas  # noqa: F401

            if plotting:
                import matplotlib.backends.backend_svg  # noqa: F401
                import matplotlib.figure  # noqa: F401

                from .._plotting import new_figure  # noqa: F401
                from ..resampling.plots import plot_experiment_densities  # noqa: F401
        except Exception:  # noqa: BLE001 — the main thread imports again and reports errors
            pass

    threading.Thread(target=load, daemon=True).start()


@contextlib.contextmanager
def _retained_freed_memory():
    """Within the block, ask glibc's ``malloc`` to serve blocks up to 32 MiB from its heap and
    to keep freed memory (up to 256 MiB) for reuse instead of returning it to the system at
    once; glibc's defaults (128 KiB each) are set again on exit.

    The batched fits of the experiment allocate and free thousands of multi-megabyte
    temporaries; with glibc's defaults most of them are fresh ``mmap`` regions whose pages the
    kernel maps and zero-fills again every time: about 250,000 page faults, 0.6-0.9 s of system
    time in a 3 s ``replikit simulate resampling`` (measured; a second pass in the same process,
    after glibc's own threshold has adapted, has none). A no-op where the C library has no
    ``mallopt`` (macOS, Windows).
    """
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError, TypeError):
        yield
        return
    m_trim_threshold, m_mmap_threshold = -1, -3  # <malloc.h>
    mallopt(m_mmap_threshold, 32 << 20)
    mallopt(m_trim_threshold, 256 << 20)
    try:
        yield
    finally:
        mallopt(m_mmap_threshold, 128 << 10)
        mallopt(m_trim_threshold, 128 << 10)


def register(app: typer.Typer) -> None:
    app.command("estimate")(estimate)
    simulate_app.command("resampling")(simulate_resampling_cmd)
